# RFT: a solver LoRA adapter trained from its base model (or a bundle's record restored).
from selfplay.pipeline import agents
from selfplay.pipeline.step import optional_path, step

cfg, tag = snakemake.params.cfg, snakemake.params.tag
with step(f"psv train solver {tag}", snakemake.log[0]):
    bundled_record = optional_path(snakemake.input.get("restored"))
    if bundled_record:
        agents.restore_agent_training(
            cfg, "solver", snakemake.input.trainset, bundled_record, snakemake.output[0], tag
        )
    else:  # every iteration trains from the base model; no examples: the base model is kept
        agents.train_agent(
            cfg,
            "solver",
            snakemake.input.trainset,
            snakemake.params.model_dir,
            snakemake.output[0],
            tag,
            None,
            track="psv",
            gpus=snakemake.params.gpus,
        )
