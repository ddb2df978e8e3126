# GASP's goalpost filter, Sec. 3.2 stage 3: the final RL run's checkpoints (rule gasp_goalpost_filter).
from selfplay.pipeline.step import step
from selfplay.tracks.gasp.goalposts import final_filter_files

i, o, p = snakemake.input, snakemake.output, snakemake.params
with step("gasp goalpost filter (final RL)", snakemake.log[0]):
    final_filter_files(
        i.rows, i.records, dict(zip(p.filters, i.scored)), o.rows, o.records, samples=p.samples
    )
