from selfplay.pipeline import psv
from selfplay.pipeline.step import step

with step(f"psv solver training set {snakemake.output[0]}", snakemake.log[0]):
    psv.solver_trainset(
        snakemake.params.cfg, snakemake.wildcards.method, snakemake.input[0], snakemake.output[0]
    )
