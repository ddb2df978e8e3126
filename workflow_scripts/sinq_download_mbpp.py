from selfplay.data.sources import download_checked, mbpp_url
from selfplay.pipeline.step import step
from selfplay.records import write_text_atomic

split = snakemake.wildcards.split
with step(f"download MBPP {split}", snakemake.log[0], offline=False) as log:
    pinned = (snakemake.params.sha256 or {}).get(split)
    url = mbpp_url(split, snakemake.params.revision)
    got = download_checked(url, snakemake.output.parquet, pinned)
    if not pinned:
        log.warning("MBPP %s has no pinned sha256 in config (sinq.sources.mbpp_sha256.%s); observed %s: pin it",
                    split, split, got)
    write_text_atomic(snakemake.output.sha256, f"{got}  {split}.parquet\n")
