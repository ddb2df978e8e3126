"""Running an executable (a compiled program, a compiler) inside the sandbox.

The Python path forks a child that imports and calls a function.  A *command*
request instead forks a child that confines itself exactly the same way (new
session, fds limited to stdin/stdout/stderr, private work directory, rlimits,
unprivileged uid, no_new_privs, parent-death SIGKILL, scrubbed environment) and
then ``execve``s a given argv.  It runs in the same warm fork server, so it
inherits the server's network/PID/mount namespaces and its minimal filesystem
view (a program outside the view, or outside the Sandbox's ``tool_dirs``, cannot
be started: see ``fs_view``); the server applies the same wall-clock timeout,
whole-group kill, combined-memory watchdog and namespace sweep as for Python runs.

One request carries a set of input files (written into a fresh work directory
for every run) and a list of runs, each its own confined process in its own work
directory; results come back per run.  Sending several runs of the same binary in
one request ships the files once while keeping every run isolated from the
others.

This module holds the pieces shared by the host and the server: request
validation, the child side (``command_child_main``), writing inputs and
collecting outputs safely, and ``CommandResult``.
"""

from __future__ import annotations

import base64
import errno
import fcntl
import os
import re
import signal
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import confine
from .harness import _real_exit, enforce_landlock, lock_down
from .limits import SandboxLimits

STATUS_FD = 3  # close-on-exec channel telling the server why an exec failed
COMMAND_STATUSES = ("exited", "timeout", "killed", "error")
NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
DEFAULT_OUTPUT_KB = 256
DEFAULT_COLLECT_KB = 64 * 1024
MAX_RUNS_PER_REQUEST = 10_000


@dataclass
class CommandResult:
    """What happened when one command ran in the sandbox.

    status      'exited' (the process ended by itself; see exit_code), 'timeout'
                (wall clock ran out, the whole process group and namespace were
                killed), 'killed' (ended by a signal: an rlimit such as SIGXCPU or
                SIGXFSZ, its own crash, or the sandbox's combined-memory watchdog;
                see signal/detail) or 'error' (the command could not be started:
                missing executable, bad request, sandbox failure)
    exit_code   exit status for 'exited', else None
    signal      signal name when the process died from a signal
    stdout / stderr     captured output, at most ``max_output_kb`` each
    stdout_truncated / stderr_truncated   True when more was written and dropped
    files       collected output files (name -> bytes) that existed after the run
    seconds     wall time of the run itself
    isolation   what confinement was in force
    detail      human-readable reason for 'killed'/'error'/'timeout'
    """

    status: str
    exit_code: int | None = None
    signal: str | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    seconds: float = 0.0
    isolation: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None

    def __post_init__(self) -> None:
        if self.status not in COMMAND_STATUSES:
            raise ValueError(f"unknown command status {self.status!r}")

    @property
    def ok(self) -> bool:
        """True when the command exited by itself with status 0."""
        return self.status == "exited" and self.exit_code == 0

    def text(self, stream: str = "stdout") -> str:
        """stdout or stderr decoded as UTF-8 (undecodable bytes replaced)."""
        data = self.stdout if stream == "stdout" else self.stderr
        return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- host side


def _b64(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("file contents must be bytes or str")
    return base64.b64encode(bytes(data)).decode("ascii")


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name) or name in (".", ".."):
        raise ValueError(f"{what} must be a plain file name (letters, digits, '._-'), got {name!r}")
    return name


