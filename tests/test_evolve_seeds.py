"""EvolveCoder's seed sources (paper 002, Sec. 2.1): the shipped seed set (every reference
solution passes its own tests), each source's loader on hand-written rows in that
dataset's format, malformed rows with their recorded reasons, the file readers, and the
download specs."""

import json
import subprocess
import sys

import pytest

from selfplay.errors import UserError
from selfplay.tracks.evolve import downloads, seeds


def reasons(skipped):
    return [s["reason"] for s in skipped]


# --- the shipped set ----------------------------------------------------------------


def _run_stdin(code, stdin):
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _expected_value(output):
    # TACO and APPS write a call's return value wrapped in a one-element list
    return output[0] if isinstance(output, list) and len(output) == 1 else output


def test_shipped_set_has_five_problems_per_source_and_all_solutions_pass():
    records, skipped = seeds.shipped_records()
    assert skipped == []
    assert [r["source"] for r in records] == [s for s in seeds.SOURCES for _ in range(5)]
    assert len({r["id"] for r in records}) == 25
    formats = set()
    for rec in records:
        tests = rec["tests"]
        formats.add(tests["format"])
        assert rec["question"] and rec["solutions"] and len(tests["inputs"]) == len(tests["outputs"]) >= 2
        for code in rec["solutions"]:
            for given, want in zip(tests["inputs"], tests["outputs"]):
                if tests["format"] == "stdin":
                    assert _run_stdin(code, given).split() == want.split(), (rec["id"], given)
                else:
                    space = {}
                    exec(compile(code, rec["id"], "exec"), space)  # our own reference code
                    assert space[rec["entry"]](*given) == _expected_value(want), (rec["id"], given)
    assert formats == {"stdin", "call"}
    # the PrimeIntellect task wrapper is gone from the statement
    pi = next(r for r in records if r["source"] == "primeintellect")
    assert not pi["question"].startswith("Solve the following") and "return the code" not in pi["question"]


def test_shipped_rows_keep_each_dataset_format():
    taco = next(seeds.read_rows(seeds.shipped_file("taco")))
    assert isinstance(taco["solutions"], str) and isinstance(json.loads(taco["input_output"]), dict)
    cc = list(seeds.read_rows(seeds.shipped_file("code_contests")))
    assert {lang for row in cc for lang in row["solutions"]["language"]} == {1, 2, 3}
    pi = next(seeds.read_rows(seeds.shipped_file("primeintellect")))
    assert pi["gold_standard_solution"].startswith("```python") and isinstance(pi["verification_info"], str)
    cf = list(seeds.read_rows(seeds.shipped_file("codeforces")))
    assert len(cf) == 6 and len({row["id"] for row in cf}) == 5  # two generations for one problem
    records, _ = seeds.load_files("codeforces", [seeds.shipped_file("codeforces")])
    assert [len(r["solutions"]) for r in records] == [1, 1, 1, 2, 1]


# --- TACO and APPS ------------------------------------------------------------------


def taco_row(question="Print the sum of two numbers.", solutions=None, io=None, starter=""):
    return {
        "question": question,
        "solutions": json.dumps(
            solutions if solutions is not None else ["print(sum(map(int, input().split())))"]
        ),
        "input_output": json.dumps(io if io is not None else {"inputs": ["1 2\n"], "outputs": ["3\n"]}),
        "starter_code": starter,
        "difficulty": "EASY",
    }


