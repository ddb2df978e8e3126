"""The shipped Haskell reference programs: their shape, variety, split, loader errors, and a real GHC run."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from selfplay.data import haskell_sources as hs
from selfplay.errors import UserError

PROGRAMS = hs.load_reference_programs()
BY_NAME = {p["entry_point"]: p for p in PROGRAMS}

# One hand-written call per program: the arguments as Haskell source.
INPUTS: dict[str, str] = {
    "addMaybe": "(Just 4) Nothing",
    "allNonNegative": "[3, 0, -1]",
    "alternatingSum": "[10, 3, 4, 1]",
    "bestEntry": '[("ann", 3), ("bob", 9), ("cid", 9)]',
    "binomial": "10 3",
    "bucketOf": "0.37",
    "capitalizeWords": '"hello  wORLD of haskell"',
    "clampInt": "0 10 15",
    "countAbove": "3 [1, 5, 3, 7, 4]",
    "describeEntry": '("", 72)',
    "describeResult": "(Right (-5))",
    "diagonalSum": "[[1, 2, 3], [4, 5, 6], [7, 8, 9]]",
    "digitSum": "(-9075)",
    "dotProduct": "[1, 2, 3] [4, 5, 6, 7]",
    "exactlyOne": "False True False",
    "fibonacci": "50",
    "groupsOf": "2 [1, 2, 3, 4, 5]",
    "intPower": "3 4",
    "joinWith": '", " ["a", "", "b", "c"]',
    "manhattan": "(1, 2) (4, -2)",
    "meanOrZero": "[1, 2, 3, 4]",
    "medianOfThree": "7 (-2) 4",
    "mergeSorted": "[1, 4, 9] [2, 3, 10]",
    "parseAge": '" 42"',
    "primeFactors": "360",
    "replaceAt": "1 99 [5, 6, 7]",
    "runLengths": '"aaabccdd"',
    "safeDivide": "17 5",
    "shiftLetter": "3 'y'",
    "sortByFlag": "False [3, 1, 2]",
    "splitOnChar": "',' \"x,,y,\"",
    "stepRange": "1 10 3",
    "sumAndProduct": "[2, 3, 4]",
    "sumSquares": "[1, 2, 3, -4]",
    "triangular": "10",
    "weightedScore": "80 90 100",
}

# What `show` prints for each call above, worked out by hand.
EXPECTED: dict[str, str] = {
    "addMaybe": "Just 4",
    "allNonNegative": "False",
    "alternatingSum": "10",
    "bestEntry": 'Just ("bob",9)',
    "binomial": "120",
    "bucketOf": "3",
    "capitalizeWords": '"Hello World Of Haskell"',
    "clampInt": "10",
    "countAbove": "3",
    "describeEntry": '"anonymous: 72 (pass)"',
    "describeResult": '"negative 5"',
    "diagonalSum": "15",
    "digitSum": "21",
    "dotProduct": "32",
    "exactlyOne": "True",
    "fibonacci": "12586269025",
    "groupsOf": "[[1,2],[3,4],[5]]",
    "intPower": "81",
    "joinWith": '"a, b, c"',
    "manhattan": "7",
    "meanOrZero": "2.5",
    "medianOfThree": "4",
    "mergeSorted": "[1,2,3,4,9,10]",
    "parseAge": "Right 42",
    "primeFactors": "[2,2,2,3,3,5]",
    "replaceAt": "[5,99,7]",
    "runLengths": "[('a',3),('b',1),('c',2),('d',2)]",
    "safeDivide": "Just 3",
    "shiftLetter": "'b'",
    "sortByFlag": "[3,2,1]",
    "splitOnChar": '["x","","y",""]',
    "stepRange": "[1,4,7]",
    "sumAndProduct": "(9,24)",
    "sumSquares": "30",
    "triangular": "55",
    "weightedScore": "87.5",
}


def _signature(program: dict) -> list[str]:
    """The argument types then the result type of a program's top-level signature."""
    sigs = hs._top_level_signatures(program["code"])
    assert len(sigs) == 1
    return hs.split_arrows(sigs[0][1])


# --- the set itself -----------------------------------------------------------


