"""Our BigCodeBench verdicts equal bigcodebench 0.2.5's own scorer (untrusted_check) on
right, mutant, broken and hostile completions of stdlib-only tasks; the only allowed
difference is a forgery of the official harness (a solution that raises SkipTest passes
there, since it counts skips as passes), which ours refuses. The full table:
bench/harness_agreement_bcb.py -> bench/results/harness_agreement_bcb.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("bigcodebench.eval", reason="bigcodebench==0.2.5 (requirements-test-nodeps.txt)")

BENCH = Path(__file__).resolve().parents[1] / "bench" / "harness_agreement_bcb.py"


def _bench():
    spec = importlib.util.spec_from_file_location("harness_agreement_bcb", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verdicts_equal_the_official_scorer_on_two_tasks():
    bench = _bench()
    rows = bench.compare(limit_tasks=2)
    assert {r["kind"] for r in rows} == {"right", "wrong", "hostile"}
    assert all(r["ours"] and r["official"] for r in rows if r["kind"] == "right")
    assert sum(r["kind"] == "wrong" for r in rows) >= 8
    differ = [r for r in rows if r["ours"] != r["official"]]
    assert all(r["name"] in bench.KNOWN_FORGERIES and r["official"] and not r["ours"] for r in differ), differ
    assert {r["name"] for r in differ} == {"skip_every_test"}
    table = bench.table(rows)
    assert "| completions | kind | both pass | both fail | disagreements |" in table
