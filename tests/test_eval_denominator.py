"""pass@k for every k a mode names, and the official denominator (issue 18, section 3).

Official harnesses count an item that cannot run as failed; the layer used to drop such
items from the denominator. The headline number is now the official one, and
``runnable_only`` adds the other, labelled.
"""

from __future__ import annotations

import pytest

from selfplay.errors import UserError
from selfplay.evaluate.benchmark import unrunnable
from selfplay.evaluate.benchmarks.evalplus import HumanEval
from selfplay.evaluate.modes import EvalMode
from selfplay.metrics.passk import pass_at_k

SAMPLING = {"temperature": 0.8}


def mode(samples: int, ks=(1,)) -> EvalMode:
    return EvalMode.from_config(
        "m",
        {"samples": samples, "cot": False, "aggregate": "mean", "sampling": SAMPLING, "pass_at_k": list(ks)},
    )


def test_a_k_larger_than_the_samples_is_a_one_line_config_error():
    assert mode(20, (1, 5, 20)).pass_at_k == (1, 5, 20)
    with pytest.raises(
        UserError, match=r"pass_at_k: pass@20 needs at least 20 samples, but the mode draws samples=10"
    ):
        mode(10, (1, 20))
    with pytest.raises(UserError, match="k values >= 1"):
        mode(10, (0,))


def _rows(passes: dict[str, list[bool]]) -> list[dict]:
    return [
        {"id": i, "sample": n, "passed": p, "reason": None if p else "wrong_output"}
        for i, flags in passes.items()
        for n, p in enumerate(flags)
    ]


def test_the_headline_counts_items_that_cannot_run_as_failed():
    m = mode(4, (1, 2, 4))
    items = {i: {"id": i} for i in ("a", "b", "c")}
    rows = _rows({"a": [True, False, False, False], "b": [True, True, True, True]})
    summary = HumanEval().summarise(items, rows, m, unrunnable_ids=["c"], runnable_only=True)
    assert summary["denominator"] == "official" and summary["n"] == 3 and summary["unrunnable"] == 1
    for k in (1, 2, 4):
        official = (pass_at_k(4, 1, k) + pass_at_k(4, 4, k) + 0.0) / 3
        runnable = (pass_at_k(4, 1, k) + pass_at_k(4, 4, k)) / 2
        assert summary[f"pass@{k}"] == pytest.approx(official)
        assert summary["runnable_only"][f"pass@{k}"] == pytest.approx(runnable)
    assert summary["runnable_only"]["n"] == 2
    plain = HumanEval().summarise(items, rows, m)
    assert (
        "runnable_only" not in plain and plain["n"] == 2 and plain["pass@1"] == pytest.approx((0.25 + 1) / 2)
    )


def test_only_skipped_rows_marked_as_belonging_count():
    """A row outside the benchmark (beyond a limit, outside a date window) is not an item;
    one that cannot run here (its reference fails, its libraries are missing) is."""
    row = unrunnable("HumanEval/7", "reference check failed")
    assert row == {"id": "HumanEval/7", "reason": "reference check failed", "counts": True}


def test_a_table_says_which_items_count_as_failed_and_names_any_pass_at_k(tmp_path):
    from selfplay.records import write_json
    from selfplay.report.evaluation import grid_table

    m = mode(4, (1, 2))
    items = {i: {"id": i} for i in ("a", "b", "c")}
    rows = _rows({"a": [True, False, False, False], "b": [True, True, True, True]})
    summary = HumanEval().summarise(items, rows, m, unrunnable_ids=["c"], runnable_only=True)
    write_json(tmp_path / "s.json", summary)
    frame = grid_table(
        {("humaneval", "base"): str(tmp_path / "s.json")},
        [("HumanEval", "humaneval")],
        [("Base", ("base",))],
        "pass@2",
        str(tmp_path / "t.csv"),
        str(tmp_path / "t.md"),
        "T",
    )
    assert frame.loc[0, "Base"] == pytest.approx(100 * summary["pass@2"])
    text = (tmp_path / "t.md").read_text()
    assert "Pass@2 per cell" in text
    assert (
        "HumanEval / Base: 1 of 3 items cannot run here and count as failed (the official denominator)"
        in text
    )
    assert f"over the 2 runnable items only: {100 * summary['runnable_only']['pass@2']:.2f}%" in text
