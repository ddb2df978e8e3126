from selfplay.pipeline.step import step
from selfplay.report.sinq import yield_table

with step("sinq_yield", snakemake.log[0]):
    stages = {
        s: {
            "candidates": list(snakemake.input[f"{s}_candidates"]),
            "labeled": list(snakemake.input[f"{s}_labeled"]),
        }
        for s in snakemake.params.stages
    }
    yield_table(
        stages,
        snakemake.params.hard_threshold,
        snakemake.output.csv,
        snakemake.output.md,
        snakemake.output.reasons,
    )
