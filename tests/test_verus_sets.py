"""The Verus problem sets of PSV: pinned sources, the crate-import rewrite, the small
scanner, and loading downloaded sets into problem records (fixtures in the released
shapes, written for these tests; no network, no Verus)."""

from __future__ import annotations

import io
import json
import logging
import shutil
import tarfile
from pathlib import Path

import pytest

from selfplay.data import verus_sets as vs
from selfplay.errors import UserError

FIXTURES = Path(__file__).resolve().parent / "verus_sets_fixtures"
MARKERS = ("REFERENCE-BODY", "PYTHON-SOLUTION")


def load(dataset: str, root: Path | None = None):
    return vs.load_verus_problems(root or FIXTURES / dataset, dataset)


# --- sources ------------------------------------------------------------------------


def test_sources_are_pinned_to_commits_and_marked_not_redistributable():
    srcs = vs.verus_dataset_sources()
    assert set(srcs) == {"dafny2verus", "mbpp", "humaneval", "humaneval-verus"}
    for name, src in srcs.items():
        for key in ("url", "commit", "subdir", "glob", "licence", "redistributable"):
            assert key in src, (name, key)
        assert len(src["commit"]) == 40 and int(src["commit"], 16) >= 0
        assert src["commit"] in src["url"]
        assert src["redistributable"] is False
        assert src["sha256"] is None
    for name, count in (("dafny2verus", 241), ("mbpp", 74), ("humaneval", 73)):
        assert srcs[name]["url"] == (
            f"https://raw.githubusercontent.com/abwilf/psv/{vs.PSV_COMMIT}/data/{name}.jsonl"
        )
        assert (srcs[name]["subdir"], srcs[name]["glob"]) == ("data", f"{name}.jsonl")
        assert srcs[name]["released_count"] == count
    hev = srcs["humaneval-verus"]
    assert (
        hev["url"]
        == f"https://codeload.github.com/secure-foundations/human-eval-verus/tar.gz/{vs.HEV_COMMIT}"
    )
    assert (hev["subdir"], hev["glob"]) == ("tasks", "human_eval_*.rs")


def test_sources_returns_a_copy():
    vs.verus_dataset_sources()["mbpp"]["url"] = "changed"
    assert vs.verus_dataset_sources()["mbpp"]["url"].startswith("https://raw.githubusercontent.com/")


def test_unknown_dataset_is_a_user_error():
    with pytest.raises(UserError, match="unknown Verus dataset 'nope'"):
        vs.load_verus_problems(FIXTURES, "nope")


# --- the scanner --------------------------------------------------------------------


def test_blank_non_code_hides_comments_and_literals_only():
    text = (
        "fn f() { // a { brace\n"
        "    let c = '{'; let e = '\\''; let s = \"}{\\\"}\";\n"
        '    /* outer /* inner { */ still } */ let r = r#"}"#;\n'
        "    let l: &'a u8 = x; 'outer: loop {}\n"
        "}\n"
    )
    blanked, error = vs.blank_non_code(text)
    assert error is None
    assert len(blanked) == len(text)
    assert blanked.count("\n") == text.count("\n")
    assert blanked.count("{") == 2 and blanked.count("}") == 2  # the fn body and `loop {}`; the rest hidden
    assert "brace" not in blanked and "inner" not in blanked and "still" not in blanked
    assert "'a u8" in blanked and "'outer: loop" in blanked  # lifetimes and labels stay code


def test_blank_non_code_can_keep_literals():
    text = "let s = \"{\"; // note {\nlet c = '}';"
    blanked, error = vs.blank_non_code(text, literals=False)
    assert error is None
    assert blanked == 'let s = "{"; ' + " " * len("// note {") + "\nlet c = '}';"


def test_analyse_spec_names_the_reason():
    with pytest.raises(vs.DroppedProblem) as exc:
        vs.analyse_spec("use vstd::prelude::*;\nverus! {\nfn f(x: u8)\n    requires x > 0,\n{")
    assert (exc.value.reason, exc.value.detail) == ("no_ensures", "f")
    assert vs.analyse_spec("verus! {\nproof fn p() ensures 1 + 1 == 2, {") == {
        "target": "p",
        "target_mode": "proof",
        "helper_bodies": [],
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("fn f() { /* never closed", "unterminated block comment"),
        ('fn f() { let s = "open;', "unterminated string"),
        ('let s = r#"open"', "unterminated raw string"),
    ],
)
def test_blank_non_code_reports_unterminated(text, message):
    blanked, error = vs.blank_non_code(text)
    assert error is not None and message in error
    assert len(blanked) == len(text)


