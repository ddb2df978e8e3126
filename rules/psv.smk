# PSV: propose, solve, verify (paper 003, Algorithm 1), with Dafny here and Verus on
# clusters. Per setting S (seed set, evaluation sets), method M and run seed R: solve the
# pool X_t (k samples each, verified), train theta_{t+1} from the base model on one verified
# solution per solved problem (RFT), propose B new specs from pool problems labelled by
# pass rate, spec-check them, grow the pool; evaluate every theta_t with pass@k.
# Iteration 0 (the base model solving the seed set) is method `base`, shared by all
# methods of S. Paths: selfplay.tracks.psv.layout; steps: selfplay.pipeline.psv.
from selfplay.tracks.psv import layout as psv_layout
from selfplay.tracks.psv import verifier as psv_verifier

PSV_ROOT = psv_layout.root(config)
PSV_LOG = log_dir("psv")
PSV_BENCH = bench_dir("psv")
PSV_CFG = config["psv"]
PSV_RUN = f"{PSV_ROOT}/{{setting}}/{{method}}/seed{{rseed}}"
PSV_TABLE1 = PSV_CFG["tables"]["table1"]
PSV_T6 = PSV_CFG["table6"]
PSV_T6_DIR = psv_layout.table6_dir(config)
PSV_T6_MODELS = {m["name"]: m for m in PSV_T6["models"]}
for _t6_model in PSV_T6["models"]:
    MODELS[_t6_model["name"]] = _t6_model


wildcard_constraints:
    setting=r"[a-z][a-z0-9_]*",
    method=r"[a-z][a-z0-9_]*",
    rseed=r"[0-9]+",
    t=r"[0-9]+",
    pset=r"[A-Za-z0-9_]+",
    condition=r"[A-Za-z0-9_.-]+",
    t6model=r"[A-Za-z0-9._-]+",


TRACK_OUTPUTS["psv"] = {
    "report": lambda: psv_layout.REPORT,
    "bundle": lambda: track_bundle_parts("psv", **psv_layout.bundle_files(config)),
}


# Verifier jobs ask for one CPU per sandbox worker of the active language's verifier.
PSV_VERIFY_WORKERS = psv_verifier.verify_workers(config)


rule psv_all:
    input:
        psv_layout.EVERYTHING + ["results/tables/psv/yield.md"],
    localrule: True


rule psv_download_set:
    output:
        directory("resources/downloads/psv/{pset}"),
    log:
        "logs/psv/sources/download_{pset}.log",
    localrule: True
    container:
        image("python")
    params:
        cfg=lambda w: cfg_of(f"psv.problem_sets.{w.pset}"),
    script:
        "../workflow_scripts/psv_download.py"


rule psv_problem_set:
    input:
        downloaded=lambda w: (
            f"resources/downloads/psv/{w.pset}"
            if PSV_CFG["problem_sets"][w.pset]["source"] == "download"
            else []
        ),
    output:
        f"{PSV_ROOT}/problems/{{pset}}.jsonl",
    log:
        f"{PSV_LOG}/problems/{{pset}}.log",
    benchmark:
        f"{PSV_BENCH}/problems/{{pset}}.tsv"
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=lambda w: cfg_of("seed", "psv.language", f"psv.problem_sets.{w.pset}", "psv.verify"),
    script:
        "../workflow_scripts/psv_problem_set.py"


rule psv_solve:
    input:
        pool=lambda w: psv_layout.pool(config, w.setting, w.method, w.rseed, int(w.t)),
        model=generation_model_input,
        adapter=lambda w: psv_layout.adapter(config, w.setting, w.method, w.rseed, int(w.t)) or [],
    output:
        f"{PSV_RUN}/iter{{t}}/solve.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/solve.log",
    benchmark:
        f"{PSV_BENCH}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/solve.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "psv.language", "psv.solve"),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/psv_solve.py"


