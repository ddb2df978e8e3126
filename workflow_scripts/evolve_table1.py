# EvolveCoder Table 1: seed problems per source before and after de-duplication, and in the final dataset.
from selfplay.pipeline.step import step
from selfplay.records import read_json
from selfplay.report import evolve, evolve_seeds

with step("evolve table 1", snakemake.log[0]):
    evolve_seeds.table1(
        read_json(snakemake.input.stats),
        snakemake.output.csv,
        snakemake.output.md,
        evolve.final_counts(snakemake.input.final, snakemake.params.sources),
    )
