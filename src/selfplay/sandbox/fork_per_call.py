"""Loading a program once and calling it on many inputs, each call in a process of its own.

``Sandbox.run_each(code, entry, inputs, timeout)`` gives what
``[Sandbox.run(code, entry, i, timeout) for i in inputs]`` gives, at the cost of one
import instead of one per input.  The fork server forks a *loader*: a child confined
exactly as a single run's (see ``harness.confine_child``) that executes the program
once and then waits.  For each input the server sends the loader a go message (the
input's index and its deadline); the loader forks a *call process* from its loaded
state, which calls the entry point and writes the usual result frame on a pipe of its
own; the loader passes those bytes and the call process's wait status back, and the
server judges them exactly as it judges a single run's (``ForkServer._judge``).  Every
call therefore starts from the program as it stood right after import: what one call
changes (globals, caches, files in the work directory, processes it started) is gone
before the next.

The server keeps the parts that decide a verdict: the wall clock (a call gets the
single run's ``timeout`` less the time the import took, so import and call together
have the same budget as one run), the combined-memory watchdog, the namespace sweep
between calls (sparing only the loader) and the emptying of the work directory.  The
loader runs after untrusted code has run in it, so whatever it sends is treated like
anything else a program writes: checked, bounded, and believed only as that program's
own output.

Whenever the loaded state would not behave like a fresh run, the server gives up on
loading once and runs the remaining inputs one at a time (``ForkServer.execute``), so
verdicts never depend on the strategy: the import raised or wrote anything on the
result channel, it left threads or processes running or files in the work directory,
the loader died, stopped answering or sent something malformed.  An import that
outlives the timeout counts as a timeout for every input, as each single run would.
A call that times out or exhausts memory is that input's verdict, and a fresh loader
serves the rest.  Not detected: fork hooks an import registers
(``os.register_at_fork``) run in every call process, where a single run never forks;
``random``'s own hook is undone (each call gets the generator state the import left).

Wire format (besides the usual frames): the go message is ``GO`` (index, absolute
``time.monotonic`` deadline); a loader's report per call is ``REPORT`` (magic, byte
count, wait status) followed by the call process's bytes.
"""

from __future__ import annotations

import _thread
import os
import random
import select
import signal
import struct
from typing import Any

from . import confine
from .harness import (
    CONTROL_FD,
    RESULT_FD,
    _exit_now,
    _parse_input,
    _send,
    call_entry,
    confine_child,
    finish,
    load_program,
)
from .limits import SandboxLimits
from .protocol import MAGIC, write_all

KIND = "each"
GO = struct.Struct(">Id")
REPORT = struct.Struct(">4sIi")
REPORT_MAGIC = b"SBXC"
LOADED = "loaded"

# Bound while the server starts, before any program runs in a loader: an import that
# replaces these in ``os`` or ``select`` does not change how the loader works.
_fork = os.fork
_pipe = os.pipe
_read = os.read
_close = os.close
_dup2 = os.dup2
_kill = os.kill
_waitpid = os.waitpid
_pidfd_open = os.pidfd_open
_set_blocking = os.set_blocking
_select = select.select
_threads_running = _thread._count
_pack_report = REPORT.pack
_unpack_go = GO.unpack
_random_state = random.getstate
_set_random_state = random.setstate


def parse_request(req: dict[str, Any]) -> tuple[str, str, list[str], float]:
    """(code, entry, inputs, timeout) of a well-formed request; raises otherwise (server side)."""
    code, entry, inputs, timeout = req["code"], req["entry"], req["inputs"], float(req["timeout"])
    if not isinstance(code, str) or not isinstance(entry, str) or not isinstance(inputs, list):
        raise TypeError("bad request")
    if not all(isinstance(item, str) for item in inputs) or not timeout > 0:
        raise ValueError("bad request")
    return code, entry, inputs, timeout


def frame_settled(buf: bytes | bytearray, cap: int) -> bool:
    """Whether waiting for more bytes is over: ``buf`` holds a whole frame, or starts
    in a way no frame of at most ``cap`` bytes does."""
    return _settled(buf, MAGIC, 8, cap)


def report_settled(buf: bytes | bytearray, cap: int) -> bool:
    """``frame_settled`` for a loader's report (at most ``cap + 1`` bytes of output)."""
    return _settled(buf, REPORT_MAGIC, REPORT.size, cap + 1)


