# EvolveCoder (paper 002): seed problems -> semantic de-duplication -> refinement into
# LeetCode-style questions with assert tests (round 0) -> a pool of candidate solutions ->
# pass matrices -> rounds of adversarial and discriminative test generation, each
# round's suite filtered into a dataset -> GRPO from the base model on each round's
# dataset -> the benchmark layer (Table 3). Steps: selfplay.pipeline.evolve.
from selfplay.tracks.evolve.outputs import bundle_files as evolve_bundle_files
from selfplay.tracks.evolve.outputs import evolve_outputs

EVOLVE_ROOT = exp_dir("evolve")
EVOLVE_LOG = log_dir("evolve")
EVOLVE_BENCH = bench_dir("evolve")
EVOLVE_CFG = config["evolve"]
EVOLVE_ROUNDS = list(range(int(EVOLVE_CFG["rounds"]) + 1))
EVOLVE_LAST = EVOLVE_ROUNDS[-1]
EVOLVE_POOL = {m["name"]: m for m in EVOLVE_CFG["pool"]["models"]}
EVOLVE_SOURCES = EVOLVE_CFG["seeds"]["sources"]
# the model that refines problems and writes tests (null: the track's model)
EVOLVE_GENERATOR = EVOLVE_CFG["generator"] or config["model"]
# A refiner and test writer served elsewhere (evolve.generator_served): its jobs are local
# HTTP clients, with no model to load, no GPU and no cluster time limit.
EVOLVE_SERVED = bool(EVOLVE_CFG["generator_served"])
EVOLVE_GENERATOR_JOB = {
    "model": lambda w: [] if EVOLVE_SERVED else generation_model_input(spec=EVOLVE_GENERATOR),
    "model_dir": lambda w: None if EVOLVE_SERVED else generation_model_param(spec=EVOLVE_GENERATOR),
    "resources": {} if EVOLVE_SERVED else resources_of("generate"),
}
for _spec in [EVOLVE_GENERATOR, *EVOLVE_CFG["models"].values()]:
    MODELS[_spec["name"]] = _spec
# the tables and figures, each round's files and Table 3's cells
EVOLVE_OUT = evolve_outputs(config)


wildcard_constraints:
    er=r"[0-9]+",
    pmodel="|".join(EVOLVE_POOL),
    esource=r"[a-z_]+",


TRACK_OUTPUTS["evolve"] = {
    "report": lambda: EVOLVE_OUT.report,
    "bundle": lambda: track_bundle_parts("evolve", **evolve_bundle_files(config, EVOLVE_OUT)),
}


# --- seeds and de-duplication (Sec. 2.1) --------------------------------------------


rule evolve_download:
    """One seed dataset at its pinned revision (paper scale; needs network)."""
    output:
        directory("resources/downloads/evolve/{esource}"),
    log:
        "logs/evolve/sources/download_{esource}.log",
    localrule: True
    container:
        image("python")
    params:
        cfg=cfg_of("evolve.seeds"),
    script:
        "../workflow_scripts/evolve_download.py"


rule evolve_seeds:
    input:
        downloaded=lambda w: (
            [f"resources/downloads/evolve/{s}" for s in EVOLVE_SOURCES]
            if EVOLVE_CFG["seeds"]["source"] == "download"
            else []
        ),
    output:
        seeds=f"{EVOLVE_ROOT}/seeds/seeds.jsonl",
        skipped=f"{EVOLVE_ROOT}/seeds/seeds.skipped.jsonl",
    log:
        f"{EVOLVE_LOG}/seeds.log",
    benchmark:
        f"{EVOLVE_BENCH}/seeds.tsv"
    container:
        image("python")
    params:
        cfg=cfg_of("seed", "evolve.seeds"),
    script:
        "../workflow_scripts/evolve_seeds.py"


# The sentence-embedding model of de-duplication: null (the model shipped in a PyPI
# wheel), a local folder, or a hub model spec that rule prepare_model downloads, pinned
# like every hub model (selfplay.llm.model_prep), into resources/models/<name>.
EVOLVE_EMBEDDER = EVOLVE_CFG["dedup"]["model"]
if isinstance(EVOLVE_EMBEDDER, dict):
    MODELS[EVOLVE_EMBEDDER["name"]] = EVOLVE_EMBEDDER


