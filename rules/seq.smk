# The Haskell track (paper 000): SEQ (equivalent Q + Liquid Haskell proof) and SINQ
# (inequivalent Q + diverging input, run with GHC). Stages as in SInQ: round1..roundR
# (Alice trains each round from the base model on the accumulated set and generates
# with the previous round's adapter), Bob trains once at the end, then eval_train /
# eval_test for Table 2. Per stage and shard: Alice -> checked (parse, GHC) -> proof
# attempts 1..K (generate, check) -> candidates -> Bob (N answers) -> labels.
# Training: rules/agents.smk. Rules that run GHC or Liquid Haskell name the haskell
# image; generation and training the gpu image (used only with --sdm apptainer).
from selfplay.data.haskell_datasets import HSX_REPO, OPINSTRUCT_REPO, hub_file_url
from selfplay.evaluate.benchmarks.equibench import CATEGORIES as EQUIBENCH_CATEGORIES
from selfplay.evaluate.layout import model_label
from selfplay.tracks.seq.evaluation import (
    BASE_VS_TRAINED,
    CLASSIFICATION_METRICS,
    CODEGEN,
    EQUIBENCH_FIGURES,
    ROUND_FIGURES,
    table7_rows,
)

SEQ = config["seq"]
SEQ_EXP = exp_dir("seq")
SEQ_LOG = log_dir("seq")
SEQ_BENCH = bench_dir("seq")
SEQ_ATTEMPTS = int(SEQ["proof"]["attempts"])
SEQ_DATASET = SEQ["sources"]["dataset"]
# one folder per experiment: the regimes E0-E3 side by side
SEQ_TABLES = f"results/tables/seq/{SEQ['experiment']}"
SEQ_FIGURES = f"results/figures/seq/{SEQ['experiment']}"
# The translation to Haskell does not depend on the regime: E1-E3 reuse E0's.
SEQ_TRANSLATE = "results/seq/translate"
# Table 3's models: the base model, the final Alice (alice_r<R>), the trained Bob
SEQ_FINAL_ALICE = f"alice_r{n_rounds('seq')}"
SEQ_CODEGEN_AGENTS = {"base": "base", "alice": SEQ_FINAL_ALICE, "bob": "bob"}
# Table 3's benchmarks: the Haskell code generation ones the config runs
SEQ_RUNS = eval_runs("seq")
SEQ_CODEGEN = [b for b in CODEGEN if b in SEQ["benchmarks"]["runs"]]
SEQ_FIRST_MODE = {}
for _b, _m, _t in SEQ_RUNS:
    SEQ_FIRST_MODE.setdefault(_b, _m)
SEQ_HAS = {(b, t) for b, _, t in SEQ_RUNS}
# Tables 4-5 and Figures 4-5: base vs trained Bob, where the run evaluates both
SEQ_BVT = {
    n: spec
    for n, spec in BASE_VS_TRAINED.items()
    if {(spec["benchmark"], "base"), (spec["benchmark"], "bob")} <= SEQ_HAS
}
SEQ_EQUIBENCH = {("equibench", "base"), ("equibench", "bob")} <= SEQ_HAS
# The per-round figures of Alice: code benchmarks evaluated with every round's adapter
SEQ_ROUND_BENCHES = [
    b for b in SEQ_CODEGEN if all((b, f"alice_r{r}") in SEQ_HAS for r in range(1, n_rounds("seq") + 1))
]
SEQ_ROUND_FIGURE = {
    b: (
        f"figure{ROUND_FIGURES[SEQ['experiment']][b]}"
        if b in ROUND_FIGURES.get(SEQ["experiment"], {})
        else f"alice_rounds_{b}"
    )
    for b in SEQ_ROUND_BENCHES
}
# Table 3's cells: each benchmark in its first mode
SEQ_CODEGEN_FILES = {
    f"{b}_{a}": eval_summary("seq", b, next(m for r, m, _ in eval_runs("seq") if r == b), tag)
    for b in SEQ_CODEGEN
    for a, tag in SEQ_CODEGEN_AGENTS.items()
}
SEQ_EVAL_TABLES = [f"{SEQ_TABLES}/{n}.md" for n in SEQ_BVT]
SEQ_EVAL_FIGURES = [f"{SEQ_FIGURES}/{n}.png" for n in (EQUIBENCH_FIGURES if SEQ_EQUIBENCH else {})] + [
    f"{SEQ_FIGURES}/{n}.png" for n in SEQ_ROUND_FIGURE.values()
]
# Table 8's columns: the regimes' experiments (null: this run alone)
SEQ_REGIME_RUNS = SEQ["regimes"]["experiments"] or [SEQ["experiment"]]
# The translation model is a setting of its own (the paper: DeepSeek-R1-Distill-Llama-70B).
SEQ_TRANSLATOR = SEQ["translate"]["model"] or config["model"]
MODELS[SEQ_TRANSLATOR["name"]] = SEQ_TRANSLATOR
SEQ_REPORTS = [f"{SEQ_TABLES}/{t}.md" for t in ("table2", "table6", "data_yield")] + [
    f"{SEQ_FIGURES}/figure{n}.png" for n in (3, 6, 7)
]
if SEQ_CODEGEN:
    SEQ_REPORTS.append(f"{SEQ_TABLES}/table3.md")
