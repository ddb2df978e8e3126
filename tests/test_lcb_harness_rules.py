"""LiveCodeBench as its runner (lcb_runner) judges: each test cites the runner's rule.
lcb_runner is not on PyPI, so its rules are checked one by one here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfplay.errors import UserError
from selfplay.evaluate.benchmarks import livecodebench as lcb

DATA = Path(lcb.__file__).resolve().parents[2] / "data" / "eval"


def test_code_is_read_between_the_last_two_fence_lines():
    # lcb_runner.utils.extraction_utils.extract_code: lines containing ``` anywhere, the
    # text between the last two; fewer than two -> "" (the sample fails)
    assert lcb.extract_code("```python\nfirst\n```\ntext\n```cpp\nlast\n```") == "last"
    assert lcb.extract_code("```python\nprint(1)\n") is None  # cut off before its fence
    assert lcb.extract_code("see ```x``` and\n```\ncode\n```") == "code"
    assert lcb.extract_code("no code") is None
    # a fence inside a line counts as a fence line, whatever else the line holds
    assert lcb.extract_code("a ```python\nbody\nend ``` here") == "body"


def test_call_based_exactly_when_the_metadata_names_a_function():
    # lcb_runner testing_util.run_test: fn_name = metadata.get("func_name"); None -> stdin
    row = json.loads((DATA / "livecodebench.smoke.jsonl").read_text().splitlines()[0])
    functional = lcb.item_from_row(row, 1 << 20)[0]
    assert functional["kind"] == "functional"
    no_name = dict(row, metadata="{}")
    assert lcb.item_from_row(no_name, 1 << 20)[0]["kind"] == "stdin"  # test types are not consulted
    mixed = dict(row, public_test_cases=json.dumps([{"input": "1", "output": "1", "testtype": "stdin"}]))
    assert lcb.item_from_row(mixed, 1 << 20)[0]["kind"] == "functional"


def test_call_based_comparison_is_exact_after_tuple_to_list():
    from selfplay.sandbox.encoding import encode_value

    def enc(v):
        return encode_value(v, 1000, 50, 1 << 16, 200)

    # grade_call_based: a returned tuple becomes a list, then prediction == json.loads(output)
    assert lcb.value_matches(enc((1, 2)), "[1, 2]")
    assert not lcb.value_matches(enc(0.30000000000000004), "0.3")  # no float tolerance
    assert not lcb.value_matches(enc(10**18 + 1), str(10**18))
    assert not lcb.value_matches(enc([(1, 2)]), "[[1, 2]]")  # only the top level is converted


def test_stdin_comparison_lines_then_decimal_tokens():
    # grade_stdio: strip, split on newlines, equal line counts, each line exact or equal as Decimals
    assert lcb.stdout_matches("1.0 2\n", "1 2.00")
    assert not lcb.stdout_matches("1\n2\n", "1 2")
    assert not lcb.stdout_matches("0.3333", "0.33333")
    assert not lcb.stdout_matches("50000000000000001", "50000000000000000")
    assert lcb.stdout_matches("  yes  \n\n", "yes")


def _folder(tmp_path, rows_by_file):
    for name in lcb.FILES:
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows_by_file.get(name, [])))
    return tmp_path


def _row(qid, when):
    base = json.loads((DATA / "livecodebench.smoke.jsonl").read_text().splitlines()[1])
    return dict(base, question_id=qid, contest_date=when)


def test_the_window_count_is_checked_against_the_papers(tmp_path):
    rows = [_row(f"q{i}", f"2024-1{i % 3}-05T00:00:00") for i in range(5)] + [
        _row("feb", "2025-02-27T12:00:00")
    ]
    folder = _folder(tmp_path, {"test5.jsonl": rows[:5], "test6.jsonl": rows[5:]})
    bench = lcb.LiveCodeBench()
    settings = {"release": "release_v6", "paper_counts": {"eval": 216}}
    with pytest.raises(UserError) as err:
        bench.prepare(str(folder), settings, {})
    message = str(err.value)
    assert "holds 6 problems, the paper had 216" in message and "accepted_counts.eval: 6" in message
    assert "\n" not in message
    # release_v5 stops in January: the February problem is not there
    with pytest.raises(UserError, match="holds 5 problems"):
        bench.prepare(str(folder), {**settings, "release": "release_v5"}, {})
    # an accepted difference goes on, and the caption says so
    accepted = {**settings, "accepted_counts": {"eval": 6, "reason": "fixture"}}
    items, _ = bench.prepare(str(folder), accepted, {})
    assert len(items) == 6
    assert lcb.count_note(accepted) == [
        "LiveCodeBench eval: 6 problems where the paper had 216 (accepted: fixture)"
    ]
    assert lcb.count_note(settings) == []
    # the count is the window's, before `limit` slices it
    with pytest.raises(UserError, match="holds 6 problems"):
        bench.prepare(str(folder), {**settings, "limit": 2}, {})


def test_the_training_count_is_checked_too(tmp_path):
    folder = _folder(
        tmp_path, {"test.jsonl": [_row("old", "2024-03-01T00:00:00"), _row("aug", "2024-08-02T00:00:00")]}
    )
    with pytest.raises(UserError, match="before 2024-08-01 holds 1 problems, the paper had 601"):
        lcb.training_problems(str(folder), {"paper_counts": {"train": 601}})


def test_defaults_read_release_v6_and_the_papers_windows():
    # paper 004: eval 2024.10 - 2025.02, training before 2024.08; release_v5 ends in January 2025
    assert lcb.DEFAULTS["release"] == "release_v6"
    assert (lcb.DEFAULTS["start_date"], lcb.DEFAULTS["end_date"]) == ("2024-10-01", "2025-02-28")
    assert lcb.DEFAULTS["train_before"] == "2024-08-01"
    import yaml

    evolve = yaml.safe_load((Path(__file__).resolve().parents[1] / "config/papers/evolve.yaml").read_text())
    settings = evolve["evaluation"]["benchmarks"]["livecodebench"]
    assert settings["release"] == "release_v6" and settings["paper_counts"] == {"eval": 216}
