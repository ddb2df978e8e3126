from selfplay.bundle.pack import PART_KINDS, make_bundle
from selfplay.pipeline.step import step

with step("bundle", snakemake.log[0]):
    # each part's files, then those that followed from the tracks' checkpoints
    parts = {
        part: [str(p) for p in snakemake.input.get(part, [])]
        + list(snakemake.params.checkpointed.get(part, []))
        for part in PART_KINDS
    }
    make_bundle(
        out_path=snakemake.output[0],
        name=snakemake.params.name,
        config=snakemake.params.config,
        parts=parts,
        adapters=[str(p) for p in snakemake.input.adapters],
        log_dirs=list(snakemake.params.log_dirs),
        include_adapters=snakemake.params.include_adapters,
        with_report=snakemake.params.report,
        snakefile=snakemake.params.snakefile,
        tracks=list(snakemake.params.tracks),
    )
