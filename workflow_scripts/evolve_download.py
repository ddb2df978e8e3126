# One EvolveCoder seed dataset at its pinned revision (needs network; rule evolve_download).
from selfplay.pipeline import evolve
from selfplay.pipeline.step import step

with step(f"evolve download {snakemake.wildcards.esource}", snakemake.log[0], offline=False) as log:
    evolve.download_seed_source(snakemake.params.cfg, snakemake.wildcards.esource, snakemake.output[0], log)
