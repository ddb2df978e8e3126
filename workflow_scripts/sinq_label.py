from selfplay.pipeline import sinq
from selfplay.pipeline.step import step

w = snakemake.wildcards
with step(f"sinq_label[{w.who}] {w.stage} shard {w.shard}", snakemake.log[0]):
    sinq.label_instances(
        snakemake.params.cfg,
        w.stage,
        w.who,
        snakemake.input.candidates,
        snakemake.input.bob,
        snakemake.output[0],
    )
