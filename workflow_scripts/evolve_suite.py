# A round's suites: the previous round's plus the new tests (rule evolve_suite).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

r = int(snakemake.wildcards.er)
with step(f"evolve round {r} suites", snakemake.log[0]):
    evolve.extend_suites(r, snakemake.input.suite, snakemake.input.generations, snakemake.output[0])
