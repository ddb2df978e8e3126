from selfplay.pipeline.step import step
from selfplay.report import seq as report

with step("seq_table8", snakemake.log[0]):
    report.table8(
        dict(zip(snakemake.params.experiments, list(snakemake.input))),
        snakemake.output.csv,
        snakemake.output.md,
    )
