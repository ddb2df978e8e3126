from selfplay.pipeline import seq
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_check {w.stage} shard {w.shard}", snakemake.log[0]):
    seq.check_programs(
        snakemake.params.cfg,
        w.stage,
        i.generations,
        i.sources,
        snakemake.output[0],
        workers=snakemake.threads,
    )
