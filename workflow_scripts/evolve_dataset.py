# A round's filtered dataset (rule evolve_dataset).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step(f"evolve round {snakemake.wildcards.er} dataset", snakemake.log[0]):
    evolve.round_dataset(
        snakemake.params.cfg,
        int(snakemake.wildcards.er),
        snakemake.input.suite,
        snakemake.input.matrix,
        snakemake.output[0],
    )
