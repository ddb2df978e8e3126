"""The four classification adapters: Python builtin identifier swap, PySecDB, CodeXGLUE
defect detection and EquiBench. Each reads its shipped smoke file and a small fixture in
the real format (tests/eval_fixtures), turns bad rows into recorded skips and bad files
into one-line errors, prompts with the code, reads realistic answers, and scores and
aggregates them as the modes document."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from selfplay.errors import UserError
from selfplay.evaluate.benchmark import Sample
from selfplay.evaluate.benchmarks import _classify as common
from selfplay.evaluate.benchmarks.codexglue import CodeXGlueDefect
from selfplay.evaluate.benchmarks.equibench import CATEGORIES, EquiBench
from selfplay.evaluate.benchmarks.identifier_swap import IdentifierSwap
from selfplay.evaluate.benchmarks.pysecdb import PySecDB
from selfplay.evaluate.modes import EvalMode

FIXTURES = Path(__file__).resolve().parent / "eval_fixtures"
BENCHES = [IdentifierSwap(), PySecDB(), CodeXGlueDefect(), EquiBench()]
IDS = [b.name for b in BENCHES]

GREEDY = EvalMode("greedy", 1, False, "single", {"temperature": 0.0})
COT = EvalMode("cot", 1, True, "single", {"temperature": 0.6})
MAJORITY = EvalMode("majority", 9, False, "majority", {"temperature": 1.0})
MEAN = EvalMode("sampled", 16, False, "mean", {"temperature": 0.6})

# The six functions of codexglue.smoke.parquet (written by this project), with whether each
# is vulnerable; the parquet was written from this list with pyarrow (see
# test_the_codexglue_smoke_parquet_holds_exactly_the_listed_functions).
CODEXGLUE_SMOKE = {
    1: (
        True,
        "int copy_name(char *dst, const char *src)\n{\n    char buf[16];\n\n    strcpy(buf, src);\n"
        "    memcpy(dst, buf, sizeof(buf));\n    return 0;\n}\n",
    ),
    2: (
        False,
        "int copy_name_checked(char *dst, size_t dst_size, const char *src)\n{\n    size_t len = strlen(src);"
        "\n\n    if (len >= dst_size)\n        return -1;\n    memcpy(dst, src, len + 1);\n    return 0;\n}\n",
    ),
    3: (
        True,
        "int read_samples(const int *src, int count, int *out)\n{\n    int table[8];\n    int i;\n\n"
        "    if (count > 8)\n        return -1;\n    for (i = 0; i <= count; i++)\n        table[i] = src[i];\n"
        "    memcpy(out, table, count * sizeof(int));\n    return count;\n}\n",
    ),
    4: (
        False,
        "int clamp_index(int idx, int len)\n{\n    if (len <= 0)\n        return -1;\n    if (idx < 0)\n"
        "        return 0;\n    if (idx >= len)\n        return len - 1;\n    return idx;\n}\n",
    ),
    5: (
        True,
        "void close_stream(Stream *s)\n{\n    free(s->buffer);\n    free(s);\n    if (s->on_close)\n"
        "        s->on_close();\n}\n",
    ),
    6: (
        False,
        "void free_stream(Stream *s)\n{\n    if (!s)\n        return;\n    free(s->buffer);\n"
        "    s->buffer = NULL;\n    free(s);\n}\n",
    ),
}


def smoke_items(bench) -> list[dict]:
    items, skipped = bench.prepare(None, {"source": "smoke"}, {})
    assert skipped == []
    return items


def by_id(items: list[dict]) -> dict[str, dict]:
    return {i["id"]: i for i in items}


def other(bench, label: str) -> str:
    return next(x for x in bench.labels if x != label)


def score_and_summarise(bench, items: list[dict], texts_of, mode: EvalMode) -> tuple[list[dict], dict]:
    """Samples texts_of(item) -> list of texts; scored and summarised in ``mode``."""
    samples = [Sample(item["id"], k, text) for item in items for k, text in enumerate(texts_of(item))]
    table = by_id(items)
    rows = bench.score(table, samples, mode, {})
    return rows, bench.summarise(table, rows, mode)


# --------------------------------------------------------------------------- smoke sets
@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_every_smoke_set_reads_cleanly_with_both_labels_and_our_ids(bench):
    items = smoke_items(bench)
    assert 4 <= len(items) <= 8
    assert all(i["id"].startswith("smoke-") for i in items)
    assert len({i["id"] for i in items}) == len(items)
    assert {i["label"] for i in items} == set(bench.labels)
    assert bench.positive in bench.labels
    assert (common.DATA / bench.smoke).is_file()


def test_equibench_smoke_covers_every_category():
    items = smoke_items(EquiBench())
    assert {i["group"] for i in items} == set(CATEGORIES)
    assert sorted(i["label"] for i in items) == ["No"] * 4 + ["Yes"] * 4
    stoke = [i for i in items if i["group"] == "STOKE"]
    assert stoke and all(i["def_in"] == "{ %rdi }" and i["live_out"] == "{ %rax }" for i in stoke)


def test_non_equibench_items_have_no_group():
    for bench in BENCHES[:3]:
        assert {i["group"] for i in smoke_items(bench)} == {None}


def test_the_codexglue_smoke_parquet_holds_exactly_the_listed_functions():
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(common.DATA / CodeXGlueDefect.smoke)
    assert table.schema.names == ["id", "func", "target", "project", "commit_id"]
    assert [table.schema.field(n).type for n in table.schema.names] == [
        pa.int32(),
        pa.string(),
        pa.bool_(),
        pa.string(),
        pa.string(),
    ]
    rows = table.to_pylist()
    assert {r["id"]: (r["target"], r["func"]) for r in rows} == CODEXGLUE_SMOKE
    assert all(len(r["commit_id"]) == 40 and r["project"] == "selfplay-smoke" for r in rows)


def test_identifier_swap_smoke_right_programs_do_what_their_docstrings_say():
    """The program labelled right behaves as documented once the swap line has run; the
    other one (the unmodified GitHub-style body) does not."""
    checks = {
        "report_size": lambda f: f([4, 5, 6]) == 3,
        "add_one": lambda f: f("41") == "42",
        "clamp": lambda f: (f(5, 0, 10), f(-1, 0, 10), f(11, 0, 10)) == (5, 0, 10),
    }

    def behaves(program: str) -> bool:
        namespace: dict = {}
        name = program.split("def ", 1)[1].split("(", 1)[0]
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(program, "<smoke>", "exec"), namespace)  # our own smoke code, no model output
                return checks[name](namespace[name])
        except Exception:
            return False

    items = smoke_items(IdentifierSwap())
    for item in items:
        right = item["program_1"] if item["label"] == "1" else item["program_2"]
        wrong = item["program_2"] if item["label"] == "1" else item["program_1"]
        assert right.startswith(item["swap_statement"] + "\n")
        assert behaves(right), item["id"]
        assert not behaves(wrong), item["id"]


def _run_python(program: str, stdin: str) -> str:
    out = io.StringIO()
    lines = iter(stdin.splitlines())
    namespace = {"input": lambda *_: next(lines), "print": lambda *a, **k: print(*a, **k, file=out)}
    exec(compile(program, "<smoke>", "exec"), namespace)  # our own smoke code, no model output
    return out.getvalue()


def test_equibench_smoke_python_pairs_are_labelled_truthfully():
    inputs = {
        "OJ_A": ["1", "4", "10"],
        "OJ_V": ["3 8", "-2 -9", "5 5"],
        "OJ_VA": ["abba", "abc", "a", "racecar", "ab"],
    }
    for item in smoke_items(EquiBench()):
        if item["group"] not in inputs:
            continue
        same = [
            _run_python(item["program_1"], x) == _run_python(item["program_2"], x)
            for x in inputs[item["group"]]
        ]
        assert all(same) == (item["label"] == "Yes"), item["id"]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_equibench_smoke_dce_pairs_are_labelled_truthfully(tmp_path):
    for item in smoke_items(EquiBench()):
        if item["group"] != "DCE":
            continue
        outputs = []
        for k in ("program_1", "program_2"):
            (tmp_path / f"{k}.c").write_text(item[k])
            subprocess.run(["gcc", "-o", str(tmp_path / k), str(tmp_path / f"{k}.c")], check=True)
            outputs.append(
                subprocess.run([str(tmp_path / k)], capture_output=True, text=True, check=True).stdout
            )
        assert (outputs[0] == outputs[1]) == (item["label"] == "Yes"), item["id"]


# --------------------------------------------------------------------------- real formats
def test_identifier_swap_reads_the_csv_in_both_orders_and_skips_bad_rows():
    items, skipped = IdentifierSwap().prepare(
        str(FIXTURES / "identifier_swap" / "python_builtins_swap.csv"), {}, {}
    )
    table = by_id(items)
    assert sorted(table) == ["row-1:order1", "row-1:order2", "row-2:order1", "row-2:order2"]
    # row 1: answer_index 1, so in file order the right body is program 2
    assert table["row-1:order1"]["label"] == "2" and table["row-1:order2"]["label"] == "1"
    assert "abs(round(a - b), 2)" in table["row-1:order1"]["program_2"]
    # row 2: answer_index 0, the right body comes first in the file
    assert table["row-2:order1"]["label"] == "1" and table["row-2:order2"]["label"] == "2"
    assert table["row-2:order1"]["program_1"] == (
        'sum, len = len, sum\ndef mean(xs):\n    """Arithmetic mean of a '
        'non-empty list.""" \n    return len(xs) / sum(xs)\n'
    )
    reasons = {s["id"]: s["reason"] for s in skipped}
    assert reasons == {
        "row-3": "malformed row: answer_index 2 is not 0 or 1",
        "row-4": "malformed row: classes is not a list of two strings",
        "row-5": "malformed row: classes is not a Python list literal",
        "row-6": "malformed row: answer_index 'one' is not a number",
        "row-7": "malformed row: 2 columns instead of 3",
    }


