# SInQ: the program semantic inequivalence game (paper 001), Python track.
# Stages: round1..roundR (Alice trains each round from the base model on the
# accumulated set; Bob is the untrained base model), then Bob trains once, then the
# intrinsic evaluation (eval_train / eval_test) and the paper's tables and figure.
# Per stage and shard: Alice -> candidates (parsed, verified in the sandbox) -> Bob's
# N answers -> labels. Training: rules/agents.smk. Each job gets the config values it
# reads as params (cfg_of), so a changed setting reruns exactly what depends on it.
from selfplay.data.sources import mbpp_url
from selfplay.tracks.sinq.evaluation import FIGURE3, FIGURE4, TABLES as SINQ_EVAL_TABLES
from selfplay.tracks.sinq.outputs import bundle_files as sinq_bundle_files
from selfplay.tracks.sinq.outputs import sinq_outputs

SINQ_EXP = exp_dir("sinq")
SINQ_LOG = log_dir("sinq")
SINQ_BENCH = bench_dir("sinq")
SINQ_DATASET = config["sinq"]["sources"]["dataset"]
# the tables and figures, and the benchmark runs each draws
SINQ_OUT = sinq_outputs(config)

TRACK_OUTPUTS["sinq"] = {
    "report": lambda: SINQ_OUT.reports,
    "bundle": lambda: track_bundle_parts("sinq", **sinq_bundle_files(config, SINQ_OUT)),
}


rule sinq_download_mbpp:
    output:
        file="resources/downloads/mbpp/{split}.parquet",
        sha256="resources/downloads/mbpp/{split}.parquet.sha256",
    log:
        "logs/sinq/sources/download_mbpp_{split}.log",
    localrule: True
    container:
        image("python")
    params:
        url=lambda w: mbpp_url(w.split, config["sinq"]["sources"]["mbpp_revision"]),
        sha256=lambda w: config["sinq"]["sources"]["mbpp_sha256"][w.split],
        pin_key=lambda w: f"sinq.sources.mbpp_sha256.{w.split}",
    script:
        "../workflow_scripts/download.py"


rule sinq_sources_mbpp:
    input:
        parquet="resources/downloads/mbpp/{split}.parquet",
    output:
        "resources/data/sinq/mbpp_{split}.jsonl",
    log:
        "logs/sinq/sources/mbpp_{split}.log",
    container:
        image("python")
    script:
        "../workflow_scripts/sinq_sources_mbpp.py"


rule sinq_alice_generate:
    input:
        sources=lambda w: f"resources/data/sinq/{SINQ_DATASET}_{stage_split(w.stage)}.jsonl",
        model=generation_model_input,
        adapter=alice_adapter_input("sinq"),
    output:
        f"{SINQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
    log:
        f"{SINQ_LOG}/{{stage}}/alice_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/alice_shard{{shard}}.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=lambda w: cfg_of(
            *GENERATION_KEYS,
            stage_count_key("sinq", w.stage),
            "sinq.shards",
            "sinq.alice",
            "sinq.target_difficulty",
        ),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/sinq_alice_generate.py"


rule sinq_verify:
    input:
        generations=f"{SINQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
        sources=lambda w: f"resources/data/sinq/{SINQ_DATASET}_{stage_split(w.stage)}.jsonl",
    output:
        f"{SINQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
    log:
        f"{SINQ_LOG}/{{stage}}/verify_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/verify_shard{{shard}}.tsv"
    container:
        image("sandbox")
    threads: config["sinq"]["verify"]["workers"]
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("seed", "sinq.verify"),
    script:
        "../workflow_scripts/sinq_verify.py"


rule sinq_bob_generate:
    input:
        candidates=f"{SINQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        model=generation_model_input,
        adapter=bob_adapter_input("sinq"),
    output:
        f"{SINQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    log:
        f"{SINQ_LOG}/{{stage}}/bob_{{who}}_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/bob_{{who}}_shard{{shard}}.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "sinq.bob"),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/sinq_bob_generate.py"


