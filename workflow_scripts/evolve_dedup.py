# Semantic de-duplication of the seed problems (rule evolve_dedup).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step("evolve dedup", snakemake.log[0]):
    evolve.deduplicate_seeds(snakemake.params.cfg, snakemake.input[0], snakemake.output.kept, snakemake.output.stats)
