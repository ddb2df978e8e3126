"""What a GASP config (paper 004) builds: each method's iteration schedule, the runs
(method, seed), every phase folder, the checkpoints the benchmark layer evaluates and
their tags, the goalpost filter's inputs, and the tables and figures. rules/gasp.smk
wires these into rules; the logic lives here so it is tested without Snakemake.

Table 3 (greedy pass@1) is measured at each seed's checkpoint with the best sampled
pass@20 only, as the paper reports it: which checkpoint that is becomes known once the
run's sampled evaluations are scored (rule gasp_selection, a Snakemake checkpoint), so
those greedy evaluations are not in :attr:`GaspOutputs.evals` but in
:meth:`GaspOutputs.selected_evals`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import layout as results_layout
from ...evaluate import model_tags
from . import layout
from .methods import FILTER_RL

AZR = "azr"  # the tag of the released AZR checkpoint (gasp.azr_checkpoint)
FIGURES = (3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14)


def final_rl(cfg: dict) -> dict | None:
    """The goalpost filter's final RL run (``goalposts.filter.final_rl``), or None where
    it does not run (off, or goalposts that do not come from the filter)."""
    gp = cfg["gasp"]["goalposts"]
    return gp["filter"].get("final_rl") if gp["source"] == "filter" else None


def run_settings(cfg: dict, method_name: str) -> dict[str, Any]:
    """The iteration schedule of one method: the track's, with its ``overrides`` (the
    final RL filter's: ``goalposts.filter.final_rl``)."""
    g = cfg["gasp"]
    if method_name == FILTER_RL:
        f = final_rl(cfg) or {}
        return {"iterations": int(f["iterations"]), "eval_every": int(f["eval_every"])}
    over = g.get("overrides", {}).get(method_name, {})
    iterations = int(over.get("iterations", g["iterations"]))
    every = int(over.get("eval_every", g["eval_every"]))
    return {"iterations": iterations, "eval_every": every}


def eval_iterations(iterations: int, every: int) -> list[int]:
    """The checkpoints evaluated: every ``every``-th iteration and the last one."""
    its = list(range(every, iterations + 1, every))
    if not its or its[-1] != iterations:
        its.append(iterations)
    return its


@dataclass(frozen=True)
class GaspOutputs:
    root: str  # results/gasp/<experiment>
    runs: list[tuple[str, int]]  # (method, seed)
    iters: dict[tuple[str, int], range]  # (method, seed) -> its iterations 1..I
    phase_dirs: list[str]  # every phase folder of every run, in order
    azr: dict | None  # the released AZR checkpoint's model spec (gasp.azr_checkpoint)
    tags: list[str]  # the evaluated models: base, azr, every evaluated checkpoint
    run_tags: dict[tuple[str, int], list[str]]  # (method, seed) -> its evaluated checkpoints' tags
    sampled: tuple[str, str]  # (benchmark, mode) of the sampled evaluation
    goalposts: tuple[str, str]  # (benchmark, mode) of the goalposts' evaluation
    greedy: list[tuple[str, str]]  # (benchmark, mode) of each greedy evaluation (Table 3)
    greedy_tags: list[str]  # the models evaluated greedily whatever is selected: base, azr
    evals: list[tuple[str, str, str]]  # (benchmark, mode, tag) of every evaluation known before selection
    selections: dict[tuple[str, int], str]  # (method, seed) -> its selection file (rule gasp_selection)
    filtered: str  # the goalpost filter's rows (H)
    filter_records: str  # per training problem, why it stayed in H or which filter solved it
    prefiltered: str  # the rows the filter's stages 1-2 leave (what filter_rl trains on)
    prefilter_records: str  # the records of stages 1-2
    filter_runs: list[tuple[str, str]]  # (tag, scored file) of each goalpost filter model of stages 1-2
    final_filter_runs: list[tuple[str, str]]  # (tag, scored file) of each final RL (filter_rl) checkpoint
    report: list[str]  # what `all` builds for the track

    def tag_adapter(self, tag: str):
        """The folder a GASP tag's model loads: [] for AZR (a model of its own, no adapter),
        a checkpoint's state folder, or None when the tag is not GASP's."""
        if tag == AZR and self.azr:
            return []
        parsed = layout.parse_tag(tag)
        return layout.checkpoint(self.root, *parsed) if parsed else None

    def real_rows(self, method_name: str) -> str:
        """The training problems a method's real-data phases draw from: the whole split, or
        for the final RL filter what the filter's first stages left."""
        return self.prefiltered if method_name == FILTER_RL else f"{self.root}/real_rows.jsonl"

    def tag_model(self, tag: str) -> dict | None:
        """The model spec a tag loads instead of the track's model (AZR), or None."""
        return self.azr if tag == AZR else None

    def selected_evals(self, selected: list[str]) -> list[tuple[str, str, str]]:
        """(benchmark, mode, tag) of the greedy evaluations of the runs' ``selected``
        checkpoints (Table 3), beside those of :attr:`greedy_tags` in :attr:`evals`."""
        return [(b, md, t) for b, md in self.greedy for t in selected]


