# The real training problems of GASP's real-data phases (rule gasp_real_rows).
from selfplay.pipeline import gasp
from selfplay.pipeline.step import optional_path, step

with step("gasp real training problems", snakemake.log[0]):
    gasp.prepare_real_rows(snakemake.params.cfg, optional_path(list(snakemake.input)), snakemake.output[0])