def test_at_least_36_programs_with_unique_names_and_ids():
    assert len(PROGRAMS) >= 36
    names = [p["entry_point"] for p in PROGRAMS]
    assert names == sorted(names)
    assert len(set(names)) == len(names)
    assert len({p["id"] for p in PROGRAMS}) == len(PROGRAMS)
    for p in PROGRAMS:
        assert set(p) == {"id", "entry_point", "code", "origin", "reflectable", "arity"}
        assert p["origin"] == "reference"
        assert re.fullmatch(r"[0-9a-f]{16}", p["id"])


def test_ids_are_stable_content_hashes():
    again = hs.load_reference_programs()
    assert [p["id"] for p in again] == [p["id"] for p in PROGRAMS]
    p = PROGRAMS[0]
    assert p["id"] == hs.content_id({"name": p["entry_point"], "code": p["code"]})


@pytest.mark.parametrize("path", sorted(hs.PROGRAMS_DIR.glob("*.hs")), ids=lambda p: p.stem)
def test_each_file_has_one_signature_named_like_the_file(path: Path):
    code = path.read_text(encoding="utf-8")
    top = [line for line in code.splitlines() if line.strip() and not line[0].isspace()]
    signatures = [line for line in top if re.match(r"[a-z_][\w']*\s*::", line)]
    assert len(signatures) == 1, signatures
    assert signatures[0].split("::")[0].strip() == path.stem
    assert not any(re.match(r"module\b", line) for line in top)
    assert not any(re.match(r"main\b", line) for line in top)
    assert "main" not in re.findall(r"[a-z_][\w']*", code)
    # Imports first, then only lines of the one function (plus the marker comment).
    imports_done = False
    for line in top:
        if line.startswith("import "):
            assert not imports_done, f"{path.name}: import after the definition"
            assert re.match(r"import (Data\.(List|Char|Maybe|Ord)|Data\.Function)\b", line), line
        elif line.startswith("--"):
            assert line == hs.REFLECTABLE_MARKER and code.startswith(line)
        else:
            imports_done = True
            assert re.match(re.escape(path.stem) + r"(?![\w'])", line), line
    for partial in ("head ", "tail ", "!!", "fromJust", "undefined", "error ", "read "):
        assert partial not in code, f"{path.name} uses partial {partial.strip()!r}"


def test_arities_are_varied():
    counts = Counter(p["arity"] for p in PROGRAMS)
    assert counts[1] >= 8
    assert counts[2] >= 8
    assert counts[3] >= 5
    assert set(counts) == {1, 2, 3}
    for p in PROGRAMS:
        assert p["arity"] == len(_signature(p)) - 1


def test_argument_and_result_types_are_varied():
    args, results = Counter(), Counter()
    for p in PROGRAMS:
        *ins, out = _signature(p)
        args.update(ins)
        results[out] += 1
    wanted = [
        "Int",
        "Integer",
        "Bool",
        "Char",
        "String",
        "Double",
        "[Int]",
        "[String]",
        "[[Int]]",
        "(Int, Int)",
        "(String, Int)",
        "Maybe Int",
        "Either String Int",
    ]
    for t in wanted:
        assert args[t] >= 1, f"no program takes {t}"
    for t in wanted:
        if t == "(String, Int)":  # returned inside a Maybe
            assert any(t in r for r in results), f"no program returns {t}"
        else:
            assert results[t] >= 1, f"no program returns {t}"
    assert 2 <= results["Double"] <= 3


def test_styles_are_varied():
    codes = [p["code"] for p in PROGRAMS]
    assert sum(bool(re.search(r"^\s+\|", c, re.M)) for c in codes) >= 10  # guards
    assert sum("where" in c for c in codes) >= 8
    assert sum(re.search(r"\bcase\b", c) is not None for c in codes) >= 3
    assert sum(re.search(r"\bfold[lr]\b", c) is not None for c in codes) >= 3
    assert sum("<-" in c for c in codes) >= 2  # list comprehensions
    assert sum(re.search(r"\b(map|filter|sortBy|intercalate)\b", c) is not None for c in codes) >= 3


