# One pool model's recording from its shards (rule evolve_pool_merge, evolve.pool.shards > 1).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step(f"evolve pool {snakemake.wildcards.pmodel}: merge shards", snakemake.log[0]):
    evolve.merge_pool_shards(list(snakemake.input), snakemake.output[0])
