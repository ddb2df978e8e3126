from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_codegen_generate {w.bench} {w.agent}", snakemake.log[0]):
    seq.codegen_generate(snakemake.params.cfg, w.bench, w.agent, i.problems, snakemake.params.model_dir,
                         optional_path(i.adapter), snakemake.output[0])