rule evolve_embed:
    """Sentence embeddings of the seed questions (or a bundle's, restored)."""
    input:
        seeds=f"{EVOLVE_ROOT}/seeds/seeds.jsonl",
        restored=lambda w: (
            [
                f"{training_restore_root()}/{EVOLVE_ROOT}/seeds/{f}"
                for f in ("embeddings.npy", "embeddings.json")
            ]
            if training_restore_root()
            else []
        ),
        embedder=evolve_embedder_input,
    output:
        vectors=f"{EVOLVE_ROOT}/seeds/embeddings.npy",
        meta=f"{EVOLVE_ROOT}/seeds/embeddings.json",
    log:
        f"{EVOLVE_LOG}/embed.log",
    benchmark:
        f"{EVOLVE_BENCH}/embed.tsv"
    container:
        image("gpu")
    threads: 2
    params:
        cfg=cfg_of("evolve.dedup.model"),
        # the folder the encoder loads (None: the packaged model)
        embedder=model_dir(EVOLVE_EMBEDDER) if isinstance(EVOLVE_EMBEDDER, dict) else EVOLVE_EMBEDDER,
    script:
        "../workflow_scripts/evolve_embed.py"


rule evolve_dedup:
    input:
        seeds=f"{EVOLVE_ROOT}/seeds/seeds.jsonl",
        vectors=f"{EVOLVE_ROOT}/seeds/embeddings.npy",
        meta=f"{EVOLVE_ROOT}/seeds/embeddings.json",
    output:
        kept=f"{EVOLVE_ROOT}/seeds/dedup.jsonl",
        stats=f"{EVOLVE_ROOT}/seeds/dedup.json",
    log:
        f"{EVOLVE_LOG}/dedup.log",
    container:
        image("python")
    params:
        cfg=cfg_of("seed", "evolve.dedup", "evolve.seeds.sources"),
    script:
        "../workflow_scripts/evolve_dedup.py"


# --- round 0: refinement, the pool, the first matrices (Sec. 2.2-2.3) -----------------


rule evolve_refine:
    input:
        seeds=f"{EVOLVE_ROOT}/seeds/dedup.jsonl",
        model=EVOLVE_GENERATOR_JOB["model"],
    output:
        f"{EVOLVE_ROOT}/round0/refine.jsonl",
    log:
        f"{EVOLVE_LOG}/round0/refine.log",
    benchmark:
        f"{EVOLVE_BENCH}/round0/refine.tsv"
    localrule: EVOLVE_SERVED
    container:
        image("python" if EVOLVE_SERVED else "gpu")
    threads: 1 if EVOLVE_SERVED else GENERATION_THREADS
    resources:
        **EVOLVE_GENERATOR_JOB["resources"],
    params:
        cfg=cfg_of(*GENERATION_KEYS, "evolve.refine", "evolve.generator_served"),
        model_dir=EVOLVE_GENERATOR_JOB["model_dir"],
    script:
        "../workflow_scripts/evolve_refine.py"


rule evolve_suites0:
    input:
        seeds=f"{EVOLVE_ROOT}/seeds/dedup.jsonl",
        generations=f"{EVOLVE_ROOT}/round0/refine.jsonl",
    output:
        f"{EVOLVE_ROOT}/round0/suite.jsonl",
    log:
        f"{EVOLVE_LOG}/round0/suite.log",
    container:
        image("python")
    script:
        "../workflow_scripts/evolve_suites0.py"


# One generation job per pool model, or per block of problems when evolve.pool.shards > 1
# (paper scale: one model's 30,437 problems x 8 samples do not fit one job's time limit),
# merged back into the model's recording by evolve_pool_merge.
EVOLVE_POOL_SHARDS = int(EVOLVE_CFG["pool"].get("shards", 1))
_POOL_JOB = "{pmodel}" if EVOLVE_POOL_SHARDS == 1 else "{pmodel}.shards/{pshard}"


rule evolve_pool_generate:
    input:
        suite=f"{EVOLVE_ROOT}/round0/suite.jsonl",
        model=lambda w: generation_model_input(
            spec=config["model"] if w.pmodel == "track" else EVOLVE_CFG["models"][w.pmodel]
        ),
    output:
        f"{EVOLVE_ROOT}/pool/{_POOL_JOB}.jsonl",
    log:
        f"{EVOLVE_LOG}/pool/{_POOL_JOB}.log",
    benchmark:
        f"{EVOLVE_BENCH}/pool/pool_{_POOL_JOB}.tsv"
    wildcard_constraints:
        pshard=r"[0-9]+",
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **evolve_pool_resources(),
    params:
        cfg=lambda w: evolve_pool_cfg(w.pmodel),
        samples=lambda w: EVOLVE_POOL[w.pmodel]["samples"],
        model_dir=lambda w: generation_model_param(
            spec=config["model"] if w.pmodel == "track" else EVOLVE_CFG["models"][w.pmodel]
        ),
        shard=lambda w: int(w.get("pshard", 0)),
        shards=EVOLVE_POOL_SHARDS,
    script:
        "../workflow_scripts/evolve_pool_generate.py"


