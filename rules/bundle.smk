# The archival reproduction bundle: `snakemake bundle` packs a finished run into
# results/bundle/<name>.tar.gz (docs/bundle.md); `selfplay bundle replay` re-derives
# every table from it without a model. Not part of `all`: ask for it by name.

BUNDLE = config.get("bundle") or {}
BUNDLE_NAME = BUNDLE.get("name") or SINQ["experiment"]


def sinq_bundle_parts(wildcards=None):
    """Every file of the SInQ run that goes into the bundle, by part (see selfplay.bundle.pack)."""
    stages = sinq_yield_stages()
    evals = [s for s in stages if not s.startswith("round")]
    whos = lambda stage: ("untrained", "trained") if stage in evals else ("untrained",)
    shards = lambda pattern: [pattern.format(s=s) for s in SINQ_SHARDS]
    recordings, verdicts = [], []
    for stage in stages:
        recordings += shards(f"{SINQ_EXP}/{stage}/alice/shard{{s}}.jsonl")
        verdicts += sinq_candidates(stage)
        for who in whos(stage):
            recordings += shards(f"{SINQ_EXP}/{stage}/bob_{who}/shard{{s}}.jsonl")
            verdicts += sinq_labeled(stage, who)
    reports = sinq_report_targets()
    return {
        "data": sorted({f"resources/data/sinq/{SINQ_DATASET}_{sinq_stage_split(s)}.jsonl" for s in stages}),
        "recordings": recordings,
        "verdicts": verdicts,
        "trainsets": [f"{SINQ_EXP}/round{r}/train_alice.jsonl" for r in range(1, SINQ_ROUNDS + 1)]
        + [f"{SINQ_EXP}/bob/train_bob.jsonl"],
        "adapters": [f"{SINQ_EXP}/round{r}/adapter_alice" for r in range(1, SINQ_ROUNDS + 1)]
        + [f"{SINQ_EXP}/bob/adapter"],
        # Tables are compared byte for byte by `selfplay bundle replay`; figures are kept as they are.
        "tables": [p for p in reports if p.startswith("results/tables/")]
        + ["results/tables/sinq/yield_reasons.csv", "results/figures/sinq/figure2.csv"],
        "figures": [p for p in reports if p.startswith("results/figures/")],
    }


rule bundle:
    input:
        unpack(sinq_bundle_parts),
    output:
        f"results/bundle/{BUNDLE_NAME}.tar.gz",
    params:
        name=BUNDLE_NAME,
        include_adapters=bool(BUNDLE.get("include_adapters", False)),
        report=bool(BUNDLE.get("report", True)),
        snakefile=workflow.main_snakefile,
        log_dirs=[SINQ_LOG, "logs/sinq/sources", SINQ_BENCH, "benchmarks/sinq/sources"],
    log:
        f"logs/bundle/{BUNDLE_NAME}.log",
    localrule: True
    script:
        "../workflow_scripts/bundle.py"
