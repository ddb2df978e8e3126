from selfplay.pipeline import seq
from selfplay.pipeline.step import optional_path, step

w, o = snakemake.wildcards, snakemake.output
with step(f"seq_codegen_problems {w.bench}", snakemake.log[0]):
    seq.codegen_problems(snakemake.params.cfg, w.bench, optional_path(list(snakemake.input)), o.problems, o.skipped)