def test_taco_rows_and_their_reasons():
    rows = [
        taco_row(),
        taco_row(
            solutions=["def f(x):\n    return x * 2\n", "def f(x):\n    return x * 2\n"],
            io={"fn_name": "f", "inputs": [[2]], "outputs": [[4]]},
            starter="def f(x):\n",
        ),
        {**taco_row(), "solutions": "[not json"},
        taco_row(solutions=["print 'python two'"]),
        taco_row(question="   "),
        {**taco_row(), "input_output": "{broken"},
        {**taco_row(), "solutions": ""},
        taco_row(io={"inputs": ["1\n"], "outputs": []}),
    ]
    records, skipped = seeds.normalise("taco", rows, split="train")
    assert [r["id"] for r in records] == ["taco/train/0", "taco/train/1"]
    assert records[0]["tests"] == {"format": "stdin", "inputs": ["1 2\n"], "outputs": ["3\n"]}
    assert "entry" not in records[0] and "starter_code" not in records[0]
    call = records[1]
    assert call["entry"] == "f" and call["tests"]["format"] == "call" and call["tests"]["fn_name"] == "f"
    assert call["solutions"] == ["def f(x):\n    return x * 2\n"]  # the repeat is dropped
    assert call["starter_code"] == "def f(x):\n"
    assert reasons(skipped) == [
        "unparsable JSON in field solutions",
        "no solution parses as Python 3",
        "empty field question",
        "unparsable JSON in field input_output",
        "no Python solution",
        "input_output has no matching inputs and outputs lists",
    ]
    assert [s["row"] for s in skipped] == [2, 3, 4, 5, 6, 7]
    assert all(s["source"] == "taco" and s["split"] == "train" for s in skipped)


def test_apps_ids_carry_the_split_and_long_integers_parse():
    huge = "9" * 5000  # longer than Python's default limit for reading an int from text
    rows = [
        {"problem_id": 7, **taco_row(io={"inputs": ["x\n"], "outputs": [huge + "\n"]})},
        {"problem_id": 7, **taco_row()},
        {**taco_row()},
        {"problem_id": 8, **taco_row(), "input_output": ""},
    ]
    rows[0]["input_output"] = '{"inputs": [[' + huge + ']], "outputs": [[1]], "fn_name": "g"}'
    rows[0]["solutions"] = json.dumps(["def g(n):\n    return 1\n"])
    records, skipped = seeds.normalise("apps", rows, split="test", max_solutions=1)
    assert [r["id"] for r in records] == ["apps/test/7", "apps/test/8"]
    assert records[0]["tests"]["inputs"][0][0] == 10**5000 - 1
    assert "tests" not in records[1]  # no tests is not a reason to drop
    assert reasons(skipped) == ["duplicate id", "missing field problem_id"]


# --- PrimeIntellect -----------------------------------------------------------------


def pi_row(
    pid="p1",
    statement="Print the square of n.",
    gold="```python\nn = int(input())\nprint(n * n)\n```",
    info=None,
    task="verifiable_code",
):
    info = (
        info
        if info is not None
        else {
            "language": "python",
            "test_cases": [{"type": "stdin_stdout", "input": "3\n", "output": "9\n", "fn_name": None}],
        }
    )
    return {
        "problem_id": pid,
        "source": "unit",
        "task_type": task,
        "in_source_id": pid,
        "prompt": "Solve the following coding problem using the programming language python:\n\n"
        + statement
        + "\n\nThe input will be stdin and you should print your solution to stdout\n\n\n"
        "Now solve the problem and return the code.",
        "gold_standard_solution": gold,
        "verification_info": json.dumps(info),
        "metadata": "{}",
    }


def test_primeintellect_rows_and_their_reasons():
    call = {
        "language": "python",
        "test_cases": [{"type": "function_call", "fn_name": "sq", "input": "[3]", "output": "[9]"}],
    }
    rows = [
        pi_row(),
        pi_row("p2", gold="def sq(n):\n    return n * n\n", info=call),  # an unfenced solution is taken whole
        pi_row("p3", task="llm_judgeable"),
        pi_row("p4", info={"language": "cpp", "test_cases": []}),
        {**pi_row("p5"), "verification_info": "{oops"},
        pi_row("p6", gold=None),
        pi_row("p7", gold="```python\nprint(1)\n"),  # a fence that never closes
        pi_row("p8", statement=""),
        pi_row("p9", info={"language": "python", "test_cases": [{"type": "stdin_stdout", "input": "1"}]}),
    ]
    records, skipped = seeds.normalise("primeintellect", rows)
    assert [r["id"] for r in records] == ["primeintellect/p1", "primeintellect/p2"]
    assert records[0]["question"] == "Print the square of n."
    assert records[0]["solutions"] == ["n = int(input())\nprint(n * n)\n"]
    assert records[1]["tests"] == {"format": "call", "fn_name": "sq", "inputs": ["[3]"], "outputs": ["[9]"]}
    assert records[1]["entry"] == "sq"
    assert reasons(skipped) == [
        "not a coding task (task_type llm_judgeable)",
        "not a Python task (language cpp)",
        "unparsable JSON in field verification_info",
        "no Python solution",
        "no Python solution",
        "empty problem statement",
        "verification_info test_cases are not a list of {input, output}",
    ]
    assert [s["id"] for s in skipped] == ["p3", "p4", "p5", "p6", "p7", "p8", "p9"]


