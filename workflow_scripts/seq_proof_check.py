from selfplay.pipeline import seq
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_proof_check {w.stage} attempt {w.attempt} shard {w.shard}", snakemake.log[0]):
    seq.proof_check(snakemake.params.cfg, int(w.attempt), i.generations, i.checked, snakemake.output[0])
