from selfplay.pipeline import evaluate
from selfplay.pipeline.step import optional_path, step

w, i, p = snakemake.wildcards, snakemake.input, snakemake.params
with step(f"eval_generate {w.bench} {w.model} {w.mode}", snakemake.log[0], offline=not p.other):
    evaluate.generate(p.cfg, w.bench, w.mode, w.model, i.prepared, p.model_dir, optional_path(i.adapter),
                      snakemake.output[0], other=p.other)
