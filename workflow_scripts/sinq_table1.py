from selfplay.pipeline.step import step
from selfplay.report.sinq import table1

with step("sinq_table1", snakemake.log[0]):
    labeled = {
        (split, who): list(snakemake.input[f"{split}_{who}"])
        for split in ("train", "test")
        for who in ("untrained", "trained")
    }
    table1(labeled, snakemake.params.dataset, snakemake.output.csv, snakemake.output.md)