if EVOLVE_POOL_SHARDS > 1:

    rule evolve_pool_merge:
        input:
            lambda w: [f"{EVOLVE_ROOT}/pool/{w.pmodel}.shards/{k}.jsonl" for k in range(EVOLVE_POOL_SHARDS)],
        output:
            f"{EVOLVE_ROOT}/pool/{{pmodel}}.jsonl",
        log:
            f"{EVOLVE_LOG}/pool/{{pmodel}}.merge.log",
        container:
            image("python")
        script:
            "../workflow_scripts/evolve_merge_shards.py"


rule evolve_pool:
    input:
        suite=f"{EVOLVE_ROOT}/round0/suite.jsonl",
        generations=[f"{EVOLVE_ROOT}/pool/{m}.jsonl" for m in EVOLVE_POOL],
    output:
        f"{EVOLVE_ROOT}/pool/solutions.jsonl",
    log:
        f"{EVOLVE_LOG}/pool/solutions.log",
    container:
        image("python")
    script:
        "../workflow_scripts/evolve_pool.py"


# One job per round's pass matrices, or per block of the problems when
# evolve.matrix.shards > 1 (paper scale: 30,437 problems x 64 solutions x 40 new tests a
# round is ~400 core-hours), merged back by evolve_matrix_merge.
EVOLVE_MATRIX_SHARDS = int(EVOLVE_CFG["matrix"]["shards"])
_MATRIX_JOB = "matrix" if EVOLVE_MATRIX_SHARDS == 1 else "matrix.shards/{mshard}"


rule evolve_matrix:
    input:
        suite=f"{EVOLVE_ROOT}/round{{er}}/suite.jsonl",
        pool=f"{EVOLVE_ROOT}/pool/solutions.jsonl",
        previous=lambda w: [] if w.er == "0" else f"{EVOLVE_ROOT}/round{int(w.er) - 1}/matrix.jsonl",
    output:
        f"{EVOLVE_ROOT}/round{{er}}/{_MATRIX_JOB}.jsonl",
    log:
        f"{EVOLVE_LOG}/round{{er}}/{_MATRIX_JOB}.log",
    benchmark:
        f"{EVOLVE_BENCH}/round{{er}}/matrix{'' if EVOLVE_MATRIX_SHARDS == 1 else '.shard{mshard}'}.tsv"
    wildcard_constraints:
        mshard=r"[0-9]+",
    container:
        image("sandbox")
    threads: int(config["evolve"]["matrix"]["workers"])  # one CPU per sandbox worker
    resources:
        **resources_of("verify"),
    params:
        cfg=cfg_of("evolve.matrix"),
        shard=lambda w: int(w.get("mshard", 0)),
    script:
        "../workflow_scripts/evolve_matrix.py"


if EVOLVE_MATRIX_SHARDS > 1:

    rule evolve_matrix_merge:
        input:
            lambda w: [
                f"{EVOLVE_ROOT}/round{w.er}/matrix.shards/{k}.jsonl" for k in range(EVOLVE_MATRIX_SHARDS)
            ],
        output:
            f"{EVOLVE_ROOT}/round{{er}}/matrix.jsonl",
        log:
            f"{EVOLVE_LOG}/round{{er}}/matrix.merge.log",
        container:
            image("python")
        script:
            "../workflow_scripts/evolve_merge_shards.py"


rule evolve_dataset:
    input:
        suite=f"{EVOLVE_ROOT}/round{{er}}/suite.jsonl",
        matrix=f"{EVOLVE_ROOT}/round{{er}}/matrix.jsonl",
    output:
        f"{EVOLVE_ROOT}/round{{er}}/dataset.jsonl",
    log:
        f"{EVOLVE_LOG}/round{{er}}/dataset.log",
    container:
        image("python")
    params:
        cfg=cfg_of("evolve.filter", "evolve.discriminative.enforce_split"),
    script:
        "../workflow_scripts/evolve_dataset.py"


# --- rounds >= 1: adversarial and discriminative tests (Sec. 2.3) ---------------------