def test_pysecdb_reads_the_json_records_and_skips_bad_ones():
    items, skipped = PySecDB().prepare(str(FIXTURES / "pysecdb" / "PySecDB.json"), {}, {})
    table = by_id(items)
    assert sorted(table) == ["101", "102", "103"]
    assert [table[i]["label"] for i in ("101", "102", "103")] == ["Yes", "No", "Yes"]
    assert table["101"]["cve"] == "CVE-0000-00000" and table["101"]["origin"] == "MITRE"
    assert table["103"]["pysecdb_label"] == "security"  # "Security" read case-insensitively
    reasons = {s["id"]: s["reason"] for s in skipped}
    assert reasons["104"].startswith("malformed record: label 'bugfix'")
    assert reasons["105"] == "malformed record: no patch content"
    assert reasons["PySecDB.json[5]"] == "malformed record: no id"
    assert reasons["PySecDB.json[6]"] == "malformed record: not a JSON object"
    assert reasons["101"] == "duplicate id"
    assert len(skipped) == 5


def test_pysecdb_also_reads_json_lines_and_a_folder(tmp_path):
    records = json.loads((FIXTURES / "pysecdb" / "PySecDB.json").read_text())[:2]
    folder = tmp_path / "granted"
    folder.mkdir()
    (folder / "pysecdb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    items, skipped = PySecDB().prepare(str(folder), {}, {})
    assert [(i["id"], i["label"]) for i in items] == [("101", "Yes"), ("102", "No")] and skipped == []


def test_pysecdb_max_chars_skips_long_patches_with_the_reason():
    items, skipped = PySecDB().prepare(str(FIXTURES / "pysecdb" / "PySecDB.json"), {"max_chars": 200}, {})
    assert "103" not in by_id(items)
    reason = next(s["reason"] for s in skipped if s["id"] == "103")
    assert reason.startswith("too long: ") and reason.endswith("> max_chars 200")


def test_codexglue_reads_the_repository_jsonl_test_split_only():
    items, skipped = CodeXGlueDefect().prepare(str(FIXTURES / "codexglue"), {}, {})
    assert [(i["id"], i["label"], i["project"]) for i in items] == [
        ("7", "Yes", "FFmpeg"),
        ("8", "No", "qemu"),
    ]
    assert "train_only" not in json.dumps(items)
    reasons = {s["id"]: s["reason"] for s in skipped}
    assert reasons["9"] == "malformed record: target 2 is not true/false or 0/1"
    assert reasons["10"] == "malformed record: no function source (func)"
    assert reasons["test.jsonl:5"] == "malformed record: no id or idx"
    assert reasons["test.jsonl:6"].startswith("not a JSON line")


def test_codexglue_reads_the_hub_parquet_layout(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    data.mkdir()
    schema = pa.schema(
        [
            ("id", pa.int32()),
            ("func", pa.string()),
            ("target", pa.bool_()),
            ("project", pa.string()),
            ("commit_id", pa.string()),
        ]
    )
    rows = [
        {
            "id": 0,
            "func": "int f(void)\n{\n    return 0;\n}\n",
            "target": False,
            "project": "qemu",
            "commit_id": "a" * 40,
        },
        {
            "id": 1,
            "func": "void g(char *p)\n{\n    gets(p);\n}\n",
            "target": True,
            "project": "FFmpeg",
            "commit_id": "b" * 40,
        },
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), data / "test-00000-of-00001.parquet")
    pq.write_table(
        pa.Table.from_pylist([{**rows[0], "id": 5}], schema=schema), data / "train-00000-of-00001.parquet"
    )
    items, skipped = CodeXGlueDefect().prepare(str(tmp_path), {}, {})
    assert [(i["id"], i["label"]) for i in items] == [("0", "No"), ("1", "Yes")] and skipped == []
    (data / "test-00000-of-00001.parquet").write_bytes(b"not parquet")
    with pytest.raises(UserError, match="not a readable Parquet file"):
        CodeXGlueDefect().prepare(str(data / "test-00000-of-00001.parquet"), {}, {})


def test_equibench_reads_the_hub_folder_layout():
    items, skipped = EquiBench().prepare(str(FIXTURES / "equibench"), {}, {})
    table = by_id(items)
    assert sorted(table) == ["DCE-0", "DCE-1", "OJ_VA-0", "OJ_VA-1", "STOKE-0", "STOKE-1"]
    assert [table[i]["label"] for i in ("DCE-0", "DCE-1", "OJ_VA-0", "OJ_VA-1")] == ["Yes", "No", "Yes", "No"]
    assert table["OJ_VA-0"]["group"] == "OJ_VA"  # no category field: taken from the folder
    # the STOKE folder holds pairs.jsonl and pairs_v2.jsonl: only v2 is read
    assert table["STOKE-0"]["program_1"] == "  movq %rdi, %rax\n  retq\n"
    assert table["STOKE-1"]["def_in"] == "{ %rdi %rsi }" and table["STOKE-1"]["live_out"] == "{ %rax }"
    reasons = {s["id"]: s["reason"] for s in skipped}
    assert reasons == {
        "DCE-2": "malformed record: truth_label 'yes' is not true or false",
        "DCE-3": "malformed record: program_1_code or program_2_code missing",
        "pairs.jsonl:5": "unknown category 'XYZ' (expected one of DCE, STOKE, TVM, OJ_A, OJ_V, OJ_VA)",
        "pairs.jsonl:7": reasons.get("pairs.jsonl:7"),
    }
    assert reasons["pairs.jsonl:7"].startswith("not a JSON line")


def test_equibench_reads_the_flat_download_folder_with_categories_from_file_names(tmp_path):
    from selfplay.evaluate.benchmarks.equibench import DOWNLOADS

    sources = {
        "DCE": FIXTURES / "equibench/preprocess/DCE/pairs.jsonl",
        "STOKE": FIXTURES / "equibench/preprocess/STOKE/pairs_v2.jsonl",
        "OJ_VA": FIXTURES / "equibench/preprocess/OJ_VA/pairs.jsonl",
    }
    files = {spec["file"] for spec in DOWNLOADS.values()}
    assert len(files) == 6 and all("/" not in f for f in files)
    for cat, src in sources.items():
        rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip().startswith('{"')]
        for row in rows:
            row.pop("category", None)
        name = next(f for f in files if f.startswith(f"equibench-{cat}-"))
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    items, skipped = EquiBench().prepare(str(tmp_path), {}, {})
    # without its category field, the fixture's "XYZ" row is read as DCE (the file's name)
    assert sorted(i["id"] for i in items) == [
        "DCE-0",
        "DCE-1",
        "DCE-4",
        "OJ_VA-0",
        "OJ_VA-1",
        "STOKE-0",
        "STOKE-1",
    ]
    assert {i["id"]: i["group"] for i in items}["OJ_VA-1"] == "OJ_VA"
    assert sorted(s["id"] for s in skipped) == ["DCE-2", "DCE-3"]


