"""Wall time per stage of the embedded default, from Snakemake's benchmark files.

Run the default first (`make run`, from a clean results/ to time everything), then:
    .venv/bin/python bench/default_run.py [--total-seconds S] [--snakemake-log LOG]
Reads benchmarks/**/*.tsv (one per job, written by each rule's `benchmark:`), sums
them per rule and writes bench/results/default_run.json and .md.

The same 2-core machine decodes at different speeds on different days (a decoding step
of the tiny model took 64 ms on 2026-11-26 and 106 ms on 2026-11-27), and the default
is mostly decoding, so `--probe` also times the bare model's decoding step (one row and
16 rows, as bench/decode_bench.py does) and sets it beside decode_bench's committed
numbers: compare runs by that ratio, not by their wall times alone.
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
from datetime import datetime
from pathlib import Path

from selfplay.tracks.registry import TRACKS

REPO = Path(__file__).resolve().parents[1]


def benchmark_of(name: str) -> str:
    """The benchmark a layer job's file name starts with (names hold underscores)."""
    from selfplay.evaluate.registry import ADAPTERS

    return max((b for b in ADAPTERS if name == b or name.startswith(b + "_")), key=len, default=name)


def rule_of(path: Path) -> str:
    rel = path.relative_to(REPO / "benchmarks")
    parts = rel.with_suffix("").parts
    if (
        parts[0] in TRACKS and len(parts) == 4 and parts[2] == "eval"
    ):  # <track>/<exp>/eval/<bench>_<model>_<mode>
        kind = "score" if parts[3].endswith("_score") else "generate"
        return f"{parts[0]}/eval/{benchmark_of(parts[3])}/{kind}"
    if parts[0] == "eval":  # the layer's own jobs: items_<bench>, check_<bench>
        step, _, rest = parts[-1].partition("_")
        return f"eval/{step}/{benchmark_of(rest)}"
    if parts[0] in TRACKS and len(parts) == 3:  # <track>/<exp>/<step>: a once-per-run step
        return f"{parts[0]}/{parts[2]}"
    if parts[0] in TRACKS and len(parts) >= 4:  # <track>/<exp>/<stage>/<step>_shardN
        step = parts[-1].split("_shard")[0]
        return f"{parts[0]}/{step}"
    return "/".join(p.split("_shard")[0] for p in parts[:-1]) or parts[0]


def decoding_probe() -> dict:
    """This machine's decoding step now, beside the committed decode benchmark's."""
    import sys

    import torch

    sys.path.insert(0, str(REPO / "bench"))
    from decode_bench import step_costs

    torch.set_num_threads(1)
    reference = json.loads((REPO / "bench" / "results" / "decode.json").read_text())
    model = REPO / "resources" / "models" / "smollm2-135m-instruct"
    now = step_costs(str(model), reference["context"], 30, rows_list=(1, 16))
    return {
        "now": {str(k): v for k, v in now.items()},
        "reference": {k: reference["step_ms"][k] for k in ("1", "16")},
        "reference_date": reference["date"],
    }


