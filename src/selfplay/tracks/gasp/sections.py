"""Settings dataclasses built from one config section: known keys only, each value
checked by the class, every error one line naming the full config key."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ...errors import UserError


def key_of(prefix: str, name: str) -> str:
    """``prefix.name`` (just ``name`` without a prefix)."""
    return f"{prefix}.{name}" if prefix else name


def from_section(cls: type, section: Mapping[str, Any] | None, prefix: str):
    """``cls(**section)`` over the class defaults. Unknown keys are refused naming each
    one under ``prefix``; a ``ValueError``/``TypeError`` from the class's own checks
    (whose message starts with the field's name) comes back as a ``UserError`` with the
    prefix in front."""
    if section is None:
        section = {}
    if not isinstance(section, Mapping):
        raise UserError(f"{prefix or 'settings'} must be a mapping, not {type(section).__name__}")
    known = [f.name for f in dataclasses.fields(cls) if f.init]
    unknown = sorted(str(k) for k in section if k not in known)
    if unknown:
        raise UserError(
            f"unknown setting(s) {', '.join(key_of(prefix, k) for k in unknown)}; "
            f"known: {', '.join(key_of(prefix, k) for k in known)}"
        )
    try:
        return cls(**dict(section))
    except (ValueError, TypeError) as exc:
        raise UserError(f"{prefix}.{exc}" if prefix else str(exc)) from None


def number(name: str, value: Any) -> float:
    """``value`` as a finite float; ``ValueError`` naming ``name`` for bools, strings, NaN."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value != value
        or value in (float("inf"), float("-inf"))
    ):
        raise ValueError(f"{name}: must be a finite number, not {value!r}")
    return float(value)