rule psv_score_solutions:
    input:
        generations=f"{PSV_RUN}/iter{{t}}/solve.jsonl",
        problems=lambda w: psv_layout.pool(config, w.setting, w.method, w.rseed, int(w.t)),
    output:
        f"{PSV_RUN}/iter{{t}}/solutions.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/solutions.log",
    benchmark:
        f"{PSV_BENCH}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/solutions.tsv"
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("psv.language", "psv.solve.completion", "psv.verify", "psv.difficulty"),
    script:
        "../workflow_scripts/psv_score.py"


rule psv_trainset:
    input:
        lambda w: psv_layout.solutions(config, w.setting, w.method, w.rseed, int(w.t) - 1),
    output:
        f"{PSV_RUN}/model{{t}}/train_solver.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/model{{t}}/trainset.log",
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    # re-verifies the chosen solutions: a verifier out of memory would drop examples
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=lambda w: cfg_of(
            "psv.language",
            "psv.solve.completion",
            "psv.verify",
            "psv.rft",
            "psv.iterations",
            "psv.propose",
            *([f"psv.methods.{w.method}"] if w.method in PSV_CFG["methods"] else []),
        ),
    script:
        "../workflow_scripts/psv_trainset.py"


rule psv_train_solver:
    input:
        trainset=f"{PSV_RUN}/model{{t}}/train_solver.jsonl",
        model=training_model_input,
        restored=training_restore_input(f"{PSV_RUN}/model{{t}}/adapter"),
    output:
        directory(f"{PSV_RUN}/model{{t}}/adapter"),
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/model{{t}}/train.log",
    benchmark:
        f"{PSV_BENCH}/{{setting}}/{{method}}/seed{{rseed}}/model{{t}}/train.tsv"
    container:
        image("gpu")
    threads: 2
    resources:
        **resources_of("train"),
    params:
        cfg=cfg_of("seed", "psv.training", "backend.name"),
        model_dir=training_model_param,
        gpus=train_gpus(),
        tag=lambda w: f"{w.setting}/{w.method}/seed{w.rseed}/model{w.t}",
    script:
        "../workflow_scripts/psv_train_solver.py"


rule psv_propose:
    input:
        labelled=lambda w: psv_layout.solutions(config, w.setting, w.method, w.rseed, int(w.t)),
        fixed=lambda w: psv_layout.solutions(config, w.setting, w.method, w.rseed, 0),
        model=generation_model_input,
    output:
        f"{PSV_RUN}/iter{{t}}/propose.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/propose.log",
    benchmark:
        f"{PSV_BENCH}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/propose.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=lambda w: cfg_of(
            *GENERATION_KEYS,
            "psv.language",
            "psv.propose",
            "psv.rft",
            "psv.iterations",
            f"psv.methods.{w.method}",
        ),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/psv_propose.py"


rule psv_check_proposals:
    input:
        generations=f"{PSV_RUN}/iter{{t}}/propose.jsonl",
        pool=lambda w: psv_layout.pool(config, w.setting, w.method, w.rseed, int(w.t)),
    output:
        f"{PSV_RUN}/iter{{t}}/proposals.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/proposals.log",
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=lambda w: cfg_of(
            "psv.language",
            "psv.verify",
            "psv.propose",
            "psv.rft",
            "psv.iterations",
            f"psv.methods.{w.method}",
        ),
    script:
        "../workflow_scripts/psv_check_proposals.py"


rule psv_grow_pool:
    input:
        pool=lambda w: psv_layout.pool(config, w.setting, w.method, w.rseed, int(w.t) - 1),
        proposals=lambda w: psv_layout.proposals(config, w.setting, w.method, w.rseed, int(w.t) - 1),
    output:
        f"{PSV_RUN}/iter{{t}}/pool.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/iter{{t}}/pool.log",
    container:
        image("python")
    script:
        "../workflow_scripts/psv_grow_pool.py"


