"""``run_naive`` / ``run_command_naive``: a fresh interpreter per execution, at the same isolation as ``Sandbox``.

This is the straightforward strategy (start ``python`` for every program run),
kept as a baseline.  It starts the very same confined server in ``naive``
mode: same namespaces, same unprivileged uid, same rlimits, same private work
directory, same scrubbed environment and the same child harness and value
encoding.  Only the process-start strategy differs: no warm, pre-imported
server to fork from.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .command import (
    DEFAULT_COLLECT_KB,
    DEFAULT_OUTPUT_KB,
    CommandResult,
    explain_unreachable,
    make_command_request,
    reply_size_cap,
    result_from_run,
)
from .launch import ServerProcess
from .limits import SandboxLimits
from .pool import COMMAND_OVERHEAD_S, command_isolation, make_request, result_from_reply
from .protocol import FrameError
from .result import ExecResult

STARTUP_GRACE_S = 30.0


def run_naive(
    code: str, entry: str, input_literal: Any, timeout: float, limits: SandboxLimits | None = None
) -> ExecResult:
    req = make_request(code, entry, input_literal, timeout)
    server = ServerProcess(limits or SandboxLimits(), "naive")
    try:
        server.start()
    except Exception as exc:  # noqa: BLE001
        return ExecResult("error", detail=f"could not start interpreter: {type(exc).__name__}")
    try:
        reply = server.request(req, time.monotonic() + req["timeout"] + STARTUP_GRACE_S)
    except (FrameError, OSError) as exc:
        return ExecResult("error", detail=f"interpreter failed ({type(exc).__name__})")
    finally:
        server.stop(grace=5.0)
    return result_from_reply(reply, reply.get("isolation") or {}, req["timeout"])


def run_command_naive(
    argv: Sequence[str],
    timeout: float,
    *,
    files: Mapping[str, bytes | str] | None = None,
    executables: Iterable[str] = (),
    collect: Iterable[str] = (),
    limits: SandboxLimits | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | str = b"",
    max_output_kb: int = DEFAULT_OUTPUT_KB,
    max_collect_kb: int = DEFAULT_COLLECT_KB,
) -> CommandResult:
    """``Sandbox.run_command`` with a fresh confined server for this one command (same isolation)."""
    limits = limits or SandboxLimits()
    req = make_command_request(
        [argv],
        timeout,
        files=files,
        executables=executables,
        collect=collect,
        limits=None,
        env=env,
        stdin=stdin,
        max_output_kb=max_output_kb,
        max_collect_kb=max_collect_kb,
    )
    server = ServerProcess(limits, "naive")
    try:
        server.start()
    except Exception as exc:  # noqa: BLE001
        return CommandResult("error", detail=f"could not start sandbox: {type(exc).__name__}")
    try:
        deadline = time.monotonic() + req["timeout"] + COMMAND_OVERHEAD_S + STARTUP_GRACE_S
        reply = server.request(req, deadline, max_reply=reply_size_cap(req))
    except (FrameError, OSError) as exc:
        return CommandResult("error", detail=f"sandbox failed ({type(exc).__name__})")
    finally:
        server.stop(grace=5.0)
    iso = command_isolation(reply.get("isolation") or {}, req, limits)
    runs = reply.get("runs")
    if reply.get("status") != "ok" or not isinstance(runs, list) or not runs:
        return CommandResult(
            "error",
            detail=f"sandbox refused the command: {reply.get('detail') or 'bad reply'}",
            isolation=iso,
        )
    return explain_unreachable(result_from_run(runs[0], iso), req["runs"][0]["argv"][0])
