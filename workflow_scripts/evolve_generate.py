# A round's adversarial and discriminative answers (rule evolve_generate).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

r = int(snakemake.wildcards.er)
with step(f"evolve round {r} tests", snakemake.log[0]):
    evolve.evolve_generate(
        snakemake.params.cfg,
        r,
        snakemake.input.suite,
        snakemake.input.pool,
        snakemake.input.matrix,
        snakemake.params.model_dir,
        snakemake.output[0],
    )
