from selfplay.pipeline import sinq
from selfplay.pipeline.step import step

with step(f"sinq_alice_trainset round {snakemake.wildcards.r}", snakemake.log[0]):
    sinq.alice_trainset(snakemake.params.cfg, list(snakemake.input), snakemake.output[0])
