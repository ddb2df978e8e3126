from selfplay.pipeline import psv
from selfplay.pipeline.step import optional_path, step

w = snakemake.wildcards
with step(f"psv solve {w.setting}/{w.method}/seed{w.rseed} iter{w.t}", snakemake.log[0]):
    tag = psv.model_tag(w.setting, w.method, int(w.rseed), int(w.t))
    psv.solve_generate(
        snakemake.params.cfg,
        tag,
        snakemake.input.pool,
        snakemake.params.model_dir,
        optional_path(snakemake.input.adapter),
        snakemake.output[0],
    )
