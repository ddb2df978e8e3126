from selfplay.pipeline import evaluate
from selfplay.pipeline.step import step

bench = snakemake.wildcards.bench
with step(f"eval_items {bench}", snakemake.log[0]):
    evaluate.prepare(
        snakemake.params.cfg,
        bench,
        evaluate.source_of(list(snakemake.input)),
        snakemake.output.prepared,
        snakemake.output.skipped,
    )