rule psv_eval_generate:
    input:
        problems=f"{PSV_ROOT}/problems/{{pset}}.jsonl",
        model=generation_model_input,
        adapter=lambda w: psv_layout.adapter(config, w.setting, w.method, w.rseed, int(w.t)) or [],
        exemplars=lambda w: (
            psv_layout.solutions(config, w.setting, w.method, w.rseed, 0) if w.method == "fewshot" else []
        ),
    output:
        f"{PSV_RUN}/model{{t}}/eval_{{pset}}/generations.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/model{{t}}/eval_{{pset}}.log",
    benchmark:
        f"{PSV_BENCH}/{{setting}}/{{method}}/seed{{rseed}}/model{{t}}/eval_{{pset}}.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(
            *GENERATION_KEYS,
            "psv.language",
            "psv.evaluation.samples",
            "psv.evaluation.sampling",
            "psv.solve.answer_format",
            "psv.solve.completion",
            "psv.fewshot",
        ),
        model_dir=generation_model_param,
        tag=lambda w: f"{w.setting}/{w.method}/seed{w.rseed}/model{w.t}",
    script:
        "../workflow_scripts/psv_eval_generate.py"


rule psv_eval_score:
    input:
        generations=f"{PSV_RUN}/model{{t}}/eval_{{pset}}/generations.jsonl",
        problems=f"{PSV_ROOT}/problems/{{pset}}.jsonl",
    output:
        f"{PSV_RUN}/model{{t}}/eval_{{pset}}/scores.jsonl",
    log:
        f"{PSV_LOG}/{{setting}}/{{method}}/seed{{rseed}}/model{{t}}/eval_{{pset}}_scores.log",
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("psv.language", "psv.solve.completion", "psv.verify", "psv.difficulty"),
    script:
        "../workflow_scripts/psv_score.py"


rule psv_method_table:
    input:
        lambda w: list(psv_layout.score_files(config, PSV_CFG["tables"][w.table]).values()),
    output:
        csv=report(
            "results/tables/psv/{table}.csv",
            caption="../report/psv_tables.rst",
            category="PSV (paper 003)",
            labels={"table": "{table} (CSV)"},
        ),
        md=report(
            "results/tables/psv/{table}.md",
            caption="../report/psv_tables.rst",
            category="PSV (paper 003)",
            labels={"table": "{table}"},
        ),
    log:
        f"{PSV_LOG}/report/{{table}}.log",
    wildcard_constraints:
        table="table[123]",
    container:
        image("python")
    params:
        cfg=cfg_of("psv"),
    script:
        "../workflow_scripts/psv_method_table.py"


rule psv_yield:
    input:
        lambda w: [
            p
            for runs in psv_layout.yield_files(config, PSV_TABLE1).values()
            for it in runs.values()
            for p in it.values()
            if p
        ],
    output:
        csv=report(
            "results/tables/psv/yield.csv",
            caption="../report/psv_yield.rst",
            category="PSV (paper 003)",
            labels={"table": "Yield (CSV)"},
        ),
        md=report(
            "results/tables/psv/yield.md",
            caption="../report/psv_yield.rst",
            category="PSV (paper 003)",
            labels={"table": "Yield per iteration"},
        ),
        reasons="results/tables/psv/yield_reasons.csv",
    log:
        f"{PSV_LOG}/report/yield.log",
    container:
        image("python")
    params:
        cfg=cfg_of(
            "psv.experiment",
            "psv.settings",
            "psv.seeds",
            "psv.iterations",
            "psv.methods",
            "psv.propose",
            "psv.rft",
            "psv.tables",
        ),
    script:
        "../workflow_scripts/psv_yield.py"


rule psv_figures:
    input:
        lambda w: list(
            psv_layout.score_files(
                config, PSV_CFG["figures"][w.figure] if w.figure in ("figure5", "figure6") else PSV_TABLE1
            ).values()
        ),
    output:
        png=report(
            "results/figures/psv/{figure}.png",
            caption="../report/psv_figures.rst",
            category="PSV (paper 003)",
            labels={"figure": "{figure}"},
        ),
        pdf="results/figures/psv/{figure}.pdf",
        csv="results/figures/psv/{figure}.csv",
    log:
        f"{PSV_LOG}/report/{{figure}}.log",
    wildcard_constraints:
        figure="figure[1456]",
    container:
        image("python")
    params:
        cfg=cfg_of("psv"),
    script:
        "../workflow_scripts/psv_figure.py"


