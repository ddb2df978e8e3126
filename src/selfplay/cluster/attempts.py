"""Resources that grow with Snakemake's attempt number.

A job killed by SLURM for its time limit or memory is resubmitted (the profile's
``retries``); asking for the same minutes and megabytes again would fail the same way.
The amounts named in config ``resources.retry.scaled`` (runtime and mem_mb by default)
are therefore callables of ``attempt``: attempt 1 asks for the configured amount, attempt
k for ``amount * factor**(k-1)``, rounded up and capped at ``resources.retry.max.<name>``
when the config sets one. Everything else is passed through unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def scaled_amount(base: float, attempt: int, factor: float, cap: float | None = None) -> int:
    """What attempt ``attempt`` (1, 2, ...) asks for when attempt 1 asks for ``base``."""
    amount = math.ceil(base * factor ** (max(int(attempt), 1) - 1))
    if cap is not None:
        amount = min(amount, max(int(cap), math.ceil(base)))  # a cap below the base never shrinks attempt 1
    return int(amount)


def _scaler(name: str, base: float, factor: float, cap: float | None) -> Callable[..., int]:
    def amount(wildcards, attempt: int) -> int:  # Snakemake passes arguments by these names
        return scaled_amount(base, attempt, factor, cap)

    amount.__name__ = f"{name}_for_attempt"
    amount.__doc__ = f"{name}: {base} x {factor}**(attempt-1), capped at {cap}"
    return amount


def attempt_scaled(kind: dict[str, Any], retry: dict[str, Any]) -> dict[str, Any]:
    """The resources one kind of job declares (config ``resources.<kind>``), with each
    numeric amount named in ``retry["scaled"]`` turned into a callable of the attempt."""
    factor = float(retry["factor"])
    out: dict[str, Any] = {}
    for name, value in kind.items():
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        if name in retry["scaled"] and numeric and factor != 1.0:
            out[name] = _scaler(name, float(value), factor, (retry.get("max") or {}).get(name))
        else:
            out[name] = value
    return out
