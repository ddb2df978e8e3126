"""Dafny verification throughput: one Dafny process per candidate versus batched runs.

N small candidate programs (default 40), the kind a PSV solver writes: methods
with loops and invariants, arrays, sequences, recursive functions with lemmas,
each in a correct and a subtly wrong version, plus a few that do not parse in
Dafny 2.3 (Dafny 4 syntax) and a few that do not resolve.  They are verified by:

per_candidate   ``verify(..., batch=False)``: one confined Dafny process per
                candidate, as the paper does (its Verus runs are one per file)
batched         ``verify(..., batch=True)``: candidates wrapped in modules of their
                own, many per Dafny process; parse/resolution culprits taken out and
                run alone (default batch size, and a variant with batch size 8)

Both use the same sandbox (two workers: two Dafny processes at a time, i.e. the
2 cores of a default machine) and the same settings (``/timeLimit:20``,
``/noCheating:1``).  Every candidate's verdict (status, counts, implementations,
messages) must be the same in every mode, or the benchmark fails.  Results go to
bench/results/dafny.json and dafny.md; the machine may be shared, so the load
average is recorded before and after.

    .venv/bin/python bench/dafny_bench.py             # full run (about two minutes)
    .venv/bin/python bench/dafny_bench.py --quick     # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from machine import machine_facts  # noqa: E402  (bench/machine.py)

from selfplay.dafny.runner import (  # noqa: E402
    DafnyJob,
    DafnySettings,
    check_dafny,
    dafny_flags,
    tool_dirs,  # noqa: E402
    verify,
    z3_version,
)
from selfplay.sandbox import Sandbox, SandboxLimits  # noqa: E402

WORKERS = 2

# (name, correct program, wrong program); the wrong one differs in one place.
TEMPLATES = [
    (
        "max",
        """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
  ensures m == a || m == b
{
  if a > b { m := a; } else { m := b; }
}
""",
        "if a > b { m := a; } else { m := b; }",
        "if a > b { m := b; } else { m := a; }",
    ),
    (
        "sum_to",
        """method SumTo(n: nat) returns (s: nat)
  ensures s == n * (n + 1) / 2
{
  s := 0;
  var i := 0;
  while i < n
    invariant 0 <= i <= n
    invariant s == i * (i + 1) / 2
  {
    i := i + 1;
    s := s + i;
  }
}
""",
        "    invariant s == i * (i + 1) / 2\n",
        "",
    ),
    (
        "find_max",
        """method FindMax(a: array<int>) returns (idx: int)
  requires a.Length > 0
  ensures 0 <= idx < a.Length
  ensures forall j :: 0 <= j < a.Length ==> a[j] <= a[idx]
{
  idx := 0;
  var i := 1;
  while i < a.Length
    invariant 1 <= i <= a.Length
    invariant 0 <= idx < i
    invariant forall j :: 0 <= j < i ==> a[j] <= a[idx]
  {
    if a[i] > a[idx] { idx := i; }
    i := i + 1;
  }
}
""",
        "if a[i] > a[idx]",
        "if a[i] < a[idx]",
    ),
    (
        "linear_search",
        """method Find(a: seq<int>, key: int) returns (i: int)
  ensures 0 <= i ==> i < |a| && a[i] == key
  ensures i < 0 ==> forall j :: 0 <= j < |a| ==> a[j] != key
{
  i := 0;
  while i < |a|
    invariant 0 <= i <= |a|
    invariant forall j :: 0 <= j < i ==> a[j] != key
  {
    if a[i] == key { return; }
    i := i + 1;
  }
  i := -1;
}
""",
        "  i := -1;\n}",
        "  i := 0;\n}",
    ),
    (
        "fib",
        """function Fib(n: nat): nat { if n < 2 then n else Fib(n - 1) + Fib(n - 2) }

method ComputeFib(n: nat) returns (b: nat)
  ensures b == Fib(n)
{
  if n == 0 { return 0; }
  var i := 1;
  var a := 0;
  b := 1;
  while i < n
    invariant 0 < i <= n
    invariant a == Fib(i - 1)
    invariant b == Fib(i)
  {
    a, b := b, a + b;
    i := i + 1;
  }
}
""",
        "a, b := b, a + b;",
        "a, b := b, a + b + 1;",
    ),
    (
        "swap",
        """method Swap(a: array<int>, i: int, j: int)
  requires 0 <= i < a.Length && 0 <= j < a.Length
  modifies a
  ensures a[i] == old(a[j]) && a[j] == old(a[i])
  ensures forall k :: 0 <= k < a.Length && k != i && k != j ==> a[k] == old(a[k])
{
  var t := a[i];
  a[i] := a[j];
  a[j] := t;
}
""",
        "  a[j] := t;\n",
        "",
    ),
    (
        "count",
        """function Count(s: seq<int>, x: int): nat
{
  if |s| == 0 then 0 else (if s[0] == x then 1 else 0) + Count(s[1..], x)
}

