"""GASP's student pass-rate estimate (paper 004, App. D: PASSRATE over N = 10 induction
samples, 3 private pairs each) through the pooled sandbox, as ``tracks.gasp.judge``
does it, against one fresh sandboxed process per check (``selfplay.sandbox.run_naive``).

20 candidate tasks (small functions of the kind a tiny teacher proposes: list sums,
vowel counts, run lengths, rotations...), each made valid and given its 5 I/O pairs by
``tracks.gasp.validity.check_proposals`` under two seeds, then 10 student programs per
task: a task-dependent number of right ones (text differs, behaviour does not) and the
rest drawn from wrong answers (echo the argument, return None, raise, answer off by
one, count characters), one program that does not parse (a format error, judged
without running) and, in two tasks, one that loops forever. Two ways to judge the same
200 programs:

pooled   ``judge.pass_counts``: every (task, program) in one ``Sandbox.run_many`` batch,
         2 warm fork-server workers, one process per program calling it on the task's
         3 private inputs (the first failing call ends it); duplicates are NOT merged
         (``dedupe`` off), so both sides run every program
naive    every (program, private pair) check in its own fresh confined interpreter
         (``run_naive``, the same isolation), two at a time (the same 2 cores)

Both use 1 s per call. Verdicts (format_ok, correct per program; k per task) must be
equal in both modes and every repetition, or the benchmark fails. Results go to
bench/results/gasp_passrate.json and .md with the load average before and after (the
machine may be shared).

    flock /tmp/selfplay-heavy.lock .venv/bin/python bench/gasp_passrate.py           # about 3 minutes
    flock /tmp/selfplay-heavy.lock .venv/bin/python bench/gasp_passrate.py --quick   # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from machine import machine_facts  # noqa: E402  (bench/machine.py)

from selfplay.evaluate.python_calls import CALLS_SHIM, ENTRY, args_source, batch_outcomes  # noqa: E402
from selfplay.evaluate.python_calls import judge as judge_calls  # noqa: E402
from selfplay.sandbox import Sandbox, run_naive  # noqa: E402
from selfplay.tracks.gasp.execution import defines_f, read_call_args  # noqa: E402
from selfplay.tracks.gasp.judge import JudgeSettings, make_task, pass_counts  # noqa: E402
from selfplay.tracks.gasp.validity import ValiditySettings, check_proposals, seeded_sandboxes  # noqa: E402

WORKERS = 2
TIMEOUT_S = 1.0
SAMPLES = 10

# (question, right code, five inputs as call arguments)
FAMILIES = [
    (
        "Sum of the list.",
        "def f(xs):\n    return sum(xs)\n",
        ["[1, 2]", "[]", "[5, -5, 3]", "[10]", "[1, 1, 1, 1]"],
    ),
    (
        "Spread of the numbers.",
        "def f(xs):\n    return max(xs) - min(xs)\n",
        ["[1, 9]", "[4]", "[3, -2, 7]", "[0, 0]", "[5, 1, 4]"],
    ),
    (
        "Vowels in the word.",
        "def f(s):\n    return sum(c in 'aeiou' for c in s)\n",
        ["'hello'", "'sky'", "'aeiou'", "'banana'", "''"],
    ),
    (
        "Words in reverse order.",
        "def f(s):\n    return ' '.join(s.split()[::-1])\n",
        ["'a b c'", "'one'", "'to be or not'", "''", "'x  y'"],
    ),
    (
        "Running totals.",
        "def f(xs):\n    out, t = [], 0\n    for x in xs:\n        t += x\n        out.append(t)\n"
        "    return out\n",
        ["[1, 2, 3]", "[]", "[5]", "[-1, 1, -1]", "[2, 2, 2, 2]"],
    ),
    (
        "Drop repeats, keep first order.",
        "def f(xs):\n    seen = []\n    for x in xs:\n        if x not in seen:\n"
        "            seen.append(x)\n    return seen\n",
        ["[1, 1, 2]", "[]", "[3, 2, 3, 1]", "['a', 'a']", "[0]"],
    ),
    (
        "Greatest common divisor.",
        "def f(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
        ["12, 18", "7, 5", "0, 4", "100, 75", "9, 9"],
    ),
    (
        "Is it a palindrome?",
        "def f(s):\n    return s == s[::-1]\n",
        ["'abba'", "'abc'", "''", "'a'", "'racecar'"],
    ),
    (
        "Second largest distinct value.",
        "def f(xs):\n    v = sorted(set(xs))\n    return v[-2] if len(v) > 1 else None\n",
        ["[1, 2, 3]", "[5, 5]", "[4, 1, 4, 2]", "[9, 8]", "[-1, -3, -2]"],
    ),
    (
        "Letter counts.",
        "def f(s):\n    d = {}\n    for c in s:\n        d[c] = d.get(c, 0) + 1\n    return d\n",
        ["'aab'", "''", "'abc'", "'zzzz'", "'hello'"],
    ),
    (
        "Flatten one level.",
        "def f(xss):\n    return [x for xs in xss for x in xs]\n",
        ["[[1], [2, 3]]", "[]", "[[], [4]]", "[[1, 2], [3], [4, 5]]", "[['a']]"],
    ),
    (
        "Sort by length, then alphabetically.",
        "def f(ws):\n    return sorted(ws, key=lambda w: (len(w), w))\n",
        ["['bb', 'a', 'ccc']", "[]", "['b', 'a']", "['xyz', 'ab', 'ba']", "['same']"],
    ),
    (
        "Inversions.",
        "def f(xs):\n    return sum(1 for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[i] > xs[j])\n",
        ["[2, 1]", "[1, 2, 3]", "[3, 2, 1]", "[]", "[1, 3, 2, 4]"],
    ),
    (
        "Digit sum.",
        "def f(n):\n    return sum(int(d) for d in str(abs(n)))\n",
        ["123", "0", "-45", "9999", "10"],
    ),
    (
        "Longest run of equal items.",
        "def f(xs):\n    best = cur = 0\n    prev = object()\n    for x in xs:\n"
        "        cur = cur + 1 if x == prev else 1\n        prev = x\n        best = max(best, cur)\n    return best\n",
        ["[1, 1, 2]", "[]", "[3, 3, 3]", "[1, 2, 1, 2]", "['a', 'b', 'b', 'b', 'a']"],
    ),
    (
        "Rotate left by k.",
        "def f(xs, k):\n    if not xs:\n        return []\n    k %= len(xs)\n    return xs[k:] + xs[:k]\n",
        ["[1, 2, 3], 1", "[], 3", "[1, 2], 5", "[4, 5, 6, 7], 2", "[9], 0"],
    ),
    (
        "Prefix maxima.",
        "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n"
        "    return out\n",
        ["[1, 3, 2]", "[]", "[5, 4]", "[-1, -2, 0]", "[2, 2, 3, 1]"],
    ),
    (
        "Pairs adding to the target.",
        "def f(xs, t):\n    return sum(1 for i in range(len(xs)) for j in range(i + 1, len(xs))"
        " if xs[i] + xs[j] == t)\n",
        ["[1, 2, 3], 4", "[], 0", "[2, 2, 2], 4", "[1, 5, 3, 3], 6", "[0, 0], 1"],
    ),
    ("Binary digits.", "def f(n):\n    return bin(n)[2:]\n", ["5", "0", "8", "255", "1"]),
    (
        "Title case each word.",
        "def f(s):\n    return ' '.join(w[:1].upper() + w[1:] for w in s.split(' '))\n",
        ["'hello world'", "''", "'a'", "'mIxed case'", "'x y z'"],
    ),
]

WRONG = [
    "def f(*args):\n    return args[0] if args else None\n",
    "def f(*args):\n    return None\n",
    "def f(*args):\n    raise ValueError('no idea')\n",
    "def f(*args):\n    return sum(len(str(a)) for a in args)\n",
    "def f(*args):\n    return [args]\n",
]
UNPARSABLE = "def f(x):\n    return (x\n"
LOOPING = "def f(*args):\n    while True:\n        pass\n"
LOOPING_TASKS = (3, 14)


def off_by_one(code: str) -> str:
    """The right function, with an integer answer one too high (others unchanged)."""
    return code.replace("def f(", "def _right(", 1) + (
        "\n\ndef f(*args):\n    value = _right(*args)\n    return value + 1 if type(value) is int else value\n"
    )


def samples_for(number: int, code: str) -> list[str]:
    """10 programs for task ``number``: ``number % 11`` right ones, the rest wrong."""
    right = number % (SAMPLES + 1)
    out = [f"# student sample {i}\n{code}" for i in range(right)]
    wrong = ([LOOPING] if number in LOOPING_TASKS else []) + [off_by_one(code), UNPARSABLE] + WRONG
    i = 0
    while len(out) < SAMPLES:
        out.append(f"# student sample {len(out)}\n{wrong[i % len(wrong)]}")
        i += 1
    return out


def make_tasks() -> tuple[list[dict], float]:
    settings = ValiditySettings(timeout_s=TIMEOUT_S)
    # FAMILIES write each input as between the parentheses of f(...); a proposal holds its tuple source
    proposals = [{"question": q, "code": c, "inputs": [f"({text},)" for text in i]} for q, c, i in FAMILIES]
    with seeded_sandboxes(settings, workers=WORKERS) as pools:
        start = time.perf_counter()
        verdicts = check_proposals(proposals, pools, settings)
        seconds = time.perf_counter() - start
    bad = [(p["question"], v.reason) for p, v in zip(proposals, verdicts) if not v.valid]
    if bad:
        raise SystemExit(f"benchmark proposals must be valid: {bad}")
    return [
        make_task(p, v, f"bench-{n}", "lemma", "f", "bench", 0)
        for n, (p, v) in enumerate(zip(proposals, verdicts))
    ], seconds


def pooled(batch, sandbox) -> list[list[tuple[bool, bool]]]:
    settings = JudgeSettings(timeout_s=TIMEOUT_S, dedupe=False)
    return [
        [(v["format_ok"], v["correct"]) for v in verdicts]
        for _, _, verdicts in pass_counts(batch, sandbox, settings)
    ]


def naive_check(code: str, args: tuple, expected) -> bool:
    """One (program, private pair) check in a fresh confined interpreter."""
    literal = {"entry": "f", "calls": [args_source(args)]}
    result = run_naive(code + "\n\n" + CALLS_SHIM, ENTRY, literal, TIMEOUT_S)
    return judge_calls(batch_outcomes(result, 1), [{"expected": expected}])[0]


def naive(batch) -> list[list[tuple[bool, bool]]]:
    checks, shape = [], []
    for task, codes in batch:
        pairs = [
            (read_call_args(task["pairs"][i]["input"], 10_000), task["pairs"][i]["output"])
            for i in task["private"]
        ]
        row = []
        for code in codes:
            if defines_f(code):  # a format error is decided in the host, as judge.py decides it
                row.append(None)
                continue
            row.append(list(range(len(checks), len(checks) + len(pairs))))
            checks += [(code, args, expected) for args, expected in pairs]
        shape.append(row)
    with ThreadPoolExecutor(WORKERS) as pool:
        passed = list(pool.map(lambda check: naive_check(*check), checks))
    return [
        [(False, False) if places is None else (True, all(passed[i] for i in places)) for places in row]
        for row in shape
    ]


def write_markdown(report: dict, path: Path) -> None:
    r = report["results"]
    s = report["settings"]
    lines = [
        f"# GASP pass-rate estimation: pooled sandbox vs one process per check ({report['date'][:10]}, "
        f"{report['machine']['affinity_cpus']} cores)",
        "",
        f"{s['tasks']} candidate tasks x {s['samples']} student programs x {s['private_pairs']} private pairs "
        f"({s['checks']} checks of {s['programs_run']} programs that parse; {s['unparsable']} format errors judged "
        f"in the host), {s['timeout_s']} s per call, {s['workers']} workers or threads, median of {s['repeats']} "
        "runs (modes take turns).",
        "",
        "| mode | what runs | median wall (s) | checks/s | speedup |",
        "|---|---|---|---|---|",
        f"| pooled (judge.pass_counts) | one run_many, one process per program | {r['pooled']['median_wall_s']} | "
        f"{r['pooled']['checks_per_s']} | {r['speedup']}x |",
        f"| naive (run_naive) | a fresh interpreter per check | {r['naive']['median_wall_s']} | "
        f"{r['naive']['checks_per_s']} | 1.00x |",
        "",
        f"Pass counts k per task (N = {s['samples']}): {report['k_per_task']}; identical verdicts (format_ok, correct "
        f"for every program) in both modes and every repetition. {s['looping']} program(s) loop forever: pooled "
        "stops a program at its first failing call, naive runs all three of its checks to their timeout.",
        f"Making the {s['tasks']} tasks (validity under seeds {report['validity']['seeds']}, 2 runs of 10 calls "
        f"each per proposal): {report['validity']['seconds']} s.",
        f"Load average before {report['loadavg_before']}, after {report['loadavg_after']} (the machine may be shared).",
    ]
    if report["note"]:
        lines.append(f"Note: {report['note']}.")
    lines.append("")
    path.write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each mode")
    parser.add_argument("--quick", action="store_true", help="smoke run: one repetition of 5 tasks")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "gasp_passrate.json"))
    args = parser.parse_args()
    tasks, validity_s = make_tasks()
    if args.quick:
        args.repeat, tasks = 1, tasks[:5]
    batch = [(task, samples_for(n, task["code"])) for n, task in enumerate(tasks)]
    programs = sum(1 for _, codes in batch for code in codes if not defines_f(code))
    checks = programs * 3
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {"pooled": [], "naive": []}
    reference = None
    with Sandbox(workers=WORKERS) as sandbox:
        pooled(batch[:1], sandbox)  # warm-up
        for rep in range(args.repeat):
            for mode in ("pooled", "naive"):
                start = time.perf_counter()
                got = pooled(batch, sandbox) if mode == "pooled" else naive(batch)
                walls[mode].append(time.perf_counter() - start)
                reference = reference or got
                if got != reference:
                    raise SystemExit(f"repetition {rep + 1}, {mode}: verdicts differ from the first run's")
                print(f"repetition {rep + 1}: {mode:7s} {walls[mode][-1]:6.2f} s")
        isolation = dict(sandbox.isolation)
    load_after = os.getloadavg()
    results = {}
    for mode, times in walls.items():
        median = statistics.median(times)
        results[mode] = {
            "wall_s": [round(w, 3) for w in times],
            "median_wall_s": round(median, 2),
            "checks_per_s": round(checks / median, 1),
        }
    results["speedup"] = round(results["naive"]["median_wall_s"] / results["pooled"]["median_wall_s"], 1)
    report = {
        "benchmark": "GASP PASSRATE: judge.pass_counts through the pooled sandbox vs run_naive per check",
        "command": "flock /tmp/selfplay-heavy.lock .venv/bin/python bench/gasp_passrate.py"
        + (" --quick" if args.quick else ""),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "settings": {
            "tasks": len(tasks),
            "samples": SAMPLES,
            "private_pairs": 3,
            "checks": checks,
            "programs_run": programs,
            "unparsable": len(tasks) * SAMPLES - programs,
            "looping": sum(code.endswith(LOOPING) for _, codes in batch for code in codes),
            "timeout_s": TIMEOUT_S,
            "workers": WORKERS,
            "repeats": args.repeat,
            "dedupe": False,
        },
        "k_per_task": [sum(correct for _, correct in row) for row in reference],
        "verdicts_identical_across_modes": True,
        "validity": {"seeds": list(ValiditySettings().determinism_seeds), "seconds": round(validity_s, 2)},
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
    print(
        f"pooled {results['pooled']['median_wall_s']} s, naive {results['naive']['median_wall_s']} s: "
        f"{results['speedup']}x"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, out.with_suffix(".md"))
    print(f"wrote {out} and {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