# One job per round's adversarial and discriminative requests, or per block of the
# problems when evolve.test_shards > 1 (paper scale: 30,437 problems x two 8,192-token
# answers run past one job's time limit), merged back by evolve_generate_merge.
EVOLVE_TEST_SHARDS = int(EVOLVE_CFG["test_shards"])
_TESTS_JOB = "evolve" if EVOLVE_TEST_SHARDS == 1 else "evolve.shards/{tshard}"


rule evolve_generate:
    input:
        suite=lambda w: f"{EVOLVE_ROOT}/round{int(w.er) - 1}/suite.jsonl",
        pool=f"{EVOLVE_ROOT}/pool/solutions.jsonl",
        matrix=lambda w: f"{EVOLVE_ROOT}/round{int(w.er) - 1}/matrix.jsonl",
        model=EVOLVE_GENERATOR_JOB["model"],
    output:
        f"{EVOLVE_ROOT}/round{{er}}/{_TESTS_JOB}.jsonl",
    log:
        f"{EVOLVE_LOG}/round{{er}}/{_TESTS_JOB}.log",
    benchmark:
        f"{EVOLVE_BENCH}/round{{er}}/tests{'' if EVOLVE_TEST_SHARDS == 1 else '.shard{tshard}'}.tsv"
    wildcard_constraints:
        er=r"[1-9][0-9]*",
        tshard=r"[0-9]+",
    localrule: EVOLVE_SERVED
    container:
        image("python" if EVOLVE_SERVED else "gpu")
    threads: 1 if EVOLVE_SERVED else GENERATION_THREADS
    resources:
        **EVOLVE_GENERATOR_JOB["resources"],
    params:
        cfg=cfg_of(*GENERATION_KEYS, "evolve.adversarial", "evolve.discriminative", "evolve.generator_served"),
        model_dir=EVOLVE_GENERATOR_JOB["model_dir"],
        shard=lambda w: int(w.get("tshard", 0)),
        shards=EVOLVE_TEST_SHARDS,
    script:
        "../workflow_scripts/evolve_generate.py"


if EVOLVE_TEST_SHARDS > 1:

    rule evolve_generate_merge:
        input:
            lambda w: [
                f"{EVOLVE_ROOT}/round{w.er}/evolve.shards/{k}.jsonl" for k in range(EVOLVE_TEST_SHARDS)
            ],
        output:
            f"{EVOLVE_ROOT}/round{{er}}/evolve.jsonl",
        log:
            f"{EVOLVE_LOG}/round{{er}}/evolve.merge.log",
        wildcard_constraints:
            er=r"[1-9][0-9]*",
        container:
            image("python")
        script:
            "../workflow_scripts/evolve_merge_shards.py"


rule evolve_suite:
    input:
        suite=lambda w: f"{EVOLVE_ROOT}/round{int(w.er) - 1}/suite.jsonl",
        generations=f"{EVOLVE_ROOT}/round{{er}}/evolve.jsonl",
    output:
        f"{EVOLVE_ROOT}/round{{er}}/suite.jsonl",
    log:
        f"{EVOLVE_LOG}/round{{er}}/suite.log",
    wildcard_constraints:
        er=r"[1-9][0-9]*",
    container:
        image("python")
    script:
        "../workflow_scripts/evolve_suite.py"


# --- GRPO on each round's dataset (Sec. 4.1, Table 3) ---------------------------------


rule evolve_grpo:
    input:
        suite=f"{EVOLVE_ROOT}/round{{er}}/suite.jsonl",
        dataset=f"{EVOLVE_ROOT}/round{{er}}/dataset.jsonl",
        model=training_model_input,
        restored=training_restore_input(f"{EVOLVE_ROOT}/grpo/r{{er}}/adapter"),
        restored_rollouts=lambda w: (
            f"{training_restore_root()}/{EVOLVE_ROOT}/grpo/r{w.er}/rollouts.jsonl"
            if training_restore_root()
            else []
        ),
    output:
        adapter=directory(f"{EVOLVE_ROOT}/grpo/r{{er}}/adapter"),
        rollouts=f"{EVOLVE_ROOT}/grpo/r{{er}}/rollouts.jsonl",
    log:
        f"{EVOLVE_LOG}/grpo/r{{er}}.log",
    benchmark:
        f"{EVOLVE_BENCH}/round{{er}}/grpo.tsv"
    container:
        image("gpu")
    threads: 2
    resources:
        **resources_of("train"),
    params:
        cfg=cfg_of("seed", "backend", "evolve.grpo", "evolve.reward", "evolve.matrix"),
        model_dir=training_model_param,
        # more than 1: the script starts `accelerate launch` with one process per GPU
        # (selfplay.train.rl.launch, config/accelerate/)
        gpus=int(resources_of("train").get("gpu", 0)),
    script:
        "../workflow_scripts/evolve_grpo.py"


