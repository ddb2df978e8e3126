# GASP Figure 10: buffer dissimilarity (Eq. 7) per iteration (rule gasp_dissimilarity_figure).
from selfplay.pipeline.step import step
from selfplay.report import gasp

o = snakemake.output
with step("gasp figure 10", snakemake.log[0]):
    gasp.dissimilarity_figure(snakemake.params.runs, o.png, o.pdf, o.csv)
