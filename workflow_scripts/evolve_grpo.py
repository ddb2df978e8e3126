# GRPO from the base model on one round's dataset (rule evolve_grpo).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

r = int(snakemake.wildcards.er)
with step(f"evolve GRPO on round {r}", snakemake.log[0]):
    evolve.grpo_round(snakemake.params.cfg, r, snakemake.input.suite, snakemake.input.dataset,
                      snakemake.params.model_dir, snakemake.output.adapter, snakemake.output.rollouts)
