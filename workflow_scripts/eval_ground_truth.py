from selfplay.pipeline import evaluate
from selfplay.pipeline.step import step

bench = snakemake.wildcards.bench
with step(f"eval_ground_truth {bench}", snakemake.log[0]):
    evaluate.ground_truth(
        snakemake.params.cfg,
        bench,
        snakemake.input.prepared,
        snakemake.output.scored,
        snakemake.output.summary,
    )
