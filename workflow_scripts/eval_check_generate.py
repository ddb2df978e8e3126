from selfplay.pipeline import evaluate
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"eval_check_generate {w.bench}", snakemake.log[0]):
    evaluate.generate(
        snakemake.params.cfg,
        w.bench,
        "greedy",
        "base",
        i.prepared,
        snakemake.params.model_dir,
        None,
        snakemake.output[0],
    )