rule psv_t6_trainset:
    input:
        lambda w: psv_layout.table6_sources(config, w.condition),
    output:
        f"{PSV_T6_DIR}/{{condition}}/train_solver.jsonl",
    log:
        f"{PSV_LOG}/table6/{{condition}}/trainset.log",
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    # re-verifies the chosen solutions: a verifier out of memory would drop examples
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("psv.language", "psv.solve.completion", "psv.verify"),
    script:
        "../workflow_scripts/psv_t6_trainset.py"


rule psv_t6_train:
    input:
        trainset=f"{PSV_T6_DIR}/{{condition}}/train_solver.jsonl",
        model=lambda w: model_input(spec=PSV_T6_MODELS[w.t6model]),
    output:
        directory(f"{PSV_T6_DIR}/{{t6model}}/{{condition}}/adapter"),
    log:
        f"{PSV_LOG}/table6/{{t6model}}/{{condition}}/train.log",
    container:
        image("gpu")
    threads: 2
    resources:
        **resources_of("train"),
    params:
        cfg=cfg_of("seed", "psv.training", "backend.name"),
        model_dir=lambda w: model_dir(PSV_T6_MODELS[w.t6model]),
        gpus=train_gpus(),
        tag=lambda w: f"table6/{w.t6model}/{w.condition}",
    script:
        "../workflow_scripts/psv_train_solver.py"


rule psv_t6_eval_generate:
    input:
        problems=f"{PSV_ROOT}/problems/{{pset}}.jsonl",
        model=lambda w: generation_model_input(spec=PSV_T6_MODELS[w.t6model]),
        adapter=lambda w: (
            [] if w.condition == "Baseline" else f"{PSV_T6_DIR}/{w.t6model}/{w.condition}/adapter"
        ),
    output:
        f"{PSV_T6_DIR}/{{t6model}}/{{condition}}/eval_{{pset}}/generations.jsonl",
    log:
        f"{PSV_LOG}/table6/{{t6model}}/{{condition}}/eval_{{pset}}.log",
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(
            *GENERATION_KEYS,
            "psv.language",
            "psv.evaluation.samples",
            "psv.evaluation.sampling",
            "psv.solve.answer_format",
            "psv.solve.completion",
            "psv.fewshot",
        ),
        model_dir=lambda w: generation_model_param(spec=PSV_T6_MODELS[w.t6model]),
        tag=lambda w: f"table6/{w.t6model}/{w.condition}",
    script:
        "../workflow_scripts/psv_eval_generate.py"


rule psv_t6_eval_score:
    input:
        generations=f"{PSV_T6_DIR}/{{t6model}}/{{condition}}/eval_{{pset}}/generations.jsonl",
        problems=f"{PSV_ROOT}/problems/{{pset}}.jsonl",
    output:
        f"{PSV_T6_DIR}/{{t6model}}/{{condition}}/eval_{{pset}}/scores.jsonl",
    log:
        f"{PSV_LOG}/table6/{{t6model}}/{{condition}}/eval_{{pset}}_scores.log",
    container:
        image("verus") if PSV_CFG["language"] == "verus" else image("sandbox")
    threads: PSV_VERIFY_WORKERS
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("psv.language", "psv.solve.completion", "psv.verify", "psv.difficulty"),
    script:
        "../workflow_scripts/psv_score.py"


rule psv_table6:
    input:
        lambda w: list(psv_layout.table6_scores(config).values()),
    output:
        csv=report(
            "results/tables/psv/table6.csv",
            caption="../report/psv_table6.rst",
            category="PSV (paper 003)",
            labels={"table": "table6 (CSV)"},
        ),
        md=report(
            "results/tables/psv/table6.md",
            caption="../report/psv_table6.rst",
            category="PSV (paper 003)",
            labels={"table": "table6"},
        ),
    log:
        f"{PSV_LOG}/report/table6.log",
    container:
        image("python")
    params:
        cfg=cfg_of("psv"),
    script:
        "../workflow_scripts/psv_table6.py"
