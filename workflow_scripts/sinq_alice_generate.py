from selfplay.pipeline import sinq
from selfplay.pipeline.step import optional_path, step

w = snakemake.wildcards
with step(f"sinq_alice_generate {w.stage} shard {w.shard}", snakemake.log[0]):
    sinq.alice_generate(
        snakemake.params.cfg,
        w.stage,
        int(w.shard),
        snakemake.input.sources,
        snakemake.params.model_dir,
        optional_path(snakemake.input.adapter),
        snakemake.output[0],
    )
