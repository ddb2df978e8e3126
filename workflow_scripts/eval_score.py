from selfplay.pipeline import evaluate
from selfplay.pipeline.step import step

w, i, o = snakemake.wildcards, snakemake.input, snakemake.output
with step(f"eval_score {w.bench} {w.model} {w.mode}", snakemake.log[0]):
    evaluate.score(
        snakemake.params.cfg, w.bench, w.mode, i.prepared, i.generations, o.scored, o.summary, i.skipped
    )