def _lhs_names(code: str, name: str) -> set[str]:
    """Variables bound by the patterns of a function's equations."""
    bound: set[str] = set()
    for line in code.splitlines():
        if line.startswith(name) and "::" not in line:
            lhs = re.split(r"(?<![=<>/])=(?!=)|\|", line, maxsplit=1)[0]
            bound.update(re.findall(r"\b[a-z_][\w']*", lhs))
    return bound - {name}


def test_reflectable_programs_stay_first_order_over_int_bool_and_lists():
    reflectable = [p for p in PROGRAMS if p["reflectable"]]
    assert 10 <= len(reflectable) <= 15, len(reflectable)
    keywords = {"otherwise", "not", "if", "then", "else"}
    for p in reflectable:
        code, name = p["code"], p["entry_point"]
        assert code.splitlines()[0] == hs.REFLECTABLE_MARKER
        assert "import" not in code and "where" not in code and "\\" not in code
        assert set(_signature(p)) <= {"Int", "Bool", "[Int]"}, name
        body = "\n".join(line for line in code.splitlines()[1:] if "::" not in line)
        used = set(re.findall(r"(?<![\w'])[a-z_][\w']*", body))
        assert used <= _lhs_names(code, name) | {name} | keywords, (name, used)
    for p in PROGRAMS:
        if not p["reflectable"]:
            assert hs.REFLECTABLE_MARKER not in p["code"]


# --- the split ------------------------------------------------------------------


def test_split_halves_are_disjoint_cover_all_and_deterministic():
    train = hs.split_reference_programs(PROGRAMS, "train")
    test = hs.split_reference_programs(PROGRAMS, "test")
    assert len(train) == len(test) == len(PROGRAMS) // 2
    assert not {p["id"] for p in train} & {p["id"] for p in test}
    assert {p["id"] for p in train} | {p["id"] for p in test} == {p["id"] for p in PROGRAMS}
    assert [p["entry_point"] for p in train] == [p["entry_point"] for p in PROGRAMS[0::2]]
    shuffled = list(reversed(PROGRAMS))
    assert hs.split_reference_programs(shuffled, "test") == test
    assert hs.split_reference_programs(hs.load_reference_programs(), "train") == train
    # Both halves hold some reflectable programs, so SEQ proofs are possible in each.
    assert any(p["reflectable"] for p in train) and any(p["reflectable"] for p in test)


def test_bad_split_is_a_user_error():
    with pytest.raises(UserError, match="split"):
        hs.split_reference_programs(PROGRAMS, "validation")


# --- the arity counter and loader errors -------------------------------------------


@pytest.mark.parametrize(
    "type_text, arity",
    [
        ("Int", 0),
        ("Int -> Int", 1),
        ("(Int -> Int) -> [Int] -> [Int]", 2),
        ("[(Int, Int -> Bool)] -> Maybe (Int -> Int)", 1),
        ("Ord a => a -> a -> Bool", 2),
        ("  Int\n   -> Either String Int\n   -> Int  ", 2),
        ("{ x : Int | x > 0 } -> Int", 1),
    ],
)
def test_signature_arity_counts_only_depth_zero_arrows(type_text: str, arity: int):
    assert hs.signature_arity(type_text) == arity


def test_multi_line_signature_and_comments():
    code = (
        "-- reflectable\n"
        "twice -- the doubling function\n"
        "  :: Int -- what to double\n"
        "  -> Int\n"
        "twice n = n + n -- no overflow guard\n"
    )
    rec = hs.parse_reference_program("twice", code, "twice.hs")
    assert rec["arity"] == 1 and rec["reflectable"] and rec["entry_point"] == "twice"