def test_equibench_limit_applies_per_category_and_max_chars_skips():
    items, _ = EquiBench().prepare(str(FIXTURES / "equibench"), {"limit": 1}, {})
    assert sorted(i["id"] for i in items) == ["DCE-0", "OJ_VA-0", "STOKE-0"]
    items, skipped = EquiBench().prepare(str(FIXTURES / "equibench"), {"max_chars": 60}, {})
    assert {i["group"] for i in items} == {"STOKE", "OJ_VA"}
    assert {s["id"] for s in skipped if s["reason"].startswith("too long")} == {"DCE-0", "DCE-1"}


def test_limit_keeps_the_first_items():
    items, _ = PySecDB().prepare(None, {"source": "smoke", "limit": 2}, {})
    assert [i["id"] for i in items] == ["smoke-1", "smoke-2"]
    items, _ = CodeXGlueDefect().prepare(None, {"source": "smoke", "limit": 3}, {})
    assert [i["id"] for i in items] == ["smoke-1", "smoke-2", "smoke-3"]
    # identifier swap: the first N rows, each in both orders
    items, _ = IdentifierSwap().prepare(None, {"source": "smoke", "limit": 1}, {})
    assert [i["id"] for i in items] == ["smoke-1:order1", "smoke-1:order2"]


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_a_missing_file_is_one_line_error(bench, tmp_path):
    with pytest.raises(UserError) as err:
        bench.prepare(str(tmp_path / "nowhere.file"), {}, {})
    assert "not found" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_path_or_download_source_without_a_file_is_an_error_not_the_smoke_set(bench):
    with pytest.raises(UserError, match=f"evaluation.benchmarks.{bench.name}.path is not set"):
        bench.prepare(None, {"source": "path", "path": None}, {})
    with pytest.raises(UserError, match="no downloaded file"):
        bench.prepare(None, {"source": "download"}, {})


