# GASP: guided asymmetric self-play (paper 004, Algorithm 1). Per method and seed, each
# global iteration runs the method's teacher phases (lemma, then lift: generate, validate,
# check novelty, estimate the student's pass rate, score, accept) and a solver phase
# (accepted lemmas and lifts as induction, deduction and abduction tasks), each ending in
# one update on its recorded rollouts (Task-Relative REINFORCE++); every eval_every-th
# checkpoint goes through the benchmark layer. Paths: selfplay.tracks.gasp.layout;
# steps: selfplay.pipeline.gasp; tables and figures: selfplay.report.gasp.
from selfplay.tracks.gasp import layout as gasp_layout
from selfplay.tracks.gasp import prune as gasp_prune
from selfplay.tracks.gasp.methods import METHODS as GASP_METHODS
from selfplay.pipeline import gasp as gasp_pipeline
from selfplay.tracks.gasp.outputs import bundle_files as gasp_bundle_files
from selfplay.tracks.gasp.outputs import gasp_outputs
from selfplay.tracks.gasp.outputs import phase_jobs as gasp_phase_jobs
from selfplay.tracks.gasp.outputs import selected_bundle_files as gasp_selected_bundle_files

GASP_ROOT = exp_dir("gasp")
GASP_LOG = log_dir("gasp")
GASP_BENCH = bench_dir("gasp")
GASP_CFG = config["gasp"]
GASP_RUN = f"{GASP_ROOT}/{{gmethod}}/s{{gseed}}"
GASP_PHASE = f"{GASP_RUN}/iter{{gi}}/{{gphase}}"
# the runs, their phase folders, the evaluated checkpoints and the tables and figures
GASP_OUT = gasp_outputs(config)
if GASP_OUT.azr:
    MODELS[GASP_OUT.azr["name"]] = GASP_OUT.azr
# A paper plan has ~12,000 phase and update jobs: after "Building DAG of jobs..." Snakemake
# prints nothing while it plans them (its own work, a few ms a job: ~40 s for the paper
# config on 2 cores), so say so up front rather than look stuck (main process only).
GASP_JOBS = 2 * gasp_phase_jobs(config, GASP_OUT)
if "gasp" in TRACKS and workflow.is_main_process and GASP_JOBS >= 2000:
    print(
        f"GASP: {GASP_JOBS:,} phase and update jobs besides the evaluations; Snakemake plans "
        "them without printing progress after 'Building DAG of jobs...' (a few ms a job)",
        file=sys.stderr,
    )
# gasp.update.keep_states: checkpoints drops the weights of states no job needs any more;
# the update jobs get the checkpoints they must keep (a param only then: all adds none)
GASP_KEEP = (
    {"evaluated": lambda w: gasp_prune.evaluated_states(config, w.gmethod, w.gseed)}
    if gasp_prune.keep_states(GASP_CFG.get("update")) == "checkpoints"
    else {}
)
TRACK_MODEL_TAGS["gasp"] = GASP_OUT.tag_adapter
TRACK_TAG_MODELS["gasp"] = GASP_OUT.tag_model


wildcard_constraints:
    gmethod="|".join(GASP_METHODS),
    gseed=r"[0-9]+",
    gi=r"[0-9]+",


TRACK_OUTPUTS["gasp"] = {
    "report": lambda: GASP_OUT.report,
    "bundle": lambda: track_bundle_parts("gasp", **gasp_bundle_files(config, GASP_OUT)),
    # Table 3's greedy evaluations follow each run's selection (a Snakemake checkpoint)
    "checkpoints": lambda: list(GASP_OUT.selections.values()),
    "bundle_checkpointed": lambda: gasp_selected_bundle_files(config, GASP_OUT, GASP_SELECTED_TAGS()),
}
# the rule Table 3's checkpoints are selected by (pass@20, or the largest k the mode reports)
GASP_SELECTION_RULE = gasp_pipeline.selection_rule(config["evaluation"]["modes"][GASP_OUT.sampled[1]])

# each run's selected checkpoint (rule gasp_selection), once every selection is made
GASP_SELECTED_TAGS = lambda: checkpoint_json(
    "gasp_selection", "tag", [{"gmethod": m, "gseed": s} for m, s in GASP_OUT.runs]
)