def test_fn_items_tell_header_braces_from_the_body():
    text = (
        "spec fn g(x: int) -> int { x }\n"
        "fn h(r: Option<u8>) -> (o: u8)\n    ensures\n        match r { Some(v) => o == v, None => o == 0 },\n"
        "{\n    0\n}\n"
        "spec fn u(x: int) -> bool;\n"
        "proof fn p()\n    ensures\n        true,\n{"
    )
    blanked, _ = vs.blank_non_code(text)
    items = vs.fn_items(blanked)
    assert [(i["name"], i["mode"]) for i in items] == [
        ("g", "spec"),
        ("h", "exec"),
        ("u", "spec"),
        ("p", "proof"),
    ]
    h = items[1]
    assert text[h["body_open"] : h["body_close"] + 1] == "{\n    0\n}"
    assert items[2]["body_open"] is None
    assert items[3]["body_open"] == len(text) - 1 and items[3]["body_close"] is None


# --- import rewriting ---------------------------------------------------------------

OLD_PAIR = (
    "#[allow(unused_imports)]\nuse builtin::*;\n#[allow(unused_imports)]\nuse builtin_macros::*;\n"
    "use vstd::seq::*;\n\nverus! {\n"
)


def test_rewrite_replaces_old_pair_by_one_prelude_import():
    new, changes = vs.rewrite_crate_imports(OLD_PAIR)
    assert new == "use vstd::prelude::*;\nuse vstd::seq::*;\n\nverus! {\n"
    assert changes == [
        "removed #[allow(unused_imports)] use builtin::*;",
        "removed #[allow(unused_imports)] use builtin_macros::*;",
        "added use vstd::prelude::*;",
    ]


def test_rewrite_keeps_an_existing_prelude_import_single():
    text = "#![allow(unused_imports)]\nuse builtin::*;\nuse builtin_macros::*;\nuse vstd::prelude::*;\nuse vstd::*;\n"
    new, changes = vs.rewrite_crate_imports(text)
    assert new == "#![allow(unused_imports)]\nuse vstd::prelude::*;\nuse vstd::*;\n"
    assert changes == ["removed use builtin::*;", "removed use builtin_macros::*;"]
    assert new.count("vstd::prelude") == 1


def test_rewrite_handles_other_import_forms():
    text = (
        "use ::builtin::{a, b};\nextern crate builtin_macros;\n"
        "#[allow(unused_imports)] use builtin_macros::verus;\nfn f() {}\n"
    )
    new, changes = vs.rewrite_crate_imports(text)
    assert new == "use vstd::prelude::*;\nfn f() {}\n"
    assert len(changes) == 4 and changes[-1] == "added use vstd::prelude::*;"


def test_rewrite_is_idempotent_and_leaves_other_text_alone():
    once, _ = vs.rewrite_crate_imports(OLD_PAIR)
    assert vs.rewrite_crate_imports(once) == (once, [])
    untouched = (
        "use vstd::prelude::*;\n// use builtin::*;\n/* use builtin_macros::*; */\n"
        'fn f() { let s = "use builtin::*;"; verus_builtin::x(); }\n'
    )
    assert vs.rewrite_crate_imports(untouched) == (untouched, [])
    assert vs.old_crate_references(untouched) == []


def test_old_crate_references_finds_code_paths():
    text = 'use vstd::prelude::*;\nfn f() -> nat { builtin::spec_literal_nat("1") }\nfn g() { ::builtin_macros::m!(); }\n'
    assert vs.old_crate_references(text) == [
        'fn f() -> nat { builtin::spec_literal_nat("1") }',
        "fn g() { ::builtin_macros::m!(); }",
    ]
    assert vs.old_crate_references("fn f() { vstd::builtin::x(); }") == []


# --- loading ------------------------------------------------------------------------


def test_dafny2verus_kept_and_dropped():
    records, report = load("dafny2verus")
    assert [r["id"] for r in records] == [
        "dafny2verus/dafny2verus-0",
        "dafny2verus/dafny2verus-1",
        "dafny2verus/dafny2verus-2",
        "dafny2verus/dafny2verus-10",
        "dafny2verus/dafny2verus-12",
    ]
    assert [r["target"] for r in records] == [
        "triple",
        "first_index",
        "tri_at_least_two",
        "count_open",
        "pick",
    ]
    assert [r["target_mode"] for r in records] == ["exec", "exec", "proof", "exec", "exec"]
    assert report["dropped"] == {
        "target_is_spec_fn": 1,
        "no_ensures": 1,
        "no_target": 1,
        "unparseable": 2,
        "old_crate_reference": 1,
        "duplicate_spec": 1,
        "target_is_main": 1,
    }
    assert {d["source_file"]: d["reason"] for d in report["dropped_items"]} == {
        "data/dafny2verus.jsonl#L4": "target_is_spec_fn",
        "data/dafny2verus.jsonl#L5": "no_ensures",
        "data/dafny2verus.jsonl#L6": "no_target",
        "data/dafny2verus.jsonl#L7": "unparseable",
        "data/dafny2verus.jsonl#L8": "old_crate_reference",
        "data/dafny2verus.jsonl#L9": "duplicate_spec",
        "data/dafny2verus.jsonl#L10": "unparseable",
        "data/dafny2verus.jsonl#L12": "target_is_main",
    }
    assert (report["files_seen"], report["records_seen"], report["kept"]) == (1, 13, 5)
    assert report["imports_rewritten"] == 2
    assert report["gold_not_prefixed"] == 1
    assert report["with_helper_bodies"] == 1
    assert set(report["dropped"]) <= set(vs.DROP_REASONS)


