from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step("seq_translate_generate", snakemake.log[0]):
    seq.translate_generate(
        snakemake.params.cfg, snakemake.input.python, snakemake.params.model_dir, snakemake.output[0]
    )
