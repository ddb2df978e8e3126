from selfplay.pipeline import psv
from selfplay.pipeline.step import step

with step(f"psv problem set {snakemake.wildcards.pset}", snakemake.log[0]):
    psv.prepare_problem_set(
        snakemake.params.cfg, snakemake.wildcards.pset, snakemake.output[0], snakemake.input.get("downloaded")
    )
