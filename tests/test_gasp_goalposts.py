"""GASP's goalposts (paper 004, Sec. 3.2): the shipped rows are LiveCodeBench rows the
real judge can score (our references pass, wrong and hostile answers fail), the benchmark
``gasp_goalposts`` reads them, and the goalpost filter keeps exactly the problems no
filter solved, with each problem's record of why."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from test_eval_codegen_lcb_bcb import LCB_FIELDS, MODE  # LiveCodeBench's row, as its release writes it

from selfplay.errors import UserError
from selfplay.evaluate.benchmark import Sample
from selfplay.evaluate.benchmarks import livecodebench as lcb
from selfplay.evaluate.registry import benchmark
from selfplay.evaluate.settings import check_source
from selfplay.records import read_jsonl, write_jsonl
from selfplay.tracks.gasp import goalposts as gp

# Our reference solutions (the rows, like LiveCodeBench's, ship none).
REFERENCES = {
    "gasp-gp-01": "class Solution:\n    def digitRoot(self, num):\n        while num >= 10:\n"
    "            num = sum(int(d) for d in str(num))\n        return num\n",
    "gasp-gp-02": "class Solution:\n    def countVowelWords(self, words):\n"
    "        return sum(1 for w in words if w[0] in 'aeiou' and w[-1] in 'aeiou')\n",
    "gasp-gp-03": "class Solution:\n    def reverseWords(self, s):\n        return ' '.join(reversed(s.split()))\n",
    "gasp-gp-04": "from itertools import accumulate\n\nclass Solution:\n    def runningMax(self, nums):\n"
    "        return list(accumulate(nums, max))\n",
    "gasp-gp-05": "class Solution:\n    def longestIncreasing(self, nums):\n        best = run = 1\n"
    "        for a, b in zip(nums, nums[1:]):\n            run = run + 1 if b > a else 1\n"
    "            best = max(best, run)\n        return best\n",
    "gasp-gp-06": "class Solution:\n    def secondLargest(self, nums):\n        values = sorted(set(nums))\n"
    "        return values[-2] if len(values) > 1 else -1\n",
    "gasp-gp-07": "class Solution:\n    def minAddToBalance(self, s):\n        depth = added = 0\n"
    "        for ch in s:\n            if ch == '(':\n                depth += 1\n"
    "            elif depth:\n                depth -= 1\n            else:\n                added += 1\n"
    "        return added + depth\n",
    "gasp-gp-08": "class Solution:\n    def rotateRight(self, nums, k):\n        k %= len(nums)\n"
    "        return nums[len(nums) - k:] + nums[:len(nums) - k]\n",
}

# A plausible wrong answer per problem: each must be caught by the problem's tests.
WRONG = {
    "gasp-gp-01": "class Solution:\n    def digitRoot(self, num):\n        return num % 9\n",
    "gasp-gp-02": "class Solution:\n    def countVowelWords(self, words):\n"
    "        return sum(1 for w in words if w[0] in 'aeiou')\n",
    "gasp-gp-03": "class Solution:\n    def reverseWords(self, s):\n        return ' '.join(reversed(s.split(' ')))\n",
    "gasp-gp-04": "class Solution:\n    def runningMax(self, nums):\n        return sorted(nums)\n",
    "gasp-gp-05": "class Solution:\n    def longestIncreasing(self, nums):\n        best = run = 1\n"
    "        for a, b in zip(nums, nums[1:]):\n            run = run + 1 if b >= a else 1\n"
    "            best = max(best, run)\n        return best\n",
    "gasp-gp-06": "class Solution:\n    def secondLargest(self, nums):\n"
    "        return sorted(nums)[-2] if len(nums) > 1 else -1\n",
    "gasp-gp-07": "class Solution:\n    def minAddToBalance(self, s):\n        depth = added = 0\n"
    "        for ch in s:\n            if ch == '(':\n                depth += 1\n"
    "            elif depth:\n                depth -= 1\n            else:\n                added += 1\n"
    "        return added\n",
    "gasp-gp-08": "class Solution:\n    def rotateRight(self, nums, k):\n        k %= len(nums)\n"
    "        return nums[k:] + nums[:k]\n",
}

RIGHT_03 = REFERENCES["gasp-gp-03"]
# reads the expected outputs from the shipped rows: the sandbox must not show them
CHEAT = f"""import base64, json, pickle, zlib
ROWS = {str(lcb.GOALPOST_ROWS)!r}

