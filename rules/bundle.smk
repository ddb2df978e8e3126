# The archival reproduction bundle: `snakemake bundle` packs a finished run into
# results/bundle/<name>.tar.gz (docs/bundle.md); `selfplay bundle replay` re-derives
# every table from it without a model. Not part of `all`: ask for it by name.

BUNDLE = config.get("bundle") or {}
BUNDLE_NAME = BUNDLE.get("name") or config[TRACKS[0]]["experiment"]


def sinq_bundle_parts():
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
        "log_dirs": [SINQ_LOG, "logs/sinq/sources", SINQ_BENCH, "benchmarks/sinq/sources"],
    }


def seq_bundle_parts():
    """Every file of the Haskell track's run that goes into the bundle, by part."""
    stages = seq_stages()
    whos = lambda stage: ("untrained",) if stage.startswith("round") else ("untrained", "trained")
    shards = lambda folder: [f"{SEQ_EXP}/{folder}/shard{s}.jsonl" for s in SEQ_SHARDS]
    recordings, verdicts = [f"{SEQ_EXP}/translate/generations.jsonl"], []
    for stage in stages:
        recordings += shards(f"{stage}/alice")
        verdicts += shards(f"{stage}/checked")
        for a in range(1, SEQ_ATTEMPTS + 1):
            recordings += shards(f"{stage}/proof_gen{a}")
            verdicts += shards(f"{stage}/proof_check{a}")
        verdicts += seq_candidates(stage)
        for who in whos(stage):
            recordings += shards(f"{stage}/bob_{who}")
            verdicts += seq_labeled(stage, who)
    for bench in SEQ_CODEGEN["benchmarks"]:
        for agent in SEQ_CODEGEN_AGENTS:
            recordings.append(f"{SEQ_EXP}/codegen/{bench}/{agent}.jsonl")
            verdicts.append(f"{SEQ_EXP}/codegen/{bench}/{agent}.scored.jsonl")
    reports = seq_report_targets()
    tables = [p for p in reports if p.startswith("results/tables/")]
    figures = [p for p in reports if p.startswith("results/figures/")]
    return {
        "data": [f"resources/data/seq/{SEQ_DATASET}_{split}{kind}.jsonl" for split in ("train", "test")
                 for kind in ("", ".rejected")],
        "recordings": recordings,
        "verdicts": verdicts + [f"{SEQ_EXP}/translate/translated.jsonl"],
        "trainsets": [f"{SEQ_EXP}/round{r}/train_alice.jsonl" for r in range(1, SEQ_ROUNDS + 1)]
        + [f"{SEQ_EXP}/bob/train_bob.jsonl"],
        "adapters": [f"{SEQ_EXP}/round{r}/adapter_alice" for r in range(1, SEQ_ROUNDS + 1)]
        + [f"{SEQ_EXP}/bob/adapter"],
        # Each Markdown table's CSV twin and each figure's data are compared byte for byte too.
        "tables": tables + [p[: -len(".md")] + ".csv" for p in tables] + [p[: -len(".png")] + ".csv" for p in figures],
        "figures": figures,
        "log_dirs": [SEQ_LOG, "logs/seq/sources", SEQ_BENCH, "benchmarks/seq/sources"],
    }


def bundle_parts(wildcards=None):
    """The parts of every track this run builds (config tracks), merged."""
    per_track = {"sinq": sinq_bundle_parts, "seq": seq_bundle_parts}
    merged = {}
    for track in TRACKS:
        for part, files in per_track[track]().items():
            merged.setdefault(part, []).extend(files)
    return merged


def bundle_inputs(wildcards=None):
    return {part: files for part, files in bundle_parts().items() if part != "log_dirs"}


rule bundle:
    input:
        unpack(bundle_inputs),
    output:
        f"results/bundle/{BUNDLE_NAME}.tar.gz",
    params:
        name=BUNDLE_NAME,
        tracks=TRACKS,
        include_adapters=bool(BUNDLE.get("include_adapters", False)),
        report=bool(BUNDLE.get("report", True)),
        snakefile=workflow.main_snakefile,
        log_dirs=bundle_parts()["log_dirs"],
    log:
        f"logs/bundle/{BUNDLE_NAME}.log",
    localrule: True
    script:
        "../workflow_scripts/bundle.py"
