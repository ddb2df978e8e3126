"""Tables and figures made of the benchmark layer's metrics files (one JSON per
benchmark x mode x model, written by ``pipeline.evaluate.score``); the tracks' paper
tables are arrangements of these.

Cells are percentages with two decimals (the papers' style); n/a where a metric is
undefined (e.g. F1 with no positive prediction) or the file holds no items. Each table
says how the answers were decoded, so a number made with format-constrained decoding
is never read as a paper's.
"""

from __future__ import annotations

import pandas as pd

from ..records import read_json
from .figures import finish_figure, pyplot
from .tables import write_table

METRIC_NAMES = {
    "accuracy": "Accuracy",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1 Score",
    "pass@1": "Pass@1",
    "compile_errors": "Compilation errors",
}


def metric_name(metric: str) -> str:
    """A metric's column title (Pass@k for any k)."""
    if metric.startswith("pass@"):
        return "Pass@" + metric[len("pass@") :]
    return METRIC_NAMES.get(metric, metric)


def denominator_notes(labelled: list[tuple[str, dict]], metric: str) -> list[str]:
    """Notes on the items a cell's denominator leaves out or counts as failed: those whose
    prompt does not fit the model's context (left out), those that cannot run here (failed,
    the official harnesses' denominator, with the runnable-only value where asked for)."""
    notes = []
    for label, summary in labelled:
        if summary.get("over_context"):
            notes.append(
                f"{label}: {summary['over_context']} items left out, their prompts do not fit the "
                "model's context (not in the item count)."
            )
        if summary.get("unrunnable"):
            note = (
                f"{label}: {summary['unrunnable']} of {summary.get('n')} items cannot run here and count as "
                "failed (the official denominator)"
            )
            runnable = summary.get("runnable_only") or {}
            value = metric_of(runnable, metric) if metric in runnable else None
            if value is not None:
                note += f"; over the {runnable.get('n')} runnable items only: {cell(value, metric)}"
            notes.append(note + ".")
    return notes


def metric_of(summary: dict, metric: str, group: str | None = None) -> float | None:
    """A metric of a summary (or of one of its groups), as a percentage except for counts."""
    part = (summary.get("groups") or {}).get(group, {}) if group else summary
    value = part.get(metric)
    if value is None:
        return None
    return float(value) if metric == "compile_errors" else 100.0 * float(value)


def cell(value: float | None, metric: str = "accuracy") -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}" if metric == "compile_errors" else f"{value:.2f}%"


def decodings(summaries) -> str:
    kinds = sorted({s.get("decoding", "-") for s in summaries} - {"-"})
    return ", ".join(kinds) if kinds else "-"


def grid_table(
    summaries: dict[tuple, str],
    rows: list[tuple[str, str]],
    columns: list[tuple[str, tuple]],
    metric: str,
    csv_path: str,
    md_path: str,
    title: str,
    notes: list[str] | None = None,
    first: str = "Benchmark",
) -> pd.DataFrame:
    """Rows x columns of one metric. ``rows`` = [(label, row key)], ``columns`` =
    [(label, column key)]; the file of a cell is ``summaries[(row key, *column key)]``."""
    loaded = {key: read_json(path) for key, path in summaries.items()}
    plain, shown, counted = [], [], []
    for label, rkey in rows:
        prow, srow = {first: label}, {first: label}
        for clabel, ckey in columns:
            summary = loaded.get((rkey, *ckey))
            value = metric_of(summary, metric) if summary else None
            prow[clabel] = None if value is None else round(value, 4)
            srow[clabel] = cell(value, metric)
        used = [loaded[(rkey, *ckey)] for _, ckey in columns if (rkey, *ckey) in loaded]
        counted += [
            (f"{label} / {clabel}", loaded[(rkey, *ckey)])
            for clabel, ckey in columns
            if (rkey, *ckey) in loaded
        ]
        prow["Items"] = srow["Items"] = max((s.get("n") or 0 for s in used), default=0)
        prow["Decoding"] = srow["Decoding"] = decodings(used)
        plain.append(prow)
        shown.append(srow)
    notes = (
        [f"{metric_name(metric)} per cell; n/a: undefined or no items."]
        + list(notes or [])
        + denominator_notes(counted, metric)
    )
    write_table(pd.DataFrame(plain), csv_path, md_path, title, notes, md_frame=pd.DataFrame(shown))
    return pd.DataFrame(plain)


def base_vs_trained(
    summaries: dict[str, str],
    metrics: list[str],
    csv_path: str,
    md_path: str,
    title: str,
    notes: list[str] | None = None,
) -> pd.DataFrame:
    """Paper 000's Tables 4-5: one row per metric; the base model, the trained one, and Δ."""
    base, trained = read_json(summaries["base"]), read_json(summaries["trained"])
    plain, shown = [], []
    for m in metrics:
        b, t = metric_of(base, m), metric_of(trained, m)
        d = None if b is None or t is None else t - b
        plain.append({"Metric": metric_name(m), "Base Model": b, "Trained": t, "Δ": d})
        shown.append(
            {
                "Metric": metric_name(m),
                "Base Model": cell(b),
                "Trained": cell(t),
                "Δ": "n/a" if d is None else f"{d:+.2f}",
            }
        )
    notes = (
        [f"Items: {base.get('n')}; answers decoded: {decodings([base, trained])}; mode: {base.get('mode')}."]
        + list(notes or [])
        + denominator_notes([("Base Model", base), ("Trained", trained)], metrics[0])
    )
    write_table(pd.DataFrame(plain), csv_path, md_path, title, notes, md_frame=pd.DataFrame(shown))
    return pd.DataFrame(plain)


