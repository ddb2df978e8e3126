from selfplay.pipeline.step import step
from selfplay.tracks.seq.regimes import write_regimes

with step("seq_regimes", snakemake.log[0]):
    write_regimes(snakemake.input[0], snakemake.params.per_round, snakemake.output[0])