def test_primeintellect_statement_keeps_text_without_the_wrapper():
    assert seeds.primeintellect_statement("Plain statement.") == "Plain statement."


# --- CodeContests -------------------------------------------------------------------


def cc_row(
    name="1A. Sum",
    languages=(3,),
    programs=("print(sum(map(int, input().split())))",),
    public=(["1 2\n"], ["3\n"]),
    private=(["5 5\n"], ["10\n"]),
    description="Add two numbers.",
):
    return {
        "name": name,
        "description": description,
        "public_tests": {"input": list(public[0]), "output": list(public[1])},
        "private_tests": {"input": list(private[0]), "output": list(private[1])},
        "generated_tests": {"input": ["9 9\n"], "output": ["18\n"]},
        "solutions": {"language": list(languages), "solution": list(programs)},
        "source": 2,
        "difficulty": 7,
    }


def test_code_contests_keeps_python3_only_and_public_plus_private_tests():
    rows = [
        cc_row(
            languages=(2, 1, 3),
            programs=("int main(){}", "print 'py2'", "print(sum(map(int, input().split())))"),
        ),
        cc_row("2B. Cpp only", languages=(2,), programs=("int main(){}",)),
        cc_row("3C. Py2 only", languages=(1,), programs=("print 'x'",)),
        cc_row("4D. Broken tests", public=(["1\n", "2\n"], ["1\n"])),
        cc_row("5E. No statement", description=""),
        {**cc_row("6F. No solutions"), "solutions": None},
        cc_row("7G. Py3 that is Python 2", languages=(3,), programs=("print 'x'",)),
    ]
    records, skipped = seeds.normalise("code_contests", rows, split="valid")
    assert len(records) == 1
    rec = records[0]
    assert rec["id"] == "code_contests/valid/1A. Sum"
    assert rec["solutions"] == ["print(sum(map(int, input().split())))"]
    assert rec["tests"] == {"format": "stdin", "inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]}
    assert reasons(skipped) == [
        "no Python solution",
        "no Python solution",
        "field public_tests has 2 inputs but 1 outputs",
        "empty field description",
        "missing field solutions",
        "no solution parses as Python 3",
    ]


# --- Codeforces ---------------------------------------------------------------------


def cf_row(pid="100/A", generation="<think>easy</think>\n```python\nprint(input()[::-1])\n```", **extra):
    row = {
        "id": pid,
        "title": "Mirror",
        "description": "Print the string reversed.",
        "input_format": "One line with a string.",
        "output_format": "The reversed string.",
        "note": None,
        "examples": [{"input": "ab\n", "output": "ba\n"}],
        "interaction_format": None,
        "generation": generation,
    }
    row.update(extra)
    return row


def test_codeforces_groups_generations_and_joins_official_tests():
    rows = [
        cf_row(),
        cf_row(generation="```python\nimport sys\nprint(sys.stdin.readline().strip()[::-1])\n```\nDone."),
        cf_row("100/B", generation="I think the answer is 42."),  # no program at all
        cf_row("100/C", interaction_format="Ask at most 20 queries."),
        cf_row("100/D", generation="```python\nprint 'py2'\n```"),
        {"title": "no id"},
    ]
    problems = {
        "100/A": {"id": "100/A", "official_tests": [{"input": "xyz\n", "output": "zyx\n"}]},
        "100/E": {"id": "100/E", "official_tests": []},
    }
    records, skipped = seeds.normalise("codeforces", rows, problems=problems)
    assert len(records) == 1
    rec = records[0]
    assert rec["id"] == "codeforces/100/A" and len(rec["solutions"]) == 2
    assert rec["question"] == (
        "Mirror\n\nPrint the string reversed.\n\nInput\nOne line with a string.\n\n"
        "Output\nThe reversed string."
    )
    assert rec["tests"] == {"format": "stdin", "inputs": ["xyz\n"], "outputs": ["zyx\n"]}
    assert [(s["id"], s["reason"]) for s in skipped] == [
        (None, "missing field id"),
        ("100/B", "no Python solution"),
        ("100/C", "interactive problem"),
        ("100/D", "no solution parses as Python 3"),
        ("100/E", "no Python solution"),
    ]
    # without the problem rows the statement's examples are the tests
    records, _ = seeds.normalise("codeforces", rows[:1])
    assert records[0]["tests"]["inputs"] == ["ab\n"]


# --- files and downloads ------------------------------------------------------------


def test_read_rows_parquet_arrow_json_and_unknown(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [cc_row(), cc_row("2B. Other")]
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, tmp_path / "cc.parquet")
    with pa.OSFile(str(tmp_path / "cc.arrow"), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    (tmp_path / "cc.json").write_text(json.dumps(rows))
    for name in ("cc.parquet", "cc.arrow"):
        got = list(seeds.read_rows(tmp_path / name, seeds.COLUMNS["code_contests"]))
        assert [r["name"] for r in got] == ["1A. Sum", "2B. Other"] and "generated_tests" not in got[0]
        records, skipped = seeds.load_files("code_contests", [tmp_path / name], split="train")
        assert len(records) == 2 and skipped == []
    assert len(list(seeds.read_rows(tmp_path / "cc.json"))) == 2
    (tmp_path / "bad.jsonl").write_text('{"a": 1}\nnot json\n')
    with pytest.raises(UserError, match="bad.jsonl:2"):
        list(seeds.read_rows(tmp_path / "bad.jsonl"))
    with pytest.raises(UserError, match="unknown dataset file type"):
        list(seeds.read_rows(tmp_path / "rows.csv"))
    with pytest.raises(UserError, match="unknown seed source"):
        seeds.normalise("mbpp", [])


def test_download_specs():
    rows = downloads.rule_downloads("code_contests")
    assert len(rows) == 41 and {r["split"] for r in rows} == {"train", "valid", "test"}
    assert rows[0]["url"] == (
        "https://huggingface.co/datasets/deepmind/code_contests/resolve/"
        "802411c3010cb00d1b05bad57ca77365a3c699d6/"
        "data/train-00000-of-00039-e991a271dbfa9925.parquet"
    )
    assert (
        rows[0]["file"] == "data__train-00000-of-00039-e991a271dbfa9925.parquet" and rows[0]["sha256"] is None
    )
    assert sum(r["sha256"] is not None for r in rows) == 2
    pinned = downloads.rule_downloads("code_contests", sha256={rows[0]["file"]: "ab" * 32})
    assert pinned[0]["sha256"] == "ab" * 32
    assert len({r["file"] for r in downloads.rule_downloads("taco")}) == 10
    with pytest.raises(UserError, match="no confirmed revision"):
        downloads.rule_downloads("apps")
    apps = downloads.rule_downloads("apps", revision="main")
    assert [r["url"].rsplit("/", 2)[1:] for r in apps] == [["main", "train.jsonl"], ["main", "test.jsonl"]]
    with pytest.raises(UserError, match="not pinned"):
        downloads.rule_downloads("codeforces_problems", revision="main")
    listing = [
        "README.md",
        "data/train-00000-of-00002.parquet",
        "data/train-00001-of-00002.parquet",
        "data/test-00000-of-00001.parquet",
        "verifiable/train-00000-of-00001.parquet",
    ]
    got = downloads.rule_downloads("codeforces_problems", revision="abc", listing=listing)
    assert [(r["path"], r["split"]) for r in got] == [
        ("data/test-00000-of-00001.parquet", "test"),
        ("data/train-00000-of-00002.parquet", "train"),
        ("data/train-00001-of-00002.parquet", "train"),
    ]
    for spec in downloads.DOWNLOADS.values():
        assert spec.source in seeds.SOURCES
        assert spec.revision == downloads.UNCONFIRMED or len(spec.revision) == 40
        assert spec.files_complete == bool(spec.files)
