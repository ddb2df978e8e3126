# The reproducible-paper pipeline. `snakemake --cores 2` runs the embedded default
# (config.yaml); `--configfile config/papers/<paper>.yaml` runs a paper's settings.
# Any table or figure path is a target of its own, e.g.
#   snakemake --cores 2 results/tables/sinq/table1.md
#   snakemake --cores 2 results/figures/seq/default/figure6.png
# `snakemake --cores 2 bundle` packs a finished run for archiving (docs/bundle.md).
from snakemake.utils import min_version

min_version("9.0")


# config.yaml, unless --configfile names the config(s) to use: then exactly those files,
# merged left to right (a paper config means what it says; an overlay on the default is
# `--configfile config.yaml my_overlay.yaml`). Keys left out take the schema's defaults.
if not workflow.overwrite_configfiles:

    configfile: f"{workflow.basedir}/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/agents.smk"
include: "rules/data.smk"
include: "rules/evaluate.smk"


# One rules file per registered track with a config section (selfplay.tracks.registry).
for _track in LOADED_TRACKS:

    include: f"rules/{_track}.smk"


include: "rules/models.smk"
include: "rules/bundle.smk"


rule all:
    default_target: True
    input:
        all_targets(),


onsuccess:
    print_outputs_summary()
