# A classification benchmark's metrics, base model vs trained model, with their difference.
from selfplay.pipeline.step import step
from selfplay.report.evaluation import base_vs_trained

p = snakemake.params
with step(f"table {snakemake.output.md}", snakemake.log[0]):
    base_vs_trained(
        {"base": snakemake.input.base, "trained": snakemake.input.trained},
        list(p.metrics),
        snakemake.output.csv,
        snakemake.output.md,
        p.title,
        p.notes,
    )
