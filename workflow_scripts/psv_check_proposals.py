from selfplay.pipeline import psv
from selfplay.pipeline.step import step

with step(f"psv check proposals {snakemake.output[0]}", snakemake.log[0]):
    psv.check_proposals(
        snakemake.params.cfg,
        snakemake.wildcards.method,
        snakemake.input.generations,
        snakemake.input.pool,
        snakemake.output[0],
    )
