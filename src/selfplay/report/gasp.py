"""GASP's tables and figures (paper 004), from the files a run writes; no model runs here.

Inputs, by kind:

- teacher phases: ``phase.json`` and ``candidates.jsonl`` per (iteration, phase); the
  solver phase: ``answers.jsonl`` (formats: docs of the GASP track);
- buffer dissimilarity (Eq. 7): ``dissimilarity.json`` per iteration;
- evaluation: the benchmark layer's metrics JSON of a code-generation mode (keys
  ``pass@k``, fractions) per checkpoint, ``metrics[(method, seed, iteration)] = path``,
  and its ``.scored.jsonl`` rows (one per sample: ``id``, ``passed``) for the goalposts.

What is made:

- the yield table (beyond the paper): per run, iteration and phase, what the teacher
  proposed and what became of it, how the phase ended; the solver's answers per form;
- Figures 3 and 12: the teacher reward against the pass rate, from the track's reward code;
- Figure 10: buffer dissimilarity per iteration, runs with and without rejection sampling;
- checkpoint selection: per seed the checkpoint with the best pass@20 (or pass@1) on the
  evaluation split, as the paper does;
- Tables 1-3: pass@1 / pass@20 (mean ± std over seeds of the selected checkpoints), the
  ablations under both selection rules, greedy pass@1 on LCB v5, HumanEval+ and MBPP+;
- Table 4 and Figures 5 and 14: goalposts solved (some sample passes: pass@n > 0) per
  seed over all checkpoints and their union; the goalpost x checkpoint heatmap;
- Figures 4, 8, 9, 11, 13: pass@k against k at the selected checkpoints; Figure 7:
  pass@20 over training.

Every table is csv + md (``tables.write_table``), every figure png + pdf with a csv of
what it draws. Bundles replay these byte for byte, so the output depends on the inputs
only: rows in a fixed order, numbers rounded to fixed digits, no clock. Numbers in the
tables are percent; a cell with nothing to measure is n/a and a note says why. The
paper's own numbers stand in extra columns beside ours.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..metrics import format_mean_std, mean_std
from ..records import read_json, read_jsonl, write_text_atomic
from .figures import finish_figure, pyplot
from .tables import write_table

# --- methods: names, the paper's columns, the paper's numbers ------------------------

# The method names the GASP rules use (the self-play ones are tracks.gasp.methods'), in
# the paper's row order (Table 2), with the paper's label and its two columns "Real-data
# training" / "Real-data guidance" (None: not applicable, the base model), and the row
# of the paper's tables shown beside ours (``paper``; default the method's own name).
# ``unguided`` is our unguided self-play, the stand-in for the paper's AZR row (AZR's
# released checkpoint): the paper's AZR numbers stand beside it. A method not listed
# here keeps its own name and empty columns unless the caller's ``methods_meta`` says
# otherwise.
METHODS: dict[str, dict] = {
    "gasp": {"label": "GASP", "real_data_training": False, "real_data_guidance": True},
    "no_io_axis": {"label": "GASP no i/o axis", "real_data_training": False, "real_data_guidance": True},
    "no_rejection": {
        "label": "GASP w/o rejection sampling",
        "real_data_training": False,
        "real_data_guidance": True,
    },
    "onestep_medium": {
        "label": "GASP one-step medium",
        "real_data_training": False,
        "real_data_guidance": True,
    },
    "onestep_hard": {"label": "GASP one-step hard", "real_data_training": False, "real_data_guidance": True},
    "unguided": {
        "label": "Unguided self-play (ours)",
        "real_data_training": False,
        "real_data_guidance": False,
        "paper": "azr",
    },
    "azr": {"label": "AZR", "real_data_training": False, "real_data_guidance": False},
    "real_rl": {"label": "Real-data RL", "real_data_training": True, "real_data_guidance": False},
    "gasp_real_rl": {"label": "GASP + Real-data RL", "real_data_training": True, "real_data_guidance": True},
    "base": {"label": "Base model", "real_data_training": None, "real_data_guidance": None},
}

# The paper's Table 2 (Table 1 is its "selected by pass@20" half): per method and
# selection rule, (mean, std) of pass@1 and of pass@20 in percent; std None where the
# paper shows one run (AZR's public checkpoint, the base model).
PAPER_PASS: dict[str, dict[str, tuple[tuple[float, float | None], tuple[float, float | None]]]] = {
    "gasp": {"pass@1": ((19.10, 0.92), (33.63, 0.35)), "pass@20": ((18.26, 0.68), (33.69, 0.28))},
    "no_io_axis": {"pass@1": ((19.36, 1.35), (33.31, 1.34)), "pass@20": ((18.94, 1.69), (33.47, 1.14))},
    "no_rejection": {"pass@1": ((17.97, 0.79), (32.72, 1.81)), "pass@20": ((17.64, 1.33), (33.03, 1.50))},
    "onestep_medium": {"pass@1": ((17.10, 0.33), (31.41, 0.03)), "pass@20": ((15.73, 1.61), (32.36, 0.03))},
    "onestep_hard": {"pass@1": ((17.76, 1.14), (32.20, 0.91)), "pass@20": ((17.13, 0.68), (33.37, 0.12))},
    "azr": {"pass@1": ((17.49, None), (31.15, None)), "pass@20": ((17.49, None), (31.15, None))},
    "real_rl": {"pass@1": ((20.35, 0.75), (30.84, 1.83)), "pass@20": ((18.91, 1.40), (33.10, 0.12))},
    "gasp_real_rl": {"pass@1": ((20.55, 0.26), (34.25, 0.45)), "pass@20": ((19.93, 0.88), (34.46, 0.34))},
    "base": {"pass@1": ((13.55, None), (29.68, None)), "pass@20": ((13.55, None), (29.68, None))},
}

# The paper's Table 3: greedy pass@1 (%) per benchmark, (mean, std).
PAPER_GREEDY: dict[str, dict[str, tuple[float, float | None]]] = {
    "gasp": {"livecodebench": (19.75, 2.33), "humaneval_plus": (79.67, 0.35), "mbpp_plus": (70.63, 0.70)},
    "azr": {"livecodebench": (17.13, None), "humaneval_plus": (83.54, None), "mbpp_plus": (69.58, None)},
    "real_rl": {"livecodebench": (18.21, 1.41), "humaneval_plus": (78.66, 1.61), "mbpp_plus": (69.31, 0.95)},
    "gasp_real_rl": {
        "livecodebench": (20.52, 3.60),
        "humaneval_plus": (80.49, 1.61),
        "mbpp_plus": (71.60, 1.00),
    },
    "base": {"livecodebench": (13.89, None), "humaneval_plus": (79.88, None), "mbpp_plus": (69.58, None)},
}

# The paper's Table 4: goalposts solved per seed and their union (of 146); an empty
# per-seed tuple is the paper's "—" (zero by construction: the goalposts were filtered
# to be unsolved by these methods).
PAPER_GOALPOSTS: dict[str, tuple[tuple[int, ...], int]] = {
    "gasp": ((6, 3, 3), 11),
    "no_io_axis": ((2, 2, 2), 4),
    "no_rejection": ((5, 8, 5), 14),
    "onestep_medium": ((6, 4, 4), 11),
    "onestep_hard": ((0, 1, 1), 2),
    "azr": ((), 0),
    "real_rl": ((), 0),
    "gasp_real_rl": ((9, 2, 3), 10),
    "base": ((), 0),
}
PAPER_GOALPOST_COUNT = 146

# Table 3's benchmarks (the evaluation layer's names) and their column titles.
TABLE3_BENCHMARKS: tuple[tuple[str, str], ...] = (
    ("livecodebench", "LCB v5"),
    ("humaneval_plus", "HumanEval+"),
    ("mbpp_plus", "MBPP+"),
)

PHASES = ("lemma", "lift", "onestep", "propose", "solver")  # tracks.gasp.methods' phases, then the solver
FORMS = ("induction", "deduction", "abduction")

Metrics = Mapping[tuple[str, int, int], str]


def _meta(method: str, methods_meta: Mapping[str, Mapping] | None = None) -> dict:
    """The method's label, columns and paper row (``paper``: the key of the paper's
    tables, the method's own name by default), the caller's entries over the defaults."""
    meta = {"label": method, "real_data_training": None, "real_data_guidance": None, "paper": method}
    meta.update(METHODS.get(method, {}))
    meta.update((methods_meta or {}).get(method, {}))
    return meta


def _in_paper_order(names: Iterable[str]) -> list[str]:
    names = set(names)
    return [m for m in METHODS if m in names] + sorted(n for n in names if n not in METHODS)


def _mark(flag) -> str:
    return "—" if flag is None else ("✓" if flag else "✗")


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)


def _pct(x: float | None) -> float | None:
    return None if x is None else 100.0 * float(x)


def _cell(mean_std_pair) -> str:
    mean, std = mean_std_pair
    return format_mean_std(mean, std)


def _write_csv(frame: pd.DataFrame, csv: str) -> None:
    write_text_atomic(csv, frame.to_csv(index=False))


def _integer_ticks():
    """A tick locator for an axis of iterations (whole numbers only)."""
    pyplot()  # matplotlib on its file-only backend first
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


def _figure_note(fig, text: str) -> None:
    fig.text(0.5, 0.005, text, ha="center", va="bottom", fontsize=7, wrap=True)


# --- the yield table --------------------------------------------------------------


def _reason_head(reason: str | None) -> str:
    """A rejection reason's code without its detail ("raises: ZeroDivisionError" -> "raises")."""
    text = str(reason or "unknown").strip()
    return re.split(r"[:\s]", text, maxsplit=1)[0] or "unknown"