def make_command_request(
    argvs: Sequence[Sequence[str]],
    timeout: float,
    files: Mapping[str, bytes | str] | None = None,
    executables: Iterable[str] = (),
    collect: Iterable[str] = (),
    limits: SandboxLimits | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | str = b"",
    max_output_kb: int = DEFAULT_OUTPUT_KB,
    max_collect_kb: int = DEFAULT_COLLECT_KB,
) -> dict[str, Any]:
    """Validate caller arguments (programming errors raise) and build one request.

    Every argv in ``argvs`` becomes one run: a separate confined process in its
    own fresh work directory holding a copy of ``files``.
    """
    argvs = [list(a) for a in argvs]
    if not argvs:
        raise ValueError("at least one command line is needed")
    if len(argvs) > MAX_RUNS_PER_REQUEST:
        raise ValueError("too many runs in one request")
    for argv in argvs:
        if not argv or not all(isinstance(a, str) for a in argv):
            raise TypeError("each command line must be a non-empty list of str")
        if any("\x00" in a for a in argv):
            raise ValueError("command line arguments cannot contain NUL")
    timeout = float(timeout)
    if not (timeout > 0) or timeout == float("inf"):
        raise ValueError("timeout must be a positive number of seconds")
    files = dict(files or {})
    encoded = {_check_name(name, "input file name"): _b64(data) for name, data in files.items()}
    exe = sorted({_check_name(n, "executable name") for n in executables})
    missing = [n for n in exe if n not in encoded]
    if missing:
        raise ValueError(f"executables not among the input files: {missing}")
    wanted = sorted({_check_name(n, "collected file name") for n in collect})
    extra_env: dict[str, str] = {}
    for key, value in (env or {}).items():
        if (
            not isinstance(key, str)
            or not ENV_KEY_RE.match(key)
            or not isinstance(value, str)
            or "\x00" in value
        ):
            raise ValueError(f"bad environment entry {key!r}")
        extra_env[key] = value
    for name, value in (("max_output_kb", max_output_kb), ("max_collect_kb", max_collect_kb)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive int")
    return {
        "kind": "command",
        "runs": [{"argv": argv} for argv in argvs],
        "timeout": timeout,
        "files": encoded,
        "executables": exe,
        "collect": wanted,
        "limits": limits.to_dict() if limits is not None else None,
        "env": extra_env,
        "stdin": _b64(stdin) if stdin else "",
        "max_output_kb": max_output_kb,
        "max_collect_kb": max_collect_kb,
    }


def reply_size_cap(req: dict[str, Any]) -> int:
    """The largest reply frame the host accepts for ``req`` (base64 inflates by 4/3)."""
    per_run = 2 * req["max_output_kb"] * 1024 + req["max_collect_kb"] * 1024 + 8192
    return (per_run * 4 // 3 + 4096) * len(req["runs"]) + (1 << 20)


def result_from_run(run: Any, isolation: dict[str, Any]) -> CommandResult:
    """Turn one per-run reply entry into a CommandResult; malformed entries become 'error'."""
    if not isinstance(run, dict) or run.get("status") not in COMMAND_STATUSES:
        return CommandResult(
            "error", detail="sandbox sent a malformed command result", isolation=dict(isolation)
        )
    try:
        files = {str(k): base64.b64decode(v, validate=True) for k, v in (run.get("files") or {}).items()}
        stdout = base64.b64decode(run.get("stdout") or "", validate=True)
        stderr = base64.b64decode(run.get("stderr") or "", validate=True)
    except (ValueError, TypeError, AttributeError):
        return CommandResult("error", detail="sandbox sent undecodable output", isolation=dict(isolation))
    code = run.get("exit_code")
    return CommandResult(
        status=run["status"],
        exit_code=code if isinstance(code, int) else None,
        signal=run.get("signal") if isinstance(run.get("signal"), str) else None,
        stdout=stdout,
        stderr=stderr,
        stdout_truncated=bool(run.get("stdout_truncated")),
        stderr_truncated=bool(run.get("stderr_truncated")),
        files=files,
        seconds=float(run.get("seconds") or 0.0),
        isolation=dict(isolation),
        detail=run.get("detail") if isinstance(run.get("detail"), str) else None,
    )


def explain_unreachable(result: CommandResult, program: str) -> CommandResult:
    """Add why a program that exists on the host could not be started inside the sandbox:
    it lies outside the sandbox's filesystem view (see ``fs_view``)."""
    if (
        result.status == "error"
        and (result.detail or "").startswith("could not execute")
        and result.isolation.get("fs_view") == "minimal"
        and os.path.isabs(program)
        and os.path.exists(program)
    ):
        result.detail += (
            f" ({program} exists on the host but not in the sandbox's filesystem view: "
            "name its folder in the Sandbox's tool_dirs)"
        )
    return result


# ---------------------------------------------------------------- server side


def parse_request(req: dict[str, Any], server_limits: SandboxLimits) -> dict[str, Any]:
    """Re-validate a command request inside the server; raises ValueError/TypeError/KeyError."""
    timeout = float(req["timeout"])
    if not (timeout > 0) or timeout == float("inf"):
        raise ValueError("bad timeout")
    runs = req["runs"]
    if not isinstance(runs, list) or not runs or len(runs) > MAX_RUNS_PER_REQUEST:
        raise ValueError("bad runs")
    argvs = []
    for run in runs:
        argv = run["argv"]
        if (
            not isinstance(argv, list)
            or not argv
            or not all(isinstance(a, str) and "\x00" not in a for a in argv)
        ):
            raise ValueError("bad argv")
        argvs.append(argv)
    files = {}
    for name, data in dict(req.get("files") or {}).items():
        files[_check_name(name, "file")] = base64.b64decode(data, validate=True)
    executables = {_check_name(n, "executable") for n in req.get("executables") or []}
    collect = [_check_name(n, "collect") for n in req.get("collect") or []]
    limits = server_limits
    if req.get("limits"):
        merged = server_limits.to_dict()
        merged.update({k: v for k, v in dict(req["limits"]).items() if k != "tmpfs_mb"})
        limits = SandboxLimits.from_dict(merged)
    env = {}
    for key, value in dict(req.get("env") or {}).items():
        if not ENV_KEY_RE.match(key) or not isinstance(value, str) or "\x00" in value:
            raise ValueError("bad env")
        env[key] = value
    max_output = int(req.get("max_output_kb") or DEFAULT_OUTPUT_KB) * 1024
    max_collect = int(req.get("max_collect_kb") or DEFAULT_COLLECT_KB) * 1024
    if max_output <= 0 or max_collect <= 0:
        raise ValueError("bad caps")
    stdin = base64.b64decode(req.get("stdin") or "", validate=True)
    return {
        "timeout": timeout,
        "argvs": argvs,
        "files": files,
        "executables": executables,
        "collect": collect,
        "limits": limits,
        "env": env,
        "max_output": max_output,
        "max_collect": max_collect,
        "stdin": stdin,
    }


def write_inputs(
    workdir: str, files: dict[str, bytes], executables: set[str], uid: int | None, gid: int | None
) -> None:
    """Create each input file in a fresh work directory, owned by the sandbox uid."""
    dir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name, data in files.items():
            mode = 0o700 if name in executables else 0o600
            fd = os.open(
                name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd
            )
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, mode)
                if uid is not None:
                    os.fchown(fd, uid, gid if gid is not None else uid)
            finally:
                os.close(fd)
    finally:
        os.close(dir_fd)


def collect_outputs(workdir: str, names: list[str], cap: int) -> tuple[dict[str, str], list[str]]:
    """Read the requested files back (base64), refusing anything that is not a plain file.

    The sandboxed process owns the work directory and could have replaced an
    output by a symlink (to a file only the server may read), a FIFO or a
    device; those are skipped, as is anything beyond ``cap`` bytes in total.
    Returns (found, skipped names).
    """
    found: dict[str, str] = {}
    skipped: list[str] = []
    budget = cap
    try:
        dir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return found, list(names)
    try:
        for name in names:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
            except OSError:
                skipped.append(name)
                continue
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_size > budget:
                    skipped.append(name)
                    continue
                chunks = bytearray()
                while len(chunks) <= st.st_size:
                    block = os.read(fd, 1 << 20)
                    if not block:
                        break
                    chunks += block
                if len(chunks) > budget:
                    skipped.append(name)
                    continue
                budget -= len(chunks)
                found[name] = base64.b64encode(bytes(chunks)).decode("ascii")
            except OSError:
                skipped.append(name)
            finally:
                os.close(fd)
    finally:
        os.close(dir_fd)
    return found, skipped


def stdin_fd(data: bytes) -> int:
    """A readable descriptor holding ``data`` (an anonymous memory file), or /dev/null."""
    if not data:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    fd = os.memfd_create("selfplay-stdin", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _reset_signals() -> None:
    """Default dispositions and an empty mask, as a freshly exec'd program expects.

    The server ignores SIGPIPE (and Python ignores SIGXFSZ); ignored
    dispositions would survive execve and change how the program fails.
    """
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError, RuntimeError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _install_fds(plan: dict[int, int]) -> None:
    """Make each target fd a copy of its source, then close everything else."""
    high = {target: fcntl.fcntl(source, fcntl.F_DUPFD_CLOEXEC, 100) for target, source in plan.items()}
    for target, copy in high.items():
        os.dup2(copy, target, inheritable=True)
    confine.close_fds_except(list(plan))


def command_child_main(
    cfg: dict[str, Any],
    argv: list[str],
    env: dict[str, str],
    stdin: int,
    out_w: int,
    err_w: int,
    status_w: int,
    workdir: str,
    limits: SandboxLimits,
    timeout: float,
) -> None:
    """Entry of the forked child of a command run: confine, then exec.  Never returns.

    If anything fails before the program starts, the reason is written to the
    close-on-exec status channel (fd 3), which the server reads; a successful
    exec closes it silently.
    """
    stage = "setup"
    report_to = status_w  # until the fds are rearranged, fd 3 may be one of the server's
    try:
        os.setsid()
        enforce_landlock(cfg)
        _reset_signals()
        _install_fds({0: stdin, 1: out_w, 2: err_w, STATUS_FD: status_w})
        report_to = STATUS_FD
        os.set_inheritable(STATUS_FD, False)
        lock_down(cfg, workdir, limits, timeout)
        full_env = confine.scrubbed_env(home=workdir)
        full_env.update(env)
        stage = "exec"
        os.execvpe(argv[0], argv, full_env)
    except BaseException as exc:  # noqa: BLE001 - report and die; nothing else may run here
        code = exc.errno if isinstance(exc, OSError) and exc.errno else errno.EIO
        text = f"{stage}:{code}:{type(exc).__name__}: {exc}"[:500].encode("utf-8", "replace")
        try:
            os.write(report_to, text)
        except OSError:
            pass
        _real_exit(127)
    _real_exit(127)  # pragma: no cover - execvpe does not return
