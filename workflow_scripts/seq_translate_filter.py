from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step("seq_translate_filter", snakemake.log[0]):
    seq.translate_filter(
        snakemake.params.cfg,
        snakemake.input[0],
        snakemake.output.kept,
        snakemake.output.rejected,
        workers=snakemake.threads,
    )
