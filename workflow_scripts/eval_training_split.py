# A benchmark's training problems (those dated before its cut-off), for RL tracks.
from selfplay.pipeline import evaluate
from selfplay.pipeline.step import step

bench = snakemake.wildcards.bench
with step(f"eval_training_split {bench}", snakemake.log[0]):
    evaluate.training_split(
        snakemake.params.cfg,
        bench,
        evaluate.source_of(list(snakemake.input)),
        snakemake.output.prepared,
        snakemake.output.skipped,
    )
