# Refinement answers for every de-duplicated seed problem (rule evolve_refine).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step("evolve refine", snakemake.log[0]):
    evolve.refine_generate(
        snakemake.params.cfg, snakemake.input.seeds, snakemake.params.model_dir, snakemake.output[0]
    )
