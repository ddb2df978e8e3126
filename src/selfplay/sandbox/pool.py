"""``Sandbox``: a pool of fork servers executing untrusted programs in parallel."""

from __future__ import annotations

import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from queue import Queue
from typing import Any, Iterable, Sequence

from .launch import ServerProcess
from .limits import SandboxLimits
from .protocol import FrameError
from .result import ExecResult

# Time allowed on top of an execution's own timeout for the server to kill,
# sweep and report before the host declares the server broken.
REPLY_GRACE_S = 15.0
START_TIMEOUT_S = 60.0


def make_request(code: str, entry: str, input_literal: Any, timeout: float) -> dict[str, Any]:
    """Validate caller arguments (programming errors raise) and build a request."""
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    if not isinstance(entry, str):
        raise TypeError("entry must be a str")
    if isinstance(input_literal, dict):
        input_literal = repr(input_literal)
    if not isinstance(input_literal, str):
        raise TypeError("input_literal must be the source text of a dict literal (or a dict)")
    timeout = float(timeout)
    if not (timeout > 0) or timeout == float("inf"):
        raise ValueError("timeout must be a positive number of seconds")
    return {"code": code, "entry": entry, "input": input_literal, "timeout": timeout}


def result_from_reply(reply: dict[str, Any], isolation: dict[str, Any], timeout: float) -> ExecResult:
    status = reply.get("status")
    if status not in ("ok", "exception", "timeout", "killed", "error"):
        return ExecResult("error", detail="sandbox sent an unknown status", isolation=dict(isolation))
    iso = dict(isolation)
    iso["rlimits"] = dict(iso.get("rlimits") or {})
    iso["rlimits"]["cpu_s"] = SandboxLimits.cpu_seconds(timeout)
    return ExecResult(
        status=status,
        value=reply.get("value") if status == "ok" else None,
        value_repr=reply.get("value_repr"),
        exc_type=reply.get("exc_type") if status == "exception" else None,
        exc_message=reply.get("exc_message") if status == "exception" else None,
        seconds=float(reply.get("seconds") or 0.0),
        isolation=iso,
        detail=reply.get("detail"),
    )


def _shutdown(servers: list[ServerProcess], lock: threading.Lock) -> None:
    with lock:
        doomed = list(servers)
        servers.clear()
    for server in doomed:
        try:
            server.stop(grace=0.5)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


class Sandbox:
    """Keeps ``workers`` fork servers; each runs one execution at a time.

    >>> with Sandbox(workers=2) as sb:
    ...     sb.run("def f(n): return n + 1", "f", "{'n': 1}", 1.0).value
    ['int', 2]
    """

    def __init__(self, workers: int = 2, limits: SandboxLimits | None = None):
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.limits = limits or SandboxLimits()
        self.workers = workers
        self._lock = threading.Lock()
        self._servers: list[ServerProcess] = []
        self._idle: Queue[ServerProcess] = Queue()
        self._closed = False
        self._executor: ThreadPoolExecutor | None = None
        # Runs on close(), on garbage collection and at interpreter exit.
        self._finalizer = weakref.finalize(self, _shutdown, self._servers, self._lock)
        try:
            fresh = [self._spawn() for _ in range(workers)]
            deadline = time.monotonic() + START_TIMEOUT_S
            for server in fresh:
                server.wait_ready(deadline)
        except BaseException:
            self.close()
            raise
        self.isolation: dict[str, Any] = dict(fresh[0].isolation)
        for server in fresh:
            self._idle.put(server)

    # ---------------------------------------------------------------- lifecycle

    def _spawn(self) -> ServerProcess:
        server = ServerProcess(self.limits, "forkserver")
        with self._lock:
            self._servers.append(server)
        server.start()
        return server

    def _replace(self, broken: ServerProcess) -> ServerProcess:
        """Kill a broken server and start another; on failure return a dead one to retry later."""
        broken.kill()
        with self._lock:
            if broken in self._servers:
                self._servers.remove(broken)
        server = ServerProcess(self.limits, "forkserver")
        with self._lock:
            if self._closed:
                return server
            self._servers.append(server)
        try:
            server.start()
            server.wait_ready(time.monotonic() + START_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - retried on the next execution
            server.kill()
        return server

    def close(self) -> None:
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        self._finalizer()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # ---------------------------------------------------------------- execution

    def run(self, code: str, entry: str, input_literal: Any, timeout: float) -> ExecResult:
        """Run ``entry(**input)`` from ``code`` in a fresh confined process."""
        req = make_request(code, entry, input_literal, timeout)
        if self._closed:
            raise RuntimeError("Sandbox is closed")
        server = self._idle.get()
        try:
            result, server = self._run_on(server, req)
        finally:
            self._idle.put(server)
        return result

    def _run_on(self, server: ServerProcess, req: dict[str, Any]) -> tuple[ExecResult, ServerProcess]:
        timeout = req["timeout"]
        if not server.alive():
            server = self._replace(server)
            if not server.alive():
                return ExecResult("error", detail="sandbox server could not be started",
                                  isolation=dict(self.isolation)), server
        try:
            reply = server.request(req, time.monotonic() + timeout + REPLY_GRACE_S)
        except (FrameError, OSError) as exc:
            died = not server.alive()
            server = self._replace(server)
            reason = "died" if died else f"stopped answering ({type(exc).__name__})"
            return ExecResult("error", detail=f"sandbox server {reason}",
                              isolation=dict(self.isolation)), server
        result = result_from_reply(reply, server.isolation or self.isolation, timeout)
        if reply.get("restart"):
            server = self._replace(server)
        return result, server

    def run_many(self, jobs: Iterable[Sequence[Any]]) -> list[ExecResult]:
        """Run ``(code, entry, input_literal, timeout)`` jobs across the workers; same order out."""
        jobs = [tuple(job) for job in jobs]
        for job in jobs:
            make_request(*job)  # reject malformed jobs before anything runs
        if self._closed:
            raise RuntimeError("Sandbox is closed")
        if len(jobs) <= 1 or self.workers == 1:
            return [self.run(*job) for job in jobs]
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
            executor = self._executor
        return list(executor.map(lambda job: self.run(*job), jobs))

