# GRPO from the base model on one round's dataset, or a bundle's record restored (rule evolve_grpo).
# With more than one GPU the training runs under accelerate launch, one process per GPU.
from selfplay.pipeline import evolve
from selfplay.pipeline.step import optional_path, step

r, i, o = int(snakemake.wildcards.er), snakemake.input, snakemake.output
gpus = snakemake.params.gpus
with step(f"evolve GRPO on round {r}", snakemake.log[0]):
    bundled = optional_path(i.get("restored"))
    if bundled:
        evolve.restore_grpo_round(
            snakemake.params.cfg,
            i.dataset,
            bundled,
            o.adapter,
            o.rollouts,
            optional_path(i.restored_rollouts),
        )
    elif gpus > 1:
        evolve.launch_grpo_round(
            snakemake.params.cfg,
            r,
            i.suite,
            i.dataset,
            snakemake.params.model_dir,
            o.adapter,
            o.rollouts,
            gpus=gpus,
            log_path=snakemake.log[0],
        )
    else:
        evolve.grpo_round(
            snakemake.params.cfg,
            r,
            i.suite,
            i.dataset,
            snakemake.params.model_dir,
            o.adapter,
            o.rollouts,
            gpus=gpus,
        )
