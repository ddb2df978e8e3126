from selfplay.pipeline import seq
from selfplay.pipeline.step import step

with step(snakemake.rule, snakemake.log[0]):
    if snakemake.rule == "seq_translate_generate":
        seq.translate_generate(snakemake.config, snakemake.input.python, snakemake.params.model_dir,
                               snakemake.output[0])
    else:
        seq.translate_filter(snakemake.config, snakemake.input[0], snakemake.output.kept, snakemake.output.rejected)
