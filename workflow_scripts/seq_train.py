from selfplay.pipeline import agents
from selfplay.pipeline.step import optional_path, step

agent = "alice" if snakemake.rule == "seq_train_alice" else "bob"
tag = f"round{snakemake.wildcards.r}" if agent == "alice" else "final"
with step(f"seq_train {agent} {tag}", snakemake.log[0]):
    bundled_record = optional_path(snakemake.input.get("restored"))
    if bundled_record:  # config replay_training_from: no model, no training
        agents.restore_agent_training(snakemake.config, agent, snakemake.input.trainset, bundled_record,
                                      snakemake.output[0], tag)
    else:
        previous = optional_path(snakemake.input.get("previous")) if agent == "alice" else None
        agents.train_agent(snakemake.config, agent, snakemake.input.trainset, snakemake.params.model_dir,
                           snakemake.output[0], tag, previous, track="seq")
