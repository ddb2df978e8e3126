from selfplay.pipeline import evaluate
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"eval_merge {w.bench} {w.model} {w.mode}", snakemake.log[0]):
    evaluate.merge(
        snakemake.params.cfg, w.bench, w.mode, w.model, i.prepared, list(i.shards), snakemake.output[0]
    )