SEQ_REPORTS += SEQ_EVAL_TABLES + SEQ_EVAL_FIGURES


wildcard_constraints:
    attempt=r"[1-9][0-9]*",


TRACK_OUTPUTS["seq"] = {
    "report": lambda: list(SEQ_REPORTS),
    "bundle": lambda: track_bundle_parts(
        "seq",
        data=[
            f"resources/data/seq/{SEQ_DATASET}_{split}{kind}.jsonl"
            for split in ("train", "test")
            for kind in ("", ".rejected")
        ]
        + eval_items_files("seq"),
        recordings=[f"{SEQ_TRANSLATE}/generations.jsonl"]
        + [
            p
            for s in stages("seq")
            for folder in ["alice"]
            + [f"proof_gen{a}" for a in range(1, SEQ_ATTEMPTS + 1)]
            + [f"bob_{who}" for who in whos_of(s)]
            for p in shard_files("seq", s, folder)
        ]
        + eval_files("seq", ""),
        verdicts=[f"{SEQ_TRANSLATE}/translated.jsonl"]
        + [
            p
            for s in stages("seq")
            for folder in ["checked"]
            + [f"proof_check{a}" for a in range(1, SEQ_ATTEMPTS + 1)]
            + ["candidates"]
            + [f"labeled_{who}" for who in whos_of(s)]
            for p in shard_files("seq", s, folder)
        ]
        + eval_files("seq", ".scored"),
        # each Markdown table's CSV twin and each figure's data are compared byte for byte too
        tables=[p for p in SEQ_REPORTS if p.endswith(".md")]
        + [p[: -len(".md")] + ".csv" for p in SEQ_REPORTS if p.endswith(".md")]
        + [p[: -len(".png")] + ".csv" for p in SEQ_REPORTS if p.endswith(".png")],
        figures=[p for p in SEQ_REPORTS if p.endswith(".png")],
    ),
}


# --- sources -----------------------------------------------------------------


rule seq_reference_sources:
    output:
        kept="resources/data/seq/reference_{split}.jsonl",
        rejected="resources/data/seq/reference_{split}.rejected.jsonl",
    log:
        "logs/seq/sources/reference_{split}.log",
    benchmark:
        "benchmarks/seq/sources/reference_{split}.tsv"
    container:
        image("haskell")
    threads: 2
    params:
        cfg=cfg_of("seed", "seq.verify", "seq.sources.filter_timeout"),
    script:
        "../workflow_scripts/seq_reference_sources.py"