def gasp_outputs(cfg: dict) -> GaspOutputs:
    g = cfg["gasp"]
    root = results_layout.exp_dir(cfg, "gasp")
    schedule = {m: run_settings(cfg, m) for m in g["methods"]}
    runs = [(m, s) for m in g["methods"] for s in g["seeds"]]
    eval_iters = {m: eval_iterations(v["iterations"], v["eval_every"]) for m, v in schedule.items()}
    ev = g["evaluation"]
    sampled = (ev["sampled"]["benchmark"], ev["sampled"]["mode"])
    goalposts = (ev["goalposts"]["benchmark"], ev["goalposts"]["mode"])
    greedy = [(b, ev["greedy"]["mode"]) for b in ev["greedy"]["benchmarks"]]
    azr = g["azr_checkpoint"]
    run_tags = {(m, s): [layout.model_tag(m, s, i) for i in eval_iters[m]] for m, s in runs}
    greedy_tags = [model_tags.BASE] + ([AZR] if azr else [])
    tags = greedy_tags + [t for run in runs for t in run_tags[run]]
    iters = {(m, s): range(1, schedule[m]["iterations"] + 1) for m, s in runs}
    phase_dirs = [
        layout.phase_dir(root, m, s, i, p)
        for m, s in runs
        for i in iters[(m, s)]
        for p in layout.phase_order(m)
    ]
    report = [
        f"results/tables/gasp/{t}.{e}"
        for t in ("table1", "table2", "table3", "table4", "yield")
        for e in ("csv", "md")
    ] + [f"results/figures/gasp/figure{i}.{e}" for i in FIGURES for e in ("png", "pdf")]
    filt = g["goalposts"]["filter"]
    filter_runs = [
        (t, results_layout.eval_file(cfg, "gasp", filt["benchmark"], filt["mode"], t, ".scored"))
        for name in filt["models"]
        for t in (
            [name]
            if name in (model_tags.BASE, AZR)
            else [layout.model_tag(name, s, i) for s in g["seeds"] for i in eval_iters.get(name, [])]
        )
    ]
    final = final_rl(cfg)
    # stage 3 (goalposts.filter.final_rl): every evaluated checkpoint of each final RL seed
    final_tags = (
        [
            layout.model_tag(FILTER_RL, s, i)
            for s in final["seeds"]
            for i in eval_iterations(int(final["iterations"]), int(final["eval_every"]))
        ]
        if final
        else []
    )
    final_filter_runs = [
        (t, results_layout.eval_file(cfg, "gasp", filt["benchmark"], filt["mode"], t, ".scored"))
        for t in final_tags
    ]
    return GaspOutputs(
        root=root,
        runs=runs,
        iters=iters,
        phase_dirs=phase_dirs,
        azr=azr,
        tags=tags,
        run_tags=run_tags,
        sampled=sampled,
        goalposts=goalposts,
        greedy=greedy,
        greedy_tags=greedy_tags,
        evals=[(b, md, t) for b, md in [sampled, goalposts] for t in tags]
        + [(b, md, t) for b, md in greedy for t in greedy_tags],
        selections={(m, s): f"{layout.run_dir(root, m, s)}/selection.json" for m, s in runs},
        filtered=f"{root}/goalposts_filtered.jsonl",
        filter_records=f"{root}/goalpost_filter.jsonl",
        prefiltered=f"{root}/goalposts_prefiltered.jsonl",
        prefilter_records=f"{root}/goalpost_prefilter.jsonl",
        filter_runs=filter_runs,
        final_filter_runs=final_filter_runs,
        report=report,
    )


def phase_jobs(cfg: dict, out: GaspOutputs) -> int:
    """How many phase jobs a config plans, each followed by one update job: every run's
    phases and the goalpost filter's final RL run's (~6,000 in the paper's plan, so
    ~12,000 jobs with their updates, before any evaluation)."""
    final = final_rl(cfg)
    filter_phases = (
        int(final["iterations"]) * len(final["seeds"]) * len(layout.phase_order(FILTER_RL)) if final else 0
    )
    return len(out.phase_dirs) + filter_phases


def selected_bundle_files(cfg: dict, out: GaspOutputs, selected: list[str]) -> dict[str, list[str]]:
    """The bundle's files that follow from the runs' ``selected`` checkpoints: their greedy
    evaluations' generations (recordings) and scores (verdicts)."""
    evals = out.selected_evals(selected)
    return {
        "recordings": [results_layout.eval_file(cfg, "gasp", b, md, t, "") for b, md, t in evals],
        "verdicts": [results_layout.eval_file(cfg, "gasp", b, md, t, ".scored") for b, md, t in evals],
    }


def bundle_files(cfg: dict, out: GaspOutputs) -> dict[str, list[str]]:
    """The track's files for a bundle, by part (rules/common.smk's track_bundle_parts adds
    the logs): a teacher phase's recordings and candidates, a solver phase's answers, every
    phase's rollouts (its training set) and state (its adapter); the greedy evaluations of
    the selected checkpoints come from :func:`selected_bundle_files`."""
    return {
        "data": [f"{out.root}/goalposts.jsonl"] + results_layout.eval_items_files(cfg, "gasp"),
        "recordings": [
            f"{d}/{f}"
            for d in out.phase_dirs
            for f in ("teacher.jsonl", "student.jsonl")
            if f != "teacher.jsonl" or not layout.answers_phase(d)
        ]
        + [results_layout.eval_file(cfg, "gasp", b, md, t, "") for b, md, t in out.evals],
        "verdicts": [
            f"{d}/{f}"
            for d in out.phase_dirs
            for f in ("candidates.jsonl", "answers.jsonl")
            if (f == "answers.jsonl") == layout.answers_phase(d)
        ]
        + [results_layout.eval_file(cfg, "gasp", b, md, t, ".scored") for b, md, t in out.evals],
        "tables": [p for p in out.report if p.startswith("results/tables/")]
        + [f"results/figures/gasp/figure{i}.csv" for i in FIGURES],
        "figures": [p for p in out.report if p.startswith("results/figures/")],
        "trainsets": [f"{d}/rollouts.jsonl" for d in out.phase_dirs],
        "adapters": [f"{d}/state" for d in out.phase_dirs],
    }
