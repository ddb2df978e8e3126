from selfplay.pipeline.step import step
from selfplay.report import seq as report

i, o = snakemake.input, snakemake.output
with step("seq_table2", snakemake.log[0]):
    labeled = {
        (split, who): list(i[f"{split}_{who}"])
        for split in ("train", "test")
        for who in ("untrained", "trained")
    }
    report.table2(labeled, snakemake.params.dataset, o.csv, o.md)
