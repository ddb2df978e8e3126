"""Reading a benchmark's JSON-lines files (plain or gzipped): one JSON object per line,
and a one-line error naming the file and line for anything else."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from ..errors import UserError


def read_json_lines(path: str | Path, what: str = "benchmark") -> list[dict]:
    """The objects of a ``.jsonl`` or ``.jsonl.gz`` file; ``what`` names it in errors."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: {what} file not found")
    opener = gzip.open if path.suffix == ".gz" else open
    rows = []
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}:{n}: not a JSON line ({exc.msg})") from None
                if not isinstance(row, dict):
                    raise UserError(f"{path}:{n}: not a JSON object")
                rows.append(row)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    return rows