rule gasp_goalposts:
    """The goalposts the teacher is shown (shipped problems, a file of LiveCodeBench rows,
    or the goalpost filter's output)."""
    input:
        lambda w: {"path": [GASP_CFG["goalposts"]["path"]], "filter": [GASP_OUT.filtered], "shipped": []}[
            GASP_CFG["goalposts"]["source"]
        ],
    output:
        f"{GASP_ROOT}/goalposts.jsonl",
    log:
        f"{GASP_LOG}/goalposts.log",
    localrule: True
    container:
        image("python")
    params:
        cfg=cfg_of("gasp.goalposts"),
        rows=lambda w, input: input[0] if len(input) else None,
    script:
        "../workflow_scripts/gasp_goalposts.py"


rule gasp_goalpost_prefilter:
    """Sec. 3.2, stages 1-2: the training problems no filter model of goalposts.filter.models
    solves (pass@n = 0 under each, in order), written as LiveCodeBench rows (what the final
    RL filter trains on), and per problem the record of why it stayed or which filter solved it."""
    input:
        rows=f"{GASP_ROOT}/real_rows.jsonl",
        scored=lambda w: [s for _, s in GASP_OUT.filter_runs],
    output:
        rows=GASP_OUT.prefiltered,
        records=GASP_OUT.prefilter_records,
    log:
        f"{GASP_LOG}/goalpost_prefilter.log",
    localrule: True
    container:
        image("python")
    params:
        filters=[f for f, _ in GASP_OUT.filter_runs],
        samples=config["evaluation"]["modes"][GASP_CFG["goalposts"]["filter"]["mode"]]["samples"],
    script:
        "../workflow_scripts/gasp_goalpost_filter.py"


rule gasp_goalpost_filter:
    """Sec. 3.2, stage 3 ("Final RL filter"): of the prefilter's problems, those no checkpoint
    of the final RL run (method filter_rl, trained on them) solves: H, and per training
    problem the record of the stage and filter that removed it, or that it stayed. With
    goalposts.filter.final_rl null, H is the prefilter's rows."""
    input:
        rows=GASP_OUT.prefiltered,
        records=GASP_OUT.prefilter_records,
        scored=lambda w: [s for _, s in GASP_OUT.final_filter_runs],
    output:
        rows=GASP_OUT.filtered,
        records=GASP_OUT.filter_records,
    log:
        f"{GASP_LOG}/goalpost_filter.log",
    localrule: True
    container:
        image("python")
    params:
        cfg=cfg_of("gasp.goalposts.filter.final_rl"),
        filters=[f for f, _ in GASP_OUT.final_filter_runs],
        samples=config["evaluation"]["modes"][GASP_CFG["goalposts"]["filter"]["mode"]]["samples"],
    script:
        "../workflow_scripts/gasp_goalpost_final_filter.py"


rule gasp_teacher_phase:
    """A teacher phase (lemma, lift, one-step or unguided): generate, validate in the sandbox,
    reject what is not novel, estimate the student's pass rate, score and accept, until M are
    accepted or the attempts are spent."""
    input:
        model=generation_model_input,
        state=lambda w: gasp_layout.previous_state(GASP_ROOT, w.gmethod, w.gseed, int(w.gi), w.gphase) or [],
        parents=lambda w: {
            "goalpost": f"{GASP_ROOT}/goalposts.jsonl",
            "lemma": f"{gasp_layout.phase_dir(GASP_ROOT, w.gmethod, w.gseed, w.gi, 'lemma')}/accepted.jsonl",
            "none": [],
        }[{p.name: p.parent for p in GASP_METHODS[w.gmethod].phases}[w.gphase]],
        buffers=lambda w: gasp_layout.buffer_files(GASP_ROOT, w.gmethod, w.gseed, int(w.gi), w.gphase),
    output:
        **{f.split(".")[0]: f"{GASP_PHASE}/{f}" for f in gasp_layout.PHASE_FILES},
        summary=f"{GASP_PHASE}/phase.json",
    log:
        f"{GASP_LOG}/{{gmethod}}/s{{gseed}}/iter{{gi}}_{{gphase}}.log",
    benchmark:
        f"{GASP_BENCH}/{{gmethod}}/s{{gseed}}/iter{{gi}}_{{gphase}}.tsv"
    wildcard_constraints:
        gphase="lemma|lift|onestep|propose",
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(
            *GENERATION_KEYS, "gasp.teacher", "gasp.student", "gasp.novelty", "gasp.validity", "gasp.judge"
        ),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/gasp_teacher_phase.py"


