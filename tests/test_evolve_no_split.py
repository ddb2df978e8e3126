"""A discriminative test that does not split the solutions it was written for stays out.

Paper 002 Sec. 2.3 discards such a test. It used to be refused only in the round that
wrote it: the next round's dataset no longer checked it and took it back.
"""

from __future__ import annotations

import json
from importlib import resources

from selfplay.config import schema as shared_schema
from selfplay.config.defaults import fill_defaults
from selfplay.pipeline import evolve
from selfplay.records import read_jsonl, write_jsonl


def _cfg():
    root = shared_schema()
    root["properties"]["evolve"] = json.loads(
        resources.files("selfplay.tracks").joinpath("evolve", "schema.json").read_text()
    )
    cfg = fill_defaults(
        {
            "seed": 1,
            "evolve": {
                "experiment": "t",
                "filter": {"min_tests": 1},
                "discriminative": {"sampling": {"max_new_tokens": 8}},
            },
        },
        root,
    )
    assert cfg["evolve"]["discriminative"]["enforce_split"] is True
    return cfg


def test_a_refused_discriminative_test_stays_refused_in_later_rounds(tmp_path):
    tests = [{"text": f"assert f({i}) == {i}", "round": 0, "method": "refine"} for i in range(3)]
    # written in round 1 for solutions 0 and 1, which both pass it: it splits nothing
    tests.append(
        {"text": "assert f(9) == 9", "round": 1, "method": "discriminative", "shown_solutions": [0, 1]}
    )
    tests.append({"text": "assert f(8) == 8", "round": 2, "method": "adversarial", "shown_solutions": [0]})
    suite = [{"id": "p", "source": "taco", "entry": "f", "reason": None, "tests": tests}]
    passed = [
        [True, True, True, True, True],
        [True, False, True, True, False],
        [False, False, False, True, False],
    ]
    matrix = [{"id": "p", "source": "taco", "entry": "f", "malformed": [None] * 5, "passed": passed}]
    suite_path, matrix_path = tmp_path / "suite.jsonl", tmp_path / "matrix.jsonl"
    write_jsonl(suite_path, suite)
    write_jsonl(matrix_path, matrix)
    cfg = _cfg()
    for round_ in (1, 2, 3):
        out = tmp_path / f"dataset{round_}.jsonl"
        evolve.round_dataset(cfg, round_, str(suite_path), str(matrix_path), str(out))
        (row,) = read_jsonl(out)
        assert row["dropped"].get("3") == "no_split", (round_, row)
        assert 3 not in row["tests"]
