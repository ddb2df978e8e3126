from selfplay.pipeline.step import step
from selfplay.report import seq as report
from selfplay.tracks.seq.proofs import liquid_settings

i, o = snakemake.input, snakemake.output
with step("seq_table6", snakemake.log[0]):
    rounds = {name: list(i[name]) for name in i.keys()}
    report.table6(rounds, o.csv, o.md, liquid_missing=liquid_settings(snakemake.params.cfg).command is None)
