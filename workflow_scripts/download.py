# A pinned download (needs network: a local rule on the machine that runs snakemake).
from selfplay.data.sources import download_pinned
from selfplay.pipeline.step import step

p = snakemake.params
with step(f"download {snakemake.output.file}", snakemake.log[0], offline=False) as log:
    download_pinned(p.url, snakemake.output.file, p.sha256, p.pin_key, log,
                    sha256_out=snakemake.output.get("sha256"))
