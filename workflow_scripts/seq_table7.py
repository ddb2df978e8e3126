from selfplay.pipeline.step import step
from selfplay.report.seq import table7

p = snakemake.params
with step("seq_table7", snakemake.log[0]):
    files = {tuple(key.split("|")): path for key, path in snakemake.input.items()}
    table7(files, list(p.rows), list(p.experiments), snakemake.output.csv, snakemake.output.md)
