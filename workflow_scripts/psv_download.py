# One of the paper's Verus sets at its pinned commit (needs network: a local rule).
from selfplay.data.verus_sets import download_verus_dataset
from selfplay.pipeline.step import step

name, spec = snakemake.wildcards.pset, snakemake.params.cfg["psv"]["problem_sets"][snakemake.wildcards.pset]
with step(f"download PSV set {name}", snakemake.log[0], offline=False) as log:
    download_verus_dataset(
        spec["dataset"], snakemake.output[0], log, spec.get("sha256"), f"psv.problem_sets.{name}.sha256"
    )
