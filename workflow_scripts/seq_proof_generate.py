from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_proof_generate {w.stage} attempt {w.attempt} shard {w.shard}", snakemake.log[0]):
    seq.proof_generate(
        snakemake.params.cfg,
        w.stage,
        int(w.attempt),
        i.checked,
        optional_path(i.previous),
        snakemake.params.model_dir,
        optional_path(i.adapter),
        snakemake.output[0],
    )
