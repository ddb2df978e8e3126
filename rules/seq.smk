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
from selfplay.evaluate.model_tags import label as model_label
from selfplay.tracks.seq.evaluation import CLASSIFICATION_METRICS, EQUIBENCH_FIGURES
from selfplay.tracks.seq.outputs import TRANSLATE_DIR as SEQ_TRANSLATE
from selfplay.tracks.seq.outputs import bundle_files, seq_outputs

SEQ = config["seq"]
SEQ_EXP = exp_dir("seq")
SEQ_LOG = log_dir("seq")
SEQ_BENCH = bench_dir("seq")
# what the config builds: tables, figures and the benchmark cells they read
SEQ_OUT = seq_outputs(config)
MODELS[SEQ_OUT.translator["name"]] = SEQ_OUT.translator


wildcard_constraints:
    attempt=r"[1-9][0-9]*",


TRACK_OUTPUTS["seq"] = {
    "report": lambda: list(SEQ_OUT.reports),
    "bundle": lambda: track_bundle_parts("seq", **bundle_files(config, SEQ_OUT)),
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
            if SEQ_OUT.dataset == "opinstruct"
            else "resources/data/sinq/humaneval_train.jsonl"
        ),
        model=lambda w: generation_model_input(spec=SEQ_OUT.translator),
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
        model_dir=lambda w: generation_model_param(spec=SEQ_OUT.translator),
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
        sources=lambda w: f"resources/data/seq/{SEQ_OUT.dataset}_{stage_split(w.stage)}.jsonl",
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
        sources=lambda w: f"resources/data/seq/{SEQ_OUT.dataset}_{stage_split(w.stage)}.jsonl",
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
            a=range(1, SEQ_OUT.attempts + 1),
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
            f"{SEQ_OUT.tables}/table2.csv",
            caption="../report/seq_table2.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 2 (CSV)"},
        ),
        md=report(
            f"{SEQ_OUT.tables}/table2.md",
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
        }[SEQ_OUT.dataset],
    script:
        "../workflow_scripts/seq_table2.py"


rule seq_table6:
    input:
        **{f"round{r}": candidates("seq", f"round{r}") for r in range(1, n_rounds("seq") + 1)},
    output:
        csv=report(
            f"{SEQ_OUT.tables}/table6.csv",
            caption="../report/seq_table6.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 6 (CSV)"},
        ),
        md=report(
            f"{SEQ_OUT.tables}/table6.md",
            caption="../report/seq_table6.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 6"},
        ),
    log:
        f"{SEQ_LOG}/report/table6.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_table6.py"


rule seq_data_yield:
    input:
        **{
            f"sources_{split}{suffix}": f"resources/data/seq/{SEQ_OUT.dataset}_{split}{kind}.jsonl"
            for split in ("train", "test")
            for suffix, kind in (("", ""), ("_rejected", ".rejected"))
        },
        translated=f"{SEQ_TRANSLATE}/translated.jsonl",
        translated_rejected=f"{SEQ_TRANSLATE}/translated.rejected.jsonl",
    output:
        csv=f"{SEQ_OUT.tables}/data_yield.csv",
        md=report(
            f"{SEQ_OUT.tables}/data_yield.md",
            caption="../report/seq_data_yield.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Source pipeline"},
        ),
    log:
        f"{SEQ_LOG}/report/data_yield.log",
    container:
        image("python")
    params:
        dataset=SEQ_OUT.dataset,
    script:
        "../workflow_scripts/seq_data_yield.py"


rule seq_figure3:
    input:
        **{f"round{r}": labeled("seq", f"round{r}", "untrained") for r in range(1, n_rounds("seq") + 1)},
    output:
        png=report(
            f"{SEQ_OUT.figures}/figure3.png",
            caption="../report/seq_figure3.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 3"},
        ),
        pdf=f"{SEQ_OUT.figures}/figure3.pdf",
        csv=f"{SEQ_OUT.figures}/figure3.csv",
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
            f"{SEQ_OUT.figures}/figure6.png",
            caption="../report/seq_figure6.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 6"},
        ),
        pdf=f"{SEQ_OUT.figures}/figure6.pdf",
        csv=f"{SEQ_OUT.figures}/figure6.csv",
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
            f"{SEQ_OUT.figures}/figure7.png",
            caption="../report/seq_figure7.rst",
            category="Haskell track (paper 000)",
            labels={"figure": "Figure 7"},
        ),
        pdf=f"{SEQ_OUT.figures}/figure7.pdf",
        csv=f"{SEQ_OUT.figures}/figure7.csv",
    log:
        f"{SEQ_LOG}/report/figure7.log",
    container:
        image("python")
    script:
        "../workflow_scripts/seq_figure7.py"