def _compact(counter: Counter) -> str:
    """``"raises:3, unsafe:1"``: most frequent first, ties by name; "-" when empty."""
    return ", ".join(f"{k}:{v}" for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))) or "-"


def _classify(entry) -> dict[str, str]:
    """One entry of a run's list: a teacher phase's (phase.json, candidates.jsonl), or
    the solver phase's answers.jsonl, alone or with its phase.json."""
    paths = [entry] if isinstance(entry, (str, Path)) else list(entry)
    out: dict[str, str] = {}
    for p in paths:
        name = Path(p).name
        kind = (
            "phase"
            if name.endswith("phase.json")
            else "candidates"
            if name.endswith("candidates.jsonl")
            else "answers"
            if name.endswith("answers.jsonl")
            else None
        )
        if kind is None or kind in out:
            raise UserError(
                f"GASP yield table: {p} is not one of phase.json, candidates.jsonl, answers.jsonl "
                f"(or it appears twice in one entry {paths})"
            )
        out[kind] = str(p)
    if "answers" in out and "candidates" in out:
        raise UserError(
            f"GASP yield table: answers.jsonl (the solver's) and candidates.jsonl (a teacher "
            f"phase's) in one entry {paths}"
        )
    if "answers" not in out and set(out) != {"phase", "candidates"}:
        raise UserError(
            f"GASP yield table: a teacher phase needs its phase.json and candidates.jsonl, got {paths}"
        )
    return out


def _iteration_of_path(path: str) -> int | None:
    m = re.search(r"iter[_-]?(\d+)", str(path))
    return int(m.group(1)) if m else None


YIELD_COLUMNS = [
    "run",
    "iteration",
    "phase",
    "form",
    "proposed",
    "parsed",
    "parse errors",
    "valid",
    "invalid (why)",
    "novel",
    "scored",
    "pass-rate histogram (k=0..N)",
    "in band",
    "accepted",
    "mean reward",
    "target M",
    "attempts",
    "ended",
    "updated",
    "tasks",
    "answered",
    "format ok",
    "correct",
]
_PHASE_ORDER = {p: i for i, p in enumerate(PHASES)}


def _teacher_row(run: str, paths: dict[str, str], notes: set[str]) -> tuple[dict, dict]:
    phase = read_json(paths["phase"])
    rows = read_jsonl(paths["candidates"])
    ns = {int(r["n"]) for r in rows if r.get("n") is not None}
    if len(ns) > 1:
        raise UserError(
            f"{paths['candidates']}: candidates with different student sample counts n {sorted(ns)}"
        )
    scored = [r for r in rows if r.get("k") is not None]
    n = ns.pop() if ns else None
    if n is not None:
        hist = [0] * (n + 1)
        for r in scored:
            k = int(r["k"])
            if not 0 <= k <= n:
                raise UserError(f"{paths['candidates']}: pass count k={k} outside 0..{n}")
            hist[k] += 1
        histogram = " ".join(str(h) for h in hist)
    else:
        histogram = None
    valid = [r for r in rows if r.get("valid")]
    novelty_checked = any(r.get("novel") is not None for r in rows)
    rewards = [float(r["reward"]) for r in rows if r.get("reward") is not None]
    csv = {
        "run": run,
        "iteration": int(phase["iteration"]),
        "phase": str(phase["phase"]),
        "form": None,
        "proposed": len(rows),
        "parsed": sum(bool(r.get("parsed")) for r in rows),
        "parse errors": _compact(
            Counter(_reason_head(r.get("parse_error")) for r in rows if not r.get("parsed"))
        ),
        "valid": len(valid),
        "invalid (why)": _compact(
            Counter(
                _reason_head(r.get("invalid_reason"))
                for r in rows
                if r.get("parsed") and r.get("valid") is False
            )
        ),
        "novel": sum(r.get("novel") is True for r in rows) if novelty_checked or not valid else None,
        "scored": len(scored),
        "pass-rate histogram (k=0..N)": histogram,
        "in band": sum(r.get("in_band") is True for r in rows),
        "accepted": sum(bool(r.get("accepted")) for r in rows),
        "mean reward": _round(sum(rewards) / len(rewards)) if rewards else None,
        "target M": phase.get("target"),
        "attempts": phase.get("attempts"),
        "ended": phase.get("ended"),
        "updated": phase.get("updated"),
        "tasks": None,
        "answered": None,
        "format ok": None,
        "correct": None,
    }
    md = {
        k: ("" if k in ("form", "tasks", "answered", "format ok", "correct") else v) for k, v in csv.items()
    }
    if csv["novel"] is None:
        md["novel"] = "n/a"
        notes.add(
            "novel n/a: no valid candidate of the phase was checked for novelty (rejection sampling off)."
        )
    if histogram is None:
        md["pass-rate histogram (k=0..N)"] = "n/a"
        notes.add("histogram n/a: the phase had no candidate, so no student sample count N to bin by.")
    if csv["mean reward"] is None:
        md["mean reward"] = "n/a"
        notes.add("mean reward n/a: the phase produced no candidate.")
    else:
        md["mean reward"] = f"{csv['mean reward']:.4f}"
    return csv, md


