from selfplay.pipeline import psv
from selfplay.pipeline.step import step

with step(f"psv table 6 training set {snakemake.wildcards.condition}", snakemake.log[0]):
    psv.table6_trainset(snakemake.params.cfg, list(snakemake.input), snakemake.output[0])
