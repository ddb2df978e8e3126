from selfplay.llm.model_prep import prepare_model
from selfplay.pipeline.step import step

model = snakemake.params.model
with step("prepare_model", snakemake.log[0], offline=model["source"] != "hf"):
    prepare_model(model, snakemake.output[0])
