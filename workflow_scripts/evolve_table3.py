# EvolveCoder Table 3: pass@1 of the base model and each round's GRPO policy on the benchmark layer.
from selfplay.pipeline.step import step
from selfplay.report import evolve

with step("evolve table 3", snakemake.log[0]):
    files = {tuple(k.split("|")): v for k, v in snakemake.input.items() if "|" in k}
    training = {
        k[len("training_") :]: f"{v}/training_record.json"
        for k, v in snakemake.input.items()
        if k.startswith("training_")
    }
    evolve.table3(
        files,
        snakemake.params.models,
        snakemake.output.csv,
        snakemake.output.md,
        training=training,
        notes=snakemake.params.notes,
    )
