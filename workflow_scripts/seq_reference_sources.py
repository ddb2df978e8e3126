from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step(f"seq_reference_sources {snakemake.wildcards.split}", snakemake.log[0]):
    seq.reference_sources(
        snakemake.params.cfg,
        snakemake.wildcards.split,
        snakemake.output.kept,
        snakemake.output.rejected,
        workers=snakemake.threads,
    )