def grouped_bars(
    summaries: dict[str, str],
    labels: dict[str, str],
    metric: str,
    png: str,
    pdf: str | None,
    csv_path: str,
    title: str,
    groups: list[str] | None = None,
) -> pd.DataFrame:
    """Bars of one metric per group (e.g. EquiBench category) or overall, one bar per
    model; the plotted numbers also go to ``csv_path``."""
    loaded = {key: read_json(path) for key, path in summaries.items()}
    names = groups or [None]
    rows = []
    for g in names:
        for key, summary in loaded.items():
            rows.append({"group": g or "all", "model": labels[key], "value": metric_of(summary, metric, g)})
    frame = pd.DataFrame(rows)
    frame.to_csv(csv_path, index=False)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(names) * max(1, len(loaded)) / 2), 3.2))
    width = 0.8 / max(1, len(loaded))
    empty = []
    for k, key in enumerate(loaded):
        values = [r["value"] for r in rows if r["model"] == labels[key]]
        xs = [i + k * width for i in range(len(names))]
        ax.bar(xs, [0 if v is None else v for v in values], width, label=labels[key])
        empty += [names[i] or "all" for i, v in enumerate(values) if v is None]
    ax.set_xticks([i + width * (len(loaded) - 1) / 2 for i in range(len(names))])
    ax.set_xticklabels([g or "all" for g in names])
    ax.set_ylabel(f"{metric_name(metric)} (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    finish_figure(fig, *[p for p in (png, pdf) if p], empty=sorted(set(empty)) or None, what="(undefined)")
    return frame


def rounds_figure(
    summaries: dict[int, str], png: str, pdf: str | None, csv_path: str, title: str
) -> pd.DataFrame:
    """Paper 000's per-round figures of Alice: pass@1 (%) and compilation errors per round."""
    rows = []
    for r in sorted(summaries):
        s = read_json(summaries[r])
        rows.append(
            {"round": r, "pass@1": metric_of(s, "pass@1"), "compile_errors": metric_of(s, "compile_errors")}
        )
    frame = pd.DataFrame(rows)
    frame.to_csv(csv_path, index=False)
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7, 3))
    a1.plot(frame["round"], frame["pass@1"].fillna(0), marker="o")
    a1.set_xlabel("round")
    a1.set_ylabel("Pass@1 (%)")
    a2.plot(frame["round"], frame["compile_errors"].fillna(0), marker="o", color="tab:red")
    a2.set_xlabel("round")
    a2.set_ylabel("compilation errors")
    for ax in (a1, a2):
        ax.set_xticks(list(frame["round"]))
    fig.suptitle(title, fontsize=9)
    finish_figure(fig, *[p for p in (png, pdf) if p])
    return frame


def benchmarks_table(
    ground_truth: dict[str, str],
    base_runs: dict[str, str],
    skipped: dict[str, str],
    sources: dict[str, str],
    csv_path: str,
    md_path: str,
) -> pd.DataFrame:
    """The layer's own check: per benchmark, its items, the skipped rows, how many of its
    right answers the adapter scores right, and the base model's greedy score."""
    from ..records import read_jsonl

    plain, shown = [], []
    for name in sorted(set(ground_truth) | set(base_runs)):
        gt = read_json(ground_truth[name]) if name in ground_truth else None
        base = read_json(base_runs[name]) if name in base_runs else None
        title = (gt or base)["title"]
        row = {
            "Benchmark": title,
            "name": name,
            "Source": sources.get(name, ""),
            "Skipped rows": len(read_jsonl(skipped[name])) if name in skipped else None,
        }
        if gt is None:
            ref = "not checked"
        elif not gt.get("checked"):
            ref = "n/a: ships no right answers"
        else:
            ref = f"{gt['right']}/{gt['n']}"
        row["Items"] = gt.get("items") if gt and gt.get("checked") else (base or {}).get("n")
        row["Right answers scored right"] = ref
        metric = "pass@1" if (base or {}).get("task") == "codegen" else "accuracy"
        value = metric_of(base, metric) if base else None
        row["Base model (greedy)"] = None if value is None else round(value, 4)
        plain.append(row)
        shown.append(
            {
                **row,
                "Base model (greedy)": "-"
                if base is None
                else f"{cell(value)} {METRIC_NAMES[metric].lower()} ({base.get('decoding')})",
            }
        )
    notes = [
        "Right answers: each benchmark's gold labels or reference solutions, read and scored by its adapter "
        "exactly as a model's answers are; all must be right.",
        "Base model (greedy): for benchmarks no track of this run evaluates, so every adapter runs on a model.",
        "Smoke sources are this project's items in the benchmark's format (src/selfplay/data/eval/README.md): "
        "their scores say nothing about a model.",
    ]
    write_table(
        pd.DataFrame(plain),
        csv_path,
        md_path,
        "Benchmark layer: adapters checked against their ground truth",
        notes,
        md_frame=pd.DataFrame(shown),
    )
    return pd.DataFrame(plain)
