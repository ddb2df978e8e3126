from selfplay.pipeline.step import step
from selfplay.report import psv as psv_tables

with step("psv table6", snakemake.log[0]):
    psv_tables.table6_of(snakemake.params.cfg, snakemake.output.csv, snakemake.output.md)
