from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_bob_generate[{w.who}] {w.stage} shard {w.shard}", snakemake.log[0]):
    seq.bob_generate(
        snakemake.params.cfg,
        w.stage,
        w.who,
        i.candidates,
        snakemake.params.model_dir,
        optional_path(i.adapter),
        snakemake.output[0],
    )
