from selfplay.data.sources import humaneval_sources
from selfplay.pipeline.sinq import write_sources
from selfplay.pipeline.step import step

with step(f"humaneval_sources {snakemake.wildcards.split}", snakemake.log[0]):
    write_sources(humaneval_sources(snakemake.wildcards.split), snakemake.output[0])