def test_pysecdb_without_a_path_says_how_to_get_access():
    with pytest.raises(UserError) as err:
        PySecDB().prepare(None, {"source": "path", "path": None}, {})
    message = str(err.value)
    assert "\n" not in message
    assert "github.com/SunLab-GMU/PySecDB" in message and "huggingface.co/datasets/sunlab/PySecDB" in message
    assert "evaluation.benchmarks.pysecdb" in message


def test_pysecdb_reads_the_configured_path_when_source_is_path():
    items, _ = PySecDB().prepare(
        None, {"source": "path", "path": str(FIXTURES / "pysecdb" / "PySecDB.json")}, {}
    )
    assert sorted(i["id"] for i in items) == ["101", "102", "103"]


def test_bad_files_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="expected the CSV header prompt,classes,answer_index"):
        IdentifierSwap().prepare(str(FIXTURES / "identifier_swap" / "bad_header.csv"), {}, {})
    with pytest.raises(UserError, match="expected one .csv file"):
        IdentifierSwap().prepare(str(FIXTURES / "identifier_swap"), {}, {})
    (tmp_path / "PySecDB.json").write_text('[{"id": 1,')
    with pytest.raises(UserError, match="not valid JSON"):
        PySecDB().prepare(str(tmp_path / "PySecDB.json"), {}, {})
    (tmp_path / "PySecDB.json").write_text('{"id": 1, "label": "security"}')
    with pytest.raises(UserError, match="expected a JSON list of records"):
        PySecDB().prepare(str(tmp_path / "PySecDB.json"), {}, {})
    empty = tmp_path / "empty"
    empty.mkdir()
    for bench in (PySecDB(), CodeXGlueDefect(), EquiBench()):
        with pytest.raises(UserError) as err:
            bench.prepare(str(empty), {}, {})
        assert "\n" not in str(err.value)


