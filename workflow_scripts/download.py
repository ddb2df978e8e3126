# A pinned download (needs network: a local rule on the machine that runs snakemake): a
# hub branch in the URL is replaced by its commit (recorded in config/revision-pins.tsv at
# the first download), and a file config does not pin by sha256 is checked against, or
# first recorded in, config/download-pins.tsv.
from selfplay.data.sources import download_pinned
from selfplay.evaluate.pins import LOCK_FILE
from selfplay.llm.model_prep import pin_hub_url
from selfplay.pipeline.step import step

p = snakemake.params
with step(f"download {snakemake.output.file}", snakemake.log[0], offline=False) as log:
    download_pinned(
        pin_hub_url(p.url, log_=log),
        snakemake.output.file,
        p.sha256,
        p.pin_key,
        log,
        sha256_out=snakemake.output.get("sha256"),
        lock_path=LOCK_FILE,
    )
