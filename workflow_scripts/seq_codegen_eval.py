from selfplay.pipeline import seq
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_codegen_eval {w.bench} {w.agent}", snakemake.log[0]):
    seq.codegen_eval(snakemake.params.cfg, i.problems, i.generations, snakemake.output[0], workers=snakemake.threads)