# --------------------------------------------------------------------------- prompts
def _code_fields(bench, item) -> list[str]:
    return {
        "identifier_swap": ["program_1", "program_2"],
        "pysecdb": ["patch"],
        "codexglue": ["func"],
        "equibench": ["program_1", "program_2"],
    }[bench.name]


@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
@pytest.mark.parametrize("cot", [False, True])
def test_prompts_show_the_code_and_end_with_the_answer_instruction(bench, cot):
    for item in smoke_items(bench):
        messages = bench.messages(item, cot)
        assert [m["role"] for m in messages] == ["system", "user"]
        user = messages[1]["content"]
        for field in _code_fields(bench, item):
            assert item[field].rstrip() in user, (item["id"], field)
        assert user.endswith(bench.answer_instruction(cot))
    if bench.name == "identifier_swap":  # program 1 is shown before program 2
        item = smoke_items(bench)[0]
        user = bench.messages(item, cot)[1]["content"]
        assert user.index(item["program_1"].rstrip()) < user.index(item["program_2"].rstrip())
        # nothing outside the programs points at the swapped builtins before the function
        # (the authors' evaluation asks a plain assistant; a hint changes what is measured)
        prose = " ".join(m["content"] for m in bench.messages(item, cot)).lower()
        for program in (item["program_1"], item["program_2"]):
            prose = prose.replace(program.rstrip().lower(), "")
        for hint in ("swap", "first line", "before the", "unusual", "builtin", "exactly as the interpreter"):
            assert hint not in prose, hint


