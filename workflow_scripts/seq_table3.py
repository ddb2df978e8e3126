from selfplay.pipeline.step import step
from selfplay.report import seq as report

i, o, benches = snakemake.input, snakemake.output, list(snakemake.params.benchmarks)
with step("seq_table3", snakemake.log[0]):
    summaries = {(b, a): i[f"{b}_{a}"] for b in benches for a in ("base", "alice", "bob")}
    report.table3(summaries, benches, o.csv, o.md)
