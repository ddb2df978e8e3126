from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step("seq_bob_trainset", snakemake.log[0]):
    seq.bob_trainset(list(snakemake.input), snakemake.output[0])
