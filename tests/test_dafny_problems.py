"""The shipped Dafny problems of the PSV track: loader, manifest faults, splits, and the
shape of every spec and reference solution (plain text checks; no Dafny is run here)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from selfplay.data import dafny_problems as dp
from selfplay.errors import UserError
from selfplay.records import content_id

PROBLEMS = dp.load_problems()
DECL_START = re.compile(r"^(function|predicate|method|lemma)\b")
# Dafny 4 spellings that Dafny 2.3 does not know (or that mean something else there).
DAFNY4_ONLY = ("expect ", "ghost function", "ghost predicate", "opaque ", "{:only}")


def top_level_blocks(text: str) -> list[tuple[str, str]]:
    """``(first line, whole text)`` of each column-0 declaration; a block runs until the next one."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if DECL_START.match(line):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    return [(b[0], "\n".join(b).rstrip()) for b in blocks]


def has_body(block: str) -> bool:
    return any(line.strip() == "{" or line.strip().startswith("{") for line in block.splitlines()[1:])


def copy_problems(tmp_path: Path) -> Path:
    root = tmp_path / "problems"
    shutil.copytree(dp.PROBLEMS_DIR, root)
    return root


def rewrite_manifest(root: Path, change) -> None:
    path = root / dp.MANIFEST_NAME
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


# ------------------------------------------------------------------ the shipped set


def test_loader_returns_full_records():
    assert 30 <= len(PROBLEMS) <= 50  # a few dozen
    for p in PROBLEMS:
        assert set(p) == {"id", "name", "target", "description", "split", "difficulty", "spec", "solution"}
        assert p["id"] == content_id(p["spec"])
        assert p["split"] in dp.SPLITS and p["difficulty"] in dp.DIFFICULTIES
        assert "\n" not in p["description"] and p["description"].strip()
    assert len({p["id"] for p in PROBLEMS}) == len(PROBLEMS)
    assert len({p["target"] for p in PROBLEMS}) == len(PROBLEMS)


def test_splits_are_disjoint_non_empty_and_mix_difficulties():
    seed, held = dp.load_problems("seed"), dp.load_problems("eval")
    assert seed and held
    assert not {p["name"] for p in seed} & {p["name"] for p in held}
    assert len(seed) + len(held) == len(PROBLEMS)
    assert 0.25 <= len(held) / len(PROBLEMS) <= 0.45
    for part in (seed, held):
        assert set(Counter(p["difficulty"] for p in part)) == set(dp.DIFFICULTIES)


def test_unknown_split_argument():
    with pytest.raises(UserError, match="split must be one of"):
        dp.load_problems("train")


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p["name"])
def test_spec_has_one_bodiless_target(problem):
    spec = problem["spec"]
    blocks = top_level_blocks(spec)
    methods = [(first, text) for first, text in blocks if first.startswith("method")]
    assert len(methods) == 1, [first for first, _ in blocks]
    first, text = methods[0]
    assert first.startswith(f"method {problem['target']}(")
    assert not has_body(text)
    assert "ensures" in text
    # Every helper in the spec has a body, and nothing is bodiless besides the target.
    for first, block in blocks:
        if not first.startswith("method"):
            assert first.startswith(("function", "predicate")), first
            assert has_body(block), first
    assert text == spec.rstrip("\n").split("\n\n")[-1], "the target comes last in the spec"


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p["name"])
def test_solution_keeps_the_spec_verbatim(problem):
    spec, solution = problem["spec"], problem["solution"]
    for _, block in top_level_blocks(spec):
        assert block in solution
    # The shipped solutions all start from the spec text itself, then the target's body.
    assert solution.startswith(spec)
    assert solution[len(spec) :].startswith("{\n")
    assert "assume" not in solution and "{:axiom}" not in solution and "{:verify" not in solution
    assert "decreases *" not in solution
    for _, block in top_level_blocks(solution):
        assert has_body(block), block.splitlines()[0]


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p["name"])
def test_dafny_2_3_spelling(problem):
    for text in (problem["spec"], problem["solution"]):
        for word in DAFNY4_ONLY:
            assert word not in text


def test_check_problem_texts_catches_a_changed_spec():
    p = next(p for p in PROBLEMS if p["name"] == "clamp")
    weakened = p["solution"].replace("  requires lo <= hi\n", "  requires lo <= hi && x == lo\n")
    with pytest.raises(UserError, match="'clamp'.*verbatim"):
        dp.check_problem_texts("clamp", "Clamp", p["spec"], weakened)
    with pytest.raises(UserError, match="manifest names the target 'Clip'"):
        dp.check_problem_texts("clamp", "Clip", p["spec"], p["solution"])
    with pytest.raises(UserError, match="not followed by a body"):
        dp.check_problem_texts("clamp", "Clamp", p["spec"], p["spec"])
    two = p["spec"] + "\nmethod Other(x: int) returns (y: int)\n  ensures y == x\n"
    with pytest.raises(UserError, match="2 methods"):
        dp.check_problem_texts("clamp", "Clamp", two, p["solution"])


# ------------------------------------------------------------------ a broken copy


def test_copy_loads_like_the_original(tmp_path):
    root = copy_problems(tmp_path)
    assert [p["id"] for p in dp.load_problems(directory=root)] == [p["id"] for p in PROBLEMS]


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["problems"][1].update(split="train"), r"problem '\w+': unknown split 'train'"),
        (lambda d: d["problems"][1].update(difficulty="brutal"), r"problem '\w+': unknown difficulty"),
        (lambda d: d["problems"].append(dict(d["problems"][0])), r"problem '\w+': duplicate problem name"),
        (lambda d: d["problems"][2].pop("target"), r"problem '\w+': missing or empty field\(s\) target"),
        (lambda d: d["problems"][2].update(notes="x"), r"problem '\w+': unknown field\(s\) notes"),
        (lambda d: d["problems"][0].update(name="Bad Name"), r"problem 'Bad Name': a problem name"),
        (lambda d: d["problems"][0].update(target="Wrong"), r"'abs_value'.*target 'Wrong'"),
        (lambda d: d.update(problems=[]), r"non-empty 'problems' list"),
        (lambda d: d["problems"].__setitem__(0, "abs_value"), r"problem #0: expected an object"),
    ],
)
def test_broken_manifest(tmp_path, change, message):
    root = copy_problems(tmp_path)
    rewrite_manifest(root, change)
    with pytest.raises(UserError, match=message) as info:
        dp.load_problems(directory=root)
    assert "\n" not in str(info.value)


def test_missing_and_stray_files(tmp_path):
    root = copy_problems(tmp_path)
    (root / "factorial.solution.dfy").unlink()
    with pytest.raises(UserError, match=r"'factorial': missing file .*factorial\.solution\.dfy"):
        dp.load_problems("seed", directory=root)
    # A fault in one split is reported whichever split is asked for.
    with pytest.raises(UserError, match="'factorial'"):
        dp.load_problems("eval", directory=root)
    root = copy_problems(tmp_path / "again")
    (root / "extra.spec.dfy").write_text("method Extra()\n")
    with pytest.raises(UserError, match="extra.spec.dfy belongs to no problem"):
        dp.load_problems(directory=root)


def test_unreadable_manifest_and_directory(tmp_path):
    root = copy_problems(tmp_path)
    (root / dp.MANIFEST_NAME).write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        dp.load_problems(directory=root)
    (root / dp.MANIFEST_NAME).unlink()
    with pytest.raises(UserError, match="no Dafny problem manifest"):
        dp.load_problems(directory=root)
    with pytest.raises(UserError, match="no directory of Dafny problems"):
        dp.load_problems(directory=tmp_path / "nowhere")