def test_equibench_prompts_state_each_categorys_notion_of_equivalence():
    items = by_id(smoke_items(EquiBench()))
    text = {i: EquiBench().messages(items[i], False)[1]["content"] for i in items}
    assert "same program state" in text["smoke-DCE-1"] and "```c\n" in text["smoke-DCE-1"]
    assert "{ %rdi }" in text["smoke-STOKE-1"] and "{ %rax }" in text["smoke-STOKE-1"]
    assert "```cuda\n" in text["smoke-TVM-1"] and "rounding" in text["smoke-TVM-1"]
    assert all("every valid input" in text[i] for i in text if "-OJ_" in i)


def test_a_fence_inside_the_code_cannot_close_the_block():
    fenced = common.fence("x = '```'\n", "python")
    assert fenced.startswith("````python\n") and fenced.endswith("\n````")


# --------------------------------------------------------------------------- reading answers
@pytest.mark.parametrize(
    "bench, text, cot, label",
    [
        (IdentifierSwap(), "2", False, "2"),
        (IdentifierSwap(), "Program 1.", False, "1"),
        (
            IdentifierSwap(),
            "The second version swaps len and print back, so it runs as intended.\nAnswer: 2",
            True,
            "2",
        ),
        (
            IdentifierSwap(),
            "Program 1 looks idiomatic, but after line 1 it calls print on a list.\n\nAnswer: **2**",
            True,
            "2",
        ),
        (PySecDB(), "Yes", False, "Yes"),
        (PySecDB(), "no, this only reformats a string.", False, "No"),
        (
            PySecDB(),
            "The old code passed untrusted YAML to a full loader, yes that is a risk.\nAnswer: Yes",
            True,
            "Yes",
        ),
        (CodeXGlueDefect(), "Yes. strcpy into a 16-byte buffer can overflow.", False, "Yes"),
        (CodeXGlueDefect(), "Checking bounds: yes the length is tested first.\nANSWER: no", True, "No"),
        (EquiBench(), "No", False, "No"),
        (EquiBench(), "Both print 6 for every input, the branch is dead.\nAnswer: Yes", True, "Yes"),
        (EquiBench(), "Yes, no difference... final answer below\nAnswer: No", True, "No"),
    ],
)
def test_realistic_answers_are_read(bench, text, cot, label):
    assert bench.read_label(text, cot) == (label, None)


