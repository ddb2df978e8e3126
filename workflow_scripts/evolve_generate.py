# A round's adversarial and discriminative answers (rule evolve_generate), or one block
# of them (evolve.test_shards > 1; rule evolve_generate_merge joins the blocks).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

r = int(snakemake.wildcards.er)
p = snakemake.params
with step(f"evolve round {r} tests", snakemake.log[0]):
    evolve.evolve_generate(
        p.cfg,
        r,
        snakemake.input.suite,
        snakemake.input.pool,
        snakemake.input.matrix,
        p.model_dir,
        snakemake.output[0],
        shard=int(p.shard),
        shards=int(p.shards),
    )
