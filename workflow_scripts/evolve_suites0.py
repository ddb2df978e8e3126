# Round 0's suites from the refinement answers (rule evolve_suites0).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step("evolve round 0 suites", snakemake.log[0]):
    evolve.refined_suites(snakemake.input.seeds, snakemake.input.generations, snakemake.output[0])
