from selfplay.pipeline import sinq
from selfplay.pipeline.step import step

w = snakemake.wildcards
with step(f"sinq_verify {w.stage} shard {w.shard}", snakemake.log[0]):
    sinq.verify_candidates(
        snakemake.params.cfg,
        w.stage,
        snakemake.input.generations,
        snakemake.input.sources,
        snakemake.output[0],
    )