def _solver_rows(run: str, paths: dict[str, str], notes: set[str]) -> list[tuple[dict, dict]]:
    path = paths["answers"]
    rows = read_jsonl(path)
    summary = read_json(paths["phase"]) if "phase" in paths else {}
    iterations = {int(r["iteration"]) for r in rows if r.get("iteration") is not None}
    if summary.get("iteration") is not None:
        iterations.add(int(summary["iteration"]))
    if len(iterations) > 1:
        raise UserError(f"{path}: answers of several iterations {sorted(iterations)} (with its phase.json)")
    iteration = iterations.pop() if iterations else _iteration_of_path(path)
    forms = [f for f in FORMS if any(r.get("form") == f for r in rows)]
    forms += sorted({str(r.get("form")) for r in rows} - set(FORMS))
    out = []
    blank = {k: None for k in YIELD_COLUMNS}
    for form in forms or [None]:
        part = [r for r in rows if form is None or str(r.get("form")) == form]
        rewards = [float(r["reward"]) for r in part if r.get("reward") is not None]
        csv = {
            **blank,
            "run": run,
            "iteration": iteration,
            "phase": "solver",
            "form": form,
            "tasks": summary.get("tasks"),
            "mean reward": _round(sum(rewards) / len(rewards)) if rewards else None,
            "answered": len(part),
            "format ok": sum(bool(r.get("format_ok")) for r in part),
            "correct": sum(bool(r.get("correct")) for r in part),
        }
        md = {k: ("" if v is None else v) for k, v in csv.items()}
        if form is None:
            md["form"] = "-"
            md["mean reward"] = "n/a"
            notes.add(
                "solver n/a: no lemma or lift was accepted in that iteration, so the student had no task "
                "to answer."
            )
        else:
            md["mean reward"] = "n/a" if csv["mean reward"] is None else f"{csv['mean reward']:.4f}"
        if md["iteration"] == "":
            md["iteration"] = "n/a"
        out.append((csv, md))
    return out


def yield_table(
    runs: Mapping[str, Sequence],
    csv_path: str,
    md_path: str,
    title: str = "GASP: yield per phase and iteration",
) -> pd.DataFrame:
    """One row per (run, iteration, teacher phase) from its ``(phase.json,
    candidates.jsonl)``, and one row per (run, iteration, task form) of the solver phase
    from an ``answers.jsonl`` entry. Rows sorted by run label, iteration, phase, form."""
    notes: set[str] = set()
    rows: list[tuple[tuple, dict, dict]] = []
    for run in sorted(runs):
        for entry in runs[run]:
            paths = _classify(entry)
            made = (
                [_teacher_row(run, paths, notes)]
                if "answers" not in paths
                else _solver_rows(run, paths, notes)
            )
            for csv, md in made:
                form = csv["form"]
                key = (
                    run,
                    -1 if csv["iteration"] is None else csv["iteration"],
                    _PHASE_ORDER.get(csv["phase"], len(PHASES)),
                    csv["phase"],
                    FORMS.index(form) if form in FORMS else len(FORMS),
                    str(form),
                )
                rows.append((key, csv, md))
    rows.sort(key=lambda r: r[0])
    given = Counter(r[0][:4] for r in rows if r[1]["phase"] != "solver")
    dupes = sorted(k for k, times in given.items() if times > 1)
    if dupes:
        raise UserError(
            f"GASP yield table: run {dupes[0][0]!r} iteration {dupes[0][1]} phase {dupes[0][3]!r} "
            f"is given twice"
        )
    frame = pd.DataFrame([r[1] for r in rows], columns=YIELD_COLUMNS, dtype=object)
    shown = pd.DataFrame([r[2] for r in rows], columns=YIELD_COLUMNS, dtype=object)
    table_notes = [
        "Teacher rows (lemma, lift): proposed = candidates the teacher wrote in the phase (every attempt); parsed = "
        "readable as question, code and inputs (parse errors: why not); valid = passed the validity checks "
        "(invalid: why not, by reason code); novel = under the similarity threshold against the global buffers "
        "(a method without the filter, no_rejection, lets every valid candidate through); "
        "scored = pass rate measured (k of N student tries passed, counted in the histogram, positions k = 0..N); "
        "in band = k inside the phase's band; accepted = joined the phase's buffer.",
        "mean reward: the teacher's reward averaged over every candidate of the phase (format errors included).",
        "target M, attempts, ended (target_reached, attempts_spent, or why the phase had nothing to do) and "
        "updated (whether the phase ended in an update) come from the phase summary.",
        "Solver rows: one per task form; tasks: the iteration's accepted lemmas and lifts (all forms); answered, "
        "format ok and correct count the student's answers of that form, mean reward is the solver's.",
        *sorted(notes),
    ]
    write_table(frame, csv_path, md_path, title, table_notes, md_frame=shown)
    return frame


# --- Figures 3 and 12: teacher rewards --------------------------------------------

CURVE_POINTS = 200  # the continuous curve is drawn at p = i / CURVE_POINTS


