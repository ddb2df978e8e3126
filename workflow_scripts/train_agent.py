# LoRA training of Alice (each round) or Bob (once) for either track: rules
# sinq_train_alice/bob and seq_train_alice/bob (the rule's name says which).
from selfplay.pipeline import agents
from selfplay.pipeline.step import optional_path, step

track, _, agent = snakemake.rule.split("_", 2)
tag = f"round{snakemake.wildcards.r}" if agent == "alice" else "final"
with step(f"{track} train {agent} {tag}", snakemake.log[0]):
    bundled_record = optional_path(snakemake.input.get("restored"))
    if bundled_record:  # config replay_training_from: no model, no training
        agents.restore_agent_training(snakemake.config, agent, snakemake.input.trainset, bundled_record,
                                      snakemake.output[0], tag)
    else:
        previous = optional_path(snakemake.input.get("previous")) if agent == "alice" else None
        agents.train_agent(snakemake.config, agent, snakemake.input.trainset, snakemake.params.model_dir,
                           snakemake.output[0], tag, previous, track=track)