def job_spans(log: Path) -> list[tuple[str, float, float]]:
    """(rule, start, end) in seconds from the run's start, of each job Snakemake's log
    shows starting and finishing (rule `all` left out). The log stamps whole seconds."""
    stamp = re.compile(r"\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
    header = re.compile(r"(?:local)?(?:rule|checkpoint) (\w+):$")
    now = rule = None
    started: dict[str, tuple[str, float]] = {}
    spans = []
    for line in log.read_text().splitlines():
        if m := stamp.match(line):
            now = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
        elif m := header.match(line):
            rule = m.group(1)
        elif (m := re.match(r"\s+jobid: (\d+)$", line)) and rule:
            started[m.group(1)] = (rule, now)
            rule = None
        elif (m := re.match(r"Finished jobid: (\d+)", line)) and m.group(1) in started:
            name, begin = started.pop(m.group(1))
            if name != "all":
                spans.append((name, begin, now))
    if not spans:
        raise SystemExit(f"{log}: no finished job in this Snakemake log")
    t0 = min(b for _, b, _ in spans)
    return [(r, b - t0, e - t0) for r, b, e in spans]


def occupancy(spans: list[tuple[str, float, float]], cores: int) -> dict:
    """How full the cores were: per second of the run, the jobs running (each job one
    core, as profiles/local gives them), and the seconds and core-seconds left idle."""
    end = int(max(e for _, _, e in spans))
    running = [0] * end
    for _, b, e in spans:
        for t in range(int(b), int(e)):
            running[t] += 1
    return {
        "cores": cores,
        "log_wall_seconds": end,
        "jobs": len(spans),
        "seconds_below_cores": sum(1 for r in running if r < cores),
        "idle_core_seconds": sum(max(0, cores - r) for r in running),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--total-seconds", type=float, help="wall time of the whole `make run`, measured outside")
    ap.add_argument("--probe", action="store_true", help="time the model's decoding step on this machine now")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="the run used warm starts (make run): Snakemake measured the waiting processes' memory, not the jobs'",
    )
    ap.add_argument(
        "--snakemake-log",
        type=Path,
        help="the run's Snakemake log (.snakemake/log/*.snakemake.log): how many cores were busy when",
    )
    args = ap.parse_args()
    per_rule: dict[str, dict] = defaultdict(lambda: {"jobs": 0, "seconds": 0.0, "max_rss_mb": 0.0})
    for tsv in sorted((REPO / "benchmarks").rglob("*.tsv")):
        with open(tsv) as fh:
            row = next(csv.DictReader(fh, delimiter="\t"))
        entry = per_rule[rule_of(tsv)]
        entry["jobs"] += 1
        entry["seconds"] += float(row["s"])
        rss = row.get("max_rss", "NA")
        if rss not in ("NA", "", None):
            entry["max_rss_mb"] = max(entry["max_rss_mb"], float(rss))
    if not per_rule:
        raise SystemExit("no benchmark files under benchmarks/: run the default first (make run)")
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"nproc": os.cpu_count(), "python": platform.python_version()},
        "total_job_seconds": round(sum(e["seconds"] for e in per_rule.values()), 1),
        "total_wall_seconds": args.total_seconds,
        "warm_starts": args.warm,
        "per_rule": {k: {**v, "seconds": round(v["seconds"], 1)} for k, v in sorted(per_rule.items())},
    }
    if args.probe:
        result["decoding_step_ms"] = decoding_probe()
    if args.snakemake_log:
        result["occupancy"] = occupancy(job_spans(args.snakemake_log), os.cpu_count() or 1)
    out = REPO / "bench" / "results" / "default_run.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    lines = ["| rule | jobs | seconds | max RSS MB |", "|---|---|---|---|"]
    for k, v in sorted(per_rule.items(), key=lambda kv: -kv[1]["seconds"]):
        rss = "n/a" if args.warm else f"{v['max_rss_mb']:.0f}"
        lines.append(f"| {k} | {v['jobs']} | {v['seconds']:.1f} | {rss} |")
    lines.append(f"| **sum of jobs** | | {result['total_job_seconds']} | |")
    if args.total_seconds:
        lines.append(f"| **wall, whole run** | | {args.total_seconds:.1f} | |")
    if args.warm:
        lines += [
            "",
            "Warm starts (SELFPLAY_WARM=1): each job ran in a child of the warm server, so Snakemake's "
            "memory column measured the waiting process and is left out (n/a); a run without "
            "SELFPLAY_WARM measures the jobs' memory.",
        ]
    busy = result.get("occupancy")
    if busy:
        lines += [
            "",
            f"Cores busy (Snakemake's log, {busy['jobs']} jobs over {busy['log_wall_seconds']} s, one core a job): "
            f"fewer than {busy['cores']} jobs ran in {busy['seconds_below_cores']} s of the run, "
            f"{busy['idle_core_seconds']} core-seconds idle.",
        ]
    probe = result.get("decoding_step_ms")
    if probe:
        lines += [
            "",
            f"Decoding step of the bare model on this machine after the run (ms, 700-token cache): "
            f"1 row {probe['now']['1']}, 16 rows {probe['now']['16']}; "
            f"bench/results/decode.json ({probe['reference_date']}): "
            f"1 row {probe['reference']['1']}, 16 rows {probe['reference']['16']}.",
        ]
    (out.with_suffix(".md")).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
