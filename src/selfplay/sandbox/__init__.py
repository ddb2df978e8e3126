"""Confined execution of model-written Python programs and of executables.

    from selfplay.sandbox import Sandbox, SandboxLimits, ExecResult, run_naive
    from selfplay.sandbox import CommandResult, run_command_naive

``Sandbox`` keeps warm fork servers (one execution at a time each) inside
network/PID/mount namespaces; ``Sandbox.run_each`` imports a program once and
forks each of its calls from that loaded state (see ``fork_per_call``);
``run_naive`` starts a fresh interpreter per execution at the same isolation.  ``Sandbox.run_command(s)`` and
``run_command_naive`` execute a command line (a compiled program, a compiler)
under the same confinement (see ``command``).  Exports are resolved lazily so that the
confined interpreters importing the harness do not pay for the host-side pool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Sandbox", "SandboxLimits", "ExecResult", "run_naive", "CommandResult", "run_command_naive"]

_WHERE = {
    "Sandbox": "pool",
    "SandboxLimits": "limits",
    "ExecResult": "result",
    "run_naive": "naive",
    "CommandResult": "command",
    "run_command_naive": "naive",
}

if TYPE_CHECKING:  # pragma: no cover
    from .command import CommandResult
    from .limits import SandboxLimits
    from .naive import run_command_naive, run_naive
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