rule seq_download:
    """A file of a dataset repository on the Hugging Face hub (needs network: runs on the
    machine that runs snakemake, never in the default run)."""
    output:
        file="resources/downloads/seq/{dataset}.parquet",
    log:
        "logs/seq/sources/download_{dataset}.log",
    wildcard_constraints:
        dataset="opinstruct|hsx",
    localrule: True
    container:
        image("python")
    params:
        url=lambda w: hub_file_url(
            {"opinstruct": OPINSTRUCT_REPO, "hsx": HSX_REPO}[w.dataset],
            SEQ["sources"][f"{w.dataset}_file"],
            SEQ["sources"][f"{w.dataset}_revision"],
        ),
        sha256=lambda w: SEQ["sources"][f"{w.dataset}_sha256"],
        pin_key=lambda w: f"seq.sources.{w.dataset}_sha256",
    script:
        "../workflow_scripts/download.py"


rule seq_opinstruct_python:
    """OpenCodeInstruct's Python programs after the pre-filter, the translation's input."""
    input:
        "resources/downloads/seq/opinstruct.parquet",
    output:
        "resources/data/seq/opinstruct_python.jsonl",
    log:
        "logs/seq/sources/opinstruct_python.log",
    container:
        image("python")
    params:
        cfg=cfg_of("seq.sources.opinstruct_limit", "seq.sources.opinstruct_max_chars"),
    script:
        "../workflow_scripts/seq_opinstruct_python.py"


rule seq_hsx_sources:
    input:
        "resources/downloads/seq/hsx.parquet",
    output:
        kept="resources/data/seq/hsx_{split}.jsonl",
        rejected="resources/data/seq/hsx_{split}.rejected.jsonl",
    log:
        "logs/seq/sources/hsx_{split}.log",
    container:
        image("haskell")
    threads: 2
    params:
        cfg=cfg_of("seed", "seq.verify", "seq.sources.filter_timeout", "seq.sources.hsx_code_column"),
    script:
        "../workflow_scripts/seq_hsx_sources.py"


rule seq_opinstruct_sources:
    """The translations that passed the filter, split in halves, are the sources."""
    input:
        f"{SEQ_TRANSLATE}/translated.jsonl",
    output:
        kept="resources/data/seq/opinstruct_{split}.jsonl",
        rejected="resources/data/seq/opinstruct_{split}.rejected.jsonl",
    log:
        "logs/seq/sources/opinstruct_{split}.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_opinstruct_sources.py"


rule seq_translate_generate:
    """Python programs translated to Haskell by the translation model (seq.translate.model;
    the paper: DeepSeek-R1-Distill-Llama-70B), the default's HumanEval programs otherwise."""
    input:
        python=(
            "resources/data/seq/opinstruct_python.jsonl"
            if SEQ_DATASET == "opinstruct"
            else "resources/data/sinq/humaneval_train.jsonl"
        ),
        model=lambda w: generation_model_input(spec=SEQ_TRANSLATOR),
    output:
        f"{SEQ_TRANSLATE}/generations.jsonl",
    log:
        "logs/seq/translate/generate.log",
    benchmark:
        "benchmarks/seq/translate/generate.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("translate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "seq.translate"),
        model_dir=lambda w: generation_model_param(spec=SEQ_TRANSLATOR),
    script:
        "../workflow_scripts/seq_translate_generate.py"


rule seq_translate_filter:
    input:
        f"{SEQ_TRANSLATE}/generations.jsonl",
    output:
        kept=f"{SEQ_TRANSLATE}/translated.jsonl",
        rejected=f"{SEQ_TRANSLATE}/translated.rejected.jsonl",
    log:
        "logs/seq/translate/filter.log",
    benchmark:
        "benchmarks/seq/translate/filter.tsv"
    container:
        image("haskell")
    threads: 2
    params:
        cfg=cfg_of("seed", "seq.verify", "seq.sources.filter_timeout"),
    script:
        "../workflow_scripts/seq_translate_filter.py"


# --- the game ----------------------------------------------------------------


rule seq_alice_generate:
    input:
        sources=lambda w: f"resources/data/seq/{SEQ_DATASET}_{stage_split(w.stage)}.jsonl",
        model=generation_model_input,
        adapter=alice_adapter_input("seq"),
        # regimes E2/E3: SEQ share and P from E0's yields, read by the job (seq.regime)
        regime=SEQ["regime"]["from"] if SEQ["regime"] else [],
    output:
        f"{SEQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/alice_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/alice_shard{{shard}}.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=lambda w: cfg_of(
            *GENERATION_KEYS,
            stage_count_key("seq", w.stage),
            "seq.shards",
            "seq.game",
            "seq.alice",
            "seq.regime",
        ),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/seq_alice_generate.py"


