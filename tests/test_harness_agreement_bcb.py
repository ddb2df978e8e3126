"""Our BigCodeBench verdicts equal bigcodebench 0.2.5's own scorer (untrusted_check) on
right, mutant, broken and hostile completions of stdlib-only tasks, with no difference:
a solution that raises SkipTest passes in both (the official harness counts skips as
passes; ours records that it passed only through skips). The full table:
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
    assert differ == []
    skipped = [r for r in rows if r["name"] == "skip_every_test"]
    assert skipped and all(r["ours"] and r["official"] and r["through_skips"] for r in skipped)
    assert not any(r["through_skips"] for r in rows if r["name"] != "skip_every_test")
    table = bench.table(rows)
    assert "| completions | kind | both pass | both fail | disagreements |" in table