def reward_figure(
    schedule_names: Sequence[str], n: int, png: str, pdf: str, csv: str, teacher_rewards=None
) -> pd.DataFrame:
    """Figures 3 and 12: one panel per reward schedule (``tracks.gasp.rewards.SCHEDULES``),
    the teacher's reward against the student's pass rate p. The schedule's curve
    (R(p; a, b), dashed over all of [0, 1]), the reward it gives (the curve inside the
    band, the flat penalty outside), the band shaded between its edges, and the values
    the track's own code gives at the n + 1 pass rates k / n a candidate can reach.
    ``teacher_rewards``: the run's ``rewards.TeacherRewards`` (default: the paper's)."""
    from fractions import Fraction

    from ..tracks.gasp import rewards

    if int(n) < 1:
        raise UserError(f"reward figure: the number of student tries n must be >= 1, got {n}")
    teacher = teacher_rewards or rewards.TeacherRewards()
    rows = []
    names = list(schedule_names)
    for name in names:
        if name not in rewards.SCHEDULES:
            raise UserError(
                f"reward figure: unknown reward schedule {name!r} "
                f"(known: {', '.join(sorted(rewards.SCHEDULES))})"
            )
        s = rewards.SCHEDULES[name]
        head = {"schedule": name, "a": s.a, "b": s.b, "lo": float(s.lo), "hi": float(s.hi)}
        for k, p, reward in rewards.reward_curve(s, int(n), teacher):
            rows.append(
                {
                    **head,
                    "kind": "count",
                    "k": int(k),
                    "p": _round(p, 6),
                    "in band": rewards.in_band(int(k), int(n), s),
                    "curve": _round(s.value(float(p)), 6),
                    "reward": _round(reward, 6),
                }
            )
        for i, (p, value) in enumerate(rewards.continuous_curve(s, CURVE_POINTS + 1)):
            inside = s.contains(Fraction(i, CURVE_POINTS))
            rows.append(
                {
                    **head,
                    "kind": "curve",
                    "k": None,
                    "p": _round(p, 6),
                    "in band": inside,
                    "curve": _round(value, 6),
                    "reward": _round(value if inside else teacher.outside_band, 6),
                }
            )
    frame = pd.DataFrame(
        rows, columns=["schedule", "a", "b", "lo", "hi", "kind", "k", "p", "in band", "curve", "reward"]
    )
    frame["k"] = frame["k"].astype("Int64")
    _write_csv(frame, csv)
    plt = pyplot()
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(4.2 * max(len(names), 1), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names):
        part = frame[frame["schedule"] == name]
        curve, counts = part[part["kind"] == "curve"], part[part["kind"] == "count"]
        s = rewards.SCHEDULES[name]
        shape = "1 - p" if s.a is None else f"R(p; {s.a:g}, {s.b:g})"
        ax.axvspan(s.lo, s.hi, color="tab:green", alpha=0.12, label=f"band [{s.lo:g}, {s.hi:g}]")
        for edge in (s.lo, s.hi):
            ax.axvline(edge, color="tab:green", linewidth=0.8)
        ax.plot(curve["p"], curve["curve"], linestyle="--", color="grey", linewidth=0.9, label=shape)
        # the reward line, broken where it jumps between the curve and the penalty
        run = (curve["in band"] != curve["in band"].shift()).cumsum()
        for j, (_, segment) in enumerate(curve.groupby(run, sort=True)):
            ax.plot(segment["p"], segment["reward"], color="tab:blue", label="reward" if j == 0 else None)
        ax.scatter(counts["p"], counts["reward"], color="tab:red", zorder=3, s=18, label=f"k / {int(n)}")
        ax.set_title(f"{name}: {shape}", fontsize=9)
        ax.set_xlabel("student pass rate p")
        ax.set_ylabel("teacher reward")
        ax.set_ylim(min(-0.6, teacher.outside_band - 0.1), 1.08)
        ax.legend(fontsize=6, loc="center right")
    finish_figure(fig, png, pdf)
    return frame


# --- Figure 10: buffer dissimilarity ----------------------------------------------


def _dissimilarity_rows(source: str | Sequence[str]) -> list[tuple[str, dict]]:
    """(where, one iteration's values) from a run's JSON-lines file (one line per
    iteration, rule gasp_dissimilarity) or its list of one-iteration JSON files."""
    if isinstance(source, (str, Path)):
        return [(f"{source}:{n}", d) for n, d in enumerate(read_jsonl(source), 1)]
    return [(str(path), read_json(path)) for path in source]


def dissimilarity_figure(
    runs: Mapping[str, str | Sequence[str]], png: str, pdf: str, csv: str
) -> pd.DataFrame:
    """Figure 10: Eq. 7 per iteration, one panel per buffer (lemma, lift; a one-step or
    unguided run's own phase), one line per run label (e.g. "gasp s0", "no_rejection s0").
    A run is its JSON-lines file (one line per iteration) or a list of JSON files."""
    rows, buffers = [], set()
    for run in sorted(runs):
        seen = set()
        for path, d in _dissimilarity_rows(runs[run]):
            it = int(d["iteration"])
            if it in seen:
                raise UserError(f"dissimilarity figure: run {run!r} has iteration {it} twice ({path})")
            seen.add(it)
            values = {k: v for k, v in d.items() if k != "iteration"}
            buffers |= set(values)
            rows.append({"run": run, "iteration": it, **{k: _round(v, 6) for k, v in values.items()}})
    buffers = [p for p in PHASES if p in buffers] + sorted(buffers - set(PHASES)) or ["lemma", "lift"]
    frame = pd.DataFrame(rows, columns=["run", "iteration", *buffers])
    frame = frame.sort_values(["run", "iteration"], kind="stable").reset_index(drop=True)
    _write_csv(frame, csv)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(buffers), figsize=(4.5 * len(buffers), 3.6), sharey=True, squeeze=False)
    missing = False
    for ax, phase in zip(axes[0], buffers):
        for run in sorted(runs):
            part = frame[frame["run"] == run]
            have = part[part[phase].notna()]
            missing |= len(have) < len(part)
            if len(have):
                ax.plot(have["iteration"], have[phase].astype(float), marker="o", markersize=3, label=run)
        ax.set_title(f"{phase} proposals")
        ax.set_xlabel("global iteration")
        ax.xaxis.set_major_locator(_integer_ticks())
        ax.set_ylim(bottom=0)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    axes[0][0].set_ylabel("buffer dissimilarity (Eq. 7)")
    if frame.empty:
        _figure_note(fig, "no dissimilarity file was given")
    elif missing:
        _figure_note(
            fig,
            "points missing where there was nothing to compare: no accepted item in the "
            "iteration, or an empty earlier buffer (the first iteration)",
        )
    finish_figure(fig, png, pdf)
    return frame


# --- evaluation: reading metrics, selecting checkpoints -----------------------------


def _rule_key(rule: str) -> str:
    if not re.fullmatch(r"pass@[1-9]\d*", str(rule)):
        raise UserError(f"checkpoint selection rule must be pass@k (e.g. pass@20 or pass@1), got {rule!r}")
    return str(rule)


def _metrics_of(path: str) -> dict:
    data = read_json(path)
    if not isinstance(data, dict):
        raise UserError(f"{path}: a metrics file must hold a JSON object")
    return data


def metric_value(path: str, key: str) -> float | None:
    """One metric (e.g. ``"pass@20"``) of a metrics file, None where it is missing or NaN."""
    v = _metrics_of(path).get(key)
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return float(v)


def _ks_of(path: str) -> list[int]:
    return sorted(
        int(k[5:]) for k, v in _metrics_of(path).items() if re.fullmatch(r"pass@\d+", k) and v is not None
    )


def _normalise(metrics: Mapping) -> dict:
    """Keys as (method, seed, iteration[, benchmark]) with whole-number seed and iteration
    (a workflow may hand them over as strings), paths as strings."""
    out = {}
    for key, path in metrics.items():
        method, seed, iteration, *rest = key
        out[(str(method), int(seed), int(iteration), *rest)] = str(path)
    return out


def _by_seed(metrics: Metrics) -> dict[tuple[str, int], list[tuple[int, str]]]:
    out: dict[tuple[str, int], list[tuple[int, str]]] = defaultdict(list)
    for (method, seed, iteration), path in metrics.items():
        out[(str(method), int(seed))].append((int(iteration), str(path)))
    return {key: sorted(v) for key, v in sorted(out.items())}


