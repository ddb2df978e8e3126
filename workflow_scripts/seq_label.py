from selfplay.pipeline import seq
from selfplay.pipeline.step import step

w, i = snakemake.wildcards, snakemake.input
with step(f"seq_label[{w.who}] {w.stage} shard {w.shard}", snakemake.log[0]):
    seq.label_instances(w.stage, w.who, i.candidates, i.bob, snakemake.output[0])
