from selfplay.pipeline.step import step
from selfplay.report import seq as report

i, o, d = snakemake.input, snakemake.output, snakemake.params.dataset
with step("seq_data_yield", snakemake.log[0]):
    parts = {
        f"{d} (train)": (i.sources_train, i.sources_train_rejected),
        f"{d} (test)": (i.sources_test, i.sources_test_rejected),
        "translated by the model": (i.translated, i.translated_rejected),
    }
    report.data_yield(parts, o.csv, o.md)
