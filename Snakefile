# The reproducible-paper pipeline. `snakemake --cores 2` runs the embedded default
# (config.yaml); `--configfile config/papers/<paper>.yaml` runs a paper's settings.
# Any table or figure path is a target of its own, e.g.
#   snakemake --cores 2 results/tables/sinq/table1.md
#   snakemake --cores 2 results/figures/seq/default/figure6.png
# `snakemake --cores 2 bundle` packs a finished run for archiving (docs/bundle.md).
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "rules/common.smk"
include: "rules/models.smk"
include: "rules/sinq.smk"


if "seq" in config:

    include: "rules/seq.smk"


include: "rules/bundle.smk"


rule all:
    default_target: True
    input:
        sinq_report_targets() if "sinq" in TRACKS else [],
        seq_report_targets() if "seq" in TRACKS else [],


onsuccess:
    print_outputs_summary()
