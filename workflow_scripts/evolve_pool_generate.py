# One pool model's candidate solutions for every problem with a suite (rule evolve_pool_generate).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

p = snakemake.params
with step(f"evolve pool {snakemake.wildcards.pmodel}", snakemake.log[0]):
    evolve.pool_generate(
        p.cfg,
        snakemake.input.suite,
        snakemake.wildcards.pmodel,
        int(p.samples),
        p.model_dir,
        None,
        snakemake.output[0],
        shard=int(p.shard),
        shards=int(p.shards),
    )
