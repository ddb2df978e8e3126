from selfplay.pipeline import evaluate
from selfplay.pipeline.step import optional_path, step

w, i, p = snakemake.wildcards, snakemake.input, snakemake.params
shard = (int(w.shard), int(w.shards)) if hasattr(w, "shard") else None
what = f"eval_generate {w.bench} {w.model} {w.mode}" + (f" shard {shard[0]} of {shard[1]}" if shard else "")
with step(what, snakemake.log[0], offline=not p.other):
    evaluate.generate(
        p.cfg,
        w.bench,
        w.mode,
        w.model,
        i.prepared,
        p.model_dir,
        optional_path(i.adapter),
        snakemake.output[0],
        other=p.other,
        shard=shard,
    )