rule gasp_solver_phase:
    """The solver phase: this iteration's accepted lemmas and lifts as induction, deduction
    or abduction tasks, answered by the student and judged in the sandbox."""
    input:
        model=generation_model_input,
        state=lambda w: gasp_layout.previous_state(GASP_ROOT, w.gmethod, w.gseed, int(w.gi), "solver"),
        accepted=lambda w: gasp_layout.accepted_files(GASP_ROOT, w.gmethod, w.gseed, int(w.gi)),
    output:
        **{f.split(".")[0]: f"{GASP_RUN}/iter{{gi}}/solver/{f}" for f in gasp_layout.SOLVER_FILES},
        summary=f"{GASP_RUN}/iter{{gi}}/solver/phase.json",
    log:
        f"{GASP_LOG}/{{gmethod}}/s{{gseed}}/iter{{gi}}_solver.log",
    benchmark:
        f"{GASP_BENCH}/{{gmethod}}/s{{gseed}}/iter{{gi}}_solver.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "gasp.solver", "gasp.judge"),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/gasp_solver_phase.py"


rule gasp_real_rows:
    """The real training problems of the real-data phases (LiveCodeBench rows)."""
    input:
        lambda w: (
            ["resources/data/eval/livecodebench.train.jsonl"]
            if GASP_CFG["real_data"]["source"] == "livecodebench"
            else ([GASP_CFG["goalposts"]["path"]] if GASP_CFG["goalposts"]["source"] == "path" else [])
        ),
    output:
        f"{GASP_ROOT}/real_rows.jsonl",
    log:
        f"{GASP_LOG}/real_rows.log",
    localrule: True
    container:
        image("python")
    params:
        cfg=cfg_of("gasp.real_data.source", "gasp.goalposts.source", "gasp.goalposts.path"),
    script:
        "../workflow_scripts/gasp_real_rows.py"


rule gasp_real_phase:
    """A real-data RLVR phase (Sec. 3.4; the Real-data RL baseline): a batch of training
    problems, n answers each, judged on all their LiveCodeBench tests in the sandbox."""
    input:
        model=generation_model_input,
        state=lambda w: gasp_layout.previous_state(GASP_ROOT, w.gmethod, w.gseed, int(w.gi), "real") or [],
        rows=lambda w: GASP_OUT.real_rows(w.gmethod),
    output:
        **{f.split(".")[0]: f"{GASP_RUN}/iter{{gi}}/real/{f}" for f in gasp_layout.SOLVER_FILES},
        summary=f"{GASP_RUN}/iter{{gi}}/real/phase.json",
    log:
        f"{GASP_LOG}/{{gmethod}}/s{{gseed}}/iter{{gi}}_real.log",
    benchmark:
        f"{GASP_BENCH}/{{gmethod}}/s{{gseed}}/iter{{gi}}_real.tsv"
    container:
        image("gpu")
    threads: GENERATION_THREADS
    resources:
        **resources_of("generate"),
    params:
        cfg=cfg_of(*GENERATION_KEYS, "gasp.real_data", "evaluation.benchmarks.livecodebench"),
        model_dir=generation_model_param,
    script:
        "../workflow_scripts/gasp_real_phase.py"


