# The seed problems of every configured source (rule evolve_seeds).
from pathlib import Path

from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step("evolve seeds", snakemake.log[0]):
    downloaded = {Path(d).name: d for d in snakemake.input.downloaded}
    evolve.prepare_seeds(snakemake.params.cfg, snakemake.output.seeds, snakemake.output.skipped, downloaded)
