# Eq. 7 per iteration of one GASP run (rule gasp_dissimilarity).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import step

w = snakemake.wildcards
with step(f"gasp {w.gmethod} s{w.gseed} dissimilarity", snakemake.log[0]):
    gasp.write_dissimilarity(snakemake.params.cfg, list(snakemake.input.accepted), snakemake.output[0])