rule seq_check:
    input:
        generations=f"{SEQ_EXP}/{{stage}}/alice/shard{{shard}}.jsonl",
        sources=lambda w: f"resources/data/seq/{SEQ_DATASET}_{stage_split(w.stage)}.jsonl",
    output:
        f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/check_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/check_shard{{shard}}.tsv"
    container:
        image("haskell")
    threads: 2
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("seed", "seq.verify"),
    script:
        "../workflow_scripts/seq_check.py"


rule seq_proof_generate:
    input:
        checked=f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
        previous=lambda w: (
            []
            if w.attempt == "1"
            else f"{SEQ_EXP}/{w.stage}/proof_check{int(w.attempt) - 1}/shard{w.shard}.jsonl"
        ),
        model=generation_model_input,
        adapter=alice_adapter_input("seq"),
    output:
        f"{SEQ_EXP}/{{stage}}/proof_gen{{attempt}}/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/proof_gen{{attempt}}_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/proof_gen{{attempt}}_shard{{shard}}.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "seq.proof.sampling", "seq.proof.answer_format"),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/seq_proof_generate.py"


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
    resources:
        **resources_of("prove"),
    params:
        cfg=cfg_of("seq.proof.liquid", "seq.proof.timeout", "seq.proof.memory_mb"),
    script:
        "../workflow_scripts/seq_proof_check.py"


rule seq_settle:
    input:
        checked=f"{SEQ_EXP}/{{stage}}/checked/shard{{shard}}.jsonl",
        checks=expand(
            f"{SEQ_EXP}/{{{{stage}}}}/proof_check{{a}}/shard{{{{shard}}}}.jsonl",
            a=range(1, SEQ_ATTEMPTS + 1),
        ),
    output:
        f"{SEQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/candidates_shard{{shard}}.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_settle.py"


rule seq_bob_generate:
    input:
        candidates=f"{SEQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        model=generation_model_input,
        adapter=bob_adapter_input("seq"),
    output:
        f"{SEQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/bob_{{who}}_shard{{shard}}.log",
    benchmark:
        f"{SEQ_BENCH}/{{stage}}/bob_{{who}}_shard{{shard}}.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "seq.bob"),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/seq_bob_generate.py"


rule seq_label:
    input:
        candidates=f"{SEQ_EXP}/{{stage}}/candidates/shard{{shard}}.jsonl",
        bob=f"{SEQ_EXP}/{{stage}}/bob_{{who}}/shard{{shard}}.jsonl",
    output:
        f"{SEQ_EXP}/{{stage}}/labeled_{{who}}/shard{{shard}}.jsonl",
    log:
        f"{SEQ_LOG}/{{stage}}/label_{{who}}_shard{{shard}}.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_label.py"


rule seq_alice_trainset:
    input:
        lambda w: rounds_labeled("seq", int(w.r)),
    output:
        f"{SEQ_EXP}/round{{r}}/train_alice.jsonl",
    log:
        f"{SEQ_LOG}/round{{r}}/train_alice_set.log",
    container:
        image("python")
    params:
        cfg=cfg_of("seed", "seq.curriculum", "seq.game.target_difficulty"),
    script:
        "../workflow_scripts/seq_alice_trainset.py"


rule seq_bob_trainset:
    input:
        rounds_labeled("seq", n_rounds("seq")),
    output:
        f"{SEQ_EXP}/bob/train_bob.jsonl",
    log:
        f"{SEQ_LOG}/bob/train_bob_set.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_bob_trainset.py"


# --- tables and figures --------------------------------------------------------


