# The goalposts the GASP teacher is shown (rule gasp_goalposts).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import step

with step("gasp goalposts", snakemake.log[0]):
    gasp.prepare_goalposts(snakemake.params.cfg, snakemake.params.rows, snakemake.output[0])
