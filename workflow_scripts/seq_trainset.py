from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step(snakemake.rule, snakemake.log[0]):
    if snakemake.rule == "seq_alice_trainset":
        seq.alice_trainset(snakemake.config, list(snakemake.input), snakemake.output[0])
    else:
        seq.bob_trainset(snakemake.config, list(snakemake.input), snakemake.output[0])
