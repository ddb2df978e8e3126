from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step(f"seq_opinstruct_sources {snakemake.wildcards.split}", snakemake.log[0]):
    seq.translated_sources(
        snakemake.input[0], snakemake.wildcards.split, snakemake.output.kept, snakemake.output.rejected
    )
