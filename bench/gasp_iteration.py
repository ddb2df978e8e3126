"""Time per phase of GASP's global iterations on the embedded default (the tiny model on
2 cores), from Snakemake's benchmark files of a run.

Each GASP job writes ``benchmarks/gasp/<experiment>/<method>/s<seed>/iter<i>_<phase>.tsv``
(a teacher, solver or real-data phase: generation, sandbox and scoring in one job) and
``..._<phase>_update.tsv`` (the update on its rollouts). This reads them from a run
directory (default: the checkout, after `make run`) together with each phase's
``phase.json`` (candidates, accepted, how it ended) and writes
bench/results/gasp_iteration.json and .md: per iteration and phase, the job's seconds
and peak memory, and per phase the mean over iterations.

    .venv/bin/python bench/gasp_iteration.py [--run-dir DIR] [--experiment default]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = re.compile(r"iter(\d+)_([a-z]+?)(_update)?\.tsv")


def read_tsv(path: Path) -> dict:
    with open(path) as fh:
        row = next(csv.DictReader(fh, delimiter="\t"))
    rss = row.get("max_rss", "NA")
    return {
        "seconds": round(float(row["s"]), 2),
        "max_rss_mb": None if rss in ("NA", "-", "") else round(float(rss)),
    }


def collect(run_dir: Path, experiment: str) -> list[dict]:
    rows = []
    for tsv in sorted((run_dir / "benchmarks/gasp" / experiment).rglob("iter*.tsv")):
        m = NAME.fullmatch(tsv.name)
        if not m:
            continue
        method, seed = tsv.parent.parent.name, tsv.parent.name
        iteration, phase, update = int(m.group(1)), m.group(2), bool(m.group(3))
        row = {
            "method": method,
            "seed": seed,
            "iteration": iteration,
            "phase": phase,
            "job": "update" if update else "phase",
            **read_tsv(tsv),
        }
        summary = (
            run_dir / "results/gasp" / experiment / method / seed / f"iter{iteration}" / phase / "phase.json"
        )
        if not update and summary.is_file():
            s = json.loads(summary.read_text())
            row.update(
                {
                    k: s.get(k)
                    for k in ("candidates", "accepted", "ended", "tasks", "answers", "correct")
                    if k in s
                }
            )
        rows.append(row)
    rows.sort(key=lambda r: (r["method"], r["seed"], r["iteration"], r["job"] == "update"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run-dir", default=str(REPO), help="the run's working directory")
    ap.add_argument("--experiment", default="default")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="the run used warm starts (make run): Snakemake measured the waiting processes' memory, not the jobs'",
    )
    args = ap.parse_args()
    rows = collect(Path(args.run_dir), args.experiment)
    if args.warm:
        for r in rows:
            r["max_rss_mb"] = None
    if not rows:
        raise SystemExit(
            f"no GASP benchmark files under {args.run_dir}/benchmarks/gasp/{args.experiment}: run it first"
        )
    per_phase: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        per_phase[(r["phase"], r["job"])].append(r["seconds"])
    means = [
        {"phase": p, "job": j, "iterations": len(v), "mean_seconds": round(sum(v) / len(v), 1)}
        for (p, j), v in sorted(per_phase.items())
    ]
    per_iteration = defaultdict(float)
    for r in rows:
        per_iteration[(r["method"], r["seed"], r["iteration"])] += r["seconds"]
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "experiment": args.experiment,
        "warm_starts": args.warm,
        "jobs": rows,
        "per_phase": means,
        "per_iteration": [
            {"method": m, "seed": s, "iteration": i, "seconds": round(v, 1)}
            for (m, s, i), v in sorted(per_iteration.items())
        ],
    }
    out = REPO / "bench/results"
    (out / "gasp_iteration.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"# GASP: time per phase of the embedded default's iterations ({result['when']})",
        "",
        f"{result['cpus']} CPUs, load average {', '.join(f'{x:.2f}' for x in result['load_average'])} at the "
        "end; from each job's Snakemake benchmark file (a phase job: generation, sandbox and scoring; "
        "an update job: one update on its rollouts)."
        + (
            " Warm starts (SELFPLAY_WARM=1): each job ran in a child of the warm server, so the "
            "benchmark files hold the waiting process's memory; the column says n/a."
            if args.warm
            else ""
        ),
        "",
        "| method | seed | iteration | phase | job | seconds | max RSS MB | candidates | accepted | ended |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['seed']} | {r['iteration']} | {r['phase']} | {r['job']} | {r['seconds']} | "
            f"{r['max_rss_mb'] if r['max_rss_mb'] is not None else 'n/a'} | {r.get('candidates', r.get('tasks', ''))} | "
            f"{r.get('accepted', r.get('correct', ''))} | {r.get('ended', '')} |"
        )
    lines += ["", "| phase | job | iterations | mean seconds |", "|---|---|---|---|"]
    lines += [f"| {m['phase']} | {m['job']} | {m['iterations']} | {m['mean_seconds']} |" for m in means]
    lines += ["", "| method | seed | iteration | seconds (all its jobs) |", "|---|---|---|---|"]
    lines += [
        f"| {p['method']} | {p['seed']} | {p['iteration']} | {p['seconds']} |"
        for p in result["per_iteration"]
    ]
    (out / "gasp_iteration.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