@pytest.mark.parametrize(
    "bench", [EquiBench(), PySecDB(), CodeXGlueDefect()], ids=["equibench", "pysecdb", "codexglue"]
)
@pytest.mark.parametrize("cot", [False, True])
def test_a_reasoning_models_thinking_is_not_its_answer(bench, cot):
    """Paper 000 evaluates an R1 distillation, which thinks before it answers; the first
    "no" of its thinking was read as its answer."""
    text = "Okay, no obvious difference in the loops... so they compute the same.\n</think>\n\n"
    assert bench.read_label(text + ("Answer: Yes" if cot else "Yes"), cot) == ("Yes", None)
    assert bench.read_label(text + "I cannot tell.", cot) == (None, "no_label")


@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_an_answer_without_a_label_is_unparsed(bench):
    assert bench.read_label("I cannot tell.", False) == (None, "no_label")
    assert bench.read_label("Hmm.\nAnswer: unsure", True) == (None, "no_label")


# --------------------------------------------------------------------------- scoring
@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_gold_answers_score_one_and_opposite_answers_zero(bench):
    items = smoke_items(bench)
    rows, summary = score_and_summarise(bench, items, lambda i: [i["label"]], GREEDY)
    assert all(r["correct"] and r["reason"] is None for r in rows)
    assert (summary["accuracy"], summary["precision"], summary["recall"], summary["f1"]) == (
        1.0,
        1.0,
        1.0,
        1.0,
    )
    assert (
        summary["n"] == len(items) and summary["positive"] == bench.positive and summary["mode"] == "greedy"
    )

    rows, summary = score_and_summarise(bench, items, lambda i: [other(bench, i["label"])], GREEDY)
    assert all(not r["correct"] and r["reason"] == "wrong_label" for r in rows)
    positives = sum(i["label"] == bench.positive for i in items)
    assert summary["accuracy"] == 0.0 and summary["precision"] == 0.0 and summary["recall"] == 0.0
    assert summary["f1"] == 0.0
    assert (summary["tp"], summary["fp"], summary["fn"], summary["tn"]) == (
        0,
        len(items) - positives,
        positives,
        0,
    )