def test_a_line_separator_inside_a_json_string_does_not_cut_the_record(tmp_path):
    # Dafny2Verus problem 17's descriptions hold U+2028, which str.splitlines() splits at
    folder = tmp_path / "dafny2verus"
    shutil.copytree(FIXTURES / "dafny2verus", folder)
    path = folder / "data" / "dafny2verus.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")
    first = json.loads(lines[0])
    first["task"] = "Triple a number.\u2028It must not overflow.\u2029"
    lines[0] = json.dumps(first, ensure_ascii=False)
    path.write_text("\n".join(lines), encoding="utf-8")
    records, report = load("dafny2verus", folder)
    expected, expected_report = load("dafny2verus")
    assert [r["id"] for r in records] == [r["id"] for r in expected]
    assert report["dropped"] == expected_report["dropped"]
    assert report["records_seen"] == expected_report["records_seen"]


def test_records_have_the_documented_shape_and_end_at_the_open_brace():
    for dataset in vs.VERUS_DATASETS:
        records, _ = load(dataset)
        assert records, dataset
        for r in records:
            assert set(r) == {
                "id",
                "name",
                "dataset",
                "spec",
                "target",
                "target_mode",
                "helper_bodies",
                "source_file",
            }
            assert r["id"] == f"{dataset}/{r['name']}" and r["dataset"] == dataset
            assert r["spec"].rstrip().endswith("{")
            assert f"fn {r['target']}(" in r["spec"]
            assert "builtin::" not in r["spec"] and r["spec"].count("use vstd::prelude::*;") == 1


def test_import_rewrite_reaches_the_records():
    records, _ = load("dafny2verus")
    by_target = {r["target"]: r["spec"] for r in records}
    assert by_target["triple"].startswith("#![allow(unused_imports)]\nuse vstd::prelude::*;\n\nverus! {\n")
    assert by_target["first_index"].startswith("use vstd::prelude::*;\nuse vstd::seq::*;\n\nverus! {\n")


def test_no_record_holds_a_reference_implementation():
    for dataset in vs.VERUS_DATASETS:
        records, _ = load(dataset)
        dumped = json.dumps(records)
        for marker in MARKERS:
            assert marker not in dumped, (dataset, marker)
        assert "gold" not in dumped


def test_jsonl_spec_is_the_gold_program_cut_at_the_target_brace():
    """The cut is exactly the released spec: the spec plus the withheld body is the gold program."""
    for dataset in ("dafny2verus", "mbpp", "humaneval"):
        lines = (FIXTURES / dataset / "data" / f"{dataset}.jsonl").read_text().splitlines()
        records, _ = load(dataset)
        for r in records:
            obj = json.loads(lines[int(r["source_file"].rsplit("#L", 1)[1]) - 1])
            rewritten, _ = vs.rewrite_crate_imports(obj["spec"])
            assert r["spec"] == rewritten
            if obj["gold_code"].startswith(obj["spec"]):
                rest = obj["gold_code"][len(obj["spec"]) :]
                assert rest.lstrip().startswith(("x + x", "let ", "tri_grows", "if "))
                assert rest not in r["spec"]


def test_braces_in_headers_strings_and_chars_do_not_confuse_the_cut():
    records, _ = load("dafny2verus")
    rec = next(r for r in records if r["target"] == "count_open")
    assert "match r {" in rec["spec"] and "'{'" in rec["spec"]
    assert rec["helper_bodies"] == []  # the spec fn is_open is a definition, not a helper body


def test_mbpp_names_come_from_the_target_and_collisions_say_the_line():
    records, report = load("mbpp")
    assert [(r["id"], r["target"], r["source_file"]) for r in records] == [
        ("mbpp/smallest", "smallest", "data/mbpp.jsonl#L1"),
        ("mbpp/smallest-L2", "smallest", "data/mbpp.jsonl#L2"),
    ]
    assert report["dropped"] == {}


