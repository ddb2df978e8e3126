from selfplay.data import sources
from selfplay.pipeline.sinq import write_sources
from selfplay.pipeline.step import step

split = snakemake.wildcards.split
with step(f"sinq_sources {split}", snakemake.log[0]):
    if "parquet" in snakemake.input.keys():
        programs = sources.mbpp_sources(snakemake.input.parquet, split)
    else:
        programs = sources.humaneval_sources(split)
    write_sources(programs, snakemake.output[0])
