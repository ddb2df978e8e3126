"""What the four classification adapters (identifier swap, PySecDB, CodeXGLUE defect
detection, EquiBench) share when reading their data: where the shipped smoke file is,
which source to read, JSON / JSON-lines reading with one-line errors, and the length
and ``limit`` settings.

A source is resolved the same way everywhere: an explicit ``source`` (a downloaded file
or folder, or the path config ``evaluation.benchmarks.<name>.path`` names) is read as the
benchmark's real format; with no source the adapter reads this project's smoke file,
unless the config asks for a download or a user-supplied path, in which case reading the
smoke file instead would silently evaluate the wrong data, so that is an error.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from ...errors import UserError

DATA = Path(__file__).resolve().parents[2] / "data" / "eval"

# Ids of items read from the shipped smoke files start with this, so no table can pass
# them off as the real benchmark.
SMOKE_PREFIX = "smoke-"


def smoke_file(name: str) -> Path:
    path = DATA / name
    if not path.is_file():
        raise UserError(f"{path}: the shipped smoke file is missing (a broken install?)")
    return path


def resolve_source(bench: str, source: str | None, settings: dict, hint: str = "") -> Path | None:
    """The path to read (None: the shipped smoke set). ``hint`` says how to get the data."""
    kind = settings.get("source")
    if source is None and kind == "path" and settings.get("path"):
        source = str(settings["path"])
    if source is None:
        if kind == "path":
            raise UserError(
                f"evaluation.benchmarks.{bench}.path is not set: point it at the benchmark file "
                f"or folder{'; ' + hint if hint else ''}"
            )
        if kind == "download":
            raise UserError(
                f"evaluation.benchmarks.{bench}: source is 'download' but no downloaded file "
                f"was given to prepare"
            )
        return None
    path = Path(source).expanduser()
    if not path.exists():
        raise UserError(f"{bench}: {path} not found{'; ' + hint if hint else ''}")
    return path


def open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def read_json_records(path: Path) -> list[tuple[str, object]]:
    """(where, record) for every record of a JSON-lines file (``.jsonl``, one object a
    line), or of a JSON file holding a list of objects or an object of objects (keyed by
    id). ``where`` is ``file:line`` or ``file[index]`` for skip reasons."""
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    try:
        with open_text(path) as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    if name.endswith(".jsonl"):
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append((f"{path.name}:{n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                out.append((f"{path.name}:{n}", _Unreadable(f"not a JSON line ({exc.msg})")))
        return out
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, list):
        return [(f"{path.name}[{i}]", r) for i, r in enumerate(data)]
    if isinstance(data, dict):
        if all(isinstance(v, dict) for v in data.values()):
            return [(f"{path.name}[{k!r}]", {"id": k, **v} if "id" not in v else v) for k, v in data.items()]
    raise UserError(f"{path}: expected a JSON list of records (or one record per line in a .jsonl file)")


class _Unreadable:
    """A line that is not JSON: the adapters turn it into a skip reason."""

    def __init__(self, reason: str):
        self.reason = reason


def unreadable(record: object) -> str | None:
    return record.reason if isinstance(record, _Unreadable) else None


def too_long(text: str, settings: dict) -> str | None:
    """A skip reason when ``text`` is longer than ``settings['max_chars']`` (None: no limit)."""
    limit = settings.get("max_chars")
    if limit is not None and len(text) > int(limit):
        return f"too long: {len(text)} characters > max_chars {int(limit)}"
    return None


def first(items: list[dict], settings: dict) -> list[dict]:
    """The first ``settings['limit']`` items (all when null)."""
    limit = settings.get("limit")
    return items[: int(limit)] if limit else items


def dedupe(items: list[dict], skipped: list[dict]) -> list[dict]:
    """Items with a unique id; later repeats become skipped rows."""
    seen, out = set(), []
    for item in items:
        if item["id"] in seen:
            skipped.append({"id": item["id"], "reason": "duplicate id"})
            continue
        seen.add(item["id"])
        out.append(item)
    return out


def fence(code: str, lang: str = "") -> str:
    """``code`` in a Markdown code block whose fence no line of the code can close."""
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}{lang}\n{code.rstrip()}\n{ticks}"