def test_humaneval_keeps_earlier_helpers_as_released():
    records, report = load("humaneval")
    assert len(records) == 1
    rec = records[0]
    assert (rec["id"], rec["target"], rec["helper_bodies"]) == (
        "humaneval/HumanEval-7",
        "count_digits",
        ["digit_check"],
    )
    assert report["with_helper_bodies"] == 1


def test_humaneval_verus_files_are_cut_at_the_entry_point():
    records, report = load("humaneval-verus")
    assert [(r["id"], r["target"], r["source_file"]) for r in records] == [
        ("humaneval-verus/human_eval_000", "max_of", "tasks/human_eval_000.rs"),
        ("humaneval-verus/human_eval_003", "sum_squares_impl", "tasks/human_eval_003.rs"),
    ]
    assert report["files_seen"] == 4  # tasks/gpt/ is not read
    assert report["dropped"] == {"no_target": 1, "no_verus_section": 1}
    first, second = records
    assert "check_max" not in first["spec"]  # a function after the target is left out
    assert "later_lemma" not in second["spec"]
    assert second["helper_bodies"] == ["sq_sum_mono"]
    for r in records:
        assert r["spec"].startswith("use vstd::prelude::*;")
        assert "### " not in r["spec"] and "def " not in r["spec"]


def test_hev_spec_falls_back_to_the_last_function():
    program = (
        "use vstd::prelude::*;\nverus! {\nfn a() ensures true, { }\nfn b() ensures true, { }\n} // verus!\n"
    )
    text = f"/*\n### VERUS BEGIN\n*/\n{program}/*\n### VERUS END\n*/\n/*\n### ENTRY POINT\nzzz\n*/\n"
    spec, target = vs.hev_spec(text)
    assert target == "b"
    assert spec.endswith("fn b() ensures true, {")


def test_loader_finds_an_extracted_tarball_folder(tmp_path):
    shutil.copytree(FIXTURES / "humaneval-verus" / "tasks", tmp_path / "human-eval-verus-abc" / "tasks")
    records, _ = load("humaneval-verus", tmp_path)
    assert len(records) == 2


def test_loader_without_files_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="no data/mbpp.jsonl under"):
        load("mbpp", tmp_path)


# --- download -----------------------------------------------------------------------


class _Log:
    def __init__(self):
        self.warnings = []

    def warning(self, msg, *args):
        self.warnings.append(msg % args)


def _tarball(path: Path, top: str) -> None:
    task = (FIXTURES / "humaneval-verus" / "tasks" / "human_eval_000.rs").read_bytes()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (
            (f"{top}/tasks/human_eval_000.rs", task),
            (f"{top}/tasks/gpt/human_eval_000_gpt.rs", b"fn main() {}\n"),
            (f"{top}/README.md", b"readme\n"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_download_without_pin_warns_and_extracts_only_task_files(tmp_path, monkeypatch):
    archive = tmp_path / "src.tar.gz"
    _tarball(archive, "human-eval-verus-" + vs.HEV_COMMIT)
    monkeypatch.setitem(
        vs._SOURCES, "humaneval-verus", {**vs._SOURCES["humaneval-verus"], "url": archive.as_uri()}
    )
    log = _Log()
    root = tmp_path / "root"
    digest = vs.download_verus_dataset("humaneval-verus", root, log, pin_key="psv.data.sha256")
    assert len(digest) == 64
    assert len(log.warnings) == 1 and "no pinned sha256 (config psv.data.sha256)" in log.warnings[0]
    assert digest in log.warnings[0]
    assert sorted(p.relative_to(root).as_posix() for p in (root / "tasks").rglob("*")) == [
        "tasks/human_eval_000.rs"
    ]
    records, _ = load("humaneval-verus", root)
    assert [r["target"] for r in records] == ["max_of"]
    # pinning the observed digest makes the next download silent
    log2 = _Log()
    vs.download_verus_dataset("humaneval-verus", tmp_path / "root2", log2, sha256=digest)
    assert log2.warnings == []


def test_download_with_a_wrong_pin_keeps_nothing(tmp_path, monkeypatch):
    src_file = tmp_path / "mbpp.jsonl"
    shutil.copy(FIXTURES / "mbpp" / "data" / "mbpp.jsonl", src_file)
    monkeypatch.setitem(vs._SOURCES, "mbpp", {**vs._SOURCES["mbpp"], "url": src_file.as_uri()})
    with pytest.raises(UserError, match="checksum mismatch"):
        vs.download_verus_dataset("mbpp", tmp_path / "root", logging.getLogger("t"), sha256="0" * 64)
    assert not (tmp_path / "root" / "data" / "mbpp.jsonl").exists()
    vs.download_verus_dataset("mbpp", tmp_path / "root", _Log())
    assert len(load("mbpp", tmp_path / "root")[0]) == 2