rule seq_regimes:
    """Paper 000, Appendix F: E2's SEQ share and E3's P from this run's (E0's) yields."""
    input:
        f"{SEQ_OUT.tables}/table6.csv",
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
        SEQ_OUT.regime_table6,
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
        experiments=SEQ_OUT.regime_runs,
    script:
        "../workflow_scripts/seq_table8.py"


# --- Table 3: Haskell code generation on the benchmark layer (rules/evaluate.smk) -----
# (MultiPL-E's HumanEval / MBPP in Haskell; the default's ten shipped problems), the base
# model vs the final Alice and the trained Bob.


rule seq_table3:
    input:
        **SEQ_OUT.codegen_files,
    output:
        csv=report(
            f"{SEQ_OUT.tables}/table3.csv",
            caption="../report/seq_table3.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 3 (CSV)"},
        ),
        md=report(
            f"{SEQ_OUT.tables}/table3.md",
            caption="../report/seq_table3.rst",
            category="Haskell track (paper 000)",
            labels={"table": "Table 3"},
        ),
    log:
        f"{SEQ_LOG}/report/table3.log",
    container:
        image("python")
    params:
        benchmarks=SEQ_OUT.codegen,
    script:
        "../workflow_scripts/seq_table3.py"


# --- Tables 4-5, Figures 4-5: base vs trained Bob; the per-round figures of Alice -------


for _name, _spec in SEQ_OUT.base_vs_trained.items():

    rule:
        name:
            f"seq_{_name}"
        input:
            base=eval_summary("seq", _spec["benchmark"], SEQ_OUT.first_mode[_spec["benchmark"]], "base"),
            trained=eval_summary("seq", _spec["benchmark"], SEQ_OUT.first_mode[_spec["benchmark"]], "bob"),
        output:
            csv=report(
                f"{SEQ_OUT.tables}/{_name}.csv",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"table": f"{_spec['title']} (CSV)"},
            ),
            md=report(
                f"{SEQ_OUT.tables}/{_name}.md",
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


for _name, _spec in EQUIBENCH_FIGURES.items() if SEQ_OUT.equibench else []:

    rule:
        name:
            f"seq_{_name}"
        input:
            **{
                t: eval_summary("seq", "equibench", SEQ_OUT.first_mode["equibench"], t)
                for t in ("base", "bob")
            },
        output:
            png=report(
                f"{SEQ_OUT.figures}/{_name}.png",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"figure": _spec["title"]},
            ),
            pdf=f"{SEQ_OUT.figures}/{_name}.pdf",
            csv=f"{SEQ_OUT.figures}/{_name}.csv",
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


for _bench, _name in SEQ_OUT.round_figures.items():

    rule:
        name:
            f"seq_{_name}"
        input:
            **SEQ_OUT.round_inputs(config, _bench),
        output:
            png=report(
                f"{SEQ_OUT.figures}/{_name}.png",
                caption="../report/seq_benchmarks.rst",
                category="Haskell track (paper 000)",
                labels={"figure": f"Alice per round: {_bench}"},
            ),
            pdf=f"{SEQ_OUT.figures}/{_name}.pdf",
            csv=f"{SEQ_OUT.figures}/{_name}.csv",
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


rule seq_table7:
    input:
        **SEQ_OUT.table7_inputs,
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
        rows=SEQ_OUT.table7_rows,
        experiments=SEQ_OUT.regime_runs,
    script:
        "../workflow_scripts/seq_table7.py"


rule seq_figure19:
    input:
        [f"results/tables/seq/{e}/table6.csv" for e in SEQ_OUT.figure19_runs],
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
        experiments=SEQ_OUT.figure19_runs,
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
