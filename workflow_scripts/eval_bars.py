# Bars of one benchmark metric per model (and per category when the benchmark has them).
from selfplay.pipeline.step import step
from selfplay.report.evaluation import grouped_bars

p = snakemake.params
with step(f"figure {snakemake.output.png}", snakemake.log[0]):
    grouped_bars(
        dict(snakemake.input.items()),
        p.labels,
        p.metric,
        snakemake.output.png,
        snakemake.output.get("pdf"),
        snakemake.output.csv,
        p.title,
        p.groups,
    )