def _settled(buf: bytes | bytearray, magic: bytes, header: int, cap: int) -> bool:
    if len(buf) >= len(magic) and buf[: len(magic)] != magic:
        return True
    if len(buf) < header:
        return False
    count = int.from_bytes(buf[4:8], "big")
    return count > cap or len(buf) >= header + count


def parse_report(buf: bytes, cap: int) -> tuple[bytes, int] | None:
    """(the call process's bytes, its wait status) from exactly one report; None when malformed."""
    if len(buf) < REPORT.size:
        return None
    magic, count, status = REPORT.unpack_from(buf)
    if magic != REPORT_MAGIC or count > cap + 1 or len(buf) != REPORT.size + count:
        return None
    return bytes(buf[REPORT.size :]), status


# ---------------------------------------------------------------- loader side


def loader_main(
    cfg: dict[str, Any],
    req: dict[str, Any],
    result_w: int,
    control_r: int,
    workdir: str,
    deadline: float,
    cap: int,
) -> None:
    """Entry point of the forked loader.  Never returns."""
    timeout = float(req["timeout"])
    try:
        # One more process than a single run: the loader stays beside each call process.
        confine_child(cfg, result_w, workdir, timeout, control_r=control_r, extra_nproc=1)
    except BaseException as exc:  # noqa: BLE001 - the server falls back to single runs
        _send({"status": "error", "detail": f"sandbox setup failed: {type(exc).__name__}"})
        _exit_now(5)
    limits = SandboxLimits.from_dict(cfg["limits"])
    parsed = [_parse_input(literal) for literal in req["inputs"]]
    module, report = load_program(req["code"], limits, deadline, timeout)
    if report is not None:
        _send(report)
        _exit_now(0)
    _send({"status": LOADED, "threads": _threads_running()})
    while True:
        message = _read_exactly(CONTROL_FD, GO.size)
        if message is None:
            _exit_now(0)
        index, call_deadline = _unpack_go(message)
        data, status = _call_in_child(
            module, req["entry"], parsed[index], limits, call_deadline, timeout, cap
        )
        try:
            write_all(RESULT_FD, _pack_report(REPORT_MAGIC, len(data), status) + data)
        except OSError:
            _exit_now(3)


def _call_in_child(
    module, entry: str, parsed, limits: SandboxLimits, deadline: float, timeout: float, cap: int
) -> tuple[bytes, int]:
    """Fork a call process from the loaded state, run one call there, collect what it wrote."""
    read_end, write_end = _pipe()
    state = _random_state()
    pid = _fork()
    if pid == 0:  # pragma: no cover - call process
        # ``random`` reseeds itself in a forked child; a single run's call sees the state the import left.
        _set_random_state(state)
        loader = os.getppid()
        _dup2(write_end, RESULT_FD)
        for fd in (read_end, write_end, CONTROL_FD):
            _close(fd)
        confine.set_parent_death_signal(signal.SIGKILL)
        if os.getppid() != loader:
            _exit_now(4)
        kwargs, problem = parsed
        if problem:
            finish(lambda: {"status": "error", "detail": problem})
        finish(lambda: call_entry(module, entry, kwargs, limits, deadline, timeout))
    _close(write_end)
    try:
        return _collect(pid, read_end, cap)
    finally:
        _close(read_end)


def _collect(pid: int, fd: int, cap: int) -> tuple[bytes, int]:
    """The bytes a call process writes (at most ``cap + 1``) until it exits, and its wait status."""
    buf = bytearray()
    pidfd = _pidfd_open(pid)
    watched = [fd, pidfd]
    try:
        while True:
            ready = _select(watched, [], [])[0]
            if fd in ready:
                chunk = _read(fd, 1 << 16)
                if chunk:
                    buf += chunk
                if not chunk or len(buf) > cap:
                    watched.remove(fd)
                if len(buf) > cap:
                    _kill(pid, signal.SIGKILL)
            if pidfd in ready:
                break
        _, status = _waitpid(pid, 0)
    finally:
        _close(pidfd)
    if len(buf) <= cap:
        buf += drain(fd, cap + 1 - len(buf))
    return bytes(buf[: cap + 1]), status


def drain(fd: int, limit: int) -> bytes:
    """What is already buffered in the pipe (an escaped grandchild may hold it open)."""
    _set_blocking(fd, False)
    data = bytearray()
    try:
        while len(data) < limit:
            chunk = _read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk
    except BlockingIOError:
        pass
    return bytes(data[:limit])


def _read_exactly(fd: int, count: int) -> bytes | None:
    data = bytearray()
    while len(data) < count:
        chunk = _read(fd, count - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)
