# A round's pass matrices (rule evolve_matrix), or one block of them
# (evolve.matrix.shards > 1; rule evolve_matrix_merge joins the blocks).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import optional_path, step

p = snakemake.params
with step(f"evolve round {snakemake.wildcards.er} matrix", snakemake.log[0]):
    evolve.round_matrices(
        p.cfg,
        snakemake.input.suite,
        snakemake.input.pool,
        snakemake.output[0],
        previous_path=optional_path(snakemake.input.previous),
        shard=int(p.shard),
        shards=int(p.cfg["evolve"]["matrix"]["shards"]),
    )