rule sinq_label:
    input:
        candidates=f"{SINQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        bob=f"{SINQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    output:
        f"{SINQ_EXP}/{{stage}}/labeled_{{who}}/shard{{shard}}.jsonl",
    log:
        f"{SINQ_LOG}/{{stage}}/label_{{who}}_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/label_{{who}}_shard{{shard}}.tsv"
    container:
        image("sandbox")
    threads: config["sinq"]["verify"]["workers"]
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("seed", "sinq.verify"),
    script:
        "../workflow_scripts/sinq_label.py"


rule sinq_alice_trainset:
    input:
        lambda w: rounds_labeled("sinq", int(w.r)),
    output:
        f"{SINQ_EXP}/round{{r}}/train_alice.jsonl",
    log:
        f"{SINQ_LOG}/round{{r}}/train_alice_set.log",
    benchmark:
        f"{SINQ_BENCH}/round{{r}}/train_alice_set.tsv"
    container:
        image("python")
    params:
        cfg=cfg_of("seed", "sinq.curriculum"),
    script:
        "../workflow_scripts/sinq_alice_trainset.py"


rule sinq_bob_trainset:
    input:
        rounds_labeled("sinq", n_rounds("sinq")),
    output:
        f"{SINQ_EXP}/bob/train_bob.jsonl",
    log:
        f"{SINQ_LOG}/bob/train_bob_set.log",
    benchmark:
        f"{SINQ_BENCH}/bob/train_bob_set.tsv"
    container:
        image("python")
    script:
        "../workflow_scripts/sinq_bob_trainset.py"


rule sinq_table1:
    input:
        **{
            f"{split}_{who}": labeled("sinq", f"eval_{split}", who)
            for split in ("train", "test")
            for who in ("untrained", "trained")
        },
    output:
        csv=report(
            "results/tables/sinq/table1.csv",
            caption="../report/sinq_table1.rst",
            category="SInQ (paper 001)",
            labels={"table": "Table 1 (CSV)"},
        ),
        md=report(
            "results/tables/sinq/table1.md",
            caption="../report/sinq_table1.rst",
            category="SInQ (paper 001)",
            labels={"table": "Table 1"},
        ),
    log:
        f"{SINQ_LOG}/report/table1.log",
    container:
        image("python")
    params:
        dataset={"humaneval": "HumanEval", "mbpp": "MBPP"}[SINQ_DATASET],
    script:
        "../workflow_scripts/sinq_table1.py"


rule sinq_yield:
    input:
        **{
            f"{s}_{kind}": files
            for s in stages("sinq")
            for kind, files in (
                ("candidates", candidates("sinq", s)),
                ("labeled", labeled("sinq", s, "untrained")),
            )
        },
    output:
        csv=report(
            "results/tables/sinq/yield.csv",
            caption="../report/sinq_yield.rst",
            category="SInQ (paper 001)",
            labels={"table": "Yield (CSV)"},
        ),
        md=report(
            "results/tables/sinq/yield.md",
            caption="../report/sinq_yield.rst",
            category="SInQ (paper 001)",
            labels={"table": "Yield per stage"},
        ),
        reasons=report(
            "results/tables/sinq/yield_reasons.csv",
            caption="../report/sinq_yield.rst",
            category="SInQ (paper 001)",
            labels={"table": "Rejections"},
        ),
    log:
        f"{SINQ_LOG}/report/yield.log",
    container:
        image("python")
    params:
        stages=stages("sinq"),
        hard_threshold=config["sinq"]["curriculum"]["hard_threshold"],
    script:
        "../workflow_scripts/sinq_yield.py"


rule sinq_figure2:
    input:
        **{f"x{r - 1}": labeled("sinq", f"round{r}", "untrained") for r in range(1, n_rounds("sinq") + 1)},
        **{f"x{n_rounds('sinq')}": labeled("sinq", "eval_train", "untrained")},
    output:
        png=report(
            "results/figures/sinq/figure2.png",
            caption="../report/sinq_figure2.rst",
            category="SInQ (paper 001)",
            labels={"figure": "Figure 2"},
        ),
        pdf="results/figures/sinq/figure2.pdf",
        csv="results/figures/sinq/figure2.csv",
    log:
        f"{SINQ_LOG}/report/figure2.log",
    container:
        image("python")
    script:
        "../workflow_scripts/sinq_figure2.py"


# --- paper 001's benchmark tables (Section 3.4) and Figure 3 ----------------------


for _name, (_rows, _columns, _cells) in SINQ_OUT.layouts.items():

    rule:
        name:
            f"sinq_{_name}"
        input:
            **{f"{b}|{m}|{t}": eval_summary("sinq", b, m, t) for b, m, t in _cells},
        output:
            csv=report(
                f"results/tables/sinq/{_name}.csv",
                caption="../report/sinq_benchmarks.rst",
                category="SInQ (paper 001)",
                labels={"table": f"{SINQ_EVAL_TABLES[_name]['title']} (CSV)"},
            ),
            md=report(
                f"results/tables/sinq/{_name}.md",
                caption="../report/sinq_benchmarks.rst",
                category="SInQ (paper 001)",
                labels={"table": SINQ_EVAL_TABLES[_name]["title"]},
            ),
        log:
            f"{SINQ_LOG}/report/{_name}.log",
        container:
            image("python")
        params:
            rows=_rows,
            columns=_columns,
            metric=SINQ_EVAL_TABLES[_name]["metric"],
            title=SINQ_EVAL_TABLES[_name]["title"],
            notes=[
                "Models: Base = the untrained model (paper: gpt-4o-mini); Trained Bob = the SInQ-trained "
                "evaluator (paper: sinq-gpt-4o-mini). Maj = majority of 9 samples at T = 1.0; CoT = "
                "reasoning first, T = 0.6; otherwise greedy."
            ],
        script:
            "../workflow_scripts/eval_table.py"


rule sinq_figure3:
    input:
        **{f"{t}|{m}": eval_summary("sinq", b, m, t) for b, m, t in SINQ_OUT.figure3_runs},
    output:
        png=report(
            "results/figures/sinq/figure3.png",
            caption="../report/sinq_benchmarks.rst",
            category="SInQ (paper 001)",
            labels={"figure": FIGURE3["title"]},
        ),
        pdf="results/figures/sinq/figure3.pdf",
        csv="results/figures/sinq/figure3.csv",
    log:
        f"{SINQ_LOG}/report/figure3.log",
    container:
        image("python")
    params:
        labels=SINQ_OUT.figure3_labels,
        metric=FIGURE3["metric"],
        title=FIGURE3["title"],
        groups=None,
    script:
        "../workflow_scripts/eval_bars.py"


rule sinq_figure4:
    input:
        **{f"{t}|{m}": eval_summary("sinq", b, m, t) for b, m, t in SINQ_OUT.figure4_runs},
    output:
        png=report(
            "results/figures/sinq/figure4.png",
            caption="../report/sinq_benchmarks.rst",
            category="SInQ (paper 001)",
            labels={"figure": FIGURE4["title"]},
        ),
        pdf="results/figures/sinq/figure4.pdf",
        csv="results/figures/sinq/figure4.csv",
    log:
        f"{SINQ_LOG}/report/figure4.log",
    container:
        image("python")
    params:
        labels=SINQ_OUT.figure4_labels,
        metric=FIGURE4["metric"],
        title=FIGURE4["title"],
        groups=None,
    script:
        "../workflow_scripts/eval_bars.py"
