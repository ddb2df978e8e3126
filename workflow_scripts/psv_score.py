# Parse and verify every sample of a solving or evaluation file (rules psv_score_solutions, psv_eval_score).
from selfplay.pipeline import psv
from selfplay.pipeline.step import step

with step(f"psv score {snakemake.output[0]}", snakemake.log[0]):
    psv.score_generations(
        snakemake.params.cfg, snakemake.input.generations, snakemake.input.problems, snakemake.output[0]
    )