def _select(metrics: Metrics, rule: str) -> tuple[dict[tuple[str, int], int], list[str]]:
    """The selection and what the tables must say about it (ties, seeds without a value)."""
    key = _rule_key(rule)
    metrics = _normalise(metrics)
    selected: dict[tuple[str, int], int] = {}
    notes = []
    for (method, seed), checkpoints in _by_seed(metrics).items():
        values = [(it, metric_value(path, key)) for it, path in checkpoints]
        have = [(it, v) for it, v in values if v is not None]
        if not have:
            selected[(method, seed)] = checkpoints[-1][0]
            notes.append(
                f"{method} seed {seed}: no checkpoint has {key} (fewer samples than k, or not "
                f"evaluated); its last checkpoint (iteration {checkpoints[-1][0]}) stands in."
            )
            continue
        best = max(v for _, v in have)
        top = [it for it, v in have if v == best]
        selected[(method, seed)] = top[0]
        if len(top) > 1:
            notes.append(f"{method} seed {seed}: iterations {top} tie on {key}; the earliest is taken.")
    return selected, notes


def select_checkpoints(metrics: Metrics, rule: str) -> dict[tuple[str, int], int]:
    """Per (method, seed), the iteration whose checkpoint has the best ``rule`` value
    (``"pass@20"`` or ``"pass@1"``) on the evaluation split, as the paper selects
    (on the split it reports: a selection effect the captions name). Ties go to the
    earliest iteration; a seed with no value at any checkpoint gets its last one."""
    return _select(metrics, rule)[0]


def _seed_values(
    metrics: Metrics, selected: Mapping[tuple[str, int], int], method: str, key: str
) -> tuple[list[float | None], list[tuple[int, int]]]:
    """Per seed of ``method`` (ascending), the ``key`` value (percent) at its selected checkpoint."""
    values, where = [], []
    for (m, seed), it in sorted(selected.items()):
        if m != method:
            continue
        path = metrics.get((m, seed, it))
        values.append(_pct(metric_value(path, key)) if path else None)
        where.append((seed, it))
    return values, where


def _checkpoints_text(where: Sequence[tuple[int, int]]) -> str:
    return "; ".join(f"s{s}:{it}" for s, it in where) or "-"


def _paper_cell(pair) -> str:
    return "-" if pair is None else format_mean_std(*pair)


PASS_NOTES = [
    "Cells: pass@k in percent (unbiased estimator from the evaluation mode's n samples per problem), mean ± "
    "standard deviation over seeds at each seed's selected checkpoint; a method with one seed (the base model, "
    "a single public checkpoint) shows no ±.",
    "Checkpoints are selected on the evaluation split itself (the paper does the same), so the numbers are "
    "optimistic by the selection.",
    "n/a: the metric was not measured (fewer samples per problem than k, or the checkpoint was not evaluated). "
    "paper: the paper's number (Qwen2.5-Coder-7B, 100 samples at T = 0.6, 3 seeds; '-': not in the paper).",
]


def _paper_row_notes(methods: Iterable[str], methods_meta: Mapping[str, Mapping] | None) -> list[str]:
    """Where a method's paper column is another method's row (our unguided run: AZR's)."""
    notes = []
    for m in methods:
        meta = _meta(m, methods_meta)
        if meta["paper"] != m:
            other = METHODS.get(meta["paper"], {}).get("label", meta["paper"])
            notes.append(
                f"{meta['label']}: its paper column shows the paper's {other} row (the paper has no row "
                f"of its own for it)."
            )
    return notes


def _pass_cells(
    metrics: Metrics, rule: str, methods: Sequence[str], keys: Sequence[str]
) -> tuple[dict, list[str]]:
    """Per method: (mean, std) of each of ``keys`` and the (seed, iteration) pairs, at the
    checkpoints ``rule`` selects; and the selection's notes."""
    selected, notes = _select(metrics, rule)
    out = {}
    for m in methods:
        cells = {}
        for key in keys:
            values, where = _seed_values(metrics, selected, m, key)
            cells[key] = mean_std(values) if values else (None, None)
            cells["where"] = where
        out[m] = cells
    return out, notes


def _paper_rule(rule: str) -> str:
    """The paper's selection rule a rule of ours stands for: pass@1, or its 'best pass@20'."""
    return "pass@1" if rule == "pass@1" else "pass@20"


def _high_of(metrics: Metrics, wanted: int = 20) -> str:
    """The metric standing for pass@20: pass@20 itself, or, where no file has it (fewer
    samples drawn), the largest k below 20 that every file reports."""
    common = None
    for path in metrics.values():
        ks = set(_ks_of(path))
        common = ks if common is None else common & ks
    below = [k for k in common or () if k <= wanted]
    return f"pass@{max(below)}" if below else f"pass@{wanted}"


def _stand_in_note(high: str) -> list[str]:
    if high == "pass@20":
        return []
    return [
        f"{high} stands in for the paper's pass@20 (the evaluation mode draws fewer than 20 samples per "
        f"problem, so pass@20 cannot be estimated); the paper columns are the paper's pass@20."
    ]


def table1(
    metrics: Metrics,
    methods_meta: Mapping[str, Mapping],
    csv_path: str,
    md_path: str,
    rule: str = "pass@20",
    high: str | None = None,
    title: str | None = None,
) -> pd.DataFrame:
    """Table 1: per method (``methods_meta`` order; its entries: ``label``,
    ``real_data_training``, ``real_data_guidance``, ``paper``), pass@1 and pass@20 at
    the checkpoints selected by best ``rule`` (the paper: pass@20), the paper's numbers
    beside. ``high``: the second column's metric (default: the rule's, or pass@20 under
    the pass@1 rule); a smaller k where the evaluation draws fewer than 20 samples."""
    _rule_key(rule)
    high = _rule_key(high or (rule if rule != "pass@1" else "pass@20"))
    metrics = _normalise(metrics)
    methods = list(methods_meta)
    cells, sel_notes = _pass_cells(metrics, rule, methods, ("pass@1", high))
    csv_rows, md_rows = [], []
    for m in methods:
        meta = _meta(m, methods_meta)
        paper = PAPER_PASS.get(meta["paper"], {}).get(_paper_rule(rule))
        c = cells[m]
        csv_rows.append(
            {
                "method": m,
                "label": meta["label"],
                "real_data_training": meta["real_data_training"],
                "real_data_guidance": meta["real_data_guidance"],
                "seeds": len(c["where"]),
                "checkpoints": _checkpoints_text(c["where"]),
                "pass@1": _round(c["pass@1"][0]),
                "pass@1 std": _round(c["pass@1"][1]),
                high: _round(c[high][0]),
                f"{high} std": _round(c[high][1]),
                "paper pass@1": paper[0][0] if paper else None,
                "paper pass@1 std": paper[0][1] if paper else None,
                "paper pass@20": paper[1][0] if paper else None,
                "paper pass@20 std": paper[1][1] if paper else None,
            }
        )
        md_rows.append(
            {
                "Method": meta["label"],
                "Real-data training": _mark(meta["real_data_training"]),
                "Real-data guidance": _mark(meta["real_data_guidance"]),
                "pass@1": _cell(c["pass@1"]),
                high: _cell(c[high]),
                "paper pass@1": _paper_cell(paper[0] if paper else None),
                "paper pass@20": _paper_cell(paper[1] if paper else None),
                "checkpoints (seed:iteration)": _checkpoints_text(c["where"]),
            }
        )
    notes = [
        f"Per seed the checkpoint with the best {rule} on LCB v5 is selected; ties go to the earliest.",
        *_stand_in_note(high),
        *PASS_NOTES,
        *_paper_row_notes(methods, methods_meta),
        *[f"{m}: not evaluated, no checkpoint given." for m in methods if not cells[m]["where"]],
        *sel_notes,
    ]
    frame = pd.DataFrame(csv_rows, columns=list(csv_rows[0]) if csv_rows else None)
    write_table(
        frame,
        csv_path,
        md_path,
        title or f"GASP Table 1: LCB v5 pass@1 and {high}",
        notes,
        md_frame=pd.DataFrame(md_rows),
    )
    return frame


