# A round's pass matrices (rule evolve_matrix).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import optional_path, step

with step(f"evolve round {snakemake.wildcards.er} matrix", snakemake.log[0]):
    evolve.round_matrices(
        snakemake.params.cfg,
        snakemake.input.suite,
        snakemake.input.pool,
        snakemake.output[0],
        previous_path=optional_path(snakemake.input.previous),
    )
