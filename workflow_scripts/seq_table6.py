from selfplay.pipeline.step import step
from selfplay.report import seq as report

i, o = snakemake.input, snakemake.output
with step("seq_table6", snakemake.log[0]):
    report.table6({name: list(i[name]) for name in i.keys()}, o.csv, o.md)
