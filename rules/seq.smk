# The Haskell track (paper 000): SEQ (equivalent Q + Liquid Haskell proof) and SINQ
# (inequivalent Q + diverging input, run with GHC). Stages as in SInQ: round1..roundR
# (Alice trains each round from the base model on the accumulated set and generates
# with the previous round's adapter), Bob trains once at the end, then eval_train /
# eval_test for Table 2. Per stage and shard: Alice -> checked (parse, GHC) -> proof
# attempts 1..K (generate, check) -> candidates -> Bob (N answers) -> labels.
# Rules that run GHC or Liquid Haskell name the haskell image; generation and
# training the gpu image (used only with --sdm apptainer).

SEQ = config["seq"]
SEQ_EXP = f"results/seq/{SEQ['experiment']}"
SEQ_ROUNDS = int(SEQ["rounds"])
SEQ_SHARDS = list(range(int(SEQ["shards"])))
SEQ_ATTEMPTS = int(SEQ["proof"]["attempts"])
SEQ_DATASET = SEQ["sources"]["dataset"]
SEQ_LOG = f"logs/seq/{SEQ['experiment']}"
SEQ_BENCH = f"benchmarks/seq/{SEQ['experiment']}"
SEQ_TABLES = f"results/tables/seq/{SEQ['experiment']}"  # one folder per experiment: the regimes E0-E3 side by side
SEQ_FIGURES = f"results/figures/seq/{SEQ['experiment']}"


wildcard_constraints:
    attempt=r"[1-9][0-9]*",


def seq_sources_input(wildcards):
    return f"resources/data/seq/{SEQ_DATASET}_{sinq_stage_split(wildcards.stage)}.jsonl"


def seq_download_url(dataset):
    from selfplay.data.haskell_datasets import HSX_REPO, OPINSTRUCT_REPO, hub_file_url

    src = SEQ["sources"]
    repo = {"opinstruct": OPINSTRUCT_REPO, "hsx": HSX_REPO}[dataset]
    default = "data/train-00000-of-00050.parquet" if dataset == "opinstruct" else "data/train-00000-of-00001.parquet"
    return hub_file_url(repo, src.get(f"{dataset}_file", default), src.get(f"{dataset}_revision", "main"))


def seq_translate_input(wildcards=None):
    """The Python programs to translate: OpenCodeInstruct's at paper scale, else a few of
    the default's HumanEval programs (to exercise the stage)."""
    if SEQ_DATASET == "opinstruct":
        return "resources/data/seq/opinstruct_python.jsonl"
    return "resources/data/sinq/humaneval_train.jsonl"


def seq_multipl_e_url(bench):
    from selfplay.data.haskell_datasets import hub_file_url

    rev = SEQ.get("codegen", {}).get("multipl_e_revision", "main")
    return hub_file_url("nuprl/MultiPL-E", f"{bench}-hs/test-00000-of-00001.parquet", rev)


def seq_codegen_problems_input(wildcards):
    return [] if wildcards.bench == "mini" else f"resources/downloads/seq/multipl_e_{wildcards.bench}.parquet"


def seq_codegen_adapter_input(wildcards):
    """base: no adapter; alice: the last round's; bob: his trained adapter."""
    return {"base": [], "alice": f"{SEQ_EXP}/round{SEQ_ROUNDS}/adapter_alice",
            "bob": f"{SEQ_EXP}/bob/adapter"}[wildcards.agent]


def seq_alice_adapter_input(wildcards):
    """Round r generates with round r-1's adapter; the evaluation with the last round's."""
    if wildcards.stage.startswith("round"):
        r = int(wildcards.stage[len("round"):])
        return [] if r == 1 else f"{SEQ_EXP}/round{r - 1}/adapter_alice"
    return f"{SEQ_EXP}/round{SEQ_ROUNDS}/adapter_alice"


def seq_bob_adapter_input(wildcards):
    return f"{SEQ_EXP}/bob/adapter" if wildcards.who == "trained" else []


def seq_previous_checks(wildcards):
    a = int(wildcards.attempt)
    return [] if a == 1 else f"{SEQ_EXP}/{wildcards.stage}/proof_check{a - 1}/shard{wildcards.shard}.jsonl"


def seq_labeled(stage, who):
    return [f"{SEQ_EXP}/{stage}/labeled_{who}/shard{s}.jsonl" for s in SEQ_SHARDS]


