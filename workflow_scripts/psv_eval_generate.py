from selfplay.pipeline import psv
from selfplay.pipeline.step import optional_path, step

w = snakemake.wildcards
with step(f"psv evaluate {w.setting}/{w.method}/seed{w.rseed}/model{w.t} on {w.pset}", snakemake.log[0]):
    tag = f"{w.setting}/{w.method}/seed{w.rseed}/model{w.t}"
    psv.eval_generate(snakemake.params.cfg, tag, snakemake.input.problems, snakemake.params.model_dir,
                      optional_path(snakemake.input.adapter), snakemake.output[0],
                      optional_path(snakemake.input.exemplars))
