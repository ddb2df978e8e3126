"""The Haskell track's source pipeline: the compile-and-run filter (real GHC), the
OpenCodeInstruct pre-filter, the OpInstruct-HSx loader and MultiPL-E's test lines, on
small files written here in those datasets' column layouts."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from selfplay.data.haskell_datasets import (
    hsx_programs,
    opinstruct_python_sources,
    single_function,
    split_half,
)
from selfplay.errors import UserError
from selfplay.tracks.seq.sources import describe_program, filter_programs

needs_ghc = pytest.mark.skipif(shutil.which("ghc") is None, reason="GHC is missing: apt-get install ghc")
CFG = {"seed": 3, "seq": {"verify": {"timeout": 5.0, "memory_mb": 1024}, "sources": {"filter_timeout": 3.0}}}


def test_describe_program_instantiates_and_refuses_with_reasons():
    info, why = describe_program("pick :: (Ord a, Num a) => a -> [a] -> Maybe a\npick t xs = Nothing\n")
    assert why is None and info == {
        "entry_point": "pick",
        "arg_types": ["Int", "[Int]"],
        "result_type": "Maybe Int",
    }
    info, why = describe_program("import qualified Data.Map as M\nf :: M.Map Int Int -> Int\nf m = 0\n")
    assert info is None and why.startswith("signature:")
    assert describe_program("x = 3\n")[1].startswith("signature:")


@needs_ghc
def test_filter_keeps_what_compiles_and_returns_a_value():
    programs = [
        {"code": "addUp :: Int -> Int -> Int\naddUp a b = a + b\n", "origin": "t"},
        {"code": "bad :: Int -> Int\nbad x = x +\n", "origin": "t"},  # syntax error
        {"code": 'boom :: [Int] -> Int\nboom _ = error "no"\n', "origin": "t"},  # raises
        # never returns, in constant memory (x is forced every step, so no thunks pile up
        # and the memory limit never ends it before the time limit does)
        {"code": "spin :: Int -> Int\nspin x = if x >= 0 then spin (x + 1) else 0\n", "origin": "t"},
        {"code": "io :: Int -> IO Int\nio = return\n", "origin": "t"},  # IO result: no Show
        {"code": "noSig x = x\n", "origin": "t"},
    ]
    kept, rejected = filter_programs(programs, CFG, timeout=1.0)
    assert [k["entry_point"] for k in kept] == ["addUp"]
    assert kept[0]["filter"]["outcome"]["status"] == "value" and len(kept[0]["filter"]["args"]) == 2
    reasons = {r.get("entry_point", "?"): r["reject_reason"] for r in rejected}
    assert reasons["bad"] == "run: compile_error" and reasons["boom"] == "run: exception"
    assert reasons["spin"] == "run: timeout" and reasons["io"] == "run: compile_error"
    assert reasons["?"].startswith("signature:")


def test_opinstruct_prefilter(tmp_path):
    rows = [
        {
            "id": "a",
            "output": "Sure.\n```python\ndef twice(x):\n    return 2 * x\n```\n",
            "average_test_score": "1.0",
        },
        {
            "id": "b",
            "output": "```python\ndef f(x):\n    return x\n```\n",
            "average_test_score": "0.5",
        },  # failed tests
        {"id": "c", "output": "```python\nclass A:\n    pass\n```", "average_test_score": "1.0"},
        {
            "id": "d",
            "output": "```python\ndef g(x):\n    return h(x)\ndef h(y):\n    return y\n```",
            "average_test_score": "1.0",
        },
        {
            "id": "e",
            "output": "```python\n" + "def long(x):\n" + "    x += 1\n" * 500 + "    return x\n```",
            "average_test_score": "1.0",
        },
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "o.parquet")
    out = opinstruct_python_sources(tmp_path / "o.parquet", limit=None, max_chars=2000)
    assert [(r["task_id"], r["entry_point"]) for r in out] == [("a", "twice")]
    assert single_function("import math\n\ndef f(x):\n    '''doc'''\n    return math.sqrt(x)\n") == "f"
    pd.DataFrame([{"input": "x"}]).to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(UserError, match="no 'output' column"):
        opinstruct_python_sources(tmp_path / "bad.parquet", None, 2000)


def test_hsx_loader_and_halves(tmp_path):
    pd.DataFrame(
        [
            {"haskell_code": "```haskell\nf :: Int -> Int\nf x = x\n```", "other": 1},
            {"haskell_code": "g :: Int -> Int\ng = id\n", "other": 2},
        ]
    ).to_parquet(tmp_path / "h.parquet")
    progs = hsx_programs(tmp_path / "h.parquet")
    assert [p["code"] for p in progs] == ["f :: Int -> Int\nf x = x\n", "g :: Int -> Int\ng = id\n"]
    with pytest.raises(UserError, match="no Haskell code column"):
        hsx_programs(tmp_path / "h.parquet", column="nope")
    recs = [{"id": f"{i:02d}"} for i in range(5)]
    assert [r["id"] for r in split_half(recs, "train")] == ["00", "02", "04"]
    assert [r["id"] for r in split_half(recs, "test")] == ["01", "03"]
