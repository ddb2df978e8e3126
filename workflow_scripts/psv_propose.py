from selfplay.pipeline import psv
from selfplay.pipeline.step import step

w = snakemake.wildcards
run_tag = f"{w.setting}/{w.method}/seed{w.rseed}/iter{w.t}"
with step(f"psv propose {run_tag}", snakemake.log[0]):
    psv.propose_generate(
        snakemake.params.cfg,
        w.method,
        run_tag,
        snakemake.input.labelled,
        snakemake.input.fixed,
        snakemake.params.model_dir,
        snakemake.output[0],
    )