class Solution:
    def secondLargest(self, nums):
        for line in open(ROWS):
            row = json.loads(line)
            cases = json.loads(pickle.loads(zlib.decompress(base64.b64decode(row["private_test_cases"]))))
            for case in cases + json.loads(row["public_test_cases"]):
                if case["input"] == json.dumps(nums):
                    return json.loads(case["output"])
        return -7
"""
# (problem, answer text, the reasons it may fail with)
HOSTILE = [
    ("gasp-gp-03", "import os\nos._exit(0)\n" + RIGHT_03, {"killed"}),  # exits at import
    (
        "gasp-gp-03",
        "print('All tests passed')\nclass Solution:\n    def reverseWords(self, s):\n"
        "        print('OK')\n        return 'OK'\n",
        {"wrong_output"},
    ),  # a fake report
    ("gasp-gp-03", "raise SystemExit(0)\n" + RIGHT_03, {"exception:SystemExit"}),
    (
        "gasp-gp-04",
        "class Solution:\n    def runningMax(self, nums):\n        while True:\n            pass\n",
        {"timeout"},
    ),
    (
        "gasp-gp-04",
        "class Everything(list):\n    def __eq__(self, other):\n        return True\n\n"
        "class Solution:\n    def runningMax(self, nums):\n        return Everything()\n",
        {"wrong_output", "error"},
    ),  # equal to all
    ("gasp-gp-06", CHEAT, {"wrong_output", "exception:FileNotFoundError", "exception:PermissionError"}),
]


def fenced(code: str) -> str:
    return f"Here is my program.\n\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def items() -> dict[str, dict]:
    got, skipped = benchmark("gasp_goalposts").prepare(None, {}, {})
    assert skipped == []
    return {item["id"]: item for item in got}


@pytest.fixture(scope="module")
def scored(items) -> dict[str, list[dict]]:
    """Every answer of this file through the registered benchmark's scoring: one call, so
    one sandbox for all of them."""
    answers = (
        [("reference", pid, fenced(code)) for pid, code in REFERENCES.items()]
        + [("wrong", pid, fenced(code)) for pid, code in WRONG.items()]
        + [("hostile", pid, fenced(code)) for pid, code, _ in HOSTILE]
        + [("hostile", "gasp-gp-01", "I will not write code for this.")]
    )
    samples = [Sample(pid, n, text) for n, (_, pid, text) in enumerate(answers)]
    cfg = {"evaluation": {"benchmarks": {"gasp_goalposts": {"timeout": 2.0}}}}
    rows = benchmark("gasp_goalposts").score(items, samples, MODE, cfg, workers=2)
    out: dict[str, list[dict]] = {}
    for (kind, _, _), row in zip(answers, rows):
        out.setdefault(kind, []).append(row)
    return out


# --- the rows ---------------------------------------------------------------------


def test_shipped_rows_are_livecodebench_rows_before_the_training_cut():
    rows = gp.load_rows()
    assert len(rows) == 8 and len({r["question_id"] for r in rows}) == 8
    cut = datetime.fromisoformat(lcb.DEFAULTS["train_before"])
    for row in rows:
        assert set(row) == LCB_FIELDS
        assert row["platform"] == "leetcode" and row["difficulty"] in ("easy", "medium", "hard")
        assert datetime.fromisoformat(row["contest_date"]) < cut
        func = json.loads(row["metadata"])["func_name"]
        assert (
            row["starter_code"].startswith("class Solution:\n")
            and f"    def {func}(self, " in row["starter_code"]
        )
        # private tests in LiveCodeBench's compressed form, not JSON text
        with pytest.raises(json.JSONDecodeError):
            json.loads(row["private_test_cases"])
        item, why = lcb.item_from_row(row, 1 << 20)
        assert why is None and item["kind"] == "functional" and item["func_name"] == func
        public = json.loads(row["public_test_cases"])
        private = lcb.decode_test_cases(row["private_test_cases"])
        assert len(public) == 2 and len(private) >= 5
        arity = row["starter_code"].split("(self, ")[1].split(")")[0].count(":")
        for case in public + private:
            assert case["testtype"] == "functional" and len(case["input"].split("\n")) == arity
            json.loads(case["output"])
            [json.loads(line) for line in case["input"].split("\n")]


def test_goalposts_are_the_rows_reduced():
    goalposts = gp.load_goalposts()
    rows = gp.load_rows()
    assert [g["id"] for g in goalposts] == [r["question_id"] for r in rows]
    for g, row in zip(goalposts, rows):
        assert set(g) == {"id", "title", "text", "starter_code"}
        assert (g["title"], g["text"], g["starter_code"]) == (
            row["question_title"],
            row["question_content"],
            row["starter_code"],
        )


def test_goalposts_refuse_rows_the_judge_cannot_use_or_dated_in_an_evaluation_window():
    row = gp.load_rows()[0]
    with pytest.raises(UserError, match="not before the training cut 2024-08-01"):
        gp.goalposts_from_rows([{**row, "contest_date": "2024-11-02T00:00:00"}])
    with pytest.raises(UserError, match="appears twice"):
        gp.goalposts_from_rows([row, row])
    with pytest.raises(UserError, match="no tests"):
        gp.goalposts_from_rows([{**row, "public_test_cases": "[]", "private_test_cases": "[]"}])
    with pytest.raises(UserError, match="no rows"):
        gp.goalposts_from_rows([])


def test_the_benchmark_reads_the_rows_and_no_evaluation_window_holds_them(tmp_path, items):
    assert sorted(items) == sorted(REFERENCES)
    assert all(item["kind"] == "functional" for item in items.values())
    # LiveCodeBench's own evaluation window never holds a goalpost
    evaluation, skipped = lcb.LiveCodeBench().prepare(str(lcb.GOALPOST_ROWS), {}, {})
    assert evaluation == [] and all("outside the evaluation window" in s["reason"] for s in skipped)
    # a file of rows given as source: path; a row dated after the cut is skipped with the reason
    rows = gp.load_rows()[:2]
    write_jsonl(tmp_path / "h.jsonl", [rows[0], {**rows[1], "contest_date": "2024-12-01T00:00:00"}])
    got, skipped = benchmark("gasp_goalposts").prepare(str(tmp_path / "h.jsonl"), {}, {})
    assert [i["id"] for i in got] == ["gasp-gp-01"]
    assert skipped[0]["id"] == "gasp-gp-02" and "train_before" in skipped[0]["reason"]
    assert [i["id"] for i in benchmark("gasp_goalposts").prepare(None, {"limit": 3}, {})[0]] == [
        "gasp-gp-01",
        "gasp-gp-02",
        "gasp-gp-03",
    ]
    # the prompt is LiveCodeBench's, with the starter code
    message = benchmark("gasp_goalposts").messages(items["gasp-gp-08"], False)[-1]["content"]
    assert message == lcb.LiveCodeBench().messages(items["gasp-gp-08"], False)[-1]["content"]
    assert "def rotateRight(self, nums: List[int], k: int) -> List[int]:" in message


def test_the_default_config_evaluates_the_shipped_goalposts():
    from pathlib import Path

    import yaml

    from selfplay.config import prepare_config

    cfg = prepare_config(
        yaml.safe_load((Path(__file__).resolve().parents[1] / "config.yaml").read_text()),
        "resources/models/x",
    )
    settings = cfg["evaluation"]["benchmarks"]["gasp_goalposts"]
    assert settings["source"] == "smoke" and settings["train_before"] == lcb.DEFAULTS["train_before"]
    check_source(cfg, "gasp_goalposts")
    with pytest.raises(UserError, match="gasp_goalposts.path"):
        check_source(
            {
                **cfg,
                "evaluation": {
                    **cfg["evaluation"],
                    "benchmarks": {
                        **cfg["evaluation"]["benchmarks"],
                        "gasp_goalposts": {**settings, "source": "path"},
                    },
                },
            },
            "gasp_goalposts",
        )


# --- the real judge -----------------------------------------------------------------


def test_reference_solutions_pass_every_test(scored, items):
    rows = scored["reference"]
    assert [r["id"] for r in rows] == list(REFERENCES)
    for row in rows:
        assert row["passed"] and row["reason"] is None, row
        assert row["tests_total"] == items[row["id"]]["n_tests"] == len(row["tests"])


def test_wrong_answers_fail_on_their_problems_tests(scored):
    rows = scored["wrong"]
    assert [r["id"] for r in rows] == list(WRONG)
    assert [(r["passed"], r["reason"]) for r in rows] == [(False, "wrong_output")] * len(WRONG)


def test_hostile_answers_fail(scored):
    rows = scored["hostile"]
    assert [r["passed"] for r in rows] == [False] * len(rows)
    for row, (_, _, reasons) in zip(rows, HOSTILE):
        assert row["reason"] in reasons, row
    assert rows[-1]["reason"] == "parse:no_code" and rows[-1]["tests"] == []


# --- the filter (Sec. 3.2) ------------------------------------------------------------


def _samples(pid: str, n: int, passes: int) -> list[dict]:
    return [
        {"id": pid, "sample": i, "passed": i < passes, "reason": None if i < passes else "wrong_output"}
        for i in range(n)
    ]


def test_the_filter_keeps_exactly_the_problems_no_filter_solved_and_says_why():
    candidates = gp.load_rows()
    ids = [r["question_id"] for r in candidates]
    # base solves 02; seed 0's checkpoint solves 05 (and 02 again); AZR solves 07 and is
    # not asked about 02 or 05; the final RL run, on what is left, solves nothing
    base = [s for pid in ids for s in _samples(pid, 4, 1 if pid == "gasp-gp-02" else 0)]
    rl = [s for pid in ids for s in _samples(pid, 4, {"gasp-gp-02": 3, "gasp-gp-05": 1}.get(pid, 0))]
    left = [pid for pid in ids if pid not in ("gasp-gp-02", "gasp-gp-05")]
    azr = [s for pid in left for s in _samples(pid, 4, 2 if pid == "gasp-gp-07" else 0)]
    final = [s for pid in left if pid != "gasp-gp-07" for s in _samples(pid, 4, 0)]
    kept, records = gp.filter_goalposts(
        candidates, {"base": base, "rl_s0_step50": rl, "azr": azr, "final_rl_step50": final}, samples=4
    )
    solved = {"gasp-gp-02", "gasp-gp-05", "gasp-gp-07"}
    assert [r["question_id"] for r in kept] == [pid for pid in ids if pid not in solved]
    assert kept == [r for r in candidates if r["question_id"] not in solved]  # rows unchanged
    by_id = {r["id"]: r for r in records}
    assert [r["id"] for r in records] == ids
    assert by_id["gasp-gp-02"]["solved_by"] == ["base", "rl_s0_step50"] and not by_id["gasp-gp-02"]["kept"]
    assert by_id["gasp-gp-02"]["reason"] == "solved by base (1 of 4 samples passed)"
    assert by_id["gasp-gp-02"]["filters"] == [
        {"filter": "base", "n": 4, "passes": 1},
        {"filter": "rl_s0_step50", "n": 4, "passes": 3},
    ]
    assert by_id["gasp-gp-05"]["solved_by"] == ["rl_s0_step50"]
    assert by_id["gasp-gp-07"]["reason"] == "solved by azr (2 of 4 samples passed)"
    assert by_id["gasp-gp-01"]["kept"] and by_id["gasp-gp-01"]["solved_by"] == []
    assert by_id["gasp-gp-01"]["reason"] == "pass@n = 0 under all 4 filters"
    assert [e["filter"] for e in by_id["gasp-gp-01"]["filters"]] == [
        "base",
        "rl_s0_step50",
        "azr",
        "final_rl_step50",
    ]


def test_the_filter_stops_on_an_incomplete_or_foreign_evaluation():
    candidates = gp.load_rows()[:2]
    a, b = (r["question_id"] for r in candidates)
    with pytest.raises(UserError, match=f"goalpost filter azr: '{b}' is still standing"):
        gp.filter_goalposts(
            candidates, {"base": _samples(a, 2, 0) + _samples(b, 2, 0), "azr": _samples(a, 2, 0)}
        )
    with pytest.raises(UserError, match="not a candidate"):
        gp.filter_goalposts(candidates, {"base": _samples(a, 2, 0) + _samples(b, 2, 0) + _samples("x", 1, 0)})
    with pytest.raises(UserError, match="has 2 scored samples, expected 100"):
        gp.filter_goalposts(candidates, {"base": _samples(a, 2, 0) + _samples(b, 2, 0)}, samples=100)
    with pytest.raises(UserError, match="no id and passed"):
        gp.filter_goalposts(candidates, {"base": [{"id": a, "sample": 0, "correct": True}]})
    with pytest.raises(UserError, match="no filters"):
        gp.filter_goalposts(candidates, {})
    with pytest.raises(UserError, match="appear twice"):
        gp.filter_goalposts(candidates + candidates[:1], {"base": _samples(a, 1, 0) + _samples(b, 1, 0)})


def test_the_filter_reads_real_scored_files_and_writes_rows_the_benchmark_reads(tmp_path, scored):
    """The benchmark layer's scored rows as filters: a model that only writes the wrong
    answers leaves every goalpost standing; one that writes our references solves them
    all. H is written as LiveCodeBench rows the goalpost benchmark reads back."""
    rows = gp.load_rows()
    write_jsonl(tmp_path / "candidates.jsonl", rows)
    write_jsonl(tmp_path / "wrong.scored.jsonl", scored["wrong"])
    write_jsonl(tmp_path / "reference.scored.jsonl", scored["reference"])
    summary = gp.filter_files(
        tmp_path / "candidates.jsonl",
        {"wrong": tmp_path / "wrong.scored.jsonl"},
        tmp_path / "h.jsonl",
        tmp_path / "h.records.jsonl",
        samples=1,
    )
    assert summary == {"candidates": 8, "kept": 8, "filters": ["wrong"]}
    assert read_jsonl(tmp_path / "h.jsonl") == rows
    items, skipped = benchmark("gasp_goalposts").prepare(str(tmp_path / "h.jsonl"), {}, {})
    assert len(items) == 8 and skipped == []
    assert all(
        r["kept"] and r["filters"] == [{"filter": "wrong", "n": 1, "passes": 0}]
        for r in read_jsonl(tmp_path / "h.records.jsonl")
    )
    gp.filter_files(
        tmp_path / "candidates.jsonl",
        {"wrong": tmp_path / "wrong.scored.jsonl", "oracle": tmp_path / "reference.scored.jsonl"},
        tmp_path / "h.jsonl",
        tmp_path / "h.records.jsonl",
    )
    assert read_jsonl(tmp_path / "h.jsonl") == []
    assert {tuple(r["solved_by"]) for r in read_jsonl(tmp_path / "h.records.jsonl")} == {("oracle",)}


def test_training_split_rows_read_back_as_the_same_items():
    rows, skipped = gp.training_split(None, {})
    items, _ = lcb.training_problems(None, {})
    assert [r["question_id"] for r in rows] == [i["id"] for i in items] and rows
    assert {s["id"] for s in skipped} == {"smoke-lcb-0", "smoke-lcb-1", "smoke-lcb-2"}  # after the cut
    for row, item in zip(rows, items):
        assert set(row) == LCB_FIELDS
        assert lcb.item_from_row(row, 1 << 20) == (item, None)
    with pytest.raises(UserError, match="overlap the evaluation"):
        gp.training_split(None, {"train_before": "2024-12-01"})


def test_the_final_rl_stage_removes_what_its_checkpoints_solved_and_records_why(tmp_path):
    """Sec. 3.2's third stage on the prefilter's output: the final RL run's checkpoints
    are scored on the whole training split (they are evaluated on the filter's benchmark),
    but only what stages 1-2 left is looked at; a problem one of them solves leaves H
    with stage final_rl, the rest stays, and every record says why."""
    candidates = gp.load_rows()
    ids = [r["question_id"] for r in candidates]
    base = [s for pid in ids for s in _samples(pid, 4, 1 if pid == "gasp-gp-02" else 0)]
    rows, records = gp.filter_goalposts(candidates, {"base": base}, samples=4)
    assert by_stage(records) == {"prefilter": ["gasp-gp-02"], None: [p for p in ids if p != "gasp-gp-02"]}
    # two checkpoints of the final RL run: step 1 solves 04, step 2 solves 04 and 06; both
    # also "solve" 02, which the prefilter already removed (not looked at again)
    step1 = [s for pid in ids for s in _samples(pid, 4, 1 if pid in ("gasp-gp-02", "gasp-gp-04") else 0)]
    step2 = [
        s
        for pid in ids
        for s in _samples(pid, 4, 2 if pid in ("gasp-gp-02", "gasp-gp-04", "gasp-gp-06") else 0)
    ]
    write_jsonl(tmp_path / "pre.jsonl", rows)
    write_jsonl(tmp_path / "pre.records.jsonl", records)
    write_jsonl(tmp_path / "s1.scored.jsonl", step1)
    write_jsonl(tmp_path / "s2.scored.jsonl", step2)
    summary = gp.final_filter_files(
        tmp_path / "pre.jsonl",
        tmp_path / "pre.records.jsonl",
        {
            "ck_filter_rl_s0_i1": tmp_path / "s1.scored.jsonl",
            "ck_filter_rl_s0_i2": tmp_path / "s2.scored.jsonl",
        },
        tmp_path / "h.jsonl",
        tmp_path / "h.records.jsonl",
        samples=4,
    )
    solved = {"gasp-gp-02", "gasp-gp-04", "gasp-gp-06"}
    assert summary == {"prefiltered": 7, "kept": 5, "filters": ["ck_filter_rl_s0_i1", "ck_filter_rl_s0_i2"]}
    assert read_jsonl(tmp_path / "h.jsonl") == [r for r in candidates if r["question_id"] not in solved]
    final = read_jsonl(tmp_path / "h.records.jsonl")
    by_id = {r["id"]: r for r in final}
    assert [r["id"] for r in final] == ids
    assert by_stage(final) == {
        "prefilter": ["gasp-gp-02"],
        "final_rl": ["gasp-gp-04", "gasp-gp-06"],
        None: [p for p in ids if p not in solved],
    }
    assert by_id["gasp-gp-02"] == {r["id"]: r for r in records}["gasp-gp-02"]  # unchanged
    assert by_id["gasp-gp-04"]["reason"] == "solved by ck_filter_rl_s0_i1 (1 of 4 samples passed)"
    assert by_id["gasp-gp-04"]["solved_by"] == ["ck_filter_rl_s0_i1", "ck_filter_rl_s0_i2"]
    assert by_id["gasp-gp-06"]["reason"] == "solved by ck_filter_rl_s0_i2 (2 of 4 samples passed)"
    assert by_id["gasp-gp-06"]["filters"] == [
        {"filter": "base", "n": 4, "passes": 0},
        {"filter": "ck_filter_rl_s0_i1", "n": 4, "passes": 0},
        {"filter": "ck_filter_rl_s0_i2", "n": 4, "passes": 2},
    ]
    assert by_id["gasp-gp-01"]["kept"] and by_id["gasp-gp-01"]["reason"] == "pass@n = 0 under all 3 filters"


def by_stage(records: list[dict]) -> dict:
    out: dict = {}
    for r in records:
        assert r["kept"] == (r["stage"] is None)
        out.setdefault(r["stage"], []).append(r["id"])
    return out


def test_without_a_final_rl_run_h_is_the_prefilters_output_and_bad_inputs_stop():
    candidates = gp.load_rows()[:3]
    a, b, c = (r["question_id"] for r in candidates)
    base = _samples(a, 2, 1) + _samples(b, 2, 0) + _samples(c, 2, 0)
    rows, records = gp.filter_goalposts(candidates, {"base": base})
    assert gp.final_filter(rows, records, {}) == (rows, records)  # goalposts.filter.final_rl: null
    with pytest.raises(UserError, match=f"goalpost filter ck_filter_rl_s0_i1: '{c}' is still standing"):
        gp.final_filter(rows, records, {"ck_filter_rl_s0_i1": _samples(a, 2, 0) + _samples(b, 2, 0)})
    with pytest.raises(UserError, match="not a candidate"):
        gp.final_filter(rows, records, {"ck": _samples(b, 2, 0) + _samples(c, 2, 0) + _samples("x", 2, 0)})
    with pytest.raises(UserError, match="has 2 scored samples, expected 100"):
        gp.final_filter(rows, records, {"ck": _samples(b, 2, 0) + _samples(c, 2, 0)}, samples=100)
    with pytest.raises(UserError, match=f"rows and records disagree on what stayed \\({a}\\)"):
        gp.final_filter(candidates, records, {"ck": base})
