# Eq. 7 for one GASP iteration (rule gasp_dissimilarity).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"gasp {w.gmethod} s{w.gseed} iteration {w.gi} dissimilarity", snakemake.log[0]):
    gasp.write_dissimilarity(snakemake.params.cfg, int(w.gi), list(i.accepted), list(i.earlier), snakemake.output[0])
