from selfplay.pipeline import psv
from selfplay.pipeline.step import step

with step(f"psv pool {snakemake.output[0]}", snakemake.log[0]):
    psv.grow_pool(
        snakemake.input.pool, snakemake.input.proposals, int(snakemake.wildcards.t) - 1, snakemake.output[0]
    )
