from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step("seq_opinstruct_python", snakemake.log[0]):
    seq.opinstruct_python(snakemake.params.cfg, snakemake.input[0], snakemake.output[0])
