"""Confined execution of model-written Python programs.

    from selfplay.sandbox import Sandbox, SandboxLimits, ExecResult, run_naive

``Sandbox`` keeps warm fork servers (one execution at a time each) inside
network/PID/mount namespaces; ``run_naive`` starts a fresh interpreter per
execution at the same isolation.  Exports are resolved lazily so that the
confined interpreters importing the harness do not pay for the host-side pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Sandbox", "SandboxLimits", "ExecResult", "run_naive"]

_WHERE = {
    "Sandbox": "pool",
    "SandboxLimits": "limits",
    "ExecResult": "result",
    "run_naive": "naive",
}

if TYPE_CHECKING:  # pragma: no cover
    from .limits import SandboxLimits
    from .naive import run_naive
    from .pool import Sandbox
    from .result import ExecResult


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