def seq_candidates(stage):
    return [f"{SEQ_EXP}/{stage}/candidates/shard{s}.jsonl" for s in SEQ_SHARDS]


def seq_rounds_labeled_upto(wildcards):
    return [p for r in range(1, int(wildcards.r) + 1) for p in seq_labeled(f"round{r}", "untrained")]


def seq_all_rounds_labeled(wildcards=None):
    return [p for r in range(1, SEQ_ROUNDS + 1) for p in seq_labeled(f"round{r}", "untrained")]


def seq_previous_alice_adapter(wildcards):
    r = int(wildcards.r)
    return [] if r == 1 else f"{SEQ_EXP}/round{r - 1}/adapter_alice"


def seq_stages():
    return [f"round{r}" for r in range(1, SEQ_ROUNDS + 1)] + ["eval_train", "eval_test"]


def seq_report_inputs(wildcards=None):
    out = {}
    for stage in seq_stages():
        out[f"{stage}_candidates"] = seq_candidates(stage)
        out[f"{stage}_labeled"] = seq_labeled(stage, "untrained")
    for split in ("train", "test"):
        out[f"eval_{split}_trained"] = seq_labeled(f"eval_{split}", "trained")
    return out


def seq_report_targets():
    return [
        f"{SEQ_TABLES}/table2.md",
        f"{SEQ_TABLES}/table6.md",
        f"{SEQ_TABLES}/data_yield.md",
        f"{SEQ_FIGURES}/figure3.png",
        f"{SEQ_FIGURES}/figure6.png",
        f"{SEQ_FIGURES}/figure7.png",
    ] + ([f"{SEQ_TABLES}/table3.md"] if SEQ.get("codegen") else [])


rule seq_reference_sources:
    output:
        kept="resources/data/seq/reference_{split}.jsonl",
        rejected="resources/data/seq/reference_{split}.rejected.jsonl",
    threads: 2
    log:
        "logs/seq/sources/reference_{split}.log",
    benchmark:
        "benchmarks/seq/sources/reference_{split}.tsv"
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_sources.py"


rule seq_download:
    """A file of a dataset repository on the Hugging Face hub (needs network: runs on the
    machine that runs snakemake, never in the default run)."""
    output:
        "resources/downloads/seq/{dataset}.parquet",
    params:
        url=lambda w: seq_download_url(w.dataset),
        sha256=lambda w: SEQ["sources"].get(f"{w.dataset}_sha256"),
    wildcard_constraints:
        dataset="opinstruct|hsx",
    log:
        "logs/seq/sources/download_{dataset}.log",
    localrule: True
    script:
        "../workflow_scripts/seq_sources.py"


rule seq_opinstruct_python:
    """OpenCodeInstruct's Python programs after the pre-filter, the translation's input."""
    input:
        "resources/downloads/seq/opinstruct.parquet",
    output:
        "resources/data/seq/opinstruct_python.jsonl",
    log:
        "logs/seq/sources/opinstruct_python.log",
    script:
        "../workflow_scripts/seq_sources.py"


rule seq_hsx_sources:
    input:
        "resources/downloads/seq/hsx.parquet",
    output:
        kept="resources/data/seq/hsx_{split}.jsonl",
        rejected="resources/data/seq/hsx_{split}.rejected.jsonl",
    threads: 2
    log:
        "logs/seq/sources/hsx_{split}.log",
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_sources.py"


rule seq_opinstruct_sources:
    """The translations that passed the filter, split in halves, are the sources."""
    input:
        f"{SEQ_EXP}/translate/translated.jsonl",
    output:
        kept="resources/data/seq/opinstruct_{split}.jsonl",
        rejected="resources/data/seq/opinstruct_{split}.rejected.jsonl",
    log:
        "logs/seq/sources/opinstruct_{split}.log",
    script:
        "../workflow_scripts/seq_sources.py"


rule seq_translate_generate:
    input:
        python=seq_translate_input,
        model=generation_model_input,
    output:
        f"{SEQ_EXP}/translate/generations.jsonl",
    params:
        model_dir=generation_model_param,
    threads: 2
    log:
        f"{SEQ_LOG}/translate/generate.log",
    benchmark:
        f"{SEQ_BENCH}/translate/generate.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/seq_translate.py"