rule seq_table2:
    input:
        **{
            f"{split}_{who}": labeled("seq", f"eval_{split}", who)
            for split in ("train", "test")
            for who in ("untrained", "trained")
        },
    output:
        csv=report(
            f"{SEQ_TABLES}/table2.csv",
            caption="../report/seq_table2.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 2 (CSV)"},
        ),
        md=report(
            f"{SEQ_TABLES}/table2.md",
            caption="../report/seq_table2.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 2"},
        ),
    log:
        f"{SEQ_LOG}/report/table2.log",
    container:
        image("python")
    params:
        dataset={
            "reference": "Reference programs",
            "opinstruct": "OpInstruct-HSx",
            "hsx": "OpInstruct-HSx",
        }[SEQ_DATASET],
    script:
        "../workflow_scripts/seq_table2.py"


rule seq_table6:
    input:
        **{f"round{r}": candidates("seq", f"round{r}") for r in range(1, n_rounds("seq") + 1)},
    output:
        csv=report(
            f"{SEQ_TABLES}/table6.csv",
            caption="../report/seq_table6.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 6 (CSV)"},
        ),
        md=report(
            f"{SEQ_TABLES}/table6.md",
            caption="../report/seq_table6.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 6"},
        ),
    log:
        f"{SEQ_LOG}/report/table6.log",
    container:
        image("python")
    params:
        cfg=cfg_of("seq.proof.liquid", "seq.proof.timeout"),
    script:
        "../workflow_scripts/seq_table6.py"


rule seq_data_yield:
    input:
        **{
            f"sources_{split}{suffix}": f"resources/data/seq/{SEQ_DATASET}_{split}{kind}.jsonl"
            for split in ("train", "test")
            for suffix, kind in (("", ""), ("_rejected", ".rejected"))
        },
        translated=f"{SEQ_TRANSLATE}/translated.jsonl",
        translated_rejected=f"{SEQ_TRANSLATE}/translated.rejected.jsonl",
    output:
        csv=f"{SEQ_TABLES}/data_yield.csv",
        md=report(
            f"{SEQ_TABLES}/data_yield.md",
            caption="../report/seq_data_yield.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Source pipeline"},
        ),
    log:
        f"{SEQ_LOG}/report/data_yield.log",
    container:
        image("python")
    params:
        dataset=SEQ_DATASET,
    script:
        "../workflow_scripts/seq_data_yield.py"


rule seq_figure3:
    input:
        **{f"round{r}": labeled("seq", f"round{r}", "untrained") for r in range(1, n_rounds("seq") + 1)},
    output:
        png=report(
            f"{SEQ_FIGURES}/figure3.png",
            caption="../report/seq_figure3.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 3"},
        ),
        pdf=f"{SEQ_FIGURES}/figure3.pdf",
        csv=f"{SEQ_FIGURES}/figure3.csv",
    log:
        f"{SEQ_LOG}/report/figure3.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_figure3.py"


rule seq_figure6:
    input:
        **{f"round{r}": candidates("seq", f"round{r}") for r in range(1, n_rounds("seq") + 1)},
    output:
        png=report(
            f"{SEQ_FIGURES}/figure6.png",
            caption="../report/seq_figure6.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 6"},
        ),
        pdf=f"{SEQ_FIGURES}/figure6.pdf",
        csv=f"{SEQ_FIGURES}/figure6.csv",
    log:
        f"{SEQ_LOG}/report/figure6.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_figure6.py"


rule seq_figure7:
    input:
        **{f"round{r}": labeled("seq", f"round{r}", "untrained") for r in range(1, n_rounds("seq") + 1)},
    output:
        png=report(
            f"{SEQ_FIGURES}/figure7.png",
            caption="../report/seq_figure7.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 7"},
        ),
        pdf=f"{SEQ_FIGURES}/figure7.pdf",
        csv=f"{SEQ_FIGURES}/figure7.csv",
    log:
        f"{SEQ_LOG}/report/figure7.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_figure7.py"


rule seq_regimes:
    """Paper 000, Appendix F: E2's SEQ share and E3's P from this run's (E0's) yields."""
    input:
        f"{SEQ_TABLES}/table6.csv",
    output:
        f"{SEQ_EXP}/regimes.json",
    log:
        f"{SEQ_LOG}/report/regimes.log",
    container:
        image("python")
    params:
        per_round=SEQ["sources"]["per_round"],
    script:
        "../workflow_scripts/seq_regimes.py"


