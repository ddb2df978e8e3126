# Semantic de-duplication of the seed problems on their embeddings (rule evolve_dedup).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

i, o = snakemake.input, snakemake.output
with step("evolve dedup", snakemake.log[0]):
    evolve.deduplicate_seeds(snakemake.params.cfg, i.seeds, i.vectors, i.meta, o.kept, o.stats)
