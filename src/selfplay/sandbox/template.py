"""The template: a pristine process that every job process is forked from.

A forked child holds a copy of its parent's whole memory.  The fork server reads
each request and keeps replies, expected values and other jobs' programs in its
heap (freed objects included, until their pages are reused), so a child forked
from the server could read an earlier job's data by walking its stack frames, the
garbage collector's objects or ``/proc/self/mem``.  Instead, right after setup
(pre-imports, warm-up, filesystem view) and before it reads any request, the
server forks the *template*.  The template never receives a job's data: it only
receives, over a Unix socket, a one-byte order and the descriptors the job will
use, and answers with the pid of the process it started.  So every job process
starts from a state that never held any job's data, and learns its own job (and
only it) through a pipe of its own.

Starting a job (``Template.spawn``): the template forks an intermediate process, which
forks the job process and exits at once, so the job process is re-parented to the server
(PID 1 of the namespace, or a child subreaper), which watches, times, kills and reaps it
exactly as it would its own child. The template reaps the intermediate, then sends the
job process's pid. Each job process holds one end of a socket pair whose other end the
server keeps; it waits there, holding nothing, until the server sends it the job's
descriptors and then the job itself (a ``JOB`` frame: which entry, its request, work
directory, deadline); it enters the harness (``job_main``), which checks that its parent
is the server before it confines itself. The server orders the next job process as soon
as it has handed out one, so the forks happen while a job runs, not before the next one:
between jobs a server has one such *spare* besides its template, and sweeps leave both
alone.

The template never runs untrusted code and runs as the server's uid, so a
sandboxed program cannot signal it; it dies with the server (parent-death
signal).  If it dies anyway, ``spawn`` raises ``TemplateGone`` and the server
asks the host to replace it: a server that has served requests can never make a
clean template again.
"""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable
from typing import Any

from . import confine
from .protocol import FrameError, read_frame, write_frame

ORDER = b"F"
MAX_FDS = 8
PID_BYTES = 4
MAX_JOB_BYTES = 80 * 1024 * 1024  # a request (at most 64 MiB) and a few fields


class TemplateGone(Exception):
    """The template process no longer answers: the server must be replaced."""


class Template:
    """The server's handle on its template process and on the spare job process it made."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid = pid
        self.sock = sock
        self._ordered: socket.socket | None = None  # our end of an ordered job process, pid not read yet
        self._spare: tuple[int, socket.socket] | None = None

    @classmethod
    def start(cls, close_in_template: list[int], job_entry: Callable[[int], None]) -> Template:
        """Fork the template now; it closes ``close_in_template`` (the server's own
        channels) and serves orders until the server goes away. ``job_entry(channel)``
        runs in each job process and never returns."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the template
            try:
                ours.close()
                for fd in close_in_template:
                    os.close(fd)
                confine.set_parent_death_signal(signal.SIGKILL)
                _serve(theirs, job_entry)
            finally:
                os._exit(0)
        theirs.close()
        template = cls(pid, ours)
        template._order()
        return template

    def spare_pid(self) -> int | None:
        """The pid of the prepared job process (a sweep must leave it alone), or None."""
        try:
            self._settle()
        except TemplateGone:
            return None
        return self._spare[0] if self._spare else None

    def spawn(self, job: dict[str, Any], fds: list[int]) -> int:
        """Hand ``job`` and ``fds`` (which the caller still closes on its side) to a job
        process, then order the next one; its pid. Raises TemplateGone when the template
        is gone or no job process takes the job."""
        for attempt in (1, 2):
            if self._spare is None and self._ordered is None:
                self._order()
            self._settle()
            pid, channel = self._spare
            self._spare = None
            try:
                socket.send_fds(channel, [ORDER], fds)
                write_frame(channel.fileno(), job)
            except OSError:  # it died while it waited (only a process of the same uid could do that)
                _kill_and_reap(pid)
                if attempt == 2:
                    raise TemplateGone("no job process took the job") from None
                continue
            finally:
                channel.close()
            try:
                self._order()
            except TemplateGone:
                pass  # the next spawn says so
            return pid
        raise AssertionError("unreachable")

    def close(self) -> None:
        for channel in (self._ordered, self._spare[1] if self._spare else None):
            if channel is not None:
                channel.close()
        self.sock.close()

    def _order(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(self.sock, [ORDER], [theirs.fileno()])
        except OSError as exc:
            ours.close()
            raise TemplateGone(f"the template process is gone ({type(exc).__name__})") from None
        finally:
            theirs.close()
        self._ordered = ours

    def _settle(self) -> None:
        """Take the template's answer to the pending order (its pid arrives once the job
        process is the server's child)."""
        if self._ordered is None:
            return
        channel, self._ordered = self._ordered, None
        try:
            answer = self.sock.recv(PID_BYTES)
        except OSError:
            answer = b""
        pid = int.from_bytes(answer, "big") if len(answer) == PID_BYTES else 0
        if pid <= 0:
            channel.close()
            raise TemplateGone("the template process is gone or could not start a job process")
        self._spare = (pid, channel)


def _serve(sock: socket.socket, job_entry: Callable[[int], None]) -> None:  # pragma: no cover
    """The template's loop: per order, start one job process holding the order's channel."""
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, len(ORDER), MAX_FDS)
        except OSError:
            return
        if message != ORDER or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            if not message:
                return  # the server closed its end
            sock.send(bytes(PID_BYTES))
            continue
        report_r, report_w = os.pipe()
        middle = os.fork()
        if middle == 0:
            try:
                os.close(report_r)
                pid = os.fork()
                if pid == 0:
                    os.close(report_w)
                    sock.close()
                    job_entry(fds[0])
                os.write(report_w, pid.to_bytes(PID_BYTES, "big"))
            finally:
                os._exit(0)
        os.close(report_w)
        os.close(fds[0])
        answer = _read_exactly(report_r, PID_BYTES)
        os.close(report_r)
        try:
            os.waitpid(middle, 0)
        except ChildProcessError:
            pass
        # Sent only once the intermediate process is reaped: the job process is the server's now.
        sock.send(answer if len(answer) == PID_BYTES else bytes(PID_BYTES))


def read_job(channel: int) -> tuple[dict[str, Any], list[int]]:
    """In a job process: wait for its descriptors and its job on ``channel``, which is then
    closed. Exits quietly when the server goes away first."""
    with socket.socket(fileno=channel) as sock:
        message, fds, _, _ = socket.recv_fds(sock, len(ORDER), MAX_FDS)
        if message != ORDER:
            os._exit(0)  # the server is gone: nothing to do
        job = read_frame(sock.fileno(), MAX_JOB_BYTES)
    if not isinstance(job, dict):
        raise FrameError("the job is not an object")
    return job, fds


def _read_exactly(fd: int, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = os.read(fd, count - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _kill_and_reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
