"""Replay recorded generations instead of running a model.

Reads JSONL recordings in the format :func:`selfplay.llm.recording.generate_and_record`
writes. Only ``"key"`` (a :func:`recording_key`) and ``"outputs"`` (a list of texts)
are required on each line, so tests and fixtures can write recordings by hand.
``generate`` looks every request up by its key, ``recording_key(messages, sampling,
answer_format)`` (the format only when decoding was constrained, so a constrained
request never replays a free answer); the adapter is not part of the key (see recording.py).

A record with an ``"unfit"`` reason is a request the recorded backend did not generate
(its prompt left no room in the model's context): :meth:`ReplayBackend.unfit` gives the
same reason back, so a replayed job records it exactly as the original did.

When a key appears more than once the first occurrence wins (files in the order
given, lines in file order); later ones with different outputs are counted as
``conflicts`` in ``describe()``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UserError
from .base import Backend, GenerationRequest, check_requests

ON_MISSING = ("error", "empty")


class ReplayBackend(Backend):
    name = "replay"

    def __init__(self, files: list[str] | str, on_missing: str = "error"):
        if isinstance(files, (str, Path)):
            files = [files]
        if not files:
            raise UserError("replay backend: 'files' must list at least one recording (JSONL)")
        if on_missing not in ON_MISSING:
            raise UserError(f"replay backend: on_missing must be one of {ON_MISSING}, got {on_missing!r}")
        self.files = [str(f) for f in files]
        self.on_missing = on_missing
        self.misses = 0
        self.missed_keys: list[str] = []
        self.hits = 0
        self.conflicts = 0
        self._table: dict[str, list[str]] = {}
        self._unfit: dict[str, str] = {}
        for f in self.files:
            self._load(Path(f))

    def _load(self, path: Path) -> None:
        if not path.is_file():
            raise UserError(f"replay backend: recording {path} does not exist")
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{path}:{lineno}"
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(
                        f"{where}: not a JSON line ({exc.msg}); the recording is corrupt"
                    ) from exc
                if not isinstance(rec, dict):
                    raise UserError(f"{where}: expected a JSON object, got {type(rec).__name__}")
                key, outputs = rec.get("key"), rec.get("outputs")
                if not isinstance(key, str) or not key:
                    raise UserError(f"{where}: record has no string 'key'")
                if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
                    raise UserError(f"{where}: record 'outputs' must be a list of strings")
                unfit = rec.get("unfit")
                if unfit is not None and not isinstance(unfit, str):
                    raise UserError(f"{where}: record 'unfit' must be a string reason")
                if key in self._table:
                    if self._table[key] != outputs:
                        self.conflicts += 1
                    continue
                self._table[key] = outputs
                if unfit:
                    self._unfit[key] = unfit

    def __len__(self) -> int:
        return len(self._table)

    def unfit(self, request: GenerationRequest) -> str | None:
        return self._unfit.get(request.key)

    def generate(self, requests: list[GenerationRequest]) -> list[list[str]]:
        requests = check_requests(requests)
        results = []
        for req in requests:
            key = req.key
            outputs = self._table.get(key)
            if outputs is None:
                if self.on_missing == "error":
                    raise UserError(
                        f"replay: no recording for key {key} (last user message starts "
                        f"{req.last_user_text()!r}) in {', '.join(self.files)}"
                    )
                self.misses += 1
                if len(self.missed_keys) < 20:
                    self.missed_keys.append(key)
                results.append([""] * req.sampling.n)
                continue
            if len(outputs) != req.sampling.n:
                raise UserError(
                    f"replay: recording for key {key} has {len(outputs)} outputs but the request asks "
                    f"for n={req.sampling.n}"
                )
            self.hits += 1
            results.append(list(outputs))
        return results

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "files": self.files,
            "records": len(self._table),
            "on_missing": self.on_missing,
            "hits": self.hits,
            "misses": self.misses,
            "missed_keys": list(self.missed_keys),
            "conflicts": self.conflicts,
        }
