from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step(f"seq_alice_trainset round {snakemake.wildcards.r}", snakemake.log[0]):
    seq.alice_trainset(snakemake.params.cfg, list(snakemake.input), snakemake.output[0])
