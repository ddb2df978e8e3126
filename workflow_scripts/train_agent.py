# LoRA training of one agent of any track (rules train_alice and train_bob).
from selfplay.pipeline import agents
from selfplay.pipeline.step import optional_path, step

track, agent, tag, cfg = (
    snakemake.wildcards.track,
    snakemake.params.agent,
    snakemake.params.tag,
    snakemake.params.cfg,
)
with step(f"{track} train {agent} {tag}", snakemake.log[0]):
    bundled_record = optional_path(snakemake.input.get("restored"))
    if bundled_record:  # config replay_training_from: no model, no training
        agents.restore_agent_training(
            cfg, agent, snakemake.input.trainset, bundled_record, snakemake.output[0], tag
        )
    else:
        agents.train_agent(
            cfg,
            agent,
            snakemake.input.trainset,
            snakemake.params.model_dir,
            snakemake.output[0],
            tag,
            optional_path(snakemake.input.get("previous")),
            track=track,
            gpus=snakemake.params.gpus,
        )
