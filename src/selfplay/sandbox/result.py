"""The verdict of one sandboxed execution."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

STATUSES = ("ok", "exception", "timeout", "killed", "error")


def canonical_text(value: Any) -> str:
    """The single string form of an encoded value; equal behaviour means equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@dataclass
class ExecResult:
    """What happened when a program's entry point ran on one input.

    status      'ok' (returned), 'exception' (raised at import or call time),
                'timeout' (wall clock ran out, process group killed), 'killed'
                (died without a usable result) or 'error' (the execution could not
                be made: bad input, missing entry, unbindable arguments, a return
                value that cannot be encoded within limits, or a sandbox failure)
    value       for 'ok', the canonical JSON-able encoding of the return value
    value_repr  bounded repr of the return value (display only)
    exc_type    exception class name for 'exception'
    exc_message truncated str() of the exception
    seconds     wall time of the execution itself (process start strategy excluded)
    isolation   what confinement was in force
    detail      signal name, reason for 'error', notes such as the MemoryError hint
    """

    status: str
    value: Any = None
    value_repr: str | None = None
    exc_type: str | None = None
    exc_message: str | None = None
    seconds: float = 0.0
    isolation: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")

    def behaviour(self) -> tuple:
        """A hashable summary; two programs diverge on an input when these differ."""
        if self.status == "ok":
            return ("ok", canonical_text(self.value))
        if self.status == "exception":
            return ("exception", self.exc_type)
        if self.status == "error":
            return ("error", self.detail)
        return (self.status,)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "value": self.value,
            "value_repr": self.value_repr,
            "exc_type": self.exc_type,
            "exc_message": self.exc_message,
            "seconds": round(float(self.seconds), 6),
            "isolation": json.loads(json.dumps(self.isolation)),
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecResult:
        return cls(
            status=data["status"],
            value=data.get("value"),
            value_repr=data.get("value_repr"),
            exc_type=data.get("exc_type"),
            exc_message=data.get("exc_message"),
            seconds=float(data.get("seconds") or 0.0),
            isolation=dict(data.get("isolation") or {}),
            detail=data.get("detail"),
        )
