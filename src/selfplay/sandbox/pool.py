"""``Sandbox``: a pool of fork servers executing untrusted programs in parallel."""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from queue import Queue
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
from .fork_per_call import KIND as EACH_KIND
from .fs_view import refused_tool_dir
from .harness import _parse_input
from .launch import ServerProcess, check_seed
from .limits import SandboxLimits
from .protocol import FrameError
from .result import ExecResult

log = logging.getLogger("selfplay")

# Time allowed on top of an execution's own timeout for the server to kill,
# sweep and report before the host declares the server broken.
REPLY_GRACE_S = 15.0
START_TIMEOUT_S = 60.0
# Server-side cost of one command run besides its timeout (writing inputs, sweep, cleanup).
COMMAND_OVERHEAD_S = 1.0


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


def make_each_request(code: str, entry: str, inputs: Iterable[Any], timeout: float) -> dict[str, Any]:
    """Validate a load-once request (see ``Sandbox.run_each``); every input must be the
    text of a dict literal with string keys (or a dict), so that nothing about an input
    depends on the program's import."""
    if isinstance(inputs, (str, bytes, dict)):
        raise TypeError("inputs must be a list of input literals")
    singles = [make_request(code, entry, literal, timeout) for literal in inputs]
    for number, single in enumerate(singles):
        _, problem = _parse_input(single["input"])
        if problem:
            raise ValueError(f"inputs[{number}]: {problem}")
    return {
        "kind": EACH_KIND,
        "code": code,
        "entry": entry,
        "inputs": [single["input"] for single in singles],
        "timeout": float(timeout),
    }


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


def _each_result(run: dict[str, Any], isolation: dict[str, Any], timeout: float) -> ExecResult:
    """A run of a load-once request; its isolation says whether the call was forked from
    the loaded program and, when the program was run afresh for it instead, why (see
    ``fork_per_call``)."""
    result = result_from_reply(run, isolation, timeout)
    result.isolation["forked_from_loaded"] = run.get("forked_from_loaded") is True
    if isinstance(run.get("run_afresh"), str):
        result.isolation["run_afresh"] = run["run_afresh"]
    return result


def command_isolation(
    isolation: dict[str, Any], req: dict[str, Any], server_limits: SandboxLimits
) -> dict[str, Any]:
    """The isolation report of a command run: the server's, with the run's own limits and stdio."""
    iso = dict(isolation)
    limits = SandboxLimits.from_dict(
        {**server_limits.to_dict(), **(req.get("limits") or {}), "tmpfs_mb": server_limits.tmpfs_mb}
    )
    iso["rlimits"] = limits.rlimits(req["timeout"])
    iso["stdio"] = (
        f"stdin {'given' if req.get('stdin') else '/dev/null'}; stdout/stderr captured, "
        f"at most {req['max_output_kb']} KiB each"
    )
    iso["env"] = "scrubbed" + (f" + {sorted(req['env'])}" if req.get("env") else "")
    iso["exec"] = True
    for key in ("preimported", "hashseed", "random_seed"):
        iso.pop(key, None)
    return iso