# --- tables and figures ---------------------------------------------------------------


rule evolve_table1:
    input:
        stats=f"{EVOLVE_ROOT}/seeds/dedup.json",
        final=f"{EVOLVE_ROOT}/round{EVOLVE_LAST}/dataset.jsonl",
    output:
        csv=report(
            "results/tables/evolve/table1.csv",
            caption="../report/evolve_seeds.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Table 1 (CSV)"},
        ),
        md=report(
            "results/tables/evolve/table1.md",
            caption="../report/evolve_seeds.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Table 1"},
        ),
    log:
        f"{EVOLVE_LOG}/report/table1.log",
    container:
        image("python")
    params:
        sources=EVOLVE_SOURCES,
    script:
        "../workflow_scripts/evolve_table1.py"


rule evolve_seed_figure:
    input:
        f"{EVOLVE_ROOT}/seeds/dedup.json",
    output:
        png=report(
            "results/figures/evolve/figure{fig}.png",
            caption="../report/evolve_seeds.rst",
            category="EvolveCoder (paper 002)",
            labels={"figure": "Figure {fig}"},
        ),
        pdf="results/figures/evolve/figure{fig}.pdf",
        csv="results/figures/evolve/figure{fig}.csv",
    log:
        f"{EVOLVE_LOG}/report/figure{{fig}}.log",
    wildcard_constraints:
        fig="[12]",
    container:
        image("python")
    script:
        "../workflow_scripts/evolve_seed_figure.py"


rule evolve_round_report:
    input:
        **{
            f"round{r}_{k}": p
            for r in EVOLVE_ROUNDS
            for k, p in zip(("suite", "matrix", "dataset"), EVOLVE_OUT.round_files[r])
        },
    output:
        **{
            f"figure{i}_{e}": (
                report(
                    f"results/figures/evolve/figure{i}.{e}",
                    caption="../report/evolve_rounds.rst",
                    category="EvolveCoder (paper 002)",
                    labels={"figure": f"Figure {i}"},
                )
                if e == "png"
                else f"results/figures/evolve/figure{i}.{e}"
            )
            for i in (4, 5, 6)
            for e in ("png", "pdf", "csv")
        },
        table2_csv=report(
            "results/tables/evolve/table2.csv",
            caption="../report/evolve_rounds.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Table 2 (CSV)"},
        ),
        table2_md=report(
            "results/tables/evolve/table2.md",
            caption="../report/evolve_rounds.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Table 2"},
        ),
        yield_csv="results/tables/evolve/yield.csv",
        yield_md=report(
            "results/tables/evolve/yield.md",
            caption="../report/evolve_rounds.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Yield per round"},
        ),
    log:
        f"{EVOLVE_LOG}/report/rounds.log",
    container:
        image("python")
    params:
        rounds=EVOLVE_ROUNDS,
        sources=EVOLVE_SOURCES,
        ks=EVOLVE_CFG["ks"],
    script:
        "../workflow_scripts/evolve_round_report.py"


rule evolve_table3:
    input:
        **{f"{t}|{b}": eval_summary("evolve", b, m, t) for b, m, t in EVOLVE_OUT.table3_runs},
        **{
            f"training_{t}": grpo_adapter("evolve", k)
            for t, k in model_tags.rounds_of(EVOLVE_OUT.table3_models, model_tags.GRPO_ROUND).items()
        },
    output:
        csv=report(
            "results/tables/evolve/table3.csv",
            caption="../report/evolve_table3.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Table 3 (CSV)"},
        ),
        md=report(
            "results/tables/evolve/table3.md",
            caption="../report/evolve_table3.rst",
            category="EvolveCoder (paper 002)",
            labels={"table": "Table 3"},
        ),
    log:
        f"{EVOLVE_LOG}/report/table3.log",
    container:
        image("python")
    params:
        models=EVOLVE_OUT.table3_models,
        # accepted differences from the papers' LiveCodeBench counts, for the caption
        notes=lcb_count_notes(EVAL["benchmarks"]["livecodebench"]),
    script:
        "../workflow_scripts/evolve_table3.py"
