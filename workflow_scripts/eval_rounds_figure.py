# Pass@1 and compilation errors of every round's model on one code benchmark.
from selfplay.pipeline.step import step
from selfplay.report.evaluation import rounds_figure

with step(f"figure {snakemake.output.png}", snakemake.log[0]):
    files = {int(key[len("round") :]): path for key, path in snakemake.input.items()}
    rounds_figure(
        files, snakemake.output.png, snakemake.output.pdf, snakemake.output.csv, snakemake.params.title
    )