def _shutdown(servers: list[ServerProcess], lock: threading.Lock) -> None:
    with lock:
        doomed = list(servers)
        servers.clear()
    for server in doomed:
        try:
            server.stop(grace=0.5)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def job_cpus() -> int:
    """The CPUs this process may use: its affinity mask, and under SLURM no more than the
    job's ``SLURM_CPUS_PER_TASK``."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    slurm = os.environ.get("SLURM_CPUS_PER_TASK", "")
    if slurm.isdigit() and int(slurm) > 0:
        cpus = min(cpus, int(slurm))
    return max(1, cpus)


class Sandbox:
    """Keeps ``workers`` fork servers; each runs one execution at a time.

    A pool never runs more programs at once than the CPUs the job may use
    (:func:`job_cpus`): time limits are wall-clock, so a correct program starved of CPU
    by its neighbours would time out. ``workers_asked`` keeps what the caller asked for.

    >>> with Sandbox(workers=2) as sb:
    ...     sb.run("def f(n): return n + 1", "f", "{'n': 1}", 1.0).value
    ['int', 2]
    """

    def __init__(
        self,
        workers: int = 2,
        limits: SandboxLimits | None = None,
        tool_dirs: Iterable[str] = (),
        site_packages: bool = False,
        seed: int = 0,
    ):
        """``tool_dirs``: host directories of trusted tools that commands run (a compiler's,
        a verifier's, their data), added read-only at the same path to the minimal
        filesystem view the sandboxed processes see (see ``fs_view``), /tmp included.
        ``site_packages``: programs may import the environment's installed libraries
        (off: the standard library only, so a verdict never depends on what a machine
        has installed; benchmarks whose tasks use libraries, such as BigCodeBench, turn
        it on).
        ``seed``: every program run starts under this PYTHONHASHSEED (hash order of str
        and bytes) and ``random.seed`` (default 0, as always); two pools with different
        seeds tell a program that depends on either from a deterministic one. The
        isolation report's ``hashseed`` and ``random_seed`` state it."""
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.limits = limits or SandboxLimits()
        self.tool_dirs = [os.path.abspath(d) for d in tool_dirs]
        for folder in self.tool_dirs:
            why = refused_tool_dir(folder)
            if why:
                raise ValueError(f"tool_dirs: {why}")
        self.workers_asked = workers
        self.workers = workers = min(workers, job_cpus())
        if workers < self.workers_asked:
            log.info(
                "sandbox: %d workers, not the %d asked for: this job may use %d CPUs",
                workers,
                self.workers_asked,
                workers,
            )
        self.site_packages = bool(site_packages)
        self.seed = check_seed(seed)
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
        server = ServerProcess(self.limits, "forkserver", self.tool_dirs, self.site_packages, self.seed)
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
        server = ServerProcess(self.limits, "forkserver", self.tool_dirs, self.site_packages, self.seed)
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

    def __enter__(self) -> Sandbox:
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

    def _run_on(
        self, server: ServerProcess, req: dict[str, Any], retry: bool = True
    ) -> tuple[ExecResult, ServerProcess]:
        timeout = req["timeout"]
        if not server.alive():
            server = self._replace(server)
            if not server.alive():
                return ExecResult(
                    "error", detail="sandbox server could not be started", isolation=dict(self.isolation)
                ), server
        try:
            reply = server.request(req, time.monotonic() + timeout + REPLY_GRACE_S)
        except (FrameError, OSError) as exc:
            died = not server.alive()
            server = self._replace(server)
            reason = "died" if died else f"stopped answering ({type(exc).__name__})"
            return ExecResult(
                "error", detail=f"sandbox server {reason}", isolation=dict(self.isolation)
            ), server
        if reply.get("restart"):
            server = self._replace(server)
            if reply.get("not_started") and retry:
                return self._run_on(server, req, retry=False)  # it never ran: run it once more
        result = result_from_reply(reply, server.isolation or self.isolation, timeout)
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
        return list(self._pool().map(lambda job: self.run(*job), jobs))

    def run_each(self, code: str, entry: str, inputs: Iterable[Any], timeout: float) -> list[ExecResult]:
        """``[run(code, entry, i, timeout) for i in inputs]``, importing ``code`` once.

        A worker imports the program in a confined process and forks every call from
        that loaded state, so each call still starts from the state right after import
        and has ``timeout`` seconds for import and call together; whenever the loaded
        state could differ from a fresh run's (the import raised, wrote on the result
        channel, left threads, processes or files), the inputs run one at a time instead
        (see ``fork_per_call``).  Inputs must be dict literals (ValueError otherwise).
        """
        return self.run_each_many([(code, entry, inputs, timeout)])[0]

    def run_each_many(self, jobs: Iterable[Sequence[Any]]) -> list[list[ExecResult]]:
        """Run ``(code, entry, inputs, timeout)`` jobs (see ``run_each``) across the workers.

        A worker hands a job back after an input that timed out; the inputs left are
        dealt out in turn to one new piece per worker (each imports the program again),
        so a slow program's timeouts, often on neighbouring inputs, run side by side
        instead of one after another.
        """
        reqs = [make_each_request(*job) for job in jobs]  # reject malformed jobs before anything runs
        if self._closed:
            raise RuntimeError("Sandbox is closed")
        out: list[list[Any]] = [[None] * len(req["inputs"]) for req in reqs]
        executor = self._pool()
        running: dict[Future, tuple[int, list[int]]] = {}

        def submit(number: int, places: list[int]) -> None:
            piece = dict(reqs[number], inputs=[reqs[number]["inputs"][i] for i in places])
            running[executor.submit(self._each_piece, piece)] = (number, places)

        for number, req in enumerate(reqs):
            if req["inputs"]:
                submit(number, list(range(len(req["inputs"]))))
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                number, places = running.pop(future)
                results = future.result()
                for place, result in zip(places, results):
                    out[number][place] = result
                rest = places[len(results) :]
                for turn in range(min(self.workers, len(rest))):
                    submit(number, rest[turn :: self.workers])
        return out

    def _each_piece(self, req: dict[str, Any]) -> list[ExecResult]:
        """Some results of a load-once request: all of them, or those up to a timeout."""
        server = self._idle.get()
        try:
            results, server = self._each_on(server, dict(req, yield_after_timeout=True), retry=True)
        finally:
            self._idle.put(server)
        return results

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="sandbox")
            return self._executor

    def _each_on(
        self, server: ServerProcess, req: dict[str, Any], retry: bool
    ) -> tuple[list[ExecResult], ServerProcess]:
        count, timeout = len(req["inputs"]), req["timeout"]

        def failed(why: str) -> list[ExecResult]:
            return [ExecResult("error", detail=why, isolation=dict(self.isolation)) for _ in range(count)]

        if not server.alive():
            server = self._replace(server)
            if not server.alive():
                return failed("sandbox server could not be started"), server
        # Every input takes at most one run's time (import included) plus the server's overhead.
        deadline = time.monotonic() + (count + 1) * (timeout + COMMAND_OVERHEAD_S) + REPLY_GRACE_S
        max_reply = count * (self.limits.max_result_kb + 64) * 1024 + (1 << 20)
        try:
            reply = server.request(req, deadline, max_reply=max_reply)
        except (FrameError, OSError) as exc:
            died = not server.alive()
            server = self._replace(server)
            return failed(
                f"sandbox server {'died' if died else f'stopped answering ({type(exc).__name__})'}"
            ), server
        runs = reply.get("runs")
        if (
            reply.get("status") != "ok"
            or not isinstance(runs, list)
            or not all(isinstance(r, dict) for r in runs)
        ):
            if reply.get("restart"):
                server = self._replace(server)
            return failed(f"sandbox refused the request: {reply.get('detail') or 'bad reply'}"), server
        iso = server.isolation or self.isolation
        results = [_each_result(run, iso, timeout) for run in runs[:count]]
        if reply.get("restart") or reply.get("host_gone"):
            server = self._replace(server)
        if len(results) < count and not (reply.get("yielded") and results):
            rest = dict(req, inputs=req["inputs"][len(results) :])
            if retry:
                more, server = self._each_on(server, rest, retry=False)
            else:
                more = [
                    ExecResult("error", detail="sandbox server had to restart", isolation=dict(iso))
                    for _ in rest["inputs"]
                ]
            results.extend(more)
        return results, server

    # ---------------------------------------------------------------- commands

    def run_command(
        self,
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
        """Execute ``argv`` in a fresh confined process (see ``run_commands``)."""
        return self.run_commands(
            [argv],
            timeout,
            files=files,
            executables=executables,
            collect=collect,
            limits=limits,
            env=env,
            stdin=stdin,
            max_output_kb=max_output_kb,
            max_collect_kb=max_collect_kb,
        )[0]

    def run_commands(
        self,
        argvs: Sequence[Sequence[str]],
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
        chunk: int | None = None,
    ) -> list[CommandResult]:
        """Execute every command line in its own confined process; results in the same order.

        Each run gets a fresh private work directory holding ``files`` (names in
        ``executables`` are made executable), a scrubbed environment plus ``env``,
        the rlimits of ``limits`` (default: this sandbox's; the tmpfs size is always
        the sandbox's), ``stdin`` on fd 0, and ``timeout`` seconds of wall clock.
        stdout and stderr are captured up to ``max_output_kb`` each; files named in
        ``collect`` are read back after the run if they are plain files.  Runs are
        sent to the workers in chunks of ``chunk`` (the files travel once per chunk).
        """
        req = make_command_request(
            argvs,
            timeout,
            files=files,
            executables=executables,
            collect=collect,
            limits=limits,
            env=env,
            stdin=stdin,
            max_output_kb=max_output_kb,
            max_collect_kb=max_collect_kb,
        )
        if self._closed:
            raise RuntimeError("Sandbox is closed")
        runs = req["runs"]
        size = chunk or max(1, math.ceil(len(runs) / (self.workers * 4)))
        pieces = [dict(req, runs=runs[i : i + size]) for i in range(0, len(runs), size)]
        if len(pieces) == 1 or self.workers == 1:
            done = [self._command_piece(piece) for piece in pieces]
        else:
            done = list(self._pool().map(self._command_piece, pieces))
        return [result for piece in done for result in piece]

    def _command_piece(self, req: dict[str, Any]) -> list[CommandResult]:
        server = self._idle.get()
        try:
            results, server = self._commands_on(server, req, retry=True)
        finally:
            self._idle.put(server)
        return results

    def _commands_on(
        self, server: ServerProcess, req: dict[str, Any], retry: bool
    ) -> tuple[list[CommandResult], ServerProcess]:
        count = len(req["runs"])

        def failed(why: str) -> list[CommandResult]:
            iso = command_isolation(self.isolation, req, self.limits)
            return [CommandResult("error", detail=why, isolation=iso) for _ in range(count)]

        if not server.alive():
            server = self._replace(server)
            if not server.alive():
                return failed("sandbox server could not be started"), server
        deadline = time.monotonic() + count * (req["timeout"] + COMMAND_OVERHEAD_S) + REPLY_GRACE_S
        try:
            reply = server.request(req, deadline, max_reply=reply_size_cap(req))
        except (FrameError, OSError) as exc:
            died = not server.alive()
            server = self._replace(server)
            reason = "died" if died else f"stopped answering ({type(exc).__name__})"
            return failed(f"sandbox server {reason}"), server
        iso = command_isolation(server.isolation or self.isolation, req, self.limits)
        if reply.get("status") != "ok" or not isinstance(reply.get("runs"), list):
            if reply.get("restart"):
                server = self._replace(server)
            return failed(f"sandbox refused the command: {reply.get('detail') or 'bad reply'}"), server
        results = [
            explain_unreachable(result_from_run(run, iso), sent["argv"][0])
            for run, sent in zip(reply["runs"][:count], req["runs"])
        ]
        if reply.get("restart") or reply.get("host_gone"):
            server = self._replace(server)
        if len(results) < count:
            rest = dict(req, runs=req["runs"][len(results) :])
            if retry:
                more, server = self._commands_on(server, rest, retry=False)
            else:
                more = [
                    CommandResult("error", detail="sandbox server had to restart", isolation=iso)
                    for _ in rest["runs"]
                ]
            results.extend(more)
        return results, server
