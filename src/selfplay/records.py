"""JSONL records: atomic writes, stable content ids, derived seeds.

Every stage reads and writes one JSON object per line. Files are written to a
temporary name beside the target and renamed, so a half-written file never looks
finished. Ids are content hashes, so the same item keeps the same id through all
stages and across reruns.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the form that ids and keys hash."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_id(obj: Any, length: int = 16) -> str:
    """A stable hex id for any JSON-serialisable object."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:length]


def derive_seed(*parts: Any) -> int:
    """A 31-bit seed derived from the config seed and any item/round identifiers."""
    digest = hashlib.sha256(canonical_json([str(p) for p in parts]).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def sha256_tree(path: str | os.PathLike) -> str:
    """Hash of every file under a directory (relative names and contents)."""
    root = Path(path)
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode())
            h.update(sha256_file(p).encode())
    return h.hexdigest()


def _atomic_target(path: str | os.PathLike):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    return path, fd, tmp


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    path, fd, tmp = _atomic_target(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> int:
    """Write records atomically; returns how many were written."""
    path, fd, tmp = _atomic_target(path)
    n = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
                n += 1
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return n


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    return list(iter_jsonl(path))


def read_jsonl_all(paths) -> list[dict]:
    """The rows of several JSONL files (e.g. one stage's shards), in order."""
    return [row for path in paths for row in iter_jsonl(path)]


def iter_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    from .errors import UserError

    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{lineno}: not a JSON line ({exc.msg}); the file is corrupt") from exc
