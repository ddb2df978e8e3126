from selfplay.pipeline.step import step
from selfplay.report.evaluation import benchmarks_table

i, p = snakemake.input, snakemake.params
with step("eval_benchmarks_table", snakemake.log[0]):
    pick = lambda prefix: {k[len(prefix) :]: v for k, v in i.items() if k.startswith(prefix)}  # noqa: E731
    benchmarks_table(
        pick("gt_"),
        pick("base_"),
        pick("skipped_"),
        dict(p.sources),
        snakemake.output.csv,
        snakemake.output.md,
    )
