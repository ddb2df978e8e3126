from selfplay.pipeline import sinq
from selfplay.pipeline.step import step

with step("sinq_bob_trainset", snakemake.log[0]):
    sinq.bob_trainset(list(snakemake.input), snakemake.output[0])
