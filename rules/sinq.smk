# SInQ: the program semantic inequivalence game (paper 001), Python track.
# Stages: round1..roundR (Alice trains each round from the base model on the
# accumulated set; Bob is the untrained base model), then Bob trains once, then the
# intrinsic evaluation (eval_train / eval_test) and the paper's tables and figure.
# Rules that verify or use a GPU name their image (`container:`, containers/images.yaml);
# it is used only with --sdm apptainer.
# With config replay_training_from, the two train rules restore a bundle's training
# records instead of training and need no model (rules/common.smk, docs/bundle.md).

SINQ = config["sinq"]
SINQ_EXP = f"results/sinq/{SINQ['experiment']}"
SINQ_ROUNDS = int(SINQ["rounds"])
SINQ_SHARDS = list(range(int(SINQ["shards"])))
SINQ_DATASET = SINQ["sources"]["dataset"]
SINQ_LOG = f"logs/sinq/{SINQ['experiment']}"
SINQ_BENCH = f"benchmarks/sinq/{SINQ['experiment']}"


wildcard_constraints:
    stage=r"round[1-9][0-9]*|eval_train|eval_test",
    shard=r"[0-9]+",
    who=r"untrained|trained",
    r=r"[1-9][0-9]*",
    split=r"train|test",


def sinq_stage_split(stage):
    return "train" if stage.startswith("round") else stage.split("_", 1)[1]


def sinq_sources_input(wildcards):
    return f"resources/data/sinq/{SINQ_DATASET}_{sinq_stage_split(wildcards.stage)}.jsonl"


def sinq_alice_adapter_input(wildcards):
    """Round r generates with round r-1's adapter; the evaluation with the last round's."""
    if wildcards.stage.startswith("round"):
        r = int(wildcards.stage[len("round"):])
        return [] if r == 1 else f"{SINQ_EXP}/round{r - 1}/adapter_alice"
    return f"{SINQ_EXP}/round{SINQ_ROUNDS}/adapter_alice"


def sinq_bob_adapter_input(wildcards):
    return f"{SINQ_EXP}/bob/adapter" if wildcards.who == "trained" else []


def sinq_labeled(stage, who):
    return [f"{SINQ_EXP}/{stage}/labeled_{who}/shard{s}.jsonl" for s in SINQ_SHARDS]


def sinq_candidates(stage):
    return [f"{SINQ_EXP}/{stage}/candidates/shard{s}.jsonl" for s in SINQ_SHARDS]


def sinq_rounds_labeled_upto(wildcards):
    return [p for r in range(1, int(wildcards.r) + 1) for p in sinq_labeled(f"round{r}", "untrained")]


def sinq_all_rounds_labeled(wildcards=None):
    return [p for r in range(1, SINQ_ROUNDS + 1) for p in sinq_labeled(f"round{r}", "untrained")]


def sinq_previous_alice_adapter(wildcards):
    r = int(wildcards.r)
    return [] if r == 1 else f"{SINQ_EXP}/round{r - 1}/adapter_alice"


def sinq_table1_inputs(wildcards=None):
    return {f"{split}_{who}": sinq_labeled(f"eval_{split}", who)
            for split in ("train", "test") for who in ("untrained", "trained")}


def sinq_yield_stages():
    return [f"round{r}" for r in range(1, SINQ_ROUNDS + 1)] + ["eval_train", "eval_test"]


def sinq_yield_inputs(wildcards=None):
    out = {}
    for stage in sinq_yield_stages():
        out[f"{stage}_candidates"] = sinq_candidates(stage)
        out[f"{stage}_labeled"] = sinq_labeled(stage, "untrained")
    return out


def sinq_figure2_inputs(wildcards=None):
    out = {f"x{r - 1}": sinq_labeled(f"round{r}", "untrained") for r in range(1, SINQ_ROUNDS + 1)}
    out[f"x{SINQ_ROUNDS}"] = sinq_labeled("eval_train", "untrained")
    return out


def sinq_report_targets():
    return [
        "results/tables/sinq/table1.csv",
        "results/tables/sinq/table1.md",
        "results/tables/sinq/yield.csv",
        "results/tables/sinq/yield.md",
        "results/figures/sinq/figure2.png",
        "results/figures/sinq/figure2.pdf",
    ]


rule sinq_sources:
    output:
        "resources/data/sinq/humaneval_{split}.jsonl",
    log:
        "logs/sinq/sources/humaneval_{split}.log",
    benchmark:
        "benchmarks/sinq/sources/humaneval_{split}.tsv"
    script:
        "../workflow_scripts/sinq_sources.py"


rule sinq_download_mbpp:
    output:
        parquet="resources/downloads/mbpp/{split}.parquet",
        sha256="resources/downloads/mbpp/{split}.parquet.sha256",
    params:
        revision=SINQ["sources"].get("mbpp_revision", "main"),
        sha256=SINQ["sources"].get("mbpp_sha256", {}),
    log:
        "logs/sinq/sources/download_mbpp_{split}.log",
    localrule: True
    script:
        "../workflow_scripts/sinq_download_mbpp.py"


rule sinq_sources_mbpp:
    input:
        parquet="resources/downloads/mbpp/{split}.parquet",
    output:
        "resources/data/sinq/mbpp_{split}.jsonl",
    log:
        "logs/sinq/sources/mbpp_{split}.log",
    script:
        "../workflow_scripts/sinq_sources.py"