rule gasp_update:
    """One update on a phase's recorded rollouts (Task-Relative REINFORCE++): the next
    policy state, or a bundle's records restored in its place."""
    input:
        rollouts=f"{GASP_PHASE}/rollouts.jsonl",
        previous=lambda w: gasp_layout.previous_state(GASP_ROOT, w.gmethod, w.gseed, int(w.gi), w.gphase)
        or [],
        model=training_model_input,
        restored=lambda w: (
            f"{training_restore_root()}/{gasp_layout.state_dir(GASP_ROOT, w.gmethod, w.gseed, w.gi, w.gphase)}"
            if training_restore_root()
            else []
        ),
    output:
        directory(f"{GASP_PHASE}/state"),
    log:
        f"{GASP_LOG}/{{gmethod}}/s{{gseed}}/iter{{gi}}_{{gphase}}_update.log",
    benchmark:
        f"{GASP_BENCH}/{{gmethod}}/s{{gseed}}/iter{{gi}}_{{gphase}}_update.tsv"
    wildcard_constraints:
        gphase="lemma|lift|onestep|propose|solver|real",
    container:
        image("gpu")
    threads: 2
    resources:
        **resources_of("train"),
    params:
        **GASP_KEEP,
        cfg=cfg_of("seed", "gasp.update", "gasp.device", "gasp.real_data.estimator"),
        model_dir=training_model_param,
        gpus=train_gpus(),
    script:
        "../workflow_scripts/gasp_update.py"


rule gasp_dissimilarity:
    """Eq. 7 per iteration of one run: how far each iteration's accepted lemmas and lifts
    are from the earlier buffers of the same kind."""
    input:
        accepted=lambda w: [
            f
            for i in GASP_OUT.iters[(w.gmethod, int(w.gseed))]
            for f in gasp_layout.accepted_files(GASP_ROOT, w.gmethod, w.gseed, i)
        ],
    output:
        f"{GASP_RUN}/dissimilarity.jsonl",
    log:
        f"{GASP_LOG}/{{gmethod}}/s{{gseed}}/dissimilarity.log",
    container:
        image("gpu")  # the embedder (sentence-transformers, torch) lives in that image; run on the CPU
    params:
        cfg=cfg_of("gasp.novelty"),
    script:
        "../workflow_scripts/gasp_dissimilarity.py"


# --- tables and figures ---------------------------------------------------------------


rule gasp_yield:
    input:
        phases=lambda w: [f"{d}/phase.json" for d in GASP_OUT.phase_dirs],
    output:
        csv=report(
            "results/tables/gasp/yield.csv",
            caption="../report/gasp_yield.rst",
            category="GASP (paper 004)",
            labels={"table": "Yield (CSV)"},
        ),
        md="results/tables/gasp/yield.md",
    log:
        f"{GASP_LOG}/tables/yield.log",
    localrule: True
    container:
        image("python")
    params:
        runs=lambda w: {
            f"{m} s{s}": [
                (
                    f"{d}/phase.json",
                    f"{d}/answers.jsonl" if gasp_layout.answers_phase(d) else f"{d}/candidates.jsonl",
                )
                for d in GASP_OUT.phase_dirs
                if d.startswith(gasp_layout.run_dir(GASP_ROOT, m, s) + "/")
            ]
            for m, s in GASP_OUT.runs
        },
    script:
        "../workflow_scripts/gasp_yield.py"


rule gasp_reward_figure:
    """Figures 3 (lemma, lift) and 12 (one-step medium, one-step hard): the rewards the
    code computes, against the student's pass rate."""
    output:
        png=report(
            "results/figures/gasp/figure{gfig}.png",
            caption="../report/gasp_rewards.rst",
            category="GASP (paper 004)",
            labels={"figure": "Figure {gfig}"},
        ),
        pdf="results/figures/gasp/figure{gfig}.pdf",
        csv="results/figures/gasp/figure{gfig}.csv",
    log:
        f"{GASP_LOG}/figures/figure{{gfig}}.log",
    wildcard_constraints:
        gfig="3|12",
    localrule: True
    container:
        image("python")
    params:
        schedules=lambda w: ["lemma", "lift"] if w.gfig == "3" else ["onestep_medium", "onestep_hard"],
        n=GASP_CFG["student"]["samples"],
        rewards=GASP_CFG["teacher"]["rewards"],
    script:
        "../workflow_scripts/gasp_reward_figure.py"


