# One recording from its shards' files, in shard order (rules evolve_pool_merge and
# evolve_generate_merge: evolve.pool.shards or evolve.test_shards > 1).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step(f"evolve: merge {len(snakemake.input)} shards into {snakemake.output[0]}", snakemake.log[0]):
    evolve.merge_shards(list(snakemake.input), snakemake.output[0])