rule sinq_alice_generate:
    input:
        sources=sinq_sources_input,
        model=generation_model_input,
        adapter=sinq_alice_adapter_input,
    output:
        f"{SINQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
    params:
        model_dir=generation_model_param,
    threads: 2
    log:
        f"{SINQ_LOG}/{{stage}}/alice_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/alice_shard{{shard}}.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/sinq_alice_generate.py"


rule sinq_verify:
    input:
        generations=f"{SINQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
        sources=sinq_sources_input,
    output:
        f"{SINQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
    threads: int(SINQ["verify"].get("workers", 2))
    log:
        f"{SINQ_LOG}/{{stage}}/verify_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/verify_shard{{shard}}.tsv"
    container:
        image("sandbox")
    script:
        "../workflow_scripts/sinq_verify.py"


rule sinq_bob_generate:
    input:
        candidates=f"{SINQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        model=generation_model_input,
        adapter=sinq_bob_adapter_input,
    output:
        f"{SINQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    params:
        model_dir=generation_model_param,
    threads: 2
    log:
        f"{SINQ_LOG}/{{stage}}/bob_{{who}}_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/bob_{{who}}_shard{{shard}}.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/sinq_bob_generate.py"


rule sinq_label:
    input:
        candidates=f"{SINQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        bob=f"{SINQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    output:
        f"{SINQ_EXP}/{{stage}}/labeled_{{who}}/shard{{shard}}.jsonl",
    threads: int(SINQ["verify"].get("workers", 2))
    log:
        f"{SINQ_LOG}/{{stage}}/label_{{who}}_shard{{shard}}.log",
    benchmark:
        f"{SINQ_BENCH}/{{stage}}/label_{{who}}_shard{{shard}}.tsv"
    container:
        image("sandbox")
    script:
        "../workflow_scripts/sinq_label.py"


rule sinq_alice_trainset:
    input:
        sinq_rounds_labeled_upto,
    output:
        f"{SINQ_EXP}/round{{r}}/train_alice.jsonl",
    log:
        f"{SINQ_LOG}/round{{r}}/train_alice_set.log",
    benchmark:
        f"{SINQ_BENCH}/round{{r}}/train_alice_set.tsv"
    script:
        "../workflow_scripts/sinq_alice_trainset.py"


rule sinq_train_alice:
    input:
        trainset=f"{SINQ_EXP}/round{{r}}/train_alice.jsonl",
        model=training_model_input,
        previous=sinq_previous_alice_adapter,
        restored=training_restore_input(f"{SINQ_EXP}/round{{r}}/adapter_alice"),
    output:
        directory(f"{SINQ_EXP}/round{{r}}/adapter_alice"),
    params:
        model_dir=training_model_param,
    threads: 2
    log:
        f"{SINQ_LOG}/round{{r}}/train_alice.log",
    benchmark:
        f"{SINQ_BENCH}/round{{r}}/train_alice.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/train_agent.py"


rule sinq_bob_trainset:
    input:
        sinq_all_rounds_labeled,
    output:
        f"{SINQ_EXP}/bob/train_bob.jsonl",
    log:
        f"{SINQ_LOG}/bob/train_bob_set.log",
    benchmark:
        f"{SINQ_BENCH}/bob/train_bob_set.tsv"
    script:
        "../workflow_scripts/sinq_bob_trainset.py"


rule sinq_train_bob:
    input:
        trainset=f"{SINQ_EXP}/bob/train_bob.jsonl",
        model=training_model_input,
        restored=training_restore_input(f"{SINQ_EXP}/bob/adapter"),
    output:
        directory(f"{SINQ_EXP}/bob/adapter"),
    params:
        model_dir=training_model_param,
    threads: 2
    log:
        f"{SINQ_LOG}/bob/train_bob.log",
    benchmark:
        f"{SINQ_BENCH}/bob/train_bob.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/train_agent.py"


rule sinq_table1:
    input:
        unpack(sinq_table1_inputs),
    output:
        csv=report("results/tables/sinq/table1.csv", category="SInQ", labels={"table": "Table 1 (CSV)"}),
        md=report("results/tables/sinq/table1.md", category="SInQ", labels={"table": "Table 1"}),
    params:
        dataset={"humaneval": "HumanEval", "mbpp": "MBPP"}[SINQ_DATASET],
    log:
        f"{SINQ_LOG}/report/table1.log",
    script:
        "../workflow_scripts/sinq_table1.py"


rule sinq_yield:
    input:
        unpack(sinq_yield_inputs),
    output:
        csv=report("results/tables/sinq/yield.csv", category="SInQ", labels={"table": "Yield (CSV)"}),
        md=report("results/tables/sinq/yield.md", category="SInQ", labels={"table": "Yield per stage"}),
        reasons=report("results/tables/sinq/yield_reasons.csv", category="SInQ", labels={"table": "Rejections"}),
    params:
        stages=sinq_yield_stages(),
        hard_threshold=SINQ["curriculum"]["hard_threshold"],
    log:
        f"{SINQ_LOG}/report/yield.log",
    script:
        "../workflow_scripts/sinq_yield.py"


rule sinq_figure2:
    input:
        unpack(sinq_figure2_inputs),
    output:
        png=report("results/figures/sinq/figure2.png", category="SInQ", labels={"figure": "Figure 2"}),
        pdf="results/figures/sinq/figure2.pdf",
        csv="results/figures/sinq/figure2.csv",
    log:
        f"{SINQ_LOG}/report/figure2.log",
    script:
        "../workflow_scripts/sinq_figure2.py"
