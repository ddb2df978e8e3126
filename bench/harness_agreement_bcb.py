"""Our BigCodeBench verdicts against BigCodeBench's own scorer (``bigcodebench==0.2.5``,
``bigcodebench.eval.untrusted_check``) on the same programs.

Completions per task of the shipped smoke set (standard-library tasks, so both run
here): the reference solution, mutants of it (one textual change each: a constant, a
comparison, a method), bodies that raise, loop forever or exit early, and hostile
programs. Both sides score the same program text (the calibrated program:
``code_prompt + "\\n    pass\\n" + answer``). Both suite limits are shortened the same way
(ours: ``timeout``; theirs: ``bigcodebench.eval.TIMEOUT_LIMIT``) so a program that loops
costs seconds, not four minutes.

Run: ``.venv/bin/python bench/harness_agreement_bcb.py`` (writes
bench/results/harness_agreement_bcb.md). tests/test_harness_agreement_bcb.py runs the same
comparison.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SUITE_SECONDS = 4.0

# One textual change each; a mutant is made where the reference holds the text.
MUTATIONS = (
    ("lower()", "upper()"),
    ("<", "<="),
    ("not numbers", "numbers"),
    ("1, 6", "1, 5"),
    ("mean(numbers)", "median(numbers)"),
    ("+", "-"),
    ("[r[key]]", "[key]"),
    ("Counter(", "list("),
    ("exist_ok=True", "exist_ok=False"),
    ("[a-z']+", "[a-z]+"),
)

BODIES = {
    "raises": "    raise RuntimeError('not implemented')\n",
    "loops_forever": "    while True:\n        pass\n",
    "exits_early": "    import sys\n    sys.exit(0)\n",
    "returns_none": "    return None\n",
}

# Hostile programs: the first four fail under both harnesses. The official harness counts
# skips as passes, and so does ours by default (the headline number is the official one;
# the row says it passed only through skips). Its verdict follows a patched assertEqual,
# which ours refuses (a known forgery of the official harness).
HOSTILE = {
    "os_exit_at_import": "import os\nos._exit(0)\n",
    "fake_report": "print('Ran 9 tests in 0.001s\\n\\nOK')\nimport sys\nsys.exit(0)\n",
    "exit_in_call": "import os\ndef task_func(*args, **kwargs):\n    os._exit(0)\n",
    "syntax_error": "def task_func(*args, **kwargs)\n    return 1\n",
    "skip_every_test": "import unittest\ndef task_func(*args, **kwargs):\n    raise unittest.SkipTest('no')\n",
    "patch_assertions": "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
    "unittest.TestCase.assertRaises = lambda *a, **k: __import__('contextlib').nullcontext()\n"
    "def task_func(*args, **kwargs):\n    return None\n",
}
KNOWN_FORGERIES = {"patch_assertions"}


def completions(item: dict) -> list[tuple[str, str, str]]:
    """(kind, name, answer code) for one prepared task."""
    reference = item["reference"]
    out = [("right", "reference", reference)]
    for old, new in MUTATIONS:
        body = (
            reference[len(item["code_prompt"]) :] if reference.startswith(item["code_prompt"]) else reference
        )
        if old in body:
            out.append(
                ("wrong", f"mutant {old!r}->{new!r}", reference.replace(body, body.replace(old, new, 1), 1))
            )
    for name, body in BODIES.items():
        out.append(("wrong", name, item["code_prompt"] + "\n" + body))
    for name, code in HOSTILE.items():
        out.append(("hostile", name, code))
    return out


# The official scorer runs in a fresh interpreter of its own session: untrusted_check
# forks a process per program and some of them outlive it (stuck, holding its pipes), so
# the verdicts go to a file, and when the scorer exits its whole process group is killed.
OFFICIAL = r"""
import json, sys
import bigcodebench.eval as official

official.TIMEOUT_LIMIT = float(sys.argv[1])
real_manager, verdicts = official.Manager, []
with open(sys.argv[2]) as fh:
    cases = json.load(fh)
for program, test, entry in cases:
    # untrusted_check starts a multiprocessing Manager per call and never stops it
    started = []

    def manager():
        started.append(real_manager())
        return started[-1]

    official.Manager = manager
    try:
        status, _ = official.untrusted_check(program, test, entry, max_as_limit=30 * 1024,
                                             max_data_limit=30 * 1024, max_stack_limit=10,
                                             min_time_limit=1.0, gt_time_limit=1.0)
    finally:
        official.Manager = real_manager
        for m in started:
            m.shutdown()
    verdicts.append(status == "pass")