def table2(
    metrics: Metrics,
    csv_path: str,
    md_path: str,
    methods_meta: Mapping[str, Mapping] | None = None,
    methods: Sequence[str] | None = None,
    high: str | None = None,
    title: str = "GASP Table 2: LCB v5, ablations under both selection rules",
) -> pd.DataFrame:
    """Table 2: pass@1 and pass@20 of every method (default: those in ``metrics``, in the
    paper's order) with each seed's checkpoint selected by best pass@1 and by best pass@20.
    ``high``: the metric standing for pass@20; by default pass@20, or where no file has
    it, the largest k below 20 every file reports."""
    metrics = _normalise(metrics)
    high = _rule_key(high or _high_of(metrics))
    methods = list(methods) if methods is not None else _in_paper_order({m for m, _, _ in metrics})
    keys = ("pass@1", high)
    by_rule = {rule: _pass_cells(metrics, rule, methods, keys) for rule in keys}
    csv_rows, md_rows = [], []
    for m in methods:
        meta = _meta(m, methods_meta)
        csv_row = {
            "method": m,
            "label": meta["label"],
            "real_data_training": meta["real_data_training"],
            "real_data_guidance": meta["real_data_guidance"],
        }
        md_row = {
            "Method": meta["label"],
            "Real-data training": _mark(meta["real_data_training"]),
            "Real-data guidance": _mark(meta["real_data_guidance"]),
        }
        for rule, (cells, _) in by_rule.items():
            c = cells[m]
            paper = PAPER_PASS.get(meta["paper"], {}).get(_paper_rule(rule))
            csv_row[f"sel {rule}: seeds"] = len(c["where"])
            csv_row[f"sel {rule}: checkpoints"] = _checkpoints_text(c["where"])
            for j, key in enumerate(keys):
                paper_key = ("pass@1", "pass@20")[j]
                csv_row[f"sel {rule}: {key}"] = _round(c[key][0])
                csv_row[f"sel {rule}: {key} std"] = _round(c[key][1])
                csv_row[f"sel {rule}: paper {paper_key}"] = paper[j][0] if paper else None
                csv_row[f"sel {rule}: paper {paper_key} std"] = paper[j][1] if paper else None
                md_row[f"sel. {rule}: {key}"] = _cell(c[key])
                md_row[f"sel. {rule}: paper {paper_key}"] = _paper_cell(paper[j] if paper else None)
        csv_rows.append(csv_row)
        md_rows.append(md_row)
    notes = [
        f"'sel. pass@1' / 'sel. {high}': per seed the checkpoint with the best pass@1 / {high} on LCB v5 "
        "(ties: the earliest).",
        *_stand_in_note(high),
        *PASS_NOTES,
        *_paper_row_notes(methods, methods_meta),
        *[
            f"{m}: not evaluated, no checkpoint given."
            for m in methods
            if not by_rule["pass@1"][0][m]["where"]
        ],
        *sorted(set(by_rule["pass@1"][1] + by_rule[high][1])),
    ]
    frame = pd.DataFrame(csv_rows, columns=list(csv_rows[0]) if csv_rows else None)
    write_table(frame, csv_path, md_path, title, notes, md_frame=pd.DataFrame(md_rows))
    return frame


def table3(
    greedy_metrics: Mapping[tuple[str, int, int, str], str],
    selected: Mapping[tuple[str, int], int],
    csv_path: str,
    md_path: str,
    methods_meta: Mapping[str, Mapping] | None = None,
    benchmarks: Sequence[tuple[str, str]] = TABLE3_BENCHMARKS,
    title: str = "GASP Table 3: greedy pass@1 on LCB v5, HumanEval+ and MBPP+",
) -> pd.DataFrame:
    """Table 3: greedy pass@1 (%) per benchmark at each seed's selected checkpoint
    (``selected`` from :func:`select_checkpoints`, the pass@20 rule), mean ± std over seeds."""
    greedy_metrics = _normalise(greedy_metrics)
    selected = {(str(m), int(s)): int(it) for (m, s), it in selected.items()}
    methods = _in_paper_order({m for m, _ in selected})
    csv_rows, md_rows, missing = [], [], []
    for m in methods:
        meta = _meta(m, methods_meta)
        where = [(s, it) for (mm, s), it in sorted(selected.items()) if mm == m]
        csv_row = {
            "method": m,
            "label": meta["label"],
            "seeds": len(where),
            "checkpoints": _checkpoints_text(where),
        }
        md_row = {"Method": meta["label"]}
        for bench, column in benchmarks:
            values = []
            for seed, it in where:
                path = greedy_metrics.get((m, seed, it, bench))
                if path is None:
                    missing.append(f"{m} seed {seed} iteration {it} on {bench}")
                values.append(_pct(metric_value(path, "pass@1")) if path else None)
            mean, std = mean_std(values)
            paper = PAPER_GREEDY.get(meta["paper"], {}).get(bench)
            csv_row[f"{column}"] = _round(mean)
            csv_row[f"{column} std"] = _round(std)
            csv_row[f"paper {column}"] = paper[0] if paper else None
            csv_row[f"paper {column} std"] = paper[1] if paper else None
            md_row[column] = format_mean_std(mean, std)
            md_row[f"paper {column}"] = _paper_cell(paper)
        md_row["checkpoints (seed:iteration)"] = csv_row["checkpoints"]
        csv_rows.append(csv_row)
        md_rows.append(md_row)
    notes = [
        "Cells: greedy pass@1 (temperature 0, one sample) in percent at each seed's checkpoint selected by "
        "best LCB v5 pass@20 (sampled), mean ± standard deviation over seeds; one seed shows no ±.",
        "paper: the paper's Table 3 ('-': not in it).",
        *_paper_row_notes(methods, methods_meta),
    ]
    if missing:
        notes.append(
            "n/a: a seed's selected checkpoint was not evaluated greedily there (so no mean over all "
            "seeds): " + "; ".join(missing) + "."
        )
    frame = pd.DataFrame(csv_rows, columns=list(csv_rows[0]) if csv_rows else None)
    write_table(frame, csv_path, md_path, title, notes, md_frame=pd.DataFrame(md_rows))
    return frame


