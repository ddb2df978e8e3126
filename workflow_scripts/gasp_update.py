# One GASP update on a phase's recorded rollouts, or a bundle's record restored (rule gasp_update).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"gasp {w.gmethod} s{w.gseed} iteration {w.gi} {w.gphase} update", snakemake.log[0]):
    bundled = optional_path(i.get("restored"))
    if bundled:
        gasp.restore_update(bundled, snakemake.output[0])
    else:
        gasp.run_update(
            snakemake.params.cfg,
            w.gmethod,
            int(w.gseed),
            snakemake.params.model_dir,
            optional_path(i.get("previous")),
            i.rollouts,
            snakemake.output[0],
            gpus=snakemake.params.gpus,
            log_path=snakemake.log[0],
            phase=w.gphase,
            evaluated=snakemake.params.get("evaluated"),
        )
