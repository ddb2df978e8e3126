from selfplay.pipeline import sinq
from selfplay.pipeline.step import optional_path, step

w = snakemake.wildcards
with step(f"sinq_bob_generate[{w.who}] {w.stage} shard {w.shard}", snakemake.log[0]):
    sinq.bob_generate(
        snakemake.params.cfg,
        w.stage,
        w.who,
        snakemake.input.candidates,
        snakemake.params.model_dir,
        optional_path(snakemake.input.adapter),
        snakemake.output[0],
    )
