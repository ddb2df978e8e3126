from selfplay.data.sources import mbpp_sources
from selfplay.pipeline.sinq import write_sources
from selfplay.pipeline.step import step

with step(f"sinq_sources_mbpp {snakemake.wildcards.split}", snakemake.log[0]):
    write_sources(mbpp_sources(snakemake.input.parquet, snakemake.wildcards.split), snakemake.output[0])
