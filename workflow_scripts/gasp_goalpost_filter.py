# GASP's goalpost filter, Sec. 3.2 stages 1-2 (rule gasp_goalpost_prefilter).
from selfplay.pipeline.step import step
from selfplay.tracks.gasp.goalposts import filter_files

i, o, p = snakemake.input, snakemake.output, snakemake.params
with step("gasp goalpost filter", snakemake.log[0]):
    filter_files(i.rows, dict(zip(p.filters, i.scored)), o.rows, o.records, samples=p.samples)