lemma CountBound(s: seq<int>, x: int)
  ensures Count(s, x) <= |s|
{
}
""",
        "ensures Count(s, x) <= |s|",
        "ensures Count(s, x) < |s|",
    ),
    (
        "all_positive",
        """predicate AllPositive(s: seq<int>) { forall i :: 0 <= i < |s| ==> s[i] > 0 }

method CheckAll(s: seq<int>) returns (ok: bool)
  ensures ok <==> AllPositive(s)
{
  ok := true;
  var i := 0;
  while i < |s|
    invariant 0 <= i <= |s|
    invariant ok <==> AllPositive(s[..i])
  {
    if s[i] <= 0 { ok := false; }
    i := i + 1;
  }
  assert s[..i] == s;
}
""",
        "if s[i] <= 0",
        "if s[i] < 0",
    ),
]

# Written for Dafny 4: Dafny 2.3 does not parse these.
PARSE_ERRORS = [
    """method Double(x: int) returns (y: int)
  ensures y == 2 * x
{
  y := x + x;
  expect y == 2 * x;
}
""",
    """ghost function Sq(x: int): int { x * x }

method Square(x: int) returns (y: int) ensures y == Sq(x) { y := x * x; }
""",
    """method Inc(x: int) returns (y: int)
  ensures y == x + 1
{
  y := x + 1
}
""",
]
RESOLUTION_ERRORS = [
    """method Max(a: int, b: int) returns (m: int)
  ensures m >= a && m >= b
{
  m := if a > b then a else c;
}
""",
    """method Len(s: seq<int>) returns (n: nat)
  ensures n == |s|
{
  n := s.Length;
}
""",
    """method Flag(x: int) returns (b: bool)
  ensures b == (x > 0)
{
  b := x;
}
""",
]


def make_jobs(n: int) -> tuple[list[DafnyJob], dict[str, int]]:
    """n candidates: 6 of every 40 do not parse or resolve, the rest alternate correct / wrong."""
    jobs: list[DafnyJob] = []
    mix = {"correct": 0, "wrong": 0, "parse_error": 0, "resolution_error": 0}
    broken = 0
    for i in range(n):
        header = f"// candidate {i}\n"
        if i % 40 in (7, 21, 33):
            jobs.append(DafnyJob(f"c{i:02d}_parse", header + PARSE_ERRORS[broken % 3]))
            mix["parse_error"] += 1
            broken += 1
        elif i % 40 in (12, 26, 38):
            jobs.append(DafnyJob(f"c{i:02d}_resolution", header + RESOLUTION_ERRORS[broken % 3]))
            mix["resolution_error"] += 1
            broken += 1
        else:
            name, good, old, new = TEMPLATES[i % len(TEMPLATES)]
            wrong = (i // len(TEMPLATES)) % 3 == 1
            text = good.replace(old, new, 1) if wrong else good
            assert not wrong or text != good
            jobs.append(DafnyJob(f"c{i:02d}_{name}_{'wrong' if wrong else 'ok'}", header + text))
            mix["wrong" if wrong else "correct"] += 1
    return jobs, mix


def run_mode(jobs: list[DafnyJob], settings: DafnySettings, sandbox: Sandbox, batch: bool):
    stats: dict[str, int] = {}
    started = time.monotonic()
    verdicts = verify(jobs, settings, sandbox=sandbox, batch=batch, stats=stats)
    return time.monotonic() - started, verdicts, stats


def dafny_package_version() -> str | None:
    try:
        return (
            subprocess.run(
                ["dpkg-query", "-W", "-f", "${Version}", "dafny"], capture_output=True, text=True, timeout=30
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        return None


def write_markdown(report: dict, path: Path) -> None:
    r = report["results"]
    lines = [
        f"# Dafny verification throughput ({report['date'][:10]}, {report['machine']['affinity_cpus']} cores)",
        "",
        f"{report['settings']['candidates']} candidate programs ({report['settings']['mix_text']}), "
        f"Dafny {report['machine']['dafny_debian_package']} with z3 {report['machine']['z3']}, "
        f"`/timeLimit:{report['settings']['time_limit']}` `/noCheating:1`, {WORKERS} Dafny processes at a time "
        f"in the project's sandbox; median of {report['settings']['repeats']} runs (modes take turns).",
        "",
        "| mode | Dafny processes | median wall (s) | verifications/s | speedup |",
        "|---|---|---|---|---|",
    ]
    base = r["per_candidate"]["verifications_per_s"]
    for label, res in r.items():
        lines.append(
            f"| {label} | {res['processes']} | {res['median_wall_s']} | {res['verifications_per_s']} | "
            f"{res['verifications_per_s'] / base:.2f}x |"
        )
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report["verdict_counts"].items()))
    lines += [
        "",
        f"Verdicts ({counts}) are identical in every mode and every repetition "
        "(status, counts, implementations, messages).",
        f"Load average before {report['loadavg_before']}, after {report['loadavg_after']} "
        "(the machine may be shared).",
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="number of candidates (default 40)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each mode")
    parser.add_argument("--quick", action="store_true", help="smoke run: 12 candidates, one repetition")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "dafny.json"))
    args = parser.parse_args()
    if args.quick:
        args.n, args.repeat = 12, 1

    settings = DafnySettings()
    _, z3 = check_dafny(settings)
    jobs, mix = make_jobs(args.n)
    modes = {
        "per_candidate": (settings, False),
        "batched": (settings, True),
        "batched_size8": (DafnySettings(batch_size=8), True),
    }
    load_before = os.getloadavg()
    results: dict = {}
    reference = None
    limits = SandboxLimits(
        memory_mb=settings.memory_mb, max_processes=128, max_open_files=256, max_file_mb=16, tmpfs_mb=128
    )
    walls: dict[str, list[float]] = {label: [] for label in modes}
    stats: dict[str, dict[str, int]] = {}
    with Sandbox(workers=WORKERS, limits=limits, tool_dirs=tool_dirs(settings)) as sandbox:
        # Modes take turns within each repetition, so a change in the machine's load
        # affects all of them alike.
        for rep in range(args.repeat):
            for label, (mode_settings, batch) in modes.items():
                wall, verdicts, stats[label] = run_mode(jobs, mode_settings, sandbox, batch)
                walls[label].append(wall)
                got = [v.outcome() for v in verdicts]
                if reference is None:
                    reference = got
                    statuses = [v.status for v in verdicts]
                elif got != reference:
                    diff = [(j.name, a, b) for j, a, b in zip(jobs, got, reference) if a != b]
                    raise SystemExit(f"{label}: verdicts differ from the first run: {diff[:3]}")
                print(f"repetition {rep + 1}: {label:16s} {wall:6.2f} s")
        isolation = dict(sandbox.isolation)
    for label, (mode_settings, batch) in modes.items():
        median = statistics.median(walls[label])
        results[label] = {
            "batch": batch,
            "batch_size": mode_settings.batch_size if batch else 1,
            "wall_s": [round(w, 3) for w in walls[label]],
            "median_wall_s": round(median, 2),
            "verifications_per_s": round(args.n / median, 2),
            "best_verifications_per_s": round(args.n / min(walls[label]), 2),
            "processes": stats[label].get("processes"),
            "batched_processes": stats[label].get("batched_processes"),
        }
        print(
            f"{label:16s} {results[label]['verifications_per_s']:6.2f} verifications/s "
            f"(median {median:.2f} s, {stats[label].get('processes')} Dafny processes)"
        )
    load_after = os.getloadavg()

    counts: dict[str, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    mix_text = (
        f"{mix['correct']} correct, {mix['wrong']} wrong, {mix['parse_error']} not parsing in Dafny 2.3, "
        f"{mix['resolution_error']} not resolving"
    )
    report = {
        "benchmark": "dafny verification: one Dafny process per candidate vs batched (modules per candidate)",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(dafny_debian_package=dafny_package_version(), z3=z3_version(z3)),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "settings": {
            "candidates": args.n,
            "repeats": args.repeat,
            "workers": WORKERS,
            "time_limit": settings.time_limit,
            "run_timeout_s": settings.run_timeout,
            "per_job_timeout_s": settings.per_job_timeout,
            "memory_mb": settings.memory_mb,
            "dafny_flags": [f for f in dafny_flags(settings, "<z3>", True)],
            "mix": mix,
            "mix_text": mix_text,
        },
        "verdict_counts": counts,
        "verdicts_identical_across_modes": True,
        "results": results,
        "speedup_batched_vs_per_candidate": round(
            results["batched"]["verifications_per_s"] / results["per_candidate"]["verifications_per_s"], 2
        ),
        "isolation": isolation,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, out.with_suffix(".md"))
    print(f"speedup batched vs per candidate: {report['speedup_batched_vs_per_candidate']}x -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
