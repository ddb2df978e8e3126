from selfplay.pipeline.step import step
from selfplay.report import psv as psv_tables

with step("psv yield", snakemake.log[0]):
    psv_tables.yield_of(
        snakemake.params.cfg, snakemake.output.csv, snakemake.output.md, snakemake.output.reasons
    )
