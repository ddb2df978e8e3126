from selfplay.pipeline.step import step
from selfplay.report import seq as report

i, o = snakemake.input, snakemake.output
with step("seq_figure3", snakemake.log[0]):
    report.figure3({name: list(i[name]) for name in i.keys()}, o.png, o.pdf, o.csv)