# --- goalposts: Table 4, Figures 5 and 14 --------------------------------------------


def _solved(path: str) -> dict[str, tuple[int, int]]:
    """goalpost id -> (samples, passing samples) from one scored file."""
    out: dict[str, list[int]] = {}
    for r in read_jsonl(path):
        n_c = out.setdefault(str(r["id"]), [0, 0])
        n_c[0] += 1
        n_c[1] += bool(r.get("passed"))
    return {k: (v[0], v[1]) for k, v in out.items()}


def _goalpost_runs(goalpost_scored: Mapping[tuple[str, int, int], str], method: str | None = None):
    """{method: {seed: {iteration: {goalpost: (n, c)}}}}."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for (m, seed, it), path in sorted(
        goalpost_scored.items(), key=lambda kv: (str(kv[0][0]), int(kv[0][1]), int(kv[0][2]))
    ):
        if method is None or m == method:
            out[str(m)][int(seed)][int(it)] = _solved(path)
    return out


def table4(
    goalpost_scored: Mapping[tuple[str, int, int], str],
    csv_path: str,
    md_path: str,
    methods_meta: Mapping[str, Mapping] | None = None,
    title: str = "GASP Table 4: goalposts solved across training checkpoints",
) -> pd.DataFrame:
    """Table 4: per method, goalposts solved (some sample passes, i.e. pass@n > 0) at
    any checkpoint of a seed, counted once per seed, and the union over seeds."""
    runs = _goalpost_runs(goalpost_scored)
    csv_rows, md_rows = [], []
    sizes, samples = set(), set()
    for m in _in_paper_order(runs):
        meta = _meta(m, methods_meta)
        per_seed, union, checkpoints = [], set(), []
        for seed in sorted(runs[m]):
            solved = set()
            for scores in runs[m][seed].values():
                sizes.add(len(scores))
                samples.update(n for n, _ in scores.values())
                solved |= {g for g, (_, c) in scores.items() if c > 0}
            per_seed.append(len(solved))
            union |= solved
            checkpoints.append(len(runs[m][seed]))
        paper = PAPER_GOALPOSTS.get(meta["paper"])
        paper_seeds = (" / ".join(map(str, paper[0])) or "—") if paper else "-"
        csv_rows.append(
            {
                "method": m,
                "label": meta["label"],
                "seeds": len(per_seed),
                "per seed": " / ".join(map(str, per_seed)),
                "union": len(union),
                "checkpoints per seed": " / ".join(map(str, checkpoints)),
                "solved ids": " ".join(sorted(union)) or "-",
                "paper per seed": paper_seeds if paper else None,
                "paper union": paper[1] if paper else None,
            }
        )
        md_rows.append(
            {
                "Method": meta["label"],
                "Per seed": csv_rows[-1]["per seed"],
                "Union": len(union),
                "paper per seed": paper_seeds,
                "paper union": "-" if paper is None else str(paper[1]),
                "checkpoints per seed": csv_rows[-1]["checkpoints per seed"],
            }
        )
    goalposts = "/".join(map(str, sorted(sizes))) or "0"
    n_text = "/".join(map(str, sorted(samples))) or "n/a"
    notes = [
        f"A goalpost counts for a seed when at least one of its n = {n_text} samples passes at any evaluated "
        f"checkpoint of that seed (pass@n > 0; the paper uses n = 100), at most once per seed; union: over "
        f"the seeds. Out of {goalposts} goalposts here ({PAPER_GOALPOST_COUNT} in the paper).",
        "paper: the paper's Table 4; '—' there: zero by construction (the goalposts were filtered to be "
        "unsolved by that method); '-': not in the paper.",
        *_paper_row_notes(_in_paper_order(runs), methods_meta),
    ]
    if not csv_rows:
        notes.append("No goalpost evaluation was given: nothing to count.")
    frame = pd.DataFrame(
        csv_rows,
        columns=[
            "method",
            "label",
            "seeds",
            "per seed",
            "union",
            "checkpoints per seed",
            "solved ids",
            "paper per seed",
            "paper union",
        ],
    )
    write_table(
        frame,
        csv_path,
        md_path,
        title,
        notes,
        md_frame=pd.DataFrame(
            md_rows,
            columns=["Method", "Per seed", "Union", "paper per seed", "paper union", "checkpoints per seed"],
        ),
    )
    return frame


def _heatmap_cells(goalpost_scored: Mapping[tuple[str, int, int], str], method: str) -> list[dict]:
    """One row per (goalpost, checkpoint) of ``method``: seeds evaluated there, seeds
    solving, and solved (any seed; None where no seed was evaluated)."""
    seeds = _goalpost_runs(goalpost_scored, method).get(method, {})
    iterations = sorted({it for per in seeds.values() for it in per})
    goalposts = sorted({g for per in seeds.values() for scores in per.values() for g in scores})
    rows = []
    for g in goalposts:
        for it in iterations:
            evaluated = [s for s in sorted(seeds) if g in seeds[s].get(it, {})]
            solving = [s for s in evaluated if seeds[s][it][g][1] > 0]
            rows.append(
                {
                    "method": method,
                    "goalpost": g,
                    "iteration": it,
                    "seeds evaluated": len(evaluated),
                    "seeds solving": len(solving),
                    "solved": (len(solving) > 0) if evaluated else None,
                }
            )
    return rows


def goalpost_heatmap(
    goalpost_scored: Mapping[tuple[str, int, int], str],
    methods: Sequence[str],
    png: str,
    pdf: str,
    csv: str,
    methods_meta: Mapping[str, Mapping] | None = None,
) -> pd.DataFrame:
    """Figures 5 (GASP and GASP + Real-data RL) and 14 (GASP without rejection sampling):
    one panel per method of ``methods``, goalposts (rows) x checkpoints (columns, global
    iteration), a cell solved when any seed solves it there (union over seeds). As in the
    paper only goalposts solved at least once are drawn; the csv holds every goalpost."""
    columns = ["method", "goalpost", "iteration", "seeds evaluated", "seeds solving", "solved"]
    frame = pd.DataFrame(
        [row for m in methods for row in _heatmap_cells(goalpost_scored, m)], columns=columns
    )
    solved_at = {
        (m, g, it)
        for m, g, it, solved in zip(frame["method"], frame["goalpost"], frame["iteration"], frame["solved"])
        if solved is True
    }
    frame["shown"] = [
        any(mm == m and gg == g for mm, gg, _ in solved_at)
        for m, g in zip(frame["method"], frame["goalpost"])
    ]
    _write_csv(frame, csv)
    plt = pyplot()
    from matplotlib.colors import ListedColormap

    panels = [(m, frame[frame["method"] == m]) for m in methods]
    panels = [(m, part, sorted(set(part["iteration"]))) for m, part in panels]
    heights = [max(2.6, 0.3 * len({g for mm, g, _ in solved_at if mm == m}) + 1.6) for m in methods]
    widths = [max(4.0, 0.35 * len(its) + 2) for _, _, its in panels]
    fig, axes = plt.subplots(1, len(panels), figsize=(sum(widths), max(heights)), squeeze=False)
    for ax, (m, part, iterations) in zip(axes[0], panels):
        ever = {g for mm, g, _ in solved_at if mm == m}
        first = {g: min(it for mm, gg, it in solved_at if mm == m and gg == g) for g in ever}
        shown = sorted(ever, key=lambda g: (first[g], g))
        n_seeds = len(_goalpost_runs(goalpost_scored, m).get(m, {}))
        if shown and iterations:
            import numpy as np

            grid = np.full((len(shown), len(iterations)), np.nan)
            for g, it, solved in zip(part["goalpost"], part["iteration"], part["solved"]):
                if g in first and solved is not None:
                    grid[shown.index(g), iterations.index(it)] = 1.0 if solved else 0.0
            cmap = ListedColormap(["tab:red", "tab:green"]).with_extremes(bad="lightgrey")
            ax.imshow(
                np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest"
            )
            ax.set_yticks(range(len(shown)))
            ax.set_yticklabels(shown, fontsize=7)
            ax.set_xticks(range(len(iterations)))
            ax.set_xticklabels([str(it) for it in iterations], fontsize=7)
        else:
            ax.set_xticks([])
            ax.set_yticks([])
            ax.text(
                0.5,
                0.5,
                f"no goalpost solved at any checkpoint ({part['goalpost'].nunique()} goalposts, "
                f"{len(iterations)} checkpoints, {n_seeds} seed(s))"
                if n_seeds
                else "no goalpost evaluation given",
                ha="center",
                va="center",
                fontsize=8,
                wrap=True,
                transform=ax.transAxes,
            )
        ax.set_xlabel("checkpoint (global iteration)")
        ax.set_ylabel("goalpost")
        ax.set_title(
            f"{_meta(m, methods_meta)['label']}\ngoalposts solved (green), union over {n_seeds} seed(s)",
            fontsize=9,
        )
    finish_figure(fig, png, pdf)
    return frame


# --- pass@k figures ---------------------------------------------------------------


def passk_figure(
    metrics: Metrics,
    methods: Sequence[str],
    rule: str,
    png: str,
    pdf: str,
    csv: str,
    methods_meta: Mapping[str, Mapping] | None = None,
    title: str | None = None,
) -> pd.DataFrame:
    """Figures 4, 8, 9, 11, 13: pass@k against k for each method, mean ± std over seeds
    at the checkpoints ``rule`` selects, for every k the metrics files report."""
    metrics = _normalise(metrics)
    selected, sel_notes = _select({key: p for key, p in metrics.items() if key[0] in set(methods)}, rule)
    rows = []
    for m in methods:
        where = [(s, it) for (mm, s), it in sorted(selected.items()) if mm == m]
        ks = sorted({k for s, it in where for k in _ks_of(metrics[(m, s, it)])})
        for k in ks:
            values, _ = _seed_values(metrics, selected, m, f"pass@{k}")
            mean, std = mean_std(values)
            rows.append(
                {
                    "method": m,
                    "k": k,
                    "mean": _round(mean),
                    "std": _round(std),
                    "seeds": len(where),
                    "checkpoints": _checkpoints_text(where),
                }
            )
    frame = pd.DataFrame(rows, columns=["method", "k", "mean", "std", "seeds", "checkpoints"])
    _write_csv(frame, csv)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    drawn, absent = False, []
    for m in methods:
        part = frame[(frame["method"] == m) & frame["mean"].notna()]
        if not len(part):
            absent.append(m)
            continue
        x, mean = part["k"].astype(float), part["mean"].astype(float)
        std = part["std"].astype(float).fillna(0.0)
        ax.plot(x, mean, marker="o", markersize=3, label=_meta(m, methods_meta)["label"])
        ax.fill_between(x, mean - std, mean + std, alpha=0.2)
        drawn = True
    if drawn and frame["k"].max() > 1:
        ks = sorted(set(int(k) for k in frame.loc[frame["mean"].notna(), "k"]))
        ax.set_xscale("log")
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks], fontsize=7)
        ax.minorticks_off()
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k on LCB v5 (%)")
    ax.set_title(title or f"pass@k, checkpoints selected by best {rule}", fontsize=9)
    if drawn:
        ax.legend(fontsize=7)
    said = []
    if absent:
        said.append(f"not drawn (no value at any checkpoint): {', '.join(absent)}")
    stand_ins = sum("stands in" in note for note in sel_notes)
    if stand_ins:
        said.append(f"{stand_ins} seed(s) have no {rule} at any checkpoint: their last checkpoint is drawn")
    if said:
        _figure_note(fig, "; ".join(said))
    finish_figure(fig, png, pdf)
    return frame


def pass20_over_training(
    metrics: Metrics,
    methods: Sequence[str],
    png: str,
    pdf: str,
    csv: str,
    k: int = 20,
    methods_meta: Mapping[str, Mapping] | None = None,
) -> pd.DataFrame:
    """Figure 7: pass@k (default 20) at every evaluated checkpoint, per method: each seed
    a thin line, the mean over seeds (where every seed was evaluated) a thick one with ± std."""
    key = f"pass@{int(k)}"
    metrics = _normalise(metrics)
    rows = []
    for m in methods:
        seeds = {s: dict(cps) for (mm, s), cps in _by_seed(metrics).items() if mm == m}
        iterations = sorted({it for cps in seeds.values() for it in cps})
        for it in iterations:
            values = []
            for s in sorted(seeds):
                path = seeds[s].get(it)
                v = _pct(metric_value(path, key)) if path else None
                values.append(v)
                if path:
                    rows.append({"method": m, "iteration": it, "seed": str(s), key: _round(v), "std": None})
            mean, std = mean_std(values)
            rows.append({"method": m, "iteration": it, "seed": "mean", key: _round(mean), "std": _round(std)})
    frame = pd.DataFrame(rows, columns=["method", "iteration", "seed", key, "std"])
    _write_csv(frame, csv)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    drawn = False
    for j, m in enumerate(methods):
        color = f"C{j % 10}"
        part = frame[frame["method"] == m]
        for seed in sorted(set(part["seed"]) - {"mean"}, key=int):
            line = part[(part["seed"] == seed) & part[key].notna()]
            if len(line):
                ax.plot(line["iteration"], line[key].astype(float), color=color, alpha=0.35, linewidth=0.8)
        mean = part[(part["seed"] == "mean") & part[key].notna()]
        if len(mean):
            x, y = mean["iteration"].astype(float), mean[key].astype(float)
            std = mean["std"].astype(float).fillna(0.0)
            ax.plot(x, y, color=color, marker="o", markersize=3, label=_meta(m, methods_meta)["label"])
            ax.fill_between(x, y - std, y + std, color=color, alpha=0.15)
            drawn = True
    ax.set_xlabel("global iteration")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.set_ylabel(f"{key} on LCB v5 (%)")
    ax.set_title(f"{key} over training", fontsize=9)
    if drawn:
        ax.legend(fontsize=7)
    else:
        _figure_note(
            fig, f"nothing to draw: no checkpoint has {key} (fewer samples than {int(k)}, or none evaluated)"
        )
    finish_figure(fig, png, pdf)
    return frame
