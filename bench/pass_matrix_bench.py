"""Pass-matrix throughput (EvolveCoder, paper 002 Sec. 2.3): each solution imported once with
a process forked per test, versus one fresh sandboxed execution per (solution, test).

One problem (edit distance between two strings) with 16 candidate solutions of the
kind a solution pool holds: 8 right ones in different styles (bottom-up tables, one
row, memoised recursion with ``lru_cache``, ``functools.cache`` or a dict, typed
helpers importing ``typing``/``collections``/``itertools``), 4 wrong ones, 3 that raise
on some inputs and 1 right but exponential one that runs out of time on the three
long inputs; and 20 assert tests (15 ``==``, a ``not``, an ``is not None``, an
``abs(..) < eps`` and two general shapes judged in the sandbox), their expected values
made by a reference implementation here.  ``pass_matrix`` builds the 16 x 20 matrix in
both modes of ``tracks.evolve.pass_matrix``:

load_once       each solution imported once; every test's call forked from it
                (``Sandbox.run_each``)
one_at_a_time   every (solution, test) its own fresh sandboxed execution (``Sandbox.run``)

Both use the same sandbox (two workers: the 2 cores of a default machine) and a 1 s
limit per test; the tests' preparation and the general checks run in either mode's
way too.  The matrices (cells, reasons, malformed flags) must be identical in every
mode and repetition, or the benchmark fails.  A second corpus leaves the slow
solution out, which shows the cost per cell without timeouts.  Results go to
bench/results/pass_matrix.json and pass_matrix.md; the machine may be shared, so
the load average is recorded before and after.

    .venv/bin/python bench/pass_matrix_bench.py            # full run (about a minute)
    .venv/bin/python bench/pass_matrix_bench.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# SELFPLAY_BENCH_SRC: another source tree to measure (bench/template_bench.py uses it for the baseline).
sys.path.insert(0, os.environ.get("SELFPLAY_BENCH_SRC") or str(ROOT / "src"))

from machine import machine_facts  # noqa: E402  (bench/machine.py)

from selfplay.sandbox import Sandbox, SandboxLimits  # noqa: E402
from selfplay.tracks.evolve.pass_matrix import LOAD_ONCE, ONE_AT_A_TIME, pass_matrix  # noqa: E402

WORKERS = 2
TIME_LIMIT = 1.0
MODES = (LOAD_ONCE, ONE_AT_A_TIME)

RIGHT = [
    """def edit_distance(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        table[i][0] = i
    for j in range(len(b) + 1):
        table[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
    return table[len(a)][len(b)]
""",
    """def edit_distance(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]
""",
    """from functools import lru_cache


def edit_distance(a, b):
    @lru_cache(maxsize=None)
    def go(i, j):
        if i == len(a):
            return len(b) - j
        if j == len(b):
            return len(a) - i
        if a[i] == b[j]:
            return go(i + 1, j + 1)
        return 1 + min(go(i + 1, j), go(i, j + 1), go(i + 1, j + 1))

    return go(0, 0)
""",
    """import functools


def edit_distance(a, b):
    @functools.cache
    def rest(i, j):
        if i == 0 or j == 0:
            return i + j
        same = a[i - 1] == b[j - 1]
        return min(rest(i - 1, j) + 1, rest(i, j - 1) + 1, rest(i - 1, j - 1) + (0 if same else 1))

    return rest(len(a), len(b))
""",
    """def edit_distance(a, b):
    memo = {}

    def solve(i, j):
        key = (i, j)
        if key not in memo:
            if not i or not j:
                memo[key] = max(i, j)
            else:
                memo[key] = min(solve(i - 1, j) + 1, solve(i, j - 1) + 1,
                                solve(i - 1, j - 1) + int(a[i - 1] != b[j - 1]))
        return memo[key]

    return solve(len(a), len(b))
""",
    """from typing import List
from collections import defaultdict


def _row(width: int) -> List[int]:
    return list(range(width + 1))


def edit_distance(a: str, b: str) -> int:
    best = defaultdict(int)
    row = _row(len(b))
    for i in range(1, len(a) + 1):
        new = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            new[j] = min(row[j] + 1, new[j - 1] + 1, row[j - 1] + (a[i - 1] != b[j - 1]))
        row = new
        best[i] = row[-1]
    return row[-1]
""",
    """import itertools
import collections


def edit_distance(a, b):
    n, m = len(a), len(b)
    dist = collections.defaultdict(int)
    for i, j in itertools.product(range(n + 1), range(m + 1)):
        if i == 0 or j == 0:
            dist[i, j] = i + j
            continue
        dist[i, j] = min(dist[i - 1, j] + 1, dist[i, j - 1] + 1, dist[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    return dist[n, m]
""",
    """class _Aligner:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def distance(self):
        a, b = self.a, self.b
        row = list(range(len(b) + 1))
        for i in range(1, len(a) + 1):
            diagonal, row[0] = row[0], i
            for j in range(1, len(b) + 1):
                above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1]))
                diagonal = above
        return row[len(b)]


def edit_distance(a, b):
    return _Aligner(a, b).distance()
""",
]


def one_row(
    cost: str = "(a[i - 1] != b[j - 1])", first: str = "list(range(len(b) + 1))", before: str = ""
) -> str:
    """A one-row table solution; ``cost`` (of a substitution), ``first`` (the first row) and
    ``before`` (lines run first) make the wrong and raising variants."""
    return f"""def edit_distance(a, b):
{before}    row = {first}
    for i in range(1, len(a) + 1):
        new = [i]
        for j in range(1, len(b) + 1):
            new.append(min(row[j] + 1, new[j - 1] + 1, row[j - 1] + {cost}))
        row = new
    return row[-1]
"""


WRONG = [
    one_row(cost="(0 if a[i - 1] == b[j - 1] else 2)"),  # a substitution costs two (insert plus delete)
    one_row(first="[j + 1 if j else 0 for j in range(len(b) + 1)]"),  # the first row starts at one
    # position-by-position mismatches plus the length difference
    """def edit_distance(a, b):
    return abs(len(a) - len(b)) + sum(x != y for x, y in zip(a, b))
""",
    # insertions and deletions only, through the longest common subsequence
    """def edit_distance(a, b):
    lcs = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            lcs[i + 1][j + 1] = lcs[i][j] + 1 if a[i] == b[j] else max(lcs[i][j + 1], lcs[i + 1][j])
    return len(a) + len(b) - 2 * lcs[len(a)][len(b)]
""",
]

RAISING = [
    # looks at the first characters before checking for empty strings
    one_row(before="    if a[0] == b[0] and len(a) == len(b) == 1:\n        return 0\n"),
    # refuses long inputs
    one_row(before="    if len(a) + len(b) > 12:\n        raise ValueError('input too long')\n"),
    # a misspelt name on the path for unequal lengths
    """def edit_distance(a, b):
    if len(a) != len(b):
        return lenght(a) - len(b)
    return sum(x != y for x, y in zip(a, b))
""",
]

SLOW = """def edit_distance(a, b):
    if not a or not b:
        return len(a) + len(b)
    cost = 0 if a[-1] == b[-1] else 1
    return min(edit_distance(a[:-1], b) + 1, edit_distance(a, b[:-1]) + 1,
               edit_distance(a[:-1], b[:-1]) + cost)
"""


def reference(a: str, b: str) -> int:
    """The right answer, from the one-row solution (our own code, run here)."""
    scope: dict = {}
    exec(one_row(), scope)
    return scope["edit_distance"](a, b)


def make_tests() -> list[str]:
    """20 asserts: fixed classics, random short pairs, three long pairs, five other shapes."""
    draw = random.Random(2)
    pairs = [
        ("kitten", "sitting"),
        ("flaw", "lawn"),
        ("", "abc"),
        ("abc", ""),
        ("intention", "execution"),
        ("a", "a"),
        ("ab", "ba"),
    ]
    pairs += [
        (
            "".join(draw.choice("abc") for _ in range(draw.randint(1, 6))),
            "".join(draw.choice("abc") for _ in range(draw.randint(1, 6))),
        )
        for _ in range(5)
    ]
    pairs += [
        (
            "".join(draw.choice("abcdefgh") for _ in range(12)),
            "".join(draw.choice("abcdefgh") for _ in range(12)),
        )
        for _ in range(3)
    ]
    tests = [f"assert edit_distance({a!r}, {b!r}) == {reference(a, b)}" for a, b in pairs]
    tests += [
        "assert not edit_distance('same', 'same')",
        "assert edit_distance('abc', 'abd') is not None",
        "assert abs(edit_distance('sunday', 'saturday') - 3) < 1e-9",
        f"assert sorted([edit_distance('abc', 'cab'), 0]) == [0, {reference('abc', 'cab')}]",
        "assert edit_distance('book', 'back') in (2,)",
    ]
    return tests


def run_mode(solutions: list[str], tests: list[str], sandbox: Sandbox, mode: str):
    start = time.perf_counter()
    matrix = pass_matrix(solutions, tests, None, sandbox, TIME_LIMIT, mode=mode)
    return time.perf_counter() - start, matrix


def outcome(matrix) -> tuple:
    return matrix.passed, matrix.reasons, matrix.malformed, matrix.kinds, matrix.entry


def write_markdown(report: dict, path: Path) -> None:
    lines = [
        f"# Pass-matrix throughput ({report['date'][:10]}, {report['machine']['affinity_cpus']} cores)",
        "",
        f"One problem (edit distance), {report['settings']['tests']} assert tests, "
        f"{report['settings']['time_limit_s']:g} s per test, {WORKERS} sandbox workers; median of "
        f"{report['settings']['repeats']} runs (modes take turns). Each cell of the matrix is one solution "
        "judged on one test; the time includes preparing the tests and the general checks.",
        "",
        "| corpus | mode | cells | median wall (s) | cells/s | speedup |",
        "|---|---|---|---|---|---|",
    ]
    for corpus, res in report["results"].items():
        base = res[ONE_AT_A_TIME]["cells_per_s"]
        for mode in MODES:
            r = res[mode]
            lines.append(
                f"| {corpus} | {mode} | {r['cells']} | {r['median_wall_s']} | {r['cells_per_s']} | "
                f"{r['cells_per_s'] / base:.2f}x |"
            )
    lines += [
        "",
        f"Cells passed per corpus: {report['passed_cells']}; the slow solution times out on "
        f"{report['slow_timeouts']} tests. Matrices (cells, reasons, malformed flags) are identical in every "
        "mode and every repetition.",
        f"Load average before {report['loadavg_before']}, after {report['loadavg_after']} "
        "(the machine may be shared).",
    ]
    if report["note"]:
        lines.append(f"Note: {report['note']}.")
    lines.append("")
    path.write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each mode")
    parser.add_argument("--quick", action="store_true", help="smoke run: one repetition")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "pass_matrix.json"))
    args = parser.parse_args()
    if args.quick:
        args.repeat = 1

    tests = make_tests()
    corpora = {
        "all 16 solutions": RIGHT + WRONG + RAISING + [SLOW],
        "without the slow one": RIGHT + WRONG + RAISING,
    }
    load_before = os.getloadavg()
    walls = {corpus: {mode: [] for mode in MODES} for corpus in corpora}
    reference_outcome: dict[str, tuple] = {}
    with Sandbox(workers=WORKERS, limits=SandboxLimits()) as sandbox:
        run_mode(RIGHT[:2], tests[:2], sandbox, LOAD_ONCE)  # warm-up
        for rep in range(args.repeat):
            for corpus, solutions in corpora.items():
                for mode in MODES:
                    wall, matrix = run_mode(solutions, tests, sandbox, mode)
                    walls[corpus][mode].append(wall)
                    got = outcome(matrix)
                    if reference_outcome.setdefault(corpus, got) != got:
                        raise SystemExit(f"{corpus}, {mode}: the matrix differs from the first run's")
                    print(f"repetition {rep + 1}: {corpus:22s} {mode:14s} {wall:6.2f} s")
        isolation = dict(sandbox.isolation)
    slow_reasons = reference_outcome["all 16 solutions"][1][-1]
    load_after = os.getloadavg()

    results = {}
    for corpus, solutions in corpora.items():
        cells = len(solutions) * len(tests)
        results[corpus] = {}
        for mode in MODES:
            median = statistics.median(walls[corpus][mode])
            results[corpus][mode] = {
                "cells": cells,
                "wall_s": [round(w, 3) for w in walls[corpus][mode]],
                "median_wall_s": round(median, 2),
                "cells_per_s": round(cells / median, 1),
                "best_cells_per_s": round(cells / min(walls[corpus][mode]), 1),
            }
        results[corpus]["speedup"] = round(
            results[corpus][LOAD_ONCE]["cells_per_s"] / results[corpus][ONE_AT_A_TIME]["cells_per_s"], 2
        )
        print(
            f"{corpus:22s} load_once {results[corpus][LOAD_ONCE]['cells_per_s']:7.1f} cells/s, "
            f"one_at_a_time {results[corpus][ONE_AT_A_TIME]['cells_per_s']:7.1f} cells/s "
            f"({results[corpus]['speedup']}x)"
        )
    report = {
        "benchmark": "EvolveCoder pass matrix: load once and fork per test vs one sandboxed execution per cell",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "settings": {
            "tests": len(tests),
            "time_limit_s": TIME_LIMIT,
            "workers": WORKERS,
            "repeats": args.repeat,
            "solutions": {"right": len(RIGHT), "wrong": len(WRONG), "raising": len(RAISING), "slow": 1},
        },
        "passed_cells": {corpus: sum(map(sum, out[0])) for corpus, out in reference_outcome.items()},
        "slow_timeouts": sum(1 for why in slow_reasons if why and why.startswith("timeout")),
        "matrices_identical_across_modes": True,
        "results": results,
        "isolation": isolation,
        "note": None,
    }
    ncpu = os.cpu_count() or 1
    if max(load_before[0], load_after[0]) > 0.5 * ncpu:
        report["note"] = (
            f"machine shared with other work: load average {load_before[0]:.2f} before, "
            f"{load_after[0]:.2f} after, on {ncpu} CPUs; absolute rates are pessimistic"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, out.with_suffix(".md"))
    print(f"wrote {out} and {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
