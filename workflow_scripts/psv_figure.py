from selfplay.pipeline.step import step
from selfplay.report import psv as psv_tables

o = snakemake.output
with step(f"psv {snakemake.wildcards.figure}", snakemake.log[0]):
    psv_tables.figure_of(snakemake.params.cfg, snakemake.wildcards.figure, o.png, o.pdf, o.csv)
