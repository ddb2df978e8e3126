# Every problem's pool of candidate programs (rule evolve_pool).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step("evolve pool", snakemake.log[0]):
    evolve.pool_solutions(snakemake.input.suite, list(snakemake.input.generations), snakemake.output[0])
