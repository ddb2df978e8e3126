# One benchmark file, pinned by revision and sha256 (selfplay.evaluate.pins); needs network.
from selfplay.evaluate import pins
from selfplay.pipeline.step import step

p = snakemake.params
with step(f"download {snakemake.output.file}", snakemake.log[0], offline=False) as log:
    pins.download(p.url, snakemake.output.file, p.key, p.config_sha256, p.spec_sha256, p.lock, log)