rule gasp_dissimilarity_figure:
    input:
        lambda w: [
            f"{gasp_layout.run_dir(GASP_ROOT, m, s)}/dissimilarity.jsonl"
            for m, s in GASP_OUT.runs
            if gasp_layout.teacher_phases(m)
        ],
    output:
        png=report(
            "results/figures/gasp/figure10.png",
            caption="../report/gasp_figure10.rst",
            category="GASP (paper 004)",
            labels={"figure": "Figure 10"},
        ),
        pdf="results/figures/gasp/figure10.pdf",
        csv="results/figures/gasp/figure10.csv",
    log:
        f"{GASP_LOG}/figures/figure10.log",
    localrule: True
    container:
        image("python")
    params:
        runs=lambda w: {
            f"{m} s{s}": f"{gasp_layout.run_dir(GASP_ROOT, m, s)}/dissimilarity.jsonl"
            for m, s in GASP_OUT.runs
            if gasp_layout.teacher_phases(m)
        },
    script:
        "../workflow_scripts/gasp_dissimilarity_figure.py"


checkpoint gasp_selection:
    """Table 3's checkpoint of one run: of its evaluated checkpoints, the one with the best
    sampled pass@20 on the evaluation split (the paper's rule); only it, the base model and
    AZR are evaluated greedily (rule gasp_eval_tables asks once every selection is made)."""
    input:
        sampled=lambda w: [
            eval_summary("gasp", *GASP_OUT.sampled, t) for t in GASP_OUT.run_tags[(w.gmethod, int(w.gseed))]
        ],
    output:
        f"{GASP_RUN}/selection.json",
    log:
        f"{GASP_LOG}/{{gmethod}}/s{{gseed}}/selection.log",
    localrule: True
    container:
        image("python")
    params:
        tags=lambda w: GASP_OUT.run_tags[(w.gmethod, int(w.gseed))],
        rule=GASP_SELECTION_RULE,
    script:
        "../workflow_scripts/gasp_selection.py"


rule gasp_eval_tables:
    """Tables 1-4 and Figures 4, 5, 7-9, 11, 13, 14 from the benchmark layer's scores of
    every checkpoint (per seed the checkpoint with the best pass@20 or pass@1 on the
    evaluation split, as the paper selects; Table 3's greedy scores at the selected ones)."""
    input:
        sampled=[eval_summary("gasp", *GASP_OUT.sampled, t) for t in GASP_OUT.tags],
        goalposts=[eval_file("gasp", *GASP_OUT.goalposts, t, ".scored") for t in GASP_OUT.tags],
        selections=list(GASP_OUT.selections.values()),
        greedy=[eval_summary("gasp", b, md, t) for b, md in GASP_OUT.greedy for t in GASP_OUT.greedy_tags],
        greedy_selected=lambda w: [
            eval_summary("gasp", b, md, t) for b, md, t in GASP_OUT.selected_evals(GASP_SELECTED_TAGS())
        ],
    output:
        **{
            f"table{i}_{e}": (
                report(
                    f"results/tables/gasp/table{i}.{e}",
                    caption="../report/gasp_evaluation.rst",
                    category="GASP (paper 004)",
                    labels={"table": f"Table {i}"},
                )
                if e == "md"
                else f"results/tables/gasp/table{i}.{e}"
            )
            for i in (1, 2, 3, 4)
            for e in ("csv", "md")
        },
        **{
            f"figure{i}_{e}": f"results/figures/gasp/figure{i}.{e}"
            for i in (4, 5, 7, 8, 9, 11, 13, 14)
            for e in ("png", "pdf", "csv")
        },
    log:
        f"{GASP_LOG}/tables/eval_tables.log",
    localrule: True
    container:
        image("python")
    params:
        cfg=cfg_of(
            "model.name", "gasp.evaluation", "gasp.azr_checkpoint", f"evaluation.modes.{GASP_OUT.sampled[1]}"
        ),
        tags=GASP_OUT.tags,
        greedy_tags=GASP_OUT.greedy_tags,
        selected_tags=lambda w: GASP_SELECTED_TAGS(),
        greedy=GASP_OUT.greedy,
        methods=GASP_CFG["methods"],
    script:
        "../workflow_scripts/gasp_eval_tables.py"