rule seq_translate_filter:
    input:
        f"{SEQ_EXP}/translate/generations.jsonl",
    output:
        kept=f"{SEQ_EXP}/translate/translated.jsonl",
        rejected=f"{SEQ_EXP}/translate/translated.rejected.jsonl",
    threads: 2
    log:
        f"{SEQ_LOG}/translate/filter.log",
    benchmark:
        f"{SEQ_BENCH}/translate/filter.tsv"
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_translate.py"


rule seq_alice_generate:
    input:
        sources=seq_sources_input,
        model=generation_model_input,
        adapter=seq_alice_adapter_input,
    output:
        f"{SEQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
    params:
        model_dir=generation_model_param,
    threads: 2
    log:
        f"{SEQ_LOG}/{{stage}}/alice_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/alice_shard{{shard}}.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/seq_game.py"


rule seq_check:
    input:
        generations=f"{SEQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
        sources=seq_sources_input,
    output:
        f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
    threads: 2
    log:
        f"{SEQ_LOG}/{{stage}}/check_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/check_shard{{shard}}.tsv"
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_game.py"


rule seq_proof_generate:
    input:
        checked=f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
        previous=seq_previous_checks,
        model=generation_model_input,
        adapter=seq_alice_adapter_input,
    output:
        f"{SEQ_EXP}/{{stage}}/proof_gen{{attempt}}/shard{{shard}}.jsonl",
    params:
        model_dir=generation_model_param,
    threads: 2
    log:
        f"{SEQ_LOG}/{{stage}}/proof_gen{{attempt}}_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/proof_gen{{attempt}}_shard{{shard}}.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/seq_game.py"


rule seq_proof_check:
    input:
        generations=f"{SEQ_EXP}/{{stage}}/proof_gen{{attempt}}/shard{{shard}}.jsonl",
        checked=f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
    output:
        f"{SEQ_EXP}/{{stage}}/proof_check{{attempt}}/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/proof_check{{attempt}}_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/proof_check{{attempt}}_shard{{shard}}.tsv"
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_game.py"


rule seq_settle:
    input:
        checked=f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
        checks=expand(f"{SEQ_EXP}/{{{{stage}}}}/proof_check{{a}}/shard{{{{shard}}}}.jsonl",
                      a=range(1, SEQ_ATTEMPTS + 1)),
    output:
        f"{SEQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/candidates_shard{{shard}}.log",
    script:
        "../workflow_scripts/seq_game.py"


rule seq_bob_generate:
    input:
        candidates=f"{SEQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        model=generation_model_input,
        adapter=seq_bob_adapter_input,
    output:
        f"{SEQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    params:
        model_dir=generation_model_param,
    threads: 2
    log:
        f"{SEQ_LOG}/{{stage}}/bob_{{who}}_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/bob_{{who}}_shard{{shard}}.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/seq_game.py"


