"""``run_naive``: a fresh interpreter per execution, at the same isolation as ``Sandbox``.

This is the straightforward strategy (start ``python`` for every program run),
kept as a baseline.  It starts the very same confined server in ``naive``
mode: same namespaces, same unprivileged uid, same rlimits, same private work
directory, same scrubbed environment and the same child harness and value
encoding.  Only the process-start strategy differs: no warm, pre-imported
server to fork from.
"""

from __future__ import annotations

import time
from typing import Any

from .launch import ServerProcess
from .limits import SandboxLimits
from .pool import make_request, result_from_reply
from .protocol import FrameError
from .result import ExecResult

STARTUP_GRACE_S = 30.0


def run_naive(code: str, entry: str, input_literal: Any, timeout: float,
              limits: SandboxLimits | None = None) -> ExecResult:
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
