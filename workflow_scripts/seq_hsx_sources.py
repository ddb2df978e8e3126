from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step(f"seq_hsx_sources {snakemake.wildcards.split}", snakemake.log[0]):
    seq.hsx_sources(
        snakemake.params.cfg,
        snakemake.input[0],
        snakemake.wildcards.split,
        snakemake.output.kept,
        snakemake.output.rejected,
        workers=snakemake.threads,
    )
