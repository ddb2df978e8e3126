# The archival reproduction bundle: `snakemake bundle` packs a finished run into
# results/bundle/<name>.tar.gz (docs/bundle.md); `selfplay bundle replay` re-derives
# every table from it without a model. Not part of `all`: ask for it by name. Each
# track's rules file lists its parts (TRACK_OUTPUTS[track]["bundle"]).

from selfplay.bundle.pack import merge_parts

BUNDLE_NAME = config["bundle"]["name"] or config[TRACKS[0]]["experiment"]
# each track's parts, then the benchmark layer's own check (evaluation.check)
BUNDLE_PARTS = merge_parts([TRACK_OUTPUTS[t]["bundle"]() for t in TRACKS], eval_bundle_parts())
# the outputs of the tracks' Snakemake checkpoints (GASP's selections): the parts that
# follow from them (checkpointed_bundle_parts) are known once these are made
BUNDLE_CHECKPOINTS = [f for t in TRACKS for f in TRACK_OUTPUTS[t].get("checkpoints", list)()]


rule bundle:
    input:
        **{part: files for part, files in BUNDLE_PARTS.items() if part != "log_dirs"},
        checkpoints=BUNDLE_CHECKPOINTS,
        checkpointed=lambda w: [f for files in checkpointed_bundle_parts().values() for f in files],
    output:
        f"results/bundle/{BUNDLE_NAME}.tar.gz",
    log:
        f"logs/bundle/{BUNDLE_NAME}.log",
    localrule: True
    container:
        image("python")
    params:
        name=BUNDLE_NAME,
        tracks=TRACKS,
        include_adapters=config["bundle"]["include_adapters"],
        report=config["bundle"]["report"],
        snakefile=workflow.main_snakefile,
        log_dirs=BUNDLE_PARTS["log_dirs"],
        checkpointed=lambda w: checkpointed_bundle_parts(),
        # the bundle records the whole config: any change makes a new bundle
        config=config,
    script:
        "../workflow_scripts/bundle.py"
