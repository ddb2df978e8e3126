"""LiveCodeBench and BigCodeBench-Instruct adapters: reading the real formats, the date
window, comparisons, ground truth through the sandbox, and hostile answers failing."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from datetime import date
from pathlib import Path
from types import SimpleNamespace

import pytest

from selfplay.errors import UserError
from selfplay.evaluate.benchmark import Sample
from selfplay.evaluate.benchmarks import bigcodebench as bcb
from selfplay.evaluate.benchmarks import livecodebench as lcb
from selfplay.evaluate.modes import EvalMode
from selfplay.sandbox.encoding import encode_value

DATA = Path(lcb.__file__).resolve().parents[2] / "data" / "eval"
MODE = EvalMode("single", 1, False, "single", {})

LCB_FIELDS = {
    "question_title",
    "question_content",
    "platform",
    "question_id",
    "contest_id",
    "contest_date",
    "starter_code",
    "difficulty",
    "public_test_cases",
    "private_test_cases",
    "metadata",
}
BCB_FIELDS = {
    "task_id",
    "complete_prompt",
    "instruct_prompt",
    "canonical_solution",
    "code_prompt",
    "test",
    "entry_point",
    "doc_struct",
    "libs",
}
HARD_EXTRA = {"q_idx", "question", "score", "_id"}


def fenced(code: str, prose: str = "Here is my solution.") -> str:
    return f"{prose}\n\n```python\n{code}\n```\n"


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# ============================================================ LiveCodeBench

# Our reference solutions for the smoke problems (the dataset ships none).
LCB_REFERENCES = json.loads((DATA / "livecodebench.smoke.references.json").read_text())


@pytest.fixture(scope="module")
def lcb_items() -> dict[str, dict]:
    bench = lcb.LiveCodeBench()
    items, _ = bench.prepare(None, {}, {})
    train, _ = lcb.training_problems(None, {})
    return {item["id"]: item for item in items + train}


def lcb_score(items, answers: list[tuple[str, str]], timeout: float = 6.0) -> list[dict]:
    samples = [Sample(item_id, n, text) for n, (item_id, text) in enumerate(answers)]
    cfg = {"evaluation": {"benchmarks": {"livecodebench": {"timeout": timeout}}}}
    return lcb.LiveCodeBench().score(items, samples, MODE, cfg, workers=2)


def test_lcb_smoke_rows_are_in_the_dataset_format():
    rows = jsonl(DATA / "livecodebench.smoke.jsonl")
    assert 3 <= len(rows) <= 6
    kinds = set()
    for row in rows:
        assert set(row) == LCB_FIELDS
        assert row["question_id"].startswith("smoke-")
        assert row["difficulty"] in ("easy", "medium", "hard")
        assert isinstance(row["public_test_cases"], str) and isinstance(
            json.loads(row["public_test_cases"]), list
        )
        # the private tests are in the dataset's compressed form, not JSON
        with pytest.raises(json.JSONDecodeError):
            json.loads(row["private_test_cases"])
        inner = pickle.loads(zlib.decompress(base64.b64decode(row["private_test_cases"])))
        assert isinstance(inner, str)
        private = json.loads(inner)
        assert private and all(set(t) == {"input", "output", "testtype"} for t in private)
        assert lcb.decode_test_cases(row["private_test_cases"]) == private
        metadata = json.loads(row["metadata"])
        kinds |= {t["testtype"] for t in private}
        if private[0]["testtype"] == "functional":
            assert metadata["func_name"] and row["starter_code"].startswith("class Solution")
        else:
            assert row["starter_code"] == "" and metadata == {}
    assert kinds == {"functional", "stdin"}


def test_lcb_plain_json_private_tests_are_read_too():
    cases = [{"input": "1\n", "output": "1\n", "testtype": "stdin"}]
    assert lcb.decode_test_cases(json.dumps(cases)) == cases


class _Mkdir:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def test_lcb_compressed_tests_never_unpickle_anything_but_a_string(tmp_path):
    marker = tmp_path / "pwned"
    evil = base64.b64encode(zlib.compress(pickle.dumps(_Mkdir(str(marker))))).decode()
    with pytest.raises(ValueError, match="refusing"):
        lcb.decode_test_cases(evil)
    assert not marker.exists()
    not_a_string = base64.b64encode(zlib.compress(pickle.dumps([{"input": "1", "output": "1"}]))).decode()
    with pytest.raises(ValueError, match="not a string"):
        lcb.decode_test_cases(not_a_string)
    bomb = base64.b64encode(zlib.compress(pickle.dumps("x" * (3 * 1024 * 1024)))).decode()
    with pytest.raises(ValueError, match="exceed"):
        lcb.decode_test_cases(bomb, max_bytes=1024 * 1024)
    with pytest.raises(ValueError):
        lcb.decode_test_cases("not base64 and not json!")
    # a row with such tests is skipped with its reason, not dropped silently
    row = dict(jsonl(DATA / "livecodebench.smoke.jsonl")[0], private_test_cases=evil)
    item, why = lcb.item_from_row(row, 1024 * 1024)
    assert item is None and "refusing" in why


def test_lcb_evaluation_window_and_training_split():
    bench = lcb.LiveCodeBench()
    items, skipped = bench.prepare(None, {}, {})
    assert [i["id"] for i in items] == ["smoke-lcb-0", "smoke-lcb-1", "smoke-lcb-2"]
    assert {s["id"] for s in skipped} == {"smoke-lcb-3", "smoke-lcb-4"}
    assert all("outside the evaluation window 2024-10-01 .. 2025-02-28" in s["reason"] for s in skipped)
    assert {i["group"] for i in items} == {"easy", "medium", "hard"}
    assert items[0]["kind"] == "functional" and items[0]["func_name"] == "countPairs"
    assert items[1]["kind"] == "stdin" and items[1]["func_name"] is None

    train, not_train = lcb.training_problems(None, {})
    assert [i["id"] for i in train] == ["smoke-lcb-3", "smoke-lcb-4"]
    assert {s["id"] for s in not_train} == {"smoke-lcb-0", "smoke-lcb-1", "smoke-lcb-2"}

    # both ends inclusive, the end day counted whole (smoke-lcb-2 is at 14:35 on the end
    # day); YAML gives unquoted dates as date objects
    wide, _ = bench.prepare(None, {"start_date": date(2024, 1, 1), "end_date": "2025-01-20"}, {})
    assert [i["id"] for i in wide] == [
        "smoke-lcb-0",
        "smoke-lcb-1",
        "smoke-lcb-2",
        "smoke-lcb-3",
        "smoke-lcb-4",
    ]
    narrow, _ = bench.prepare(None, {"start_date": date(2024, 1, 1), "end_date": "2025-01-19"}, {})
    assert "smoke-lcb-2" not in [i["id"] for i in narrow]
    edge, _ = bench.prepare(None, {"start_date": "2024-06-15", "end_date": "2024-06-15"}, {})
    assert [i["id"] for i in edge] == ["smoke-lcb-3"]
    limited, rest = bench.prepare(None, {"limit": 1}, {})
    assert [i["id"] for i in limited] == ["smoke-lcb-0"] and any("beyond limit" in s["reason"] for s in rest)
    with pytest.raises(UserError, match="overlap"):
        lcb.training_problems(None, {"train_before": "2024-12-01"})
    with pytest.raises(UserError, match="before start_date"):
        bench.prepare(None, {"start_date": "2025-01-01", "end_date": "2024-01-01"}, {})


def test_lcb_release_files_of_a_downloaded_folder(tmp_path):
    rows = jsonl(DATA / "livecodebench.smoke.jsonl")
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[3:]))
    (tmp_path / "test2.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    assert [r["question_id"] for r in lcb.load_rows(tmp_path, "release_v1")] == ["smoke-lcb-3", "smoke-lcb-4"]
    assert len(lcb.load_rows(tmp_path, "release_v2")) == 5
    assert [r["question_id"] for r in lcb.load_rows(tmp_path, "v2")][0] == "smoke-lcb-0"
    with pytest.raises(UserError, match="test3.jsonl"):
        lcb.load_rows(tmp_path, "release_v3")
    items, _ = lcb.LiveCodeBench().prepare(str(tmp_path), {"release": "release_v2"}, {})
    assert len(items) == 3
    assert lcb.RELEASE_FILES["release_v5"] == [
        "test.jsonl",
        "test2.jsonl",
        "test3.jsonl",
        "test4.jsonl",
        "test5.jsonl",
    ]
    assert all(
        d["url"].startswith(f"https://huggingface.co/datasets/{lcb.HF_REPO}/resolve/{lcb.REVISION}/")
        for d in lcb.DOWNLOADS["livecodebench"]
    )


def test_lcb_stdout_comparison_follows_livecodebench():
    ok = lcb.stdout_matches
    assert ok("15\n7.5\n", "15\n7.50\n")
    assert ok("15   \n7.5\t\n\n\n", "15\n7.5")  # trailing whitespace and blank lines
    assert ok("  1 2 3\n", "1 2 3\n")
    assert ok("1.0 2\n", "1 2.00\n")  # numbers compared as decimals
    assert ok("1e3\n", "1000\n")
    assert not ok("0.3333\n", "0.33333\n")  # no tolerance
    assert not ok("7.49\n", "7.5\n")
    assert ok("1 2\n", "1  2\n")  # equal as numbers, token by token
    assert not ok("a b\n", "a  b\n")  # text must match exactly
    assert not ok("YES\n", "yes\n")
    assert not ok("1\n\n2\n", "1\n2\n")  # an inner blank line is a line
    assert not ok("1\n2\n", "1\n")
    assert not ok("", "0\n")
    assert ok("", "\n")


def test_lcb_returned_values_are_compared_in_the_host():
    def enc(value):
        return encode_value(value, 100_000, 200, 1 << 20, 1000)

    assert lcb.value_matches(enc([2, 3]), "[2, 3]")
    assert lcb.value_matches(enc((2, 3)), "[2, 3]")  # a returned tuple counts as a list
    assert lcb.value_matches(enc(3), "3") and lcb.value_matches(enc(3.0), "3")
    assert lcb.value_matches(enc(True), "true")
    assert not lcb.value_matches(enc([3, 2]), "[2, 3]")
    assert not lcb.value_matches(enc("3"), "3")
    assert not lcb.value_matches(enc([(1, 2)]), "[[1, 2]]")  # only the top level is converted
    assert not lcb.value_matches(["object", "Fake", "<Fake>"], "3")


def test_lcb_answer_reading_takes_the_last_python_block():
    text = "```python\nfirst\n```\nthen\n```\nplain\n```\n```python\nlast\n```\ntrailing ```inline```"
    assert lcb.last_python_block(text) == "last"
    assert lcb.last_python_block("```cpp\nint x;\n```") is None
    assert lcb.last_python_block("no code at all") is None
    assert lcb.last_python_block("```python\nprint(1)\n").strip() == "print(1)"  # cut off before its fence


def test_lcb_prompt_uses_our_words_and_the_starter_code(lcb_items):
    bench = lcb.LiveCodeBench()
    functional = bench.messages(lcb_items["smoke-lcb-0"], cot=False)
    assert functional[0]["role"] == "system" and "```python" in functional[0]["content"]
    assert "def countPairs" in functional[1]["content"] and "starter code" in functional[1]["content"]
    stdin = bench.messages(lcb_items["smoke-lcb-1"], cot=True)[1]["content"]
    assert "standard input" in stdin and "step by step" in stdin
    assert bench.answer_format(lcb_items["smoke-lcb-0"], False).name == "livecodebench:plain"


def test_lcb_reference_solutions_pass_every_test(lcb_items):
    rows = lcb_score(lcb_items, [(k, fenced(v)) for k, v in LCB_REFERENCES.items()])
    for row in rows:
        item = lcb_items[row["id"]]
        assert row["passed"], row
        assert row["reason"] is None and row["tests_total"] == len(lcb.all_tests(item)) == len(row["tests"])
        assert len(row["tests"]) > len(item["public_tests"])  # the private tests ran too


def test_lcb_wrong_answers_fail(lcb_items):
    answers = [
        ("smoke-lcb-0", LCB_REFERENCES["smoke-lcb-0"].replace("< target", "<= target")),
        ("smoke-lcb-1", "n = int(input())\nv = sorted(map(int, input().split()))\nprint(v[-1] + v[-2])\n"),
        (
            "smoke-lcb-1",
            "n = int(input())\nv = sorted(map(int, input().split()))\ns = v[-1] + v[-2]\n"
            "print(s)\nprint(f'{s / 2 - 0.01:.2f}')\n",
        ),
        (
            "smoke-lcb-2",
            "t = int(input())\nfor _ in range(t):\n    s = input()\n"
            "    print('YES' if s.count('(') == s.count(')') else 'NO')\n",
        ),
        # right on the public tests only: hard-coded samples
        ("smoke-lcb-4", "print('world big hello')\n"),
        ("smoke-lcb-3", "class Solution:\n    def wrongName(self, nums):\n        return [nums[0], 1]\n"),
        ("smoke-lcb-0", "class Solution:\n    def countPairs(self, nums, target)\n        return 0\n"),
    ]
    rows = lcb_score(lcb_items, [(k, fenced(v)) for k, v in answers])
    assert [r["passed"] for r in rows] == [False] * len(answers)
    assert [r["reason"] for r in rows[:5]] == ["wrong_output"] * 5
    assert rows[4]["tests"][0]["passed"] and not rows[4]["tests"][-1]["passed"]  # public passed, private not
    assert rows[5]["reason"] == "exception:AttributeError"
    assert rows[6]["reason"] == "exception:SyntaxError" and rows[6]["compile_error"]
    assert not any(r["compile_error"] for r in rows[:6])


def test_lcb_formatting_that_livecodebench_accepts_passes(lcb_items):
    answers = [
        # trailing spaces, a different decimal spelling of the mean, reading through open(0)
        (
            "smoke-lcb-1",
            "data = open(0).read().split()\nv = sorted(map(int, data[1:]))\ns = v[-1] + v[-2]\n"
            "print(s, '  ')\nprint(f'{s / 2:.3f}   ')\n",
        ),
        # sys.exit(0) after the answer ends the program normally
        ("smoke-lcb-4", "import sys\nprint(' '.join(input().split()[::-1]))\nsys.exit(0)\n"),
        # so does a nonzero status: LiveCodeBench's stdin runner swallows every SystemExit
        ("smoke-lcb-4", "import sys\nprint(' '.join(input().split()[::-1]))\nsys.exit(1)\n"),
        # output through the buffer, then exit()
        (
            "smoke-lcb-4",
            "import sys\nsys.stdout.buffer.write((' '.join(input().split()[::-1]) + '\\n').encode())\n"
            "exit()\n",
        ),
        # the answer printed from a thread (a common deep-recursion idiom)
        (
            "smoke-lcb-4",
            "import threading\ndef main():\n    print(' '.join(input().split()[::-1]))\n"
            "threading.Thread(target=main).start()\n",
        ),
        # a module-level function instead of class Solution
        (
            "smoke-lcb-3",
            "def longestRun(nums):\n    best, run = [nums[0], 1], 1\n"
            "    for i in range(1, len(nums)):\n"
            "        run = run + 1 if nums[i] == nums[i - 1] else 1\n"
            "        if run > best[1]:\n            best = [nums[i], run]\n    return best\n",
        ),
        # names from LiveCodeBench's import preamble (List, Counter) without importing them
        (
            "smoke-lcb-0",
            "class Solution:\n    def countPairs(self, nums: List[int], target: int) -> int:\n"
            "        return sum(c for (a, b), c in Counter(combinations(nums, 2)).items() if a + b < target)\n",
        ),
    ]
    rows = lcb_score(lcb_items, [(k, fenced(v)) for k, v in answers])
    assert [r["passed"] for r in rows] == [True] * len(answers), rows


def test_lcb_hostile_answers_fail(lcb_items):
    right0 = LCB_REFERENCES["smoke-lcb-0"]
    answers = [
        ("smoke-lcb-0", "import os\nos._exit(0)\n" + right0),  # exits at import
        (
            "smoke-lcb-0",
            "print('All tests passed: OK')\nclass Solution:\n"
            "    def countPairs(self, nums, target):\n        print('OK')\n        return -1\n",
        ),
        ("smoke-lcb-0", "raise SystemExit(0)\n" + right0),  # SystemExit at import
        (
            "smoke-lcb-0",
            "class Solution:\n    def countPairs(self, nums, target):\n        while True:\n"
            "            pass\n",
        ),  # loops forever
        ("smoke-lcb-4", "print('OK')\nprint('Ran 3 tests: all passed')\n"),  # a fake report as output
        ("smoke-lcb-4", "import os\nprint(' '.join(input().split()[::-1]))\nos._exit(0)\n"),  # unflushed exit
        ("smoke-lcb-4", "while True:\n    pass\n"),
        ("smoke-lcb-1", "import sys\nsys.stdout = open('/dev/null', 'w')\nprint('15')\n"),
    ]
    rows = lcb_score(lcb_items, [(k, fenced(v)) for k, v in answers], timeout=1.0)
    assert [r["passed"] for r in rows] == [False] * len(answers)
    reasons = [r["reason"] for r in rows]
    assert reasons[0] == "killed"
    assert reasons[1] == "wrong_output"
    assert reasons[2] == "exception:SystemExit"
    assert reasons[3] == "timeout"
    assert reasons[4] == "wrong_output"
    assert reasons[5] in ("wrong_output", "killed")
    assert reasons[6] == "timeout"
    assert reasons[7] == "wrong_output"
    rows = lcb_score(lcb_items, [("smoke-lcb-0", "I would rather not write code.")])
    assert rows[0]["reason"] == "parse:no_code" and rows[0]["tests"] == []


# ============================================================ BigCodeBench


@pytest.fixture(scope="module")
def bcb_full() -> tuple[dict[str, dict], list[dict]]:
    items, skipped = bcb.BigCodeBenchFull().prepare(None, {"timeout": 10}, {})
    return {item["id"]: item for item in items}, skipped


def bcb_score(items, answers: list[tuple[str, str]], timeout: float = 10.0, **settings) -> list[dict]:
    samples = [Sample(item_id, n, text) for n, (item_id, text) in enumerate(answers)]
    cfg = {"evaluation": {"benchmarks": {"bigcodebench_full": {"timeout": timeout, **settings}}}}
    return bcb.BigCodeBenchFull().score(items, samples, MODE, cfg, workers=2)


def test_bcb_smoke_rows_are_in_the_dataset_format():
    full = jsonl(DATA / "bigcodebench_full.smoke.jsonl")
    hard = jsonl(DATA / "bigcodebench_hard.smoke.jsonl")
    assert 3 <= len(full) <= 6 and hard
    for row in full:
        assert set(row) == BCB_FIELDS
        assert row["task_id"].startswith("smoke-")
        assert isinstance(row["libs"], str) and isinstance(row["doc_struct"], str)
        assert set(bcb.parse_libs(row["libs"])) <= {
            "re",
            "collections",
            "statistics",
            "json",
            "csv",
            "os",
            "random",
        }
        assert json.loads(row["doc_struct"])["description"]
        assert row["complete_prompt"].startswith(row["code_prompt"])
        assert (
            row["instruct_prompt"].rstrip().endswith("```") and row["code_prompt"] in row["instruct_prompt"]
        )
        assert row["entry_point"] == "task_func" and "class TestCases(unittest.TestCase)" in row["test"]
    by_id = {row["task_id"]: row for row in full}
    for row in hard:
        assert set(row) == BCB_FIELDS | HARD_EXTRA
        assert {k: row[k] for k in BCB_FIELDS} == by_id[row["task_id"]]  # the same task as in Full
        # the Hard selection's own criteria: more than two libraries, a long reference
        assert len(bcb.parse_libs(row["libs"])) > 2 and len(row["canonical_solution"]) > 426


def test_bcb_test_methods_are_read_from_the_source_by_ast():
    source = (
        "import unittest\nclass Base(unittest.TestCase):\n    def test_inherited(self):\n        pass\n"
        "    def helper(self):\n        pass\n"
        "class TestCases(Base):\n    def test_b(self):\n        pass\n"
        "    @unittest.skip('slow')\n    def test_a(self):\n        pass\n"
        "    @unittest.expectedFailure\n    def test_c(self):\n        pass\n"
    )
    methods, allowed = bcb.test_methods(source)
    assert methods == ["test_a", "test_b", "test_c", "test_inherited"]
    assert allowed == {
        "test_a": ["skipped"],
        "test_b": [],
        "test_c": ["expected_failure"],
        "test_inherited": [],
    }
    assert bcb.test_methods("import unittest\nclass Other(unittest.TestCase):\n    pass\n") == ([], {})
    assert bcb.guard_modules("import numpy as np\nimport pandas\nimport os\n") == [
        "numpy.testing",
        "pandas.testing",
    ]


def test_bcb_reference_solutions_pass(bcb_full):
    items, skipped = bcb_full
    assert skipped == [] and sorted(items) == ["smoke-bcb/0", "smoke-bcb/1", "smoke-bcb/2", "smoke-bcb/3"]
    hard, hard_skipped = bcb.BigCodeBenchHard().prepare(None, {"timeout": 10}, {})
    assert hard_skipped == [] and [i["id"] for i in hard] == ["smoke-bcb/2"]
    # code_prompt + canonical_solution, answered the way a model answers, passes every test
    rows_by_id = {row["task_id"]: row for row in jsonl(DATA / "bigcodebench_full.smoke.jsonl")}
    answers = [
        (task_id, fenced(row["code_prompt"] + row["canonical_solution"]))
        for task_id, row in rows_by_id.items()
    ]
    rows = bcb_score(items, answers)
    for row in rows:
        assert row["passed"] and row["reason"] is None, row
        assert [t["test"] for t in row["tests"]] == items[row["id"]]["test_methods"]
    # uncalibrated too: the answer holds its imports
    rows = bcb_score(items, answers, calibrated=False)
    assert all(row["passed"] for row in rows), rows


def test_bcb_calibration_supplies_the_prompts_imports(bcb_full):
    items, _ = bcb_full
    no_imports = 'def task_func(text):\n    return dict(Counter(re.findall(r"[a-z\']+", text.lower())))\n'
    calibrated = bcb_score(items, [("smoke-bcb/0", fenced(no_imports))])
    plain = bcb_score(items, [("smoke-bcb/0", fenced(no_imports))], calibrated=False)
    assert calibrated[0]["passed"]
    assert not plain[0]["passed"] and plain[0]["reason"] == "exception:NameError"


def test_bcb_prepare_keeps_unrunnable_tasks_and_records_why(tmp_path):
    rows = jsonl(DATA / "bigcodebench_full.smoke.jsonl")
    missing_lib = dict(rows[0], task_id="fixture/missing-lib", libs="['re', 'no_such_module_here_xyz']")
    bad_reference = dict(rows[1], task_id="fixture/bad-reference", canonical_solution="    return (0, 0)\n")
    no_tests = dict(rows[0], task_id="fixture/no-tests", test="import unittest\n")
    broken = {k: v for k, v in rows[0].items() if k != "test"}
    path = tmp_path / "BigCodeBench.jsonl"
    path.write_text(
        "".join(json.dumps(r) + "\n" for r in [rows[0], missing_lib, bad_reference, no_tests, broken])
    )
    items, skipped = bcb.BigCodeBenchFull().prepare(str(path), {"timeout": 10}, {})
    # BigCodeBench counts every task: a missing library or a failing ground truth is
    # recorded in the task, which stays (only rows that are not tasks at all are skipped)
    assert [i["id"] for i in items] == ["smoke-bcb/0", "fixture/missing-lib", "fixture/bad-reference"]
    by_id = {i["id"]: i for i in items}
    assert by_id["fixture/missing-lib"]["missing_libs"] == ["no_such_module_here_xyz"]
    assert by_id["fixture/bad-reference"]["reference_failure"].startswith("test_")
    assert by_id["smoke-bcb/0"]["missing_libs"] == [] and by_id["smoke-bcb/0"]["reference_failure"] is None
    reasons = {s["id"]: s["reason"] for s in skipped}
    assert reasons["fixture/no-tests"] == "no test methods found in TestCases"
    assert {"id": "smoke-bcb/0", "reason": "malformed row: missing test"} in skipped
    assert len(skipped) == 2
    # every sample of the task without its library fails with the reason; nothing is dropped
    answer = fenced(rows[0]["complete_prompt"] + "\n" + rows[0]["canonical_solution"])
    scored = bcb_score(by_id, [("fixture/missing-lib", answer), ("smoke-bcb/0", answer)])
    assert scored[0]["passed"] is False and "no_such_module_here_xyz" in scored[0]["reason"]
    assert scored[1]["passed"] is True
    summary = bcb.BigCodeBenchFull().summarise(by_id, scored, MODE)
    assert summary["pass@1"] == 0.5
    assert summary["ground_truth"]["missing_libs"] == ["fixture/missing-lib"]
    # only the tasks whose ground truth ran here are offered to the layer's own check
    assert [a.item_id for a in bcb.BigCodeBenchFull().reference_answers(items)] == ["smoke-bcb/0"]


def test_bcb_reads_the_parquet_release(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = jsonl(DATA / "bigcodebench_full.smoke.jsonl")
    path = tmp_path / "v0.1.4-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert bcb.read_rows(path) == rows


def test_bcb_wrong_and_hostile_answers_fail(bcb_full):
    items, _ = bcb_full
    target = "smoke-bcb/0"
    answers = {
        "wrong": "import re\nfrom collections import Counter\ndef task_func(text):\n"
        "    return dict(Counter(text.split()))\n",
        "exit_at_import": "import os\nos._exit(0)\n",
        "exit_in_call": "import os\ndef task_func(text):\n    os._exit(0)\n",
        "fake_report": "print('....\\n----------------------------------------------------------------------\\n"
        "Ran 4 tests in 0.001s\\n\\nOK')\nimport sys\nsys.exit(0)\n",
        "fake_report_in_call": "def task_func(text):\n    print('OK')\n    return {}\n",
        "patch_assert_at_import": "import unittest\n"
        "unittest.TestCase.assertEqual = lambda self, a, b, msg=None: None\n"
        "unittest.TestCase.assertDictEqual = lambda self, a, b, msg=None: None\n"
        "def task_func(text):\n    return {}\n",
        "patch_assert_in_call": "import unittest\ndef task_func(text):\n"
        "    unittest.TestCase.assertEqual = lambda self, a, b, msg=None: None\n"
        "    return {}\n",
        "patch_assert_code": "import unittest\nunittest.TestCase.assertEqual.__code__ = "
        "(lambda self, a, b, msg=None: None).__code__\ndef task_func(text):\n    return {}\n",
        "patch_failure_exception": "import unittest\nunittest.TestCase.failureException = KeyboardInterrupt\n"
        "def task_func(text):\n    return {}\n",
        "patch_result": "import unittest\nunittest.TestResult.addFailure = lambda self, test, err: None\n"
        "def task_func(text):\n    return {}\n",
        "patch_test_object": "import sys\ndef task_func(text):\n"
        "    sys._getframe(1).f_locals['self'].assertEqual = lambda *a, **k: None\n"
        "    return {}\n",
        "fake_unittest_module": "import sys, types\nfake = types.ModuleType('unittest')\n"
        "class TestCase:\n    def __init__(self, *a, **k):\n        pass\n"
        "fake.TestCase = TestCase\nsys.modules['unittest'] = fake\n"
        "def task_func(text):\n    return {}\n",
        "patch_mock": "import unittest.mock\n"
        "unittest.mock.patch = lambda *a, **k: (lambda f: (lambda *x, **y: None))\n"
        "def task_func(text):\n    return {}\n",
        "system_exit_at_import": "raise SystemExit(0)\n",
        "system_exit_in_call": "def task_func(text):\n    raise SystemExit(0)\n",
        "skip_from_solution": "import unittest\ndef task_func(text):\n    raise unittest.SkipTest('not today')\n",
        "loops_forever": "def task_func(text):\n    while True:\n        pass\n",
        "syntax_error": "def task_func(text)\n    return {}\n",
    }
    # strict about skips the answer raises (the official harness, and our default, pass them)
    rows = bcb_score(
        items, [(target, fenced(code)) for code in answers.values()], timeout=2.0, answer_skips="fail"
    )
    got = {name: row for name, row in zip(answers, rows)}
    assert not any(row["passed"] for row in rows), {n: r["reason"] for n, r in got.items() if r["passed"]}
    expect = {
        "wrong": "wrong_output",
        "exit_at_import": "killed",
        "exit_in_call": "killed",
        "fake_report": "exception:SystemExit",
        "fake_report_in_call": "wrong_output",
        "patch_assert_at_import": "integrity:",
        "patch_assert_in_call": "integrity:",
        "patch_assert_code": "exception:RuntimeError",
        "patch_failure_exception": "integrity:",
        "patch_result": "integrity:",
        "patch_test_object": "integrity:instance.assertEqual",
        "fake_unittest_module": "integrity:",
        "patch_mock": "integrity:",
        "system_exit_at_import": "exception:SystemExit",
        "system_exit_in_call": "exception:SystemExit",
        "skip_from_solution": "skipped",
        "loops_forever": "timeout",
        "syntax_error": "exception:SyntaxError",
    }
    for name, prefix in expect.items():
        assert got[name]["reason"].startswith(prefix), (name, got[name]["reason"])
    assert "TestCase.assertEqual" in got["patch_assert_at_import"]["reason"]
    assert "canary" in got["patch_assert_at_import"]["reason"]
    assert "sys.modules.unittest" in got["fake_unittest_module"]["reason"]
    assert got["syntax_error"]["compile_error"] and not got["wrong"]["compile_error"]
    assert bcb_score(items, [(target, "no code here")])[0]["reason"] == "parse:no_code"


def test_bcb_a_skip_raised_by_the_answer_passes_as_officially_and_is_flagged(bcb_full):
    """BigCodeBench's untrusted_check counts every skip as a pass, so the headline verdict
    does too; the row says the sample passed only through skips it raised."""
    items, _ = bcb_full
    target = sorted(items)[0]
    skip = fenced(
        "import unittest\ndef task_func(*args, **kwargs):\n    raise unittest.SkipTest('not today')\n"
    )
    (official,) = bcb_score(items, [(target, skip)], timeout=5.0)
    assert official["passed"] and official["passed_through_skips"], official
    assert all(t.get("skipped_by_answer") for t in official["tests"])
    (right,) = bcb_score(items, [(target, fenced(items[target]["reference"]))], timeout=5.0)
    assert right["passed"] and not right["passed_through_skips"]
    (strict,) = bcb_score(items, [(target, skip)], timeout=5.0, answer_skips="fail")
    assert not strict["passed"] and strict["reason"] == "skipped"


def test_bcb_host_accepts_only_a_well_formed_report_for_the_test_it_asked():
    def result(value):
        return SimpleNamespace(status="ok", value=encode_value(value, 1000, 50, 1 << 16, 200), seconds=0.0)

    good = {"nonce": "n1", "method": "test_a", "outcome": "passed", "detail": None, "violations": []}
    assert bcb.judge_test(result(good), "test_a", "n1", [])[:2] == (True, None)
    assert bcb.judge_test(result(good), "test_a", "other", [])[1] == "integrity:nonce"
    assert bcb.judge_test(result(good), "test_b", "n1", [])[1] == "integrity:nonce"
    assert bcb.judge_test(result({**good, "extra": 1}), "test_a", "n1", [])[1] == "integrity:malformed_report"
    assert (
        bcb.judge_test(result({**good, "outcome": "PASSED"}), "test_a", "n1", [])[1]
        == "integrity:malformed_report"
    )
    assert bcb.judge_test(result("passed"), "test_a", "n1", [])[1] == "integrity:malformed_report"
    assert (
        bcb.judge_test(result({**good, "violations": ["canary"]}), "test_a", "n1", [])[1]
        == "integrity:canary"
    )
    skipped = {**good, "outcome": "skipped"}
    assert bcb.judge_test(result(skipped), "test_a", "n1", [], "fail")[1] == "skipped"
    passed, reason, report = bcb.judge_test(result(skipped), "test_a", "n1", [])  # BigCodeBench's verdict
    assert passed is True and reason is None and report["skipped_by_answer"] is True
    assert bcb.judge_test(result(skipped), "test_a", "n1", ["skipped"])[0] is True
    for status in ("timeout", "killed", "error"):
        assert bcb.judge_test(SimpleNamespace(status=status, value=None), "t", "n", [])[1] == status


def test_bcb_prompt_is_the_instruct_prompt(bcb_full):
    items, _ = bcb_full
    messages = bcb.BigCodeBenchFull().messages(items["smoke-bcb/0"], cot=False)
    assert (
        messages[0]["role"] == "system"
        and messages[1]["content"] == items["smoke-bcb/0"]["instruct_prompt"].strip()
    )
    assert "step by step" in bcb.BigCodeBenchFull().messages(items["smoke-bcb/0"], cot=True)[1]["content"]
    assert bcb.DOWNLOADS["bigcodebench_full"][0]["url"].endswith("/data/v0.1.4-00000-of-00001.parquet")
    assert bcb.FULL_REVISION in bcb.DOWNLOADS["bigcodebench_full"][0]["url"]
    assert bcb.HARD_REVISION in bcb.DOWNLOADS["bigcodebench_hard"][0]["url"]


def test_summaries_use_the_codegen_base(lcb_items):
    rows = lcb_score(
        lcb_items, [("smoke-lcb-0", fenced(LCB_REFERENCES["smoke-lcb-0"])), ("smoke-lcb-1", "nothing")]
    )
    summary = lcb.LiveCodeBench().summarise(lcb_items, rows, MODE)
    assert summary["pass@1"] == 0.5 and summary["groups"]["easy"]["pass@1"] == 1.0
    assert summary["groups"]["medium"]["pass@1"] == 0.0 and summary["unparsed"] == 1


def test_adapters_declare_their_pinned_downloads():
    for bench, count in ((lcb.LiveCodeBench(), 6), (bcb.BigCodeBenchFull(), 1), (bcb.BigCodeBenchHard(), 1)):
        assert len(bench.downloads) == count and bench.task == "codegen" and bench.smoke
        for spec in bench.downloads:
            assert set(spec) == {"url", "file", "sha256"} and "/resolve/main/" not in spec["url"]
            assert spec["url"].format(revision="unused") == spec["url"]  # the rule formats urls
    assert [d["file"] for d in lcb.LiveCodeBench.downloads] == list(lcb.FILES)