with open(sys.argv[3], "w") as fh:
    json.dump(verdicts, fh)
"""


def official_verdicts(cases: list[tuple[str, str, str]]) -> list[bool]:
    """bigcodebench's verdict on each (program, test, entry point), in a fresh interpreter."""
    import os
    import signal
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        given, got = Path(tmp, "cases.json"), Path(tmp, "verdicts.json")
        given.write_text(json.dumps(cases))
        proc = subprocess.Popen(
            [sys.executable, "-c", OFFICIAL, str(SUITE_SECONDS), str(given), str(got)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=60 + 3 * SUITE_SECONDS * len(cases))
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # what its forks left behind
            except ProcessLookupError:
                pass
            proc.wait()
        if code != 0 or not got.is_file():
            raise RuntimeError(f"the official scorer failed (exit code {code})")
        verdicts = json.loads(got.read_text())
    if len(verdicts) != len(cases):
        raise RuntimeError(f"the official scorer gave {len(verdicts)} verdicts for {len(cases)} programs")
    return verdicts


def compare(limit_tasks: int | None = None) -> list[dict]:
    """One row per completion: task, kind, name, ours, official."""
    from selfplay.evaluate.benchmark import Sample, fenced
    from selfplay.evaluate.benchmarks.bigcodebench import BigCodeBenchFull
    from selfplay.evaluate.modes import EvalMode

    bench = BigCodeBenchFull()
    items, _ = bench.prepare(None, {"timeout": SUITE_SECONDS}, {})
    items = items[:limit_tasks] if limit_tasks else items
    by_id = {item["id"]: item for item in items}
    cases = [(item, kind, name, code) for item in items for kind, name, code in completions(item)]
    samples = [Sample(item["id"], n, fenced(code)) for n, (item, _, _, code) in enumerate(cases)]
    cfg = {"evaluation": {"benchmarks": {bench.name: {"timeout": SUITE_SECONDS}}}}
    ours = bench.score(by_id, samples, EvalMode("single", 1, False, "single", {}), cfg, workers=2)
    official = official_verdicts(
        [
            (bench.program(item, code, calibrated=True), item["test"], item["entry_point"])
            for item, _, _, code in cases
        ]
    )
    rows = []
    for (item, kind, name, _code), mine, theirs in zip(cases, ours, official):
        rows.append(
            {
                "task": item["id"],
                "kind": kind,
                "name": name,
                "ours": bool(mine["passed"]),
                "official": theirs,
                "our_reason": mine["reason"],
                "through_skips": bool(mine.get("passed_through_skips")),
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "# BigCodeBench: our verdicts against bigcodebench 0.2.5's untrusted_check",
        "",
        "Same program text through both (the calibrated program); smoke tasks (standard library only);",
        f"both suite limits shortened to {SUITE_SECONDS:g} s. Command: "
        "`.venv/bin/python bench/harness_agreement_bcb.py`.",
        "",
        "| completions | kind | both pass | both fail | disagreements |",
        "|---|---|---|---|---|",
    ]
    for kind in ("right", "wrong", "hostile", "all"):
        sub = [r for r in rows if kind == "all" or r["kind"] == kind]
        both_pass = sum(r["ours"] and r["official"] for r in sub)
        both_fail = sum(not r["ours"] and not r["official"] for r in sub)
        lines.append(
            f"| {len(sub)} | {kind} | {both_pass} | {both_fail} | {len(sub) - both_pass - both_fail} |"
        )
    skips = sorted({r["name"] for r in rows if r["through_skips"]})
    lines += [
        "",
        f"Passed only through skips the answer raised (official verdict, kept; `answer_skips: fail` "
        f"fails them): {sum(r['through_skips'] for r in rows)} ({', '.join(skips) or 'none'}).",
    ]
    differ = [r for r in rows if r["ours"] != r["official"]]
    lines += ["", "Disagreements (ours / official):", ""]
    lines += [
        f"- {r['task']} {r['name']}: {'pass' if r['ours'] else 'fail'} / "
        f"{'pass' if r['official'] else 'fail'} ({r['our_reason']})"
        + ("; a known forgery of the official harness, refused here" if r["name"] in KNOWN_FORGERIES else "")
        for r in differ
    ] or ["- none"]
    return "\n".join(lines) + "\n"


def main() -> None:
    rows = compare()
    out = Path(__file__).resolve().parent / "results" / "harness_agreement_bcb.md"
    out.write_text(table(rows))
    (out.with_suffix(".json")).write_text(json.dumps(rows, indent=1) + "\n")
    sys.stdout.write(table(rows))


if __name__ == "__main__":
    main()
