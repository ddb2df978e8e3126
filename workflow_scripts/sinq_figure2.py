from selfplay.pipeline.step import step
from selfplay.report.sinq import figure2

with step("sinq_figure2", snakemake.log[0]):
    per_x = {int(name[1:]): list(snakemake.input[name]) for name in snakemake.input.keys()}
    figure2(per_x, snakemake.output.png, snakemake.output.pdf, snakemake.output.csv)
