from selfplay.pipeline.step import step
from selfplay.report.seq import figure19

with step("seq_figure19", snakemake.log[0]):
    figure19(
        dict(zip(snakemake.params.experiments, snakemake.input)),
        snakemake.output.png,
        snakemake.output.pdf,
        snakemake.output.csv,
    )