rule seq_regimes_of_other_run:
    """E2/E3 take their sizes from E0's regimes file, made by E0's own run: planned here so
    that an E2/E3 config plans on a fresh clone; run, it says what to do."""
    output:
        SEQ["regime"]["from"] if SEQ["regime"] else "results/seq/.no-regime",
    log:
        f"{SEQ_LOG}/report/regimes_of_other_run.log",
    container:
        image("python")
    params:
        hint=(
            "this regime's SEQ share and P are computed from E0's yields: run E0 first, then "
            "`snakemake --configfile config/papers/seq.yaml results/seq/e0/regimes.json`"
        ),
    script:
        "../workflow_scripts/seq_regimes_of_other_run.py"


ruleorder: seq_regimes > seq_regimes_of_other_run


rule seq_table8:
    """Verified generations per regime over all rounds; each regime is its own run
    (config/papers/seq*.yaml), so their Table 6 files must exist already."""
    input:
        [f"results/tables/seq/{e}/table6.csv" for e in SEQ_REGIME_RUNS],
    output:
        csv=report(
            "results/tables/seq/table8.csv",
            caption="../report/seq_table8.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 8 (CSV)"},
        ),
        md=report(
            "results/tables/seq/table8.md",
            caption="../report/seq_table8.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 8"},
        ),
    log:
        f"{SEQ_LOG}/report/table8.log",
    container:
        image("python")
    params:
        experiments=SEQ_REGIME_RUNS,
    script:
        "../workflow_scripts/seq_table8.py"


# --- Table 3: Haskell code generation on the benchmark layer (rules/evaluate.smk) -----
# (MultiPL-E's HumanEval / MBPP in Haskell; the default's ten shipped problems), the base
# model vs the final Alice and the trained Bob.


rule seq_table3:
    input:
        **SEQ_CODEGEN_FILES,
    output:
        csv=report(
            f"{SEQ_TABLES}/table3.csv",
            caption="../report/seq_table3.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 3 (CSV)"},
        ),
        md=report(
            f"{SEQ_TABLES}/table3.md",
            caption="../report/seq_table3.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 3"},
        ),
    log:
        f"{SEQ_LOG}/report/table3.log",
    container:
        image("python")
    params:
        benchmarks=SEQ_CODEGEN,
    script:
        "../workflow_scripts/seq_table3.py"


# --- Tables 4-5, Figures 4-5: base vs trained Bob; the per-round figures of Alice -------


for _name, _spec in SEQ_BVT.items():

    rule:
        name:
            f"seq_{_name}"
        input:
            base=eval_summary("seq", _spec["benchmark"], SEQ_FIRST_MODE[_spec["benchmark"]], "base"),
            trained=eval_summary("seq", _spec["benchmark"], SEQ_FIRST_MODE[_spec["benchmark"]], "bob"),
        output:
            csv=report(
                f"{SEQ_TABLES}/{_name}.csv",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"table": f"{_spec['title']} (CSV)"},
            ),
            md=report(
                f"{SEQ_TABLES}/{_name}.md",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"table": _spec["title"]},
            ),
        log:
            f"{SEQ_LOG}/report/{_name}.log",
        container:
            image("python")
        params:
            metrics=CLASSIFICATION_METRICS,
            title=_spec["title"],
            notes=["Trained: the trained Bob adapter (paper 000 Sec. 5.3)."],
        script:
            "../workflow_scripts/eval_base_vs_trained.py"


for _name, _spec in EQUIBENCH_FIGURES.items() if SEQ_EQUIBENCH else []:

    rule:
        name:
            f"seq_{_name}"
        input:
            **{t: eval_summary("seq", "equibench", SEQ_FIRST_MODE["equibench"], t) for t in ("base", "bob")},
        output:
            png=report(
                f"{SEQ_FIGURES}/{_name}.png",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"figure": _spec["title"]},
            ),
            pdf=f"{SEQ_FIGURES}/{_name}.pdf",
            csv=f"{SEQ_FIGURES}/{_name}.csv",
        log:
            f"{SEQ_LOG}/report/{_name}.log",
        container:
            image("python")
        params:
            labels={t: model_label(t) for t in ("base", "bob")},
            metric=_spec["metric"],
            title=_spec["title"],
            groups=list(EQUIBENCH_CATEGORIES),
        script:
            "../workflow_scripts/eval_bars.py"


