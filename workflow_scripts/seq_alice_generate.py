from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_alice_generate {w.stage} shard {w.shard}", snakemake.log[0]):
    seq.alice_generate(
        snakemake.params.cfg,
        w.stage,
        int(w.shard),
        i.sources,
        snakemake.params.model_dir,
        optional_path(i.adapter),
        snakemake.output[0],
        regime_path=optional_path(i.regime),
    )
