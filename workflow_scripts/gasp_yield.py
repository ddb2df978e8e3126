# The GASP yield table: every phase of every iteration (rule gasp_yield).
from selfplay.pipeline.step import step
from selfplay.report import gasp

o = snakemake.output
with step("gasp yield table", snakemake.log[0]):
    gasp.yield_table(snakemake.params.runs, o.csv, o.md)