rule seq_label:
    input:
        candidates=f"{SEQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        bob=f"{SEQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    output:
        f"{SEQ_EXP}/{{stage}}/labeled_{{who}}/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/label_{{who}}_shard{{shard}}.log",
    script:
        "../workflow_scripts/seq_game.py"


rule seq_alice_trainset:
    input:
        seq_rounds_labeled_upto,
    output:
        f"{SEQ_EXP}/round{{r}}/train_alice.jsonl",
    log:
        f"{SEQ_LOG}/round{{r}}/train_alice_set.log",
    script:
        "../workflow_scripts/seq_trainset.py"


rule seq_train_alice:
    input:
        trainset=f"{SEQ_EXP}/round{{r}}/train_alice.jsonl",
        model=training_model_input,
        previous=seq_previous_alice_adapter,
        restored=training_restore_input(f"{SEQ_EXP}/round{{r}}/adapter_alice"),
    output:
        directory(f"{SEQ_EXP}/round{{r}}/adapter_alice"),
    params:
        model_dir=training_model_param,
    threads: 2
    log:
        f"{SEQ_LOG}/round{{r}}/train_alice.log",
    benchmark:
        f"{SEQ_BENCH}/round{{r}}/train_alice.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/train_agent.py"


rule seq_bob_trainset:
    input:
        seq_all_rounds_labeled,
    output:
        f"{SEQ_EXP}/bob/train_bob.jsonl",
    log:
        f"{SEQ_LOG}/bob/train_bob_set.log",
    script:
        "../workflow_scripts/seq_trainset.py"


rule seq_train_bob:
    input:
        trainset=f"{SEQ_EXP}/bob/train_bob.jsonl",
        model=training_model_input,
        restored=training_restore_input(f"{SEQ_EXP}/bob/adapter"),
    output:
        directory(f"{SEQ_EXP}/bob/adapter"),
    params:
        model_dir=training_model_param,
    threads: 2
    log:
        f"{SEQ_LOG}/bob/train_bob.log",
    benchmark:
        f"{SEQ_BENCH}/bob/train_bob.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/train_agent.py"


def seq_rounds_candidates(wildcards=None):
    return {f"round{r}": seq_candidates(f"round{r}") for r in range(1, SEQ_ROUNDS + 1)}


def seq_rounds_labeled(wildcards=None):
    return {f"round{r}": seq_labeled(f"round{r}", "untrained") for r in range(1, SEQ_ROUNDS + 1)}


rule seq_table2:
    input:
        **{f"{split}_{who}": seq_labeled(f"eval_{split}", who) for split in ("train", "test")
           for who in ("untrained", "trained")},
    output:
        csv=report(f"{SEQ_TABLES}/table2.csv", category="Haskell", labels={"table": "Table 2 (CSV)"}),
        md=report(f"{SEQ_TABLES}/table2.md", category="Haskell", labels={"table": "Table 2"}),
    params:
        dataset={"reference": "Reference programs", "opinstruct": "OpInstruct-HSx", "hsx": "OpInstruct-HSx"}[
            SEQ_DATASET],
    log:
        f"{SEQ_LOG}/report/table2.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_table6:
    input:
        **seq_rounds_candidates(),
    output:
        csv=report(f"{SEQ_TABLES}/table6.csv", category="Haskell", labels={"table": "Table 6 (CSV)"}),
        md=report(f"{SEQ_TABLES}/table6.md", category="Haskell", labels={"table": "Table 6"}),
    log:
        f"{SEQ_LOG}/report/table6.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_data_yield:
    input:
        sources_train=f"resources/data/seq/{SEQ_DATASET}_train.jsonl",
        sources_train_rejected=f"resources/data/seq/{SEQ_DATASET}_train.rejected.jsonl",
        sources_test=f"resources/data/seq/{SEQ_DATASET}_test.jsonl",
        sources_test_rejected=f"resources/data/seq/{SEQ_DATASET}_test.rejected.jsonl",
        translated=f"{SEQ_EXP}/translate/translated.jsonl",
        translated_rejected=f"{SEQ_EXP}/translate/translated.rejected.jsonl",
    output:
        csv=f"{SEQ_TABLES}/data_yield.csv",
        md=report(f"{SEQ_TABLES}/data_yield.md", category="Haskell", labels={"table": "Source pipeline"}),
    params:
        dataset=SEQ_DATASET,
    log:
        f"{SEQ_LOG}/report/data_yield.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_figure3:
    input:
        **seq_rounds_labeled(),
    output:
        png=report(f"{SEQ_FIGURES}/figure3.png", category="Haskell", labels={"figure": "Figure 3"}),
        pdf=f"{SEQ_FIGURES}/figure3.pdf",
        csv=f"{SEQ_FIGURES}/figure3.csv",
    log:
        f"{SEQ_LOG}/report/figure3.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_figure6:
    input:
        **seq_rounds_candidates(),
    output:
        png=report(f"{SEQ_FIGURES}/figure6.png", category="Haskell", labels={"figure": "Figure 6"}),
        pdf=f"{SEQ_FIGURES}/figure6.pdf",
        csv=f"{SEQ_FIGURES}/figure6.csv",
    log:
        f"{SEQ_LOG}/report/figure6.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_figure7:
    input:
        **seq_rounds_labeled(),
    output:
        png=report(f"{SEQ_FIGURES}/figure7.png", category="Haskell", labels={"figure": "Figure 7"}),
        pdf=f"{SEQ_FIGURES}/figure7.pdf",
        csv=f"{SEQ_FIGURES}/figure7.csv",
    log:
        f"{SEQ_LOG}/report/figure7.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_regimes:
    """Paper 000, Appendix F: E2's SEQ share and E3's P from this run's (E0's) yields."""
    input:
        f"{SEQ_TABLES}/table6.csv",
    output:
        f"{SEQ_EXP}/regimes.json",
    params:
        per_round=SEQ["sources"].get("per_round"),
    log:
        f"{SEQ_LOG}/report/regimes.log",
    script:
        "../workflow_scripts/seq_report.py"


rule seq_table8:
    """Verified generations per regime over all rounds; each regime is its own run
    (config/papers/seq*.yaml), so their Table 6 files must exist already."""
    input:
        [f"results/tables/seq/{e}/table6.csv" for e in SEQ.get("regimes", {}).get("experiments", [SEQ["experiment"]])],
    output:
        csv=report("results/tables/seq/table8.csv", category="Haskell", labels={"table": "Table 8 (CSV)"}),
        md=report("results/tables/seq/table8.md", category="Haskell", labels={"table": "Table 8"}),
    params:
        experiments=SEQ.get("regimes", {}).get("experiments", [SEQ["experiment"]]),
    log:
        f"{SEQ_LOG}/report/table8.log",
    script:
        "../workflow_scripts/seq_report.py"


# Table 3: Haskell code generation (HumanEval / MBPP from MultiPL-E; the default's
# shipped mini set), base model vs the final Alice and the trained Bob.
SEQ_CODEGEN = SEQ.get("codegen", {"benchmarks": []})
SEQ_CODEGEN_AGENTS = ("base", "alice", "bob")


rule seq_download_multipl_e:
    output:
        "resources/downloads/seq/multipl_e_{bench}.parquet",
    params:
        url=lambda w: seq_multipl_e_url(w.bench),
        sha256=None,
    wildcard_constraints:
        bench="humaneval|mbpp",
    log:
        "logs/seq/sources/download_multipl_e_{bench}.log",
    localrule: True
    script:
        "../workflow_scripts/seq_codegen.py"


rule seq_codegen_problems:
    input:
        seq_codegen_problems_input,
    output:
        problems="resources/data/seq/codegen_{bench}.jsonl",
        skipped="resources/data/seq/codegen_{bench}.skipped.jsonl",
    log:
        "logs/seq/sources/codegen_{bench}.log",
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_codegen.py"


rule seq_codegen_generate:
    input:
        problems="resources/data/seq/codegen_{bench}.jsonl",
        model=generation_model_input,
        adapter=seq_codegen_adapter_input,
    output:
        f"{SEQ_EXP}/codegen/{{bench}}/{{agent}}.jsonl",
    params:
        model_dir=generation_model_param,
    wildcard_constraints:
        agent="base|alice|bob",
    threads: 2
    log:
        f"{SEQ_LOG}/codegen/{{bench}}_{{agent}}.log",
    benchmark:
        f"{SEQ_BENCH}/codegen/{{bench}}_{{agent}}.tsv"
    container:
        image("gpu")
    script:
        "../workflow_scripts/seq_codegen.py"


rule seq_codegen_eval:
    input:
        problems="resources/data/seq/codegen_{bench}.jsonl",
        generations=f"{SEQ_EXP}/codegen/{{bench}}/{{agent}}.jsonl",
    output:
        f"{SEQ_EXP}/codegen/{{bench}}/{{agent}}.scored.jsonl",
    wildcard_constraints:
        agent="base|alice|bob",
    threads: 2
    log:
        f"{SEQ_LOG}/codegen/{{bench}}_{{agent}}_eval.log",
    container:
        image("haskell")
    script:
        "../workflow_scripts/seq_codegen.py"


rule seq_table3:
    input:
        **{f"{b}_{a}": f"{SEQ_EXP}/codegen/{b}/{a}.scored.jsonl" for b in SEQ_CODEGEN["benchmarks"]
           for a in SEQ_CODEGEN_AGENTS},
    output:
        csv=report(f"{SEQ_TABLES}/table3.csv", category="Haskell", labels={"table": "Table 3 (CSV)"}),
        md=report(f"{SEQ_TABLES}/table3.md", category="Haskell", labels={"table": "Table 3"}),
    params:
        benchmarks=SEQ_CODEGEN["benchmarks"],
    log:
        f"{SEQ_LOG}/report/table3.log",
    script:
        "../workflow_scripts/seq_report.py"