def _write(tmp_path: Path, name: str, code: str | bytes) -> Path:
    path = tmp_path / f"{name}.hs"
    if isinstance(code, bytes):
        path.write_bytes(code)
    else:
        path.write_text(code, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "code, message",
    [
        ("module Foo where\nfoo :: Int -> Int\nfoo x = x\n", "module"),
        ("foo :: Int -> Int\nfoo x = x\nmain :: IO ()\nmain = print (foo 1)\n", "main"),
        ("foo x = x + 1\n", "no top-level type signature"),
        ("bar :: Int -> Int\nbar x = x\n", "'bar' but the file is named for 'foo'"),
        (
            "foo :: Int -> Int\nfoo x = helper x\nhelper :: Int -> Int\nhelper x = x\n",
            "2 top-level type signatures",
        ),
        ("foo :: Int -> Int\nfoo x = helper x\nhelper x = x\n", "not part of 'foo'"),
        ("foo :: (Int -> Int\nfoo x = x\n", "unclosed"),
        ("foo :: Int -> -> Int\nfoo x = x\n", "missing side"),
    ],
)
def test_malformed_files_are_clear_user_errors(tmp_path: Path, code: str, message: str):
    path = _write(tmp_path, "foo", code)
    with pytest.raises(UserError) as info:
        hs.load_reference_programs(tmp_path)
    text = str(info.value)
    assert message in text
    assert str(path) in text
    assert "\n" not in text


def test_unreadable_file_and_missing_directory_are_user_errors(tmp_path: Path):
    path = _write(tmp_path, "foo", b"foo :: Int\nfoo = \xff\xfe\n")
    with pytest.raises(UserError, match=re.escape(str(path))):
        hs.load_reference_programs(tmp_path)
    with pytest.raises(UserError, match="no directory"):
        hs.load_reference_programs(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no .hs"):
        hs.load_reference_programs(empty)


def test_loading_another_directory(tmp_path: Path):
    _write(tmp_path, "b", "b :: [Int] -> Int\nb xs = sum xs\n")
    _write(tmp_path, "a", "-- reflectable\na :: Int -> Int -> Int\na x y = x + y\n")
    recs = hs.load_reference_programs(tmp_path)
    assert [(r["entry_point"], r["arity"], r["reflectable"]) for r in recs] == [
        ("a", 2, True),
        ("b", 1, False),
    ]


# --- a real GHC build and run ---------------------------------------------------------


def build_all_programs_module(programs: list[dict], inputs: dict[str, str]) -> str:
    """One Main module: every program's imports (deduplicated) on top, the programs, and a main
    that prints ``show`` of one call per program, one line each, in ``programs`` order."""
    imports: list[str] = []
    bodies: list[str] = []
    for p in programs:
        body = []
        for line in p["code"].splitlines():
            if line.startswith("import "):
                if line not in imports:
                    imports.append(line)
            else:
                body.append(line)
        bodies.append("\n".join(body).strip())
    calls = [f"  print ({p['entry_point']} {inputs[p['entry_point']]})" for p in programs]
    return (
        "\n".join(imports + [""] + [b + "\n" for b in bodies] + ["main :: IO ()", "main = do"] + calls) + "\n"
    )


@pytest.fixture(scope="module")
def ghc_output(tmp_path_factory) -> list[str]:
    """Lines printed by the compiled all-programs module (compiled once per test module)."""
    ghc = shutil.which("ghc")
    if ghc is None:
        pytest.skip(
            "ghc is not on PATH: install GHC (e.g. apt-get install ghc) to compile the reference programs"
        )
    work = tmp_path_factory.mktemp("haskell_programs")
    (work / "Main.hs").write_text(build_all_programs_module(PROGRAMS, INPUTS), encoding="utf-8")
    built = subprocess.run(
        [ghc, "-O0", "-v0", "-outputdir", "build", "-o", "allprograms", "Main.hs"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, f"ghc failed:\n{built.stdout}\n{built.stderr}"
    ran = subprocess.run([str(work / "allprograms")], cwd=work, capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0, f"program failed:\n{ran.stderr}"
    return ran.stdout.splitlines()


def test_every_program_has_a_hand_written_input():
    assert set(INPUTS) == set(BY_NAME)
    assert len(EXPECTED) >= 10 and set(EXPECTED) <= set(BY_NAME)


def test_ghc_compiles_and_runs_every_program(ghc_output: list[str]):
    assert len(ghc_output) == len(PROGRAMS)
    printed = dict(zip((p["entry_point"] for p in PROGRAMS), ghc_output))
    wrong = {name: (printed[name], want) for name, want in EXPECTED.items() if printed[name] != want}
    assert not wrong, f"printed vs expected: {wrong}"