for _bench, _name in SEQ_ROUND_FIGURE.items():

    rule:
        name:
            f"seq_{_name}"
        input:
            **{
                f"round{r}": eval_summary("seq", _bench, SEQ_FIRST_MODE[_bench], f"alice_r{r}")
                for r in range(1, n_rounds("seq") + 1)
            },
        output:
            png=report(
                f"{SEQ_FIGURES}/{_name}.png",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"figure": f"Alice per round: {_bench}"},
            ),
            pdf=f"{SEQ_FIGURES}/{_name}.pdf",
            csv=f"{SEQ_FIGURES}/{_name}.csv",
        log:
            f"{SEQ_LOG}/report/{_name}.log",
        container:
            image("python")
        params:
            title=f"Alice's {_bench} results per round ({SEQ['experiment']}): pass@1 and compilation errors",
        script:
            "../workflow_scripts/eval_rounds_figure.py"


# --- Table 7 and Figure 19: across the regimes' runs (asked for by name, after every
# regime of seq.regimes.experiments has run: their files must exist) -------------------

SEQ_TABLE7_ROWS = table7_rows(SEQ_RUNS, SEQ_FINAL_ALICE, list(EQUIBENCH_CATEGORIES))


rule seq_table7:
    input:
        **{
            f"{e}|{r['benchmark']}|{r['mode']}|{r['model']}": f"results/seq/{e}/eval/{r['benchmark']}/{r['model']}/{r['mode']}.json"
            for e in SEQ_REGIME_RUNS
            for r in SEQ_TABLE7_ROWS
        },
    output:
        csv=report(
            "results/tables/seq/table7.csv",
            caption="../report/seq_benchmarks.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 7 (CSV)"},
        ),
        md=report(
            "results/tables/seq/table7.md",
            caption="../report/seq_benchmarks.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 7"},
        ),
    log:
        f"{SEQ_LOG}/report/table7.log",
    container:
        image("python")
    params:
        rows=SEQ_TABLE7_ROWS,
        experiments=SEQ_REGIME_RUNS,
    script:
        "../workflow_scripts/seq_table7.py"


rule seq_figure19:
    input:
        [f"results/tables/seq/{e}/table6.csv" for e in SEQ_REGIME_RUNS],
    output:
        png=report(
            "results/figures/seq/figure19.png",
            caption="../report/seq_benchmarks.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 19"},
        ),
        pdf="results/figures/seq/figure19.pdf",
        csv="results/figures/seq/figure19.csv",
    log:
        f"{SEQ_LOG}/report/figure19.log",
    container:
        image("python")
    params:
        experiments=SEQ_REGIME_RUNS,
    script:
        "../workflow_scripts/seq_figure19.py"


rule seq_file_of_other_regime:
    """Table 7, Table 8 and Figure 19 read the other regimes' runs (seq.regimes.experiments):
    planned here so that they plan before those runs exist; run, it says what to do."""
    output:
        "results/{where}/{other}/{rest}",
    log:
        f"{SEQ_LOG}/report/other_regime/{{where}}/{{other}}/{{rest}}.log",
    wildcard_constraints:
        where="seq|tables/seq",
        other=rf"(?!{SEQ['experiment']}/)[A-Za-z0-9._-]+",
        rest=r"eval/.+\.json|table6\.csv",
    container:
        image("python")
    params:
        hint=lambda w: (
            f"it belongs to regime {w.other}'s own run: run that regime with its config "
            f"(e.g. --configfile config/papers/seq.yaml config/papers/seq_{w.other}.yaml) first"
        ),
    script:
        "../workflow_scripts/seq_regimes_of_other_run.py"
