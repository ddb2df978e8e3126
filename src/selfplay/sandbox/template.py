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

Starting a job (``Template.spawn``): the server makes the job's pipes and sends
their child ends to the template; the template forks an intermediate process,
which forks the job process and exits at once, so the job process is re-parented
to the server (PID 1 of the namespace, or a child subreaper) and the server
watches, times, kills and reaps it exactly as it would its own child.  The
template reaps the intermediate, then sends the job process's pid.  Only then
does the server write the job (``JOB`` frame: which entry, its request, work
directory, deadline) on the job pipe; the job process reads it, closes the pipe
and enters the harness (``job_main``), which checks that its parent is the server
before it confines itself.

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
from typing import Any, Callable

from . import confine
from .protocol import FrameError, read_frame, write_frame

ORDER = b"F"
MAX_FDS = 8
PID_BYTES = 4
MAX_JOB_BYTES = 80 * 1024 * 1024  # a request (at most 64 MiB) and a few fields


class TemplateGone(Exception):
    """The template process no longer answers: the server must be replaced."""


class Template:
    """The server's handle on its template process."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid = pid
        self.sock = sock

    @classmethod
    def start(cls, close_in_template: list[int], job_entry: Callable[[int, list[int]], None]) -> "Template":
        """Fork the template now; it closes ``close_in_template`` (the server's own
        channels) and serves orders until the server goes away.  ``job_entry(job_fd,
        fds)`` runs in each job process and never returns."""
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
        return cls(pid, ours)

    def spawn(self, job: dict[str, Any], fds: list[int]) -> int:
        """Start a job process holding ``fds`` (which the caller still closes on its side)
        and hand it ``job``; its pid.  Raises TemplateGone when the template is gone, and
        OSError when the job process died before it read its job."""
        job_r, job_w = os.pipe()
        try:
            try:
                socket.send_fds(self.sock, [ORDER], [job_r, *fds])
                answer = self.sock.recv(PID_BYTES)
            except OSError as exc:
                raise TemplateGone(f"the template process is gone ({type(exc).__name__})") from None
        finally:
            os.close(job_r)
        pid = int.from_bytes(answer, "big") if len(answer) == PID_BYTES else 0
        if pid <= 0:
            raise TemplateGone("the template process could not start a job process")
        try:
            write_frame(job_w, job)
        except OSError:
            _kill_and_reap(pid)
            raise
        finally:
            os.close(job_w)
        return pid

    def close(self) -> None:
        self.sock.close()


def _serve(sock: socket.socket, job_entry: Callable[[int, list[int]], None]) -> None:  # pragma: no cover
    """The template's loop: per order, start one job process holding the order's fds."""
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, len(ORDER), MAX_FDS)
        except OSError:
            return
        if message != ORDER or not fds:
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
                    job_entry(fds[0], fds[1:])
                os.write(report_w, pid.to_bytes(PID_BYTES, "big"))
            finally:
                os._exit(0)
        os.close(report_w)
        for fd in fds:
            os.close(fd)
        answer = _read_exactly(report_r, PID_BYTES)
        os.close(report_r)
        try:
            os.waitpid(middle, 0)
        except ChildProcessError:
            pass
        # Sent only once the intermediate process is reaped: the job process is the server's now.
        sock.send(answer if len(answer) == PID_BYTES else bytes(PID_BYTES))


def read_job(job_fd: int) -> dict[str, Any]:
    """In a job process: its job, read from the job pipe, which is then closed."""
    try:
        job = read_frame(job_fd, MAX_JOB_BYTES)
    finally:
        os.close(job_fd)
    if not isinstance(job, dict):
        raise FrameError("the job is not an object")
    return job


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
