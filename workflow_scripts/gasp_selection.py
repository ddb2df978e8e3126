# Table 3's checkpoint of one GASP run (checkpoint rule gasp_selection).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import step

w, p = snakemake.wildcards, snakemake.params
with step(f"gasp {w.gmethod} s{w.gseed} selection", snakemake.log[0]):
    gasp.write_selection(dict(zip(p.tags, snakemake.input.sampled)), p.rule, snakemake.output[0])
