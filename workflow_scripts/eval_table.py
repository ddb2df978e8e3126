# A table of benchmark metrics: rows = benchmarks, columns = (mode, model) pairs.
from selfplay.pipeline.step import step
from selfplay.report.evaluation import grid_table

p = snakemake.params
with step(f"table {snakemake.output.md}", snakemake.log[0]):
    files = {tuple(key.split("|")): path for key, path in snakemake.input.items()}
    grid_table(
        files,
        [tuple(r) for r in p.rows],
        [(label, tuple(key)) for label, key in p.columns],
        p.metric,
        snakemake.output.csv,
        snakemake.output.md,
        p.title,
        p.notes,
    )
