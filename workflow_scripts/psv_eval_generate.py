from selfplay.pipeline import psv
from selfplay.pipeline.step import optional_path, step

tag = snakemake.params.tag
with step(f"psv evaluate {tag} on {snakemake.wildcards.pset}", snakemake.log[0]):
    psv.eval_generate(
        snakemake.params.cfg,
        tag,
        snakemake.input.problems,
        snakemake.params.model_dir,
        optional_path(snakemake.input.adapter),
        snakemake.output[0],
        optional_path(snakemake.input.get("exemplars")),
    )
