from selfplay.pipeline import evaluate
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"eval_generate {w.bench} {w.model} {w.mode}", snakemake.log[0]):
    evaluate.generate(snakemake.params.cfg, w.bench, w.mode, w.model, i.prepared, snakemake.params.model_dir,
                      optional_path(i.adapter), snakemake.output[0])
