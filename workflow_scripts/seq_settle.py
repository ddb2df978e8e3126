from selfplay.pipeline import seq
from selfplay.pipeline.step import step

w = snakemake.wildcards
with step(f"seq_settle {w.stage} shard {w.shard}", snakemake.log[0]):
    seq.settle_candidates(snakemake.input.checked, list(snakemake.input.checks), snakemake.output[0])
