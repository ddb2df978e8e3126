"""Sandbox throughput: fork-server ``Sandbox`` versus ``run_naive`` at equal isolation.

What is measured (both strategies run two executions at a time, matching the
two workers of ``Sandbox(workers=2)``):

(a) verified P-vs-Q checks per second.  One check runs program P and program Q
    on the same input and compares ``ExecResult.behaviour()``.  The pairs are
    small, realistic self-play programs (equivalent rewrites and subtly buggy
    ones, a few raising exceptions); every check's verdict must agree between
    the two strategies, or the benchmark fails.
(b) the floor: an empty sandboxed run (a function returning a constant).

Both use the same namespaces, minimal filesystem view, unprivileged uid,
rlimits, private work directory, scrubbed environment, harness and value
encoding; only the process-start strategy differs (warm pre-importing fork
server vs. a new interpreter per execution, which builds the view every time).  Results go to bench/results/sandbox.json and a table is printed.
The machine may be shared: the load average is recorded before and after, and
a note is added when it is high.

    .venv/bin/python bench/sandbox_bench.py            # full run (about a minute)
    .venv/bin/python bench/sandbox_bench.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# SELFPLAY_BENCH_SRC: another source tree to measure (bench/template_bench.py uses it for the baseline).
sys.path.insert(0, os.environ.get("SELFPLAY_BENCH_SRC") or str(ROOT / "src"))

from selfplay.sandbox import Sandbox, SandboxLimits, run_naive  # noqa: E402

PARALLEL = 2
TIMEOUT = 5.0

# (name, P, Q, entry, inputs): Q is sometimes an equivalent rewrite, sometimes subtly wrong.
PAIRS = [
    (
        "sum_list",
        "def solve(xs):\n    return sum(xs)\n",
        "def solve(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
        "solve",
        ["{'xs': [1, 2, 3]}", "{'xs': []}", "{'xs': [1.5, -2]}", repr({"xs": list(range(50))})],
    ),
    (
        "fib",
        "def fib(n):\n    if n == 0 or n == 1:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
        "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        "fib",
        ["{'n': 10}", "{'n': 0}", "{'n': -1}", "{'n': 18}"],
    ),
    (
        "palindrome",
        "def is_pal(s):\n    return s == s[::-1]\n",
        "def is_pal(s):\n    i, j = 0, len(s) - 1\n    while i < j:\n        if s[i] != s[j]:\n            return False\n        i += 1\n        j -= 1\n    return True\n",
        "is_pal",
        ["{'s': 'racecar'}", "{'s': ''}", "{'s': 'ab'}", "{'s': 'Aa'}"],
    ),
    (
        "sort",
        "def sort(xs):\n    return sorted(xs)\n",
        "def sort(xs):\n    xs = list(xs)\n    for i in range(len(xs)):\n        for j in range(len(xs) - 1 - i):\n            if xs[j] > xs[j + 1]:\n                xs[j], xs[j + 1] = xs[j + 1], xs[j]\n    return xs\n",
        "sort",
        ["{'xs': [3, 1, 2]}", "{'xs': (5, 4)}", "{'xs': [1, 'a']}", "{'xs': []}"],
    ),
    (
        "gcd",
        "import math\n\ndef gcd(a, b):\n    return math.gcd(a, b)\n",
        "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
        "gcd",
        ["{'a': 12, 'b': 18}", "{'a': 0, 'b': 5}", "{'a': -4, 'b': 6}", "{'a': 7, 'b': 0}"],
    ),
    (
        "vowels",
        "def count(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n",
        "def count(s):\n    return len([c for c in s if c in 'aeiou'])\n",
        "count",
        ["{'s': 'hello'}", "{'s': 'HELLO'}", "{'s': ''}", "{'s': 'queue'}"],
    ),
    (
        "primes",
        "def primes(n):\n    sieve = [True] * (n + 1)\n    out = []\n    for i in range(2, n + 1):\n        if sieve[i]:\n            out.append(i)\n            for j in range(i * i, n + 1, i):\n                sieve[j] = False\n    return out\n",
        "def primes(n):\n    return [k for k in range(2, n + 1) if all(k % d for d in range(2, int(k ** 0.5) + 1))]\n",
        "primes",
        ["{'n': 30}", "{'n': 1}", "{'n': -5}", "{'n': 200}"],
    ),
    (
        "word_freq",
        "from collections import Counter\n\ndef freq(text):\n    return dict(Counter(text.split()))\n",
        "def freq(text):\n    out = {}\n    for w in text.split(' '):\n        out[w] = out.get(w, 0) + 1\n    return out\n",
        "freq",
        ["{'text': 'a b a'}", "{'text': 'a  b'}", "{'text': ''}", "{'text': 'x y z x'}"],
    ),
    (
        "mean",
        "import statistics\n\ndef mean(xs):\n    return statistics.mean(xs)\n",
        "def mean(xs):\n    return sum(xs) / len(xs)\n",
        "mean",
        ["{'xs': [1, 2, 3, 4]}", "{'xs': [1]}", "{'xs': []}", "{'xs': [0.1, 0.2]}"],
    ),
    (
        "dedupe",
        "def dedupe(xs):\n    seen = set()\n    out = []\n    for x in xs:\n        if x not in seen:\n            seen.add(x)\n            out.append(x)\n    return out\n",
        "def dedupe(xs):\n    return list(set(xs))\n",
        "dedupe",
        ["{'xs': [3, 1, 3, 2]}", "{'xs': []}", "{'xs': ['b', 'a', 'b']}", "{'xs': [1, 1, 1]}"],
    ),
]

TRIVIAL = ("def f():\n    return 0\n", "f", "{}", TIMEOUT)


def checks_list(repeat: int) -> list[tuple[str, str, str, str]]:
    """(P, Q, entry, input) for every pair and input, repeated."""
    base = [(p, q, entry, literal) for _, p, q, entry, inputs in PAIRS for literal in inputs]
    return base * repeat


def as_jobs(checks):
    jobs = []
    for p, q, entry, literal in checks:
        jobs.append((p, entry, literal, TIMEOUT))
        jobs.append((q, entry, literal, TIMEOUT))
    return jobs


def verdicts(results):
    return [results[i].behaviour() == results[i + 1].behaviour() for i in range(0, len(results), 2)]


def time_fork(sb: Sandbox, jobs):
    start = time.perf_counter()
    results = sb.run_many(jobs)
    return time.perf_counter() - start, results


def time_naive(jobs, limits):
    start = time.perf_counter()
    with ThreadPoolExecutor(PARALLEL) as pool:
        results = list(pool.map(lambda job: run_naive(*job, limits), jobs))
    return time.perf_counter() - start, results


def latency_ms(fn, n: int) -> float:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        r = fn()
        samples.append(time.perf_counter() - start)
        assert r.status == "ok", r
    return statistics.median(samples) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations (smoke test)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "sandbox.json"))
    args = parser.parse_args()

    fork_repeat, naive_repeat = (1, 1) if args.quick else (10, 2)
    floor_fork, floor_naive = (40, 10) if args.quick else (600, 80)
    lat_n = 5 if args.quick else 25
    limits = SandboxLimits()
    load_before = os.getloadavg()

    start = time.perf_counter()
    sb = Sandbox(workers=PARALLEL, limits=limits)
    startup_s = time.perf_counter() - start
    try:
        sb.run_many([TRIVIAL] * 8)  # warm-up
        run_naive(*TRIVIAL, limits)

        # (a) P-vs-Q checks
        fork_checks = checks_list(fork_repeat)
        naive_checks = checks_list(naive_repeat)
        fork_wall, fork_results = time_fork(sb, as_jobs(fork_checks))
        naive_wall, naive_results = time_naive(as_jobs(naive_checks), limits)
        fork_verdicts = verdicts(fork_results)
        naive_verdicts = verdicts(naive_results)
        per_round = len(checks_list(1))
        agree = fork_verdicts[:per_round] == naive_verdicts[:per_round]
        behaviours_agree = [r.behaviour() for r in fork_results[: 2 * per_round]] == [
            r.behaviour() for r in naive_results[: 2 * per_round]
        ]
        if not (agree and behaviours_agree):
            print("ERROR: fork server and naive runner disagree", file=sys.stderr)
            return 1

        # (b) floor
        floor_fork_wall, floor_fork_results = time_fork(sb, [TRIVIAL] * floor_fork)
        floor_naive_wall, floor_naive_results = time_naive([TRIVIAL] * floor_naive, limits)
        assert all(r.status == "ok" for r in floor_fork_results + floor_naive_results)

        # single-execution latency (one at a time)
        lat_fork = latency_ms(lambda: sb.run(*TRIVIAL), lat_n)
        lat_naive = latency_ms(lambda: run_naive(*TRIVIAL, limits), max(lat_n // 3, 3))
        isolation = sb.isolation
    finally:
        sb.close()
    load_after = os.getloadavg()

    ncpu = os.cpu_count() or 1
    fork_cps = len(fork_checks) / fork_wall
    naive_cps = len(naive_checks) / naive_wall
    floor_fork_rate = floor_fork / floor_fork_wall
    floor_naive_rate = floor_naive / floor_naive_wall
    report = {
        "benchmark": "sandbox fork server vs naive interpreter-per-execution, equal isolation",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "nproc": ncpu,
            "affinity_cpus": len(os.sched_getaffinity(0)),
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "kernel": platform.release(),
            "platform": platform.platform(),
        },
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "parallel": PARALLEL,
        "sandbox_startup_s": round(startup_s, 3),
        "fs_view": {
            "kind": isolation.get("fs_view"),
            "read_only_paths": len((isolation.get("fs_exposed") or {}).get("read_only") or []),
        },
        "checks": {
            "pairs": len(PAIRS),
            "distinct_checks": per_round,
            "divergent_checks": per_round - sum(fork_verdicts[:per_round]),
            "verdicts_agree_between_strategies": bool(agree and behaviours_agree),
            "forkserver": {
                "checks": len(fork_checks),
                "wall_s": round(fork_wall, 3),
                "checks_per_s": round(fork_cps, 2),
                "ms_per_execution": round(1000 * fork_wall / (2 * len(fork_checks)), 2),
                "median_child_ms": round(1000 * statistics.median(r.seconds for r in fork_results), 2),
            },
            "naive": {
                "checks": len(naive_checks),
                "wall_s": round(naive_wall, 3),
                "checks_per_s": round(naive_cps, 2),
                "ms_per_execution": round(1000 * naive_wall / (2 * len(naive_checks)), 2),
                "median_child_ms": round(1000 * statistics.median(r.seconds for r in naive_results), 2),
            },
            "speedup": round(fork_cps / naive_cps, 2),
        },
        "floor": {
            "forkserver": {
                "runs": floor_fork,
                "runs_per_s": round(floor_fork_rate, 2),
                "ms_per_execution": round(1000 * floor_fork_wall / floor_fork, 2),
                "latency_ms_one_at_a_time": round(lat_fork, 2),
            },
            "naive": {
                "runs": floor_naive,
                "runs_per_s": round(floor_naive_rate, 2),
                "ms_per_execution": round(1000 * floor_naive_wall / floor_naive, 2),
                "latency_ms_one_at_a_time": round(lat_naive, 2),
            },
            "speedup": round(floor_fork_rate / floor_naive_rate, 2),
        },
        "isolation": isolation,
        "note": None,
    }
    if max(load_before[0], load_after[0]) > 0.5 * ncpu:
        report["note"] = (
            f"machine shared with other work: load average {load_before[0]:.2f} before, "
            f"{load_after[0]:.2f} after, on {ncpu} CPUs; absolute rates are pessimistic"
        )
    if args.quick:
        report["note"] = ((report["note"] or "") + " (--quick run: few iterations)").strip()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")

    rows = [
        ("P-vs-Q checks/s", fork_cps, naive_cps),
        (
            "  ms per execution",
            report["checks"]["forkserver"]["ms_per_execution"],
            report["checks"]["naive"]["ms_per_execution"],
        ),
        ("empty runs/s (floor)", floor_fork_rate, floor_naive_rate),
        (
            "  ms per execution",
            report["floor"]["forkserver"]["ms_per_execution"],
            report["floor"]["naive"]["ms_per_execution"],
        ),
        ("latency one at a time (ms)", lat_fork, lat_naive),
    ]
    print(f"{'metric':<28} {'forkserver':>12} {'naive':>12} {'ratio':>8}")
    for name, a, b in rows:
        ratio = a / b if "/s" in name else b / a
        print(f"{name:<28} {a:>12.2f} {b:>12.2f} {ratio:>7.1f}x")
    print(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f} on {ncpu} CPUs; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
