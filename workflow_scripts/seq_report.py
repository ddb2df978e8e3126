# One script for the Haskell track's tables and figures (the rule's name says which).
from selfplay.pipeline.step import step
from selfplay.report import seq as report

rule, i, o = snakemake.rule, snakemake.input, snakemake.output
with step(rule, snakemake.log[0]):
    if rule == "seq_table2":
        labeled = {(split, who): list(i[f"{split}_{who}"]) for split in ("train", "test")
                   for who in ("untrained", "trained")}
        report.table2(labeled, snakemake.params.dataset, o.csv, o.md)
    elif rule == "seq_table6":
        from selfplay.tracks.seq.proofs import liquid_settings

        rounds = {name: list(i[name]) for name in i.keys()}
        report.table6(rounds, o.csv, o.md, liquid_missing=liquid_settings(snakemake.config).command is None)
    elif rule == "seq_data_yield":
        d = snakemake.params.dataset
        parts = {f"{d} (train)": (i.sources_train, i.sources_train_rejected),
                 f"{d} (test)": (i.sources_test, i.sources_test_rejected),
                 "translated by the model": (i.translated, i.translated_rejected)}
        report.data_yield(parts, o.csv, o.md)
    elif rule == "seq_regimes":
        from selfplay.tracks.seq.regimes import write_regimes

        if snakemake.params.per_round is None:
            raise ValueError("seq.sources.per_round is null: the regimes need E0's P as a number")
        write_regimes(i[0], int(snakemake.params.per_round), o[0])
    elif rule == "seq_table3":
        scored = {(b, a): i[f"{b}_{a}"] for b in snakemake.params.benchmarks for a in ("base", "alice", "bob")}
        report.table3(scored, list(snakemake.params.benchmarks), o.csv, o.md)
    elif rule == "seq_table8":
        report.table8(dict(zip(snakemake.params.experiments, list(i))), o.csv, o.md)
    else:
        figure = {"seq_figure3": report.figure3, "seq_figure6": report.figure6, "seq_figure7": report.figure7}[rule]
        figure({name: list(i[name]) for name in i.keys()}, o.png, o.pdf, o.csv)