def test_equibench_reports_every_category():
    bench = EquiBench()
    items = smoke_items(bench)
    # right on everything but the OJ_A pair, answered "Yes" (a false positive)
    _, summary = score_and_summarise(
        bench, items, lambda i: ["Yes" if i["group"] == "OJ_A" else i["label"]], GREEDY
    )
    assert set(summary["groups"]) == set(CATEGORIES)
    assert summary["groups"]["OJ_A"]["accuracy"] == 0.0 and summary["groups"]["OJ_A"]["fp"] == 1
    assert all(summary["groups"][c]["accuracy"] == 1.0 for c in CATEGORIES if c != "OJ_A")
    assert summary["accuracy"] == 7 / 8 and summary["precision"] == 4 / 5 and summary["recall"] == 1.0


def test_a_cot_answer_is_read_from_its_answer_line():
    bench = PySecDB()
    items = smoke_items(bench)

    def texts(i):
        return [f"The diff changes how input is handled; no, wait, let me think.\nAnswer: {i['label']}"]

    _, summary = score_and_summarise(bench, items, texts, COT)
    assert summary["accuracy"] == 1.0 and summary["mode"] == "cot"
    rows, summary = score_and_summarise(bench, items, lambda i: ["Let me think."], COT)
    assert summary["accuracy"] == 0.0 and summary["unparsed"] == len(items)
    assert {r["reason"] for r in rows} == {"no_label"}


def test_majority_of_nine_takes_the_most_frequent_readable_label():
    bench = CodeXGlueDefect()
    items = smoke_items(bench)

    def nine(
        item,
    ):  # four right, five wrong for item smoke-1; five right, two wrong, two unreadable elsewhere
        gold, wrong = item["label"], other(bench, item["label"])
        if item["id"] == "smoke-1":
            return [gold] * 4 + [wrong] * 5
        return [wrong, "unsure", gold, gold, wrong, "??", gold, gold, gold]

    rows, summary = score_and_summarise(bench, items, nine, MAJORITY)
    assert len(rows) == 9 * len(items)
    assert summary["accuracy"] == (len(items) - 1) / len(items)
    assert summary["fn"] == 1 and summary["fp"] == 0  # smoke-1 is vulnerable: its majority says No


def test_mean_over_sixteen_samples_averages_each_sample_index():
    bench = EquiBench()
    items = smoke_items(bench)
    # sample k is right on every item when k < 12, wrong on every item otherwise: 12 runs at 1.0, 4 at 0.0

    def texts(i):
        return [i["label"] if k < 12 else other(bench, i["label"]) for k in range(16)]

    _, summary = score_and_summarise(bench, items, texts, MEAN)
    assert summary["runs"] == 16 and summary["accuracy"] == 0.75
    assert summary["precision"] == 0.75 and summary["recall"] == 0.75  # precision 1.0 x12, 0.0 x4
    assert summary["groups"]["OJ_V"]["accuracy"] == 0.75


# --------------------------------------------------------------------------- constrained decoding
@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_the_answer_grammar_accepts_gold_answers_and_refuses_others(bench, tok):
    from selfplay.llm.answer_format import check_grammar, text_matches

    item = smoke_items(bench)[0]
    plain, cot = bench.answer_format(item, False), bench.answer_format(item, True)
    check_grammar(plain)
    check_grammar(cot)
    for label in bench.labels:
        assert text_matches(plain, label, tok[0], tok[1]), label
        text = f"Line one compares the two.\nSo the result follows.\nAnswer: {label}"
        assert text_matches(cot, text, tok[0], tok[1]), label
        assert bench.read_label(text, True) == (label, None)
    assert not text_matches(plain, "Maybe", tok[0], tok[1])
    assert not text_matches(cot, "Reasoning.\nAnswer: Maybe", tok[0], tok[1])


@pytest.mark.parametrize("bench", BENCHES, ids=IDS)
def test_smoke_prompts_are_short_for_the_tiny_model(bench, tok):
    for item in smoke_items(bench):
        for cot in (False, True):
            text = "\n".join(m["content"] for m in bench.messages(item, cot))
            assert len(tok[0](text)["input_ids"]) < 400, (item["id"], cot)
