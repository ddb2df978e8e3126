"""The paper-scale sources of the Haskell track, both downloaded by rules on a machine
with network (never in the default run or the tests):

* ``opinstruct``: Python programs from nvidia/OpenCodeInstruct, pre-filtered here and
  then translated to Haskell by the model (tracks/seq/translate.py), as the paper
  builds OpInstruct-HSx (Section 3.1);
* ``hsx``: the published OpInstruct-HSx (Trevor0501/OpInstruct-HSx).

Either way every Haskell program then passes the same compile-and-run filter as the
shipped reference programs (tracks/seq/sources.py).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ..errors import MissingToolError, UserError
from ..records import content_id

OPINSTRUCT_REPO = "nvidia/OpenCodeInstruct"
HSX_REPO = "Trevor0501/OpInstruct-HSx"
PYTHON_BLOCK = re.compile(r"```python[ \t]*\n(.*?)```", re.S)
HSX_CODE_COLUMNS = ("haskell_code", "hs_code", "haskell", "code", "program", "output")


def hub_file_url(repo: str, path: str, revision: str) -> str:
    return f"https://huggingface.co/datasets/{repo}/resolve/{revision}/{path}"


def _read_parquet(path: str | Path):
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover
        raise MissingToolError(
            "reading parquet needs pandas and pyarrow: pip install pandas pyarrow"
        ) from exc
    return pd.read_parquet(path)


def single_function(code: str) -> str | None:
    """The name of the one top-level function ``code`` defines (imports allowed), else None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    others = [
        n
        for n in tree.body
        if not isinstance(n, (ast.FunctionDef, ast.Import, ast.ImportFrom))
        and not (isinstance(n, ast.Expr) and isinstance(getattr(n, "value", None), ast.Constant))
    ]
    return funcs[0].name if len(funcs) == 1 and not others else None


def opinstruct_python_sources(parquet_path: str | Path, limit: int | None, max_chars: int) -> list[dict]:
    """Pre-filter: one ```python block holding exactly one top-level function (imports
    allowed, no classes or script code), at most ``max_chars`` long, and every unit test
    passed when the row says so. The first ``limit`` by id are kept."""
    frame = _read_parquet(parquet_path)
    if "output" not in frame.columns:
        raise UserError(f"{parquet_path}: no 'output' column (columns: {', '.join(map(str, frame.columns))})")
    out = []
    for row in frame.to_dict("records"):
        score = row.get("average_test_score")
        if score is not None and str(score) not in ("1", "1.0"):
            continue
        blocks = PYTHON_BLOCK.findall(str(row["output"]))
        if len(blocks) != 1 or len(blocks[0]) > max_chars:
            continue
        code = blocks[0].replace("\r\n", "\n").strip("\n") + "\n"
        name = single_function(code)
        if name:
            out.append(
                {
                    "id": content_id({"opinstruct": str(row.get("id")), "code": code}),
                    "task_id": str(row.get("id")),
                    "entry_point": name,
                    "code": code,
                    "origin": "opinstruct",
                }
            )
    if not out:
        raise UserError(f"{parquet_path}: no row passed the pre-filter (is this an OpenCodeInstruct file?)")
    out.sort(key=lambda r: r["id"])
    return out if limit is None else out[:limit]


def hsx_programs(parquet_path: str | Path, column: str | None = None) -> list[dict]:
    """Haskell programs of the published dataset, ready for the compile-and-run filter."""
    frame = _read_parquet(parquet_path)
    col = column or next((c for c in HSX_CODE_COLUMNS if c in frame.columns), None)
    if col is None or col not in frame.columns:
        raise UserError(
            f"{parquet_path}: no Haskell code column among {', '.join(map(str, frame.columns))} "
            f"(set seq.sources.hsx_code_column)"
        )
    programs = []
    for row in frame.to_dict("records"):
        code = str(row[col]).replace("\r\n", "\n")
        block = re.search(r"```(?:haskell|hs)?[ \t]*\n(.*?)```", code, re.S)
        code = (block.group(1) if block else code).strip("\n") + "\n"
        programs.append({"code": code, "origin": "hsx"})
    return programs


def split_half(records: list[dict], split: str) -> list[dict]:
    """Train = even positions, test = odd, by id (as the other sources are split)."""
    if split not in ("train", "test"):
        raise UserError(f"unknown split {split!r} (train or test)")
    ordered = sorted(records, key=lambda r: r["id"])
    return ordered[0::2] if split == "train" else ordered[1::2]
