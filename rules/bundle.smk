# The archival reproduction bundle: `snakemake bundle` packs a finished run into
# results/bundle/<name>.tar.gz (docs/bundle.md); `selfplay bundle replay` re-derives
# every table from it without a model. Not part of `all`: ask for it by name. Each
# track's rules file lists its parts (TRACK_OUTPUTS[track]["bundle"]).

BUNDLE_NAME = config["bundle"]["name"] or config[TRACKS[0]]["experiment"]
BUNDLE_PARTS = {}
for _track in TRACKS:
    for _part, _files in TRACK_OUTPUTS[_track]["bundle"]().items():
        BUNDLE_PARTS.setdefault(_part, []).extend(_files)
# the benchmark layer's own check (evaluation.check), shared by the tracks
for _part, _files in eval_bundle_parts().items():
    _have = BUNDLE_PARTS.setdefault(_part, [])
    _have.extend(f for f in _files if f not in _have)


rule bundle:
    input:
        **{part: files for part, files in BUNDLE_PARTS.items() if part != "log_dirs"},
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
        # the bundle records the whole config: any change makes a new bundle
        config=config,
    script:
        "../workflow_scripts/bundle.py"
