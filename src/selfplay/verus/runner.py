"""Running Verus on many files, each confined, one process per file, with exact verdicts.

One run is ``verus FILE --multiple-errors N [--output-json] [--rlimit R] [extra..]``
(:meth:`~selfplay.verus.settings.VerusSettings.verus_args`), the way the released PSV
code ran it: one file per process, a wall-clock timeout per file, and a few retries
when Verus or rustc crashes with a known panic. Unlike the released code, which read
two counts off stdout with a regular expression and ignored the exit code, the verdict
comes from the exit code and both streams together (:mod:`.output`), and a timeout is
a failure recorded as ``timeout``.

Confinement
-----------
Model-written code reaches rustc (and its procedural macros) and Verus, so every run
goes through :class:`selfplay.sandbox.Sandbox` (``run_command``): network, PID and
mount namespaces, an unprivileged uid, a private tmpfs work directory holding only the
file, a minimal filesystem view plus Verus's own folders and its Rust toolchain's
(:func:`~.settings.tool_dirs`), a scrubbed environment plus what Verus needs
(:func:`~.settings.sandbox_env`),
rlimits (address space ``memory_mb``, ``max_processes`` threads and processes) and
the wall-clock timeout. A small shell driver first checks that the Verus executable
is reachable inside the sandbox (exit 97 otherwise, recorded as ``crash`` with the
reason). The verdict is decided here, outside the confined processes, from what they
printed.

Statuses: ``verified`` (exit 0, zero errors, nothing amiss), ``failed`` (verification
errors), ``compile_error`` (rustc or Verus refused the program: syntax, types, modes,
unsupported features), ``timeout`` (the wall clock ran out, or the CPU-time limit the
sandbox derives from it), ``crash`` (a panic that persisted through the retries, a
killed process, a sandbox failure, or output that cannot be trusted; ``detail`` says
which). Whether a solution's target was verified is for the caller
(:mod:`.checks`) to judge from ``verified``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..specverify.runs import (
    MAX_TEXT_CHARS,  # noqa: F401 (the limit, read here by callers)
    add_stats,
    borrowed_sandbox,
    early_refusal,
    fill_missing,
)
from .output import read_output
from .settings import VerusSettings, check_verus, sandbox_env, tool_dirs, verus_available

__all__ = [
    "STATUSES",
    "VerusJob",
    "VerusSettings",
    "VerusVerdict",
    "check_verus",
    "tool_dirs",
    "verify",
    "verus_available",
]

STATUSES = ("verified", "failed", "compile_error", "timeout", "crash")
FILE_NAME = "program.rs"
OUTPUT_KB = 1024
_NO_TOOL_EXIT = 97


@dataclass(frozen=True)
class VerusJob:
    """One file to verify: ``text`` is the whole Rust + Verus file."""

    name: str
    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError("a VerusJob's name must be a str")
        if not isinstance(self.text, str):
            raise TypeError("a VerusJob's text must be a str (the Verus file)")

    @classmethod
    def of(cls, item: VerusJob | Sequence[Any]) -> VerusJob:
        """Accept a VerusJob or a (name, text) pair."""
        return item if isinstance(item, VerusJob) else cls(*item)


@dataclass
class VerusVerdict:
    """What Verus said about one file.

    status     one of :data:`STATUSES`
    verified   functions Verus reported verified (0 when it gave no count)
    errors     verification errors Verus reported
    messages   its error diagnostics, ``error: text (program.rs:line:col)``
    seconds    wall time of the last run
    detail     why, for ``crash``, ``timeout`` and ``compile_error``
    attempts   runs made (more than one after a retried crash)
    exit_code  the last run's exit code (None when it did not exit by itself)
    source     where the counts came from: ``json``, ``text`` or None
    """

    name: str
    status: str
    verified: int = 0
    errors: int = 0
    messages: list[str] = field(default_factory=list)
    seconds: float = 0.0
    detail: str | None = None
    attempts: int = 1
    exit_code: int | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown Verus verdict status {self.status!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "verified": self.verified,
            "errors": self.errors,
            "messages": list(self.messages),
            "seconds": round(float(self.seconds), 6),
            "detail": self.detail,
            "attempts": self.attempts,
            "exit_code": self.exit_code,
            "source": self.source,
        }


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def driver_script(command: Sequence[str]) -> str:
    """The shell script run confined: check that Verus is reachable, then become it."""
    exe = command[0]
    return (
        "set -u\n"
        f"if [ ! -x {_quote(exe)} ]; then echo {_quote(f'cannot execute Verus ({exe}) inside the sandbox')} >&2; "
        f"exit {_NO_TOOL_EXIT}; fi\n"
        f'exec {" ".join(_quote(c) for c in command)} "$@"\n'
    )


def _early_verdict(job: VerusJob) -> VerusVerdict | None:
    """A verdict for text no Verus run should see."""
    why = early_refusal(job.text)
    if why is None:
        return None
    return VerusVerdict(job.name, "compile_error", detail=f"{why} (not run)")


def _limits(settings: VerusSettings) -> Any:
    """The rlimits of one Verus run (and of a private sandbox's workers)."""
    from ..sandbox import SandboxLimits

    return SandboxLimits(
        memory_mb=settings.memory_mb,
        max_processes=settings.max_processes,
        max_open_files=1024,
        max_file_mb=256,
        tmpfs_mb=512,
    )


class _Runner:
    def __init__(self, settings: VerusSettings, sandbox: Any, command: list[str]):
        self.settings = settings
        self.sandbox = sandbox
        self.driver = driver_script(command)
        self.env = sandbox_env(settings, command)
        self.limits = _limits(settings)
        self.lock = threading.Lock()
        self.stats = {"processes": 0, "retries": 0}

    def run(self, job: VerusJob) -> VerusVerdict:
        attempts = 0
        while True:
            attempts += 1
            verdict, retry = self.once(job)
            with self.lock:
                self.stats["processes"] += 1
            if retry and attempts <= self.settings.retries:
                with self.lock:
                    self.stats["retries"] += 1
                continue
            verdict.attempts = attempts
            if retry and attempts > 1:
                verdict.detail = f"{verdict.detail} (after {attempts} runs)"
            return verdict

    def once(self, job: VerusJob) -> tuple[VerusVerdict, bool]:
        """One run: its verdict, and whether it is a known crash worth another try."""
        argv = ["/bin/sh", "run.sh", *self.settings.verus_args(FILE_NAME)]
        files = {FILE_NAME: job.text, "run.sh": self.driver}
        result = self.sandbox.run_command(
            argv,
            self.settings.timeout,
            files=files,
            limits=self.limits,
            env=self.env,
            max_output_kb=OUTPUT_KB,
        )
        name, seconds = job.name, result.seconds
        if result.status == "error":
            return VerusVerdict(
                name,
                "crash",
                seconds=seconds,
                detail=f"the sandbox could not run Verus: {result.detail or 'unknown reason'}",
            ), False
        if result.status == "timeout":
            return VerusVerdict(
                name,
                "timeout",
                seconds=seconds,
                detail=f"Verus did not finish within {self.settings.timeout:g} s (wall clock)",
            ), False
        if result.status == "killed":
            if result.signal == "SIGXCPU":
                return VerusVerdict(
                    name, "timeout", seconds=seconds, detail="Verus used up the CPU time allowed for the run"
                ), False
            why = result.detail or result.signal or "no reason given"
            return VerusVerdict(name, "crash", seconds=seconds, detail=f"Verus was killed ({why})"), False
        stdout, stderr = result.text("stdout"), result.text("stderr")
        if result.exit_code == _NO_TOOL_EXIT:
            why = stderr.strip().splitlines()[-1][:300] if stderr.strip() else "Verus is not reachable"
            return VerusVerdict(name, "crash", seconds=seconds, detail=why, exit_code=result.exit_code), False
        reading = read_output(stdout, stderr, result.exit_code)
        if result.stdout_truncated or result.stderr_truncated:
            reading.problems.append(f"output longer than {OUTPUT_KB} KiB")
            reading.status = "crash"
        detail = None
        if reading.crash is not None:
            detail = f"Verus crashed: {reading.crash}"
        elif reading.status == "crash":
            detail = ("Verus's output cannot be trusted: " + "; ".join(dict.fromkeys(reading.problems)))[
                :1000
            ]
        elif reading.status == "compile_error":
            detail = reading.messages[0] if reading.messages else "Verus refused the program"
        verdict = VerusVerdict(
            name,
            reading.status,
            verified=reading.verified or 0,
            errors=reading.errors or 0,
            messages=reading.messages,
            seconds=seconds,
            detail=detail,
            exit_code=result.exit_code,
            source=reading.source,
        )
        return verdict, reading.crash is not None


def verify(
    jobs: Sequence[VerusJob | Sequence[Any]],
    settings: VerusSettings | None = None,
    sandbox: Any = None,
    stats: dict[str, int] | None = None,
) -> list[VerusVerdict]:
    """Verify every job, one confined Verus process each; verdicts in the same order.

    ``sandbox``: a :class:`selfplay.sandbox.Sandbox` to run in (Verus must be reachable
    inside it: see :func:`~.settings.tool_dirs`); None starts a private one for the
    call. ``stats``, when given, is updated with the processes run and the retries.
    Raises MissingToolError (one line) when Verus cannot be found.
    """
    settings = settings or VerusSettings()
    items = [VerusJob.of(job) for job in jobs]
    command = check_verus(settings)
    verdicts: list[VerusVerdict | None] = [_early_verdict(job) for job in items]
    todo = [k for k, v in enumerate(verdicts) if v is None]
    if todo:
        with borrowed_sandbox(
            sandbox, workers=settings.workers, tool_dirs=lambda: tool_dirs(settings), limits=_limits(settings)
        ) as box:
            runner = _Runner(settings, box, command)
            workers = max(1, getattr(box, "workers", None) or settings.workers)
            with ThreadPoolExecutor(workers, thread_name_prefix="verus") as pool:
                for k, verdict in zip(todo, pool.map(lambda k: runner.run(items[k]), todo)):
                    verdicts[k] = verdict
            add_stats(stats, runner.stats)
    return fill_missing(
        verdicts, lambda k: VerusVerdict(items[k].name, "crash", detail="no verdict (internal error)")
    )
