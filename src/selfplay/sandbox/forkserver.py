"""The fork server: a pristine process that forks one confined child per execution.

It is started by the host (see ``launch``) as ``python -s -S -B -c BOOT SRC CONFIG``,
normally as PID 1 of fresh network, PID and mount namespaces.  It prepares the
namespace once: it pivots into a minimal filesystem view (system directories,
Python, the tool directories it was given, a private /tmp; see ``fs_view``), or,
without a mount namespace, prepares a Landlock ruleset allowing the same paths
(see ``landlock``).  It then pre-imports common modules, forks the *template*
(see ``template``) and serves requests one at a time over length-prefixed JSON
frames on its stdin/stdout.  The server itself never runs untrusted code, and no
process that runs it is forked from the server: every job process is forked from
the template, which never held any job's data, learns its own job through a pipe,
and confines itself (see ``harness``) before touching the program.  The server
watches, times and reaps it as its own child.  After each execution every other
process in the namespace but the template is SIGKILLed and reaped, and the work
directory is removed.

Mode ``naive`` serves exactly one request and exits; ``run_naive`` uses it to
get identical isolation with a fresh interpreter per execution.
"""

from __future__ import annotations

import base64
import gc
import importlib
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from . import command, confine, fork_per_call, fs_view, landlock, template
from .fork_per_call import drain as _drain
from .harness import _real_exit, child_main, warm_up
from .limits import SandboxLimits
from .protocol import FrameEOF, FrameError, parse_frame, read_frame, write_all, write_frame
from .template import Template, TemplateGone

PREIMPORTS = (
    "abc",
    "array",
    "bisect",
    "cmath",
    "collections",
    "collections.abc",
    "contextlib",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "io",
    "itertools",
    "json",
    "math",
    "numbers",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "struct",
    "textwrap",
    "time",
    "typing",
    "unicodedata",
)
MAX_REQUEST_BYTES = 64 * 1024 * 1024
MEMORY_POLL_S = 0.05  # how often the combined memory of a multi-process program is checked
SCRATCH = fs_view.SCRATCH
OVERFLOW = "result channel overflow"


class ForkServer:
    def __init__(self, cfg: dict[str, Any]):
        self.cfg = cfg
        self.limits = SandboxLimits.from_dict(cfg["limits"])
        self.mode = cfg.get("mode", "forkserver")  # or "naive": one request, then exit
        self.uid = cfg.get("uid")
        self.gid = cfg.get("gid")
        self.inp = 0
        self.out = 1
        self.counter = 0
        self.pidns = False
        self.work_base = ""
        self.isolation: dict[str, Any] = {}
        self.template: Template | None = None

    # ---------------------------------------------------------------- setup

    def setup(self) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        # Keep the protocol channel on private descriptors; 0/1 become /dev/null so a
        # stray print in this process can never corrupt a frame.
        self.inp, self.out = os.dup(0), os.dup(1)
        os.set_inheritable(self.inp, False)
        os.set_inheritable(self.out, False)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        if not self.cfg.get("debug"):
            os.dup2(devnull, 2)
        os.close(devnull)
        os.chdir("/")

        self.pidns = os.getpid() == 1
        notes: list[str] = []
        if not self.pidns and not confine.set_child_subreaper():
            notes.append("no subreaper")
        nnp = confine.set_no_new_privs()
        # Nobody without CAP_SYS_PTRACE may attach to the server (matters when the
        # children share its uid, as in the user-namespace fallback).
        confine.prctl(confine.PR_SET_DUMPABLE, 0)
        _provide_exit_builtins()
        mount_ok, view, child_path = self._prepare_filesystem(notes)
        self.cfg["child_path"] = child_path
        self.cfg["server_pid"] = os.getpid()

        preimported = 0
        if self.mode == "forkserver":
            for name in PREIMPORTS:
                try:
                    importlib.import_module(name)
                    preimported += 1
                except ImportError:
                    pass
            warm_up(self.limits)
            gc.collect()
            gc.freeze()
        # Last, so that it holds everything prepared above and nothing that comes after.
        self.template = Template.start([self.inp, self.out], lambda channel: _job_main(self.cfg, channel))

        uid_text: Any
        if self.uid is not None:
            uid_text = self.uid
        elif self.cfg.get("userns"):
            uid_text = "host uid (user namespace, no separate uid)"
        else:
            uid_text = f"host uid {os.getuid()} (no separate uid)"
        self.isolation = {
            "mode": self.mode,
            "netns": bool(self.cfg.get("netns")) and _only_loopback(),
            "pidns": self.pidns,
            "mountns": mount_ok,
            "userns": bool(self.cfg.get("userns")),
            "uid": uid_text,
            "gid": self.gid,
            "no_new_privs": nnp,
            "rlimits": self.limits.rlimits(),
            "tmpdir": "private tmpfs" if mount_ok else "host temp dir",
            "fs_view": ("minimal" if mount_ok else "landlock") if view is not None else "host",
            "fs_exposed": view,
            "memory_watchdog": self.pidns,
            "env": "scrubbed",
            "stdio": "/dev/null",
            "hashseed": int(self.cfg.get("seed", 0)),
            "random_seed": int(self.cfg.get("seed", 0)),
            "preimported": preimported,
            "forked_from": "template",
        }
        if self.cfg.get("fallback"):
            notes.append(self.cfg["fallback"])
        self.isolation["notes"] = notes or None

    def _prepare_filesystem(self, notes: list[str]) -> tuple[bool, dict[str, Any] | None, list[str]]:
        """Enter the minimal filesystem view (see ``fs_view``), or prepare the Landlock
        fallback without a mount namespace; returns (view entered, what is exposed,
        child sys.path).

        sys.path[0] is the checkout's src (see ``launch.BOOT``): everything the server
        needs from there is imported by now, and neither it nor its children see it.
        """
        paths = [p for p in sys.path[1:] if os.path.isdir(p)]
        if not self.cfg.get("mountns"):
            self.work_base = tempfile.mkdtemp(prefix="selfplay-sbx-")
            os.chmod(self.work_base, 0o711)
            if self.uid is not None and not all(confine.others_can_enter(p) for p in paths):
                notes.append("stdlib not readable by the sandbox uid: only pre-imported modules")
            return False, self._landlock(paths, notes), paths
        try:
            confine.make_mounts_private()
            view = fs_view.standard_view(
                paths,
                self.cfg.get("interpreter") or [],
                self.cfg.get("tool_dirs") or [],
                self.limits.tmpfs_mb,
            )
            view.build(SCRATCH)
        except OSError as exc:
            notes.append(f"mount setup failed: {exc}")
            self.cfg["mountns"] = False
            return self._prepare_filesystem(notes)
        # Past this point a failure leaves the namespace half switched: the server gives up.
        view.enter(SCRATCH)
        sys.path[:] = paths
        sys.path_importer_cache.clear()
        # installed libraries for the children only (the server never imports from them)
        paths = paths + [p for p in self.cfg.get("site_packages") or [] if os.path.isdir(p)]
        self.work_base = os.path.join(SCRATCH, "work")
        os.mkdir(self.work_base, 0o711)
        if self.uid is not None:
            unreadable = [p for p in paths if (os.stat(p).st_mode & 0o005) != 0o005]
            if unreadable:
                notes.append(f"not readable by the sandbox uid: {unreadable}")
        return True, view.report(), paths

    def _landlock(self, paths: list[str], notes: list[str]) -> dict[str, Any] | None:
        """Without a mount namespace: a Landlock ruleset allowing what the view would show
        (see ``landlock``), enforced by each child; None (and a note) when unavailable."""
        try:
            rules = landlock.Ruleset()
        except OSError as exc:
            notes.append(
                f"no mount namespace and no Landlock ({exc.strerror or exc}): the whole host filesystem "
                "is visible, and /tmp and other shared directories stay writable"
            )
            return None
        try:
            for path in fs_view.host_paths(
                paths, self.cfg.get("interpreter") or [], self.cfg.get("tool_dirs") or []
            ):
                rules.allow(path, landlock.READ_ONLY, "read_only")
            for name in fs_view.GENERATED_ETC:  # the host's own files: nothing is generated here
                rules.allow(f"/etc/{name}", landlock.READ_ONLY, "read_only")
            for name in fs_view.DEVICES:
                rules.allow(f"/dev/{name}", landlock.DEVICE, "devices")
            rules.allow("/proc", landlock.READ, "readable")
            rules.allow(self.work_base, landlock.EVERYTHING, "writable")
        except OSError as exc:
            rules.close()
            notes.append(
                f"no mount namespace, and Landlock failed ({exc}): the whole host filesystem is visible"
            )
            return None
        self.cfg["landlock_fd"] = rules.fd
        notes.append(
            "no mount namespace: host paths outside the view are refused by Landlock; /proc shows the "
            "host's processes"
        )
        return rules.report()

    # ---------------------------------------------------------------- serving

    def serve(self) -> None:
        if self.mode == "forkserver":
            write_frame(self.out, {"ready": True, "isolation": self.isolation})
        while True:
            try:
                req = read_frame(self.inp, MAX_REQUEST_BYTES)
            except FrameEOF:
                return
            except FrameError as exc:
                write_frame(self.out, {"status": "error", "detail": f"bad request: {exc}", "restart": True})
                return
            try:
                reply = self.execute(req)
            except Exception as exc:  # noqa: BLE001 - a server fault: report it, then get replaced
                reply = {
                    "status": "error",
                    "detail": f"sandbox server fault: {type(exc).__name__}",
                    "restart": True,
                }
            if self.mode != "forkserver":
                reply["isolation"] = self.isolation
            write_frame(self.out, reply)
            if self.mode != "forkserver" or reply.get("restart") or reply.get("host_gone"):
                return

    def execute(self, req: dict[str, Any]) -> dict[str, Any]:
        if isinstance(req, dict) and req.get("kind") == "command":
            return self.execute_commands(req)
        if isinstance(req, dict) and req.get("kind") == fork_per_call.KIND:
            return self.execute_each(req)
        try:
            timeout = float(req["timeout"])
            if not (timeout > 0):
                raise ValueError
            for key in ("code", "entry"):
                if not isinstance(req[key], str):
                    raise TypeError
        except (KeyError, TypeError, ValueError):
            return {"status": "error", "detail": "bad request"}

        workdir = self._new_workdir()
        read_end, write_end = os.pipe()
        started = time.monotonic()
        deadline = started + timeout
        try:
            pid = self._spawn(
                {"entry": "run", "req": req, "workdir": workdir, "deadline": deadline},
                [write_end],
                [read_end],
                workdir,
            )
        except TemplateGone as exc:
            return _not_started(exc)
        try:
            outcome = self._watch(pid, read_end, deadline, started)
        finally:
            os.close(read_end)
            clean = confine.sweep(self.pidns, self.uid, spare=self._kept())
            shutil.rmtree(workdir, ignore_errors=True)
        if not clean:
            outcome["restart"] = True
        return outcome

    def _spawn(self, job: dict[str, Any], child_ends: list[int], our_ends: list[int], workdir: str) -> int:
        """Start a job process from the template holding ``child_ends`` (closed here once
        it has them) and hand it ``job``; its pid.  When none could be started, every
        descriptor and the work directory are released and TemplateGone is raised."""
        try:
            if self.template is None:
                raise TemplateGone("the server has no template process")
            try:
                return self.template.spawn(job, child_ends)
            except OSError as exc:  # it died before reading its job (the pid was reaped)
                raise TemplateGone(f"a job process died at start ({type(exc).__name__})") from None
        except TemplateGone:
            for fd in our_ends:
                os.close(fd)
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        finally:
            for fd in child_ends:
                os.close(fd)

    def _kept(self, *more: int) -> tuple[int, ...]:
        """Processes a sweep must leave alive: the template, its spare job process, and ``more``."""
        if self.template is None:
            return more
        spare = self.template.spare_pid()
        return (self.template.pid, *((spare,) if spare else ()), *more)

    def _new_workdir(self) -> str:
        """A fresh private work directory for one execution, owned by the sandbox uid."""
        self.counter += 1
        workdir = os.path.join(self.work_base, f"run{self.counter}")
        os.mkdir(workdir, 0o700)
        if self.uid is not None:
            os.chown(workdir, self.uid, self.gid)
        return workdir

    # ---------------------------------------------------------------- load once, fork per call

    def execute_each(self, req: dict[str, Any]) -> dict[str, Any]:
        """Call the entry point on every input, loading the program once (see ``fork_per_call``).
        With ``yield_after_timeout`` the reply comes back after the first input that timed
        out (flagged ``yielded``), so the host can share out the rest."""
        try:
            code, entry, inputs, timeout = fork_per_call.parse_request(req)
        except (KeyError, TypeError, ValueError):
            return {"status": "error", "detail": "bad request"}
        runs: list[dict[str, Any]] = []
        reply: dict[str, Any] = {"status": "ok", "runs": runs}
        afresh: str | None = None  # why the inputs left run one at a time, once they do
        while len(runs) < len(inputs) and not (reply.get("restart") or reply.get("host_gone")):
            if req.get("yield_after_timeout") and runs and runs[-1]["status"] == "timeout":
                reply["yielded"] = True
                break
            if afresh:
                single = {"code": code, "entry": entry, "input": inputs[len(runs)], "timeout": timeout}
                outcome = self.execute(single)
                if outcome.get("not_started"):
                    reply["restart"] = True  # the host re-sends the inputs that have no run yet
                    break
                runs.append(dict(_lift_flags(outcome, reply), run_afresh=afresh))
            else:
                afresh = self._serve_loaded(req, len(runs), runs, reply)
        return reply

    def _serve_loaded(
        self, req: dict[str, Any], start: int, runs: list[dict[str, Any]], reply: dict[str, Any]
    ) -> str | None:
        """Fork a loader and serve inputs ``start`` onwards from it, appending to ``runs``;
        the reason why the remaining inputs must run one at a time, if they must."""
        workdir = self._new_workdir()
        result_r, result_w = os.pipe()
        control_r, control_w = os.pipe()
        started = time.monotonic()
        deadline = started + req["timeout"]
        job = {
            "entry": "each",
            "req": req,
            "workdir": workdir,
            "deadline": deadline,
            "cap": self._result_cap(),
        }
        try:
            pid = self._spawn(job, [result_w, control_r], [result_r, control_w], workdir)
        except TemplateGone:
            reply["restart"] = True  # the host re-sends the inputs that have no run yet
            return None
        pidfd = os.pidfd_open(pid)
        try:
            return self._drive_loader(
                pid, pidfd, result_r, control_w, workdir, req, start, started, runs, reply
            )
        finally:
            for fd in (pidfd, result_r, control_w):
                os.close(fd)
            _kill_group(pid)
            if not confine.sweep(self.pidns, self.uid, spare=self._kept()):
                reply["restart"] = True
            shutil.rmtree(workdir, ignore_errors=True)

    def _drive_loader(
        self,
        pid: int,
        pidfd: int,
        result_r: int,
        control_w: int,
        workdir: str,
        req: dict[str, Any],
        start: int,
        started: float,
        runs: list[dict[str, Any]],
        reply: dict[str, Any],
    ) -> str | None:
        timeout, count = req["timeout"], len(req["inputs"])
        cap = self._result_cap()
        buf, verdict = self._await(
            pidfd,
            result_r,
            started + timeout,
            started,
            cap,
            lambda got: fork_per_call.frame_settled(got, cap),
            spare=(pid,),
        )
        if verdict is not None and verdict["status"] == "timeout":
            # The import alone outlives one run's budget: every run would time out.
            runs.extend(dict(verdict, seconds=time.monotonic() - started) for _ in range(start, count))
            return None
        if verdict is not None:
            if verdict.get("host_gone"):
                reply["host_gone"] = True
            return f"loading: {verdict['detail']}"
        unclean = self._unclean_load(bytes(buf), pid, workdir)
        if unclean:
            return unclean
        budget = timeout - (time.monotonic() - started)
        for index in range(start, count):
            began = time.monotonic()
            try:
                write_all(control_w, fork_per_call.GO.pack(index, began + budget))
            except OSError:
                return "the loader is gone"
            buf, verdict = self._await(
                pidfd,
                result_r,
                began + budget,
                began,
                cap + fork_per_call.REPORT.size + 1,
                lambda got: fork_per_call.report_settled(got, cap),
                spare=(pid,),
            )
            if verdict is not None:
                if verdict.get("host_gone"):
                    reply["host_gone"] = True
                    return None
                if verdict["detail"] == OVERFLOW:
                    return "the loader sent more than any report holds"
                runs.append(dict(verdict, seconds=time.monotonic() - began, forked_from_loaded=True))
                return None  # a timeout or the memory limit: a fresh loader serves the rest
            report = fork_per_call.parse_report(bytes(buf), cap)
            if report is None:
                return "the loader died or sent a malformed report"
            outcome = self._judge(*report, cap)
            outcome["seconds"] = time.monotonic() - began
            outcome["forked_from_loaded"] = True
            runs.append(outcome)
            if not confine.sweep(self.pidns, self.uid, spare=self._kept(pid)):
                reply["restart"] = True
                return None
            _empty(workdir)
        return None

    def _unclean_load(self, data: bytes, pid: int, workdir: str) -> str | None:
        """What makes the loaded state differ from a fresh run's, if anything: the import
        raised or wrote on the result channel, or left threads, processes or files."""
        try:
            message = parse_frame(data, len(data))
        except FrameError:
            message = None
        if not isinstance(message, dict) or message.get("status") != fork_per_call.LOADED:
            return "the import did not end in a clean report"
        if message.get("threads") != 0:
            return "the import left threads running"
        if os.listdir(workdir):
            return "the import left files in the work directory"
        if confine.leftovers(self.pidns, self.uid, spare=self._kept(pid)):
            return "the import left processes running"
        return None

    # ---------------------------------------------------------------- commands

    def execute_commands(self, req: dict[str, Any]) -> dict[str, Any]:
        """Run each argv of a command request in its own confined process (see ``command``)."""
        try:
            spec = command.parse_request(req, self.limits)
        except (KeyError, TypeError, ValueError, AttributeError):
            return {"status": "error", "detail": "bad request"}
        runs: list[dict[str, Any]] = []
        reply: dict[str, Any] = {"status": "ok", "runs": runs}
        for argv in spec["argvs"]:
            outcome = self._run_command(argv, spec)
            if outcome.get("not_started"):
                reply["restart"] = True  # the host re-sends the runs that are missing
                break
            if outcome.pop("restart", False):
                reply["restart"] = True
            if outcome.pop("host_gone", False):
                reply["host_gone"] = True
            runs.append(outcome)
            if reply.get("restart") or reply.get("host_gone"):
                break  # the host re-sends the runs that are missing
        return reply

    def _run_command(self, argv: list[str], spec: dict[str, Any]) -> dict[str, Any]:
        workdir = self._new_workdir()
        limits: SandboxLimits = spec["limits"]
        timeout = spec["timeout"]
        try:
            command.write_inputs(workdir, spec["files"], spec["executables"], self.uid, self.gid)
        except OSError as exc:
            shutil.rmtree(workdir, ignore_errors=True)
            return {"status": "error", "detail": f"could not write input files: {exc.strerror or exc}"}
        stdin = command.stdin_fd(spec["stdin"])
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        st_r, st_w = os.pipe()
        started = time.monotonic()
        deadline = started + timeout
        job = {
            "entry": "command",
            "argv": argv,
            "env": spec["env"],
            "workdir": workdir,
            "limits": limits.to_dict(),
            "timeout": timeout,
        }
        try:
            pid = self._spawn(job, [stdin, out_w, err_w, st_w], [out_r, err_r, st_r], workdir)
        except TemplateGone as exc:
            return _not_started(exc)
        try:
            outcome = self._watch_command(
                pid, out_r, err_r, st_r, deadline, started, limits.memory_mb, spec["max_output"]
            )
        finally:
            for fd in (out_r, err_r, st_r):
                os.close(fd)
            clean = confine.sweep(self.pidns, self.uid, spare=self._kept())
        if spec["collect"]:
            outcome["files"], outcome["missing"] = command.collect_outputs(
                workdir, spec["collect"], spec["max_collect"]
            )
        shutil.rmtree(workdir, ignore_errors=True)
        if not clean:
            outcome["restart"] = True
        return outcome

    def _watch_command(
        self,
        pid: int,
        out_r: int,
        err_r: int,
        st_r: int,
        deadline: float,
        started: float,
        memory_mb: int,
        cap: int,
    ) -> dict[str, Any]:
        """Wait for the run's process, capturing bounded output; kill on timeout or memory."""
        streams = {out_r: bytearray(), err_r: bytearray()}
        truncated = {out_r: False, err_r: False}
        status_msg = bytearray()
        pidfd = os.pidfd_open(pid)
        watched = [pidfd, out_r, err_r, st_r, self.inp]
        verdict: dict[str, Any] | None = None
        next_poll = started + MEMORY_POLL_S

        def take(fd: int, chunk: bytes) -> None:
            if fd == st_r:
                status_msg.extend(chunk[: max(0, 1000 - len(status_msg))])
                return
            room = cap - len(streams[fd])
            if len(chunk) > room:
                truncated[fd] = True
                chunk = chunk[:room]
            streams[fd].extend(chunk)

        try:
            while True:
                now = time.monotonic()
                remaining = deadline - now
                if remaining <= 0:
                    verdict = {"status": "timeout", "detail": "wall-clock limit reached"}
                    break
                wait = remaining
                if self.pidns:
                    if now >= next_poll:
                        if _namespace_memory_mb(self._kept()) > memory_mb:
                            verdict = {
                                "status": "killed",
                                "detail": "memory limit exceeded by the program's processes together",
                            }
                            _kill_namespace(self._kept())
                            break
                        next_poll = now + MEMORY_POLL_S
                    wait = min(wait, max(next_poll - now, 0.0))
                ready, _, _ = select.select(watched, [], [], wait)
                for fd in (out_r, err_r, st_r):
                    if fd in ready:
                        chunk = os.read(fd, 1 << 16)
                        if chunk:
                            take(fd, chunk)
                        else:
                            watched.remove(fd)
                if self.inp in ready:
                    verdict = {"status": "error", "detail": "host went away", "host_gone": True}
                    break
                if pidfd in ready:
                    break
            ended = time.monotonic()
            if verdict is not None:
                _kill_group(pid)
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                status = signal.SIGKILL
        finally:
            os.close(pidfd)
        for fd in (out_r, err_r, st_r):
            leftover = _drain(fd, cap + 1)
            if leftover:
                take(fd, leftover)
        if verdict is None:
            if status_msg:
                text = bytes(status_msg).decode("utf-8", "replace")
                stage, _, rest = text.partition(":")
                _, _, why = rest.partition(":")
                what = "could not execute" if stage == "exec" else "sandbox setup failed"
                verdict = {"status": "error", "detail": f"{what}: {why.strip()}"}
            elif os.WIFSIGNALED(status):
                name = confine.signal_name(os.WTERMSIG(status))
                verdict = {"status": "killed", "signal": name, "detail": f"terminated by {name}"}
            else:
                verdict = {
                    "status": "exited",
                    "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1,
                }
        verdict.setdefault("exit_code", None)
        verdict.setdefault("signal", None)
        verdict.update(
            {
                "stdout": base64.b64encode(bytes(streams[out_r])).decode("ascii"),
                "stderr": base64.b64encode(bytes(streams[err_r])).decode("ascii"),
                "stdout_truncated": truncated[out_r],
                "stderr_truncated": truncated[err_r],
                "seconds": ended - started,
            }
        )
        return verdict

    def _watch(self, pid: int, read_end: int, deadline: float, started: float) -> dict[str, Any]:
        cap = self._result_cap()
        pidfd = os.pidfd_open(pid)
        status = None
        try:
            buf, verdict = self._await(pidfd, read_end, deadline, started, cap)
            ended = time.monotonic()
            if verdict is not None:
                _kill_group(pid)
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:  # already collected; treat as killed
                status = signal.SIGKILL
        finally:
            os.close(pidfd)
        if verdict is None:
            buf += _drain(read_end, cap + 1 - len(buf))
            verdict = self._judge(bytes(buf), status, cap)
        verdict["seconds"] = ended - started
        return verdict

    def _result_cap(self) -> int:
        """The most bytes a child may write on its result channel."""
        return self.limits.max_result_kb * 1024 + 64 * 1024

    def _await(
        self,
        pidfd: int,
        read_end: int,
        deadline: float,
        started: float,
        cap: int,
        complete: Callable[[bytearray], bool] | None = None,
        spare: tuple[int, ...] = (),
    ) -> tuple[bytearray, dict[str, Any] | None]:
        """Collect what a process writes on ``read_end`` until it exits (its ``pidfd`` turns
        readable) or ``complete`` says a whole message has arrived: (bytes, None).  A
        verdict instead when the deadline passes, more than ``cap`` bytes arrive, the
        namespace's processes but ``spare`` (and the template) together exceed the memory
        limit (then all of them but the template are killed, ``spare`` too), or the host
        goes away."""
        buf = bytearray()
        watched = [pidfd, read_end, self.inp]
        next_poll = started + MEMORY_POLL_S
        while True:
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                return buf, {"status": "timeout", "detail": "wall-clock limit reached"}
            wait = remaining
            if self.pidns:
                if now >= next_poll:
                    if _namespace_memory_mb(self._kept(*spare)) > self.limits.memory_mb:
                        _kill_namespace(self._kept())
                        return buf, {
                            "status": "killed",
                            "detail": "memory limit exceeded by the program's processes together",
                        }
                    next_poll = now + MEMORY_POLL_S
                wait = min(wait, max(next_poll - now, 0.0))
            ready, _, _ = select.select(watched, [], [], wait)
            if read_end in ready:
                chunk = os.read(read_end, 1 << 16)
                if chunk:
                    buf += chunk
                    if len(buf) > cap:
                        return buf, {"status": "killed", "detail": OVERFLOW}
                else:
                    watched.remove(read_end)
            if self.inp in ready:
                # The host never writes during an execution: this is EOF, the host is gone.
                return buf, {"status": "error", "detail": "host went away", "host_gone": True}
            if (complete is not None and complete(buf)) or pidfd in ready:
                return buf, None

    def _judge(self, data: bytes, status: int, cap: int) -> dict[str, Any]:
        if len(data) > cap:
            return {"status": "killed", "detail": OVERFLOW}
        if not data:
            if os.WIFSIGNALED(status):
                return {"status": "killed", "detail": confine.signal_name(os.WTERMSIG(status))}
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
            return {"status": "killed", "detail": f"exited with code {code} without a result"}
        try:
            message = parse_frame(data, cap)
        except FrameError as exc:
            return {"status": "killed", "detail": f"garbage on result channel: {exc}"}
        return _validated(message, self.limits.max_repr_chars)


def _validated(message: Any, max_chars: int) -> dict[str, Any]:
    """Accept only the shape the harness writes; anything else counts as garbage."""
    if not isinstance(message, dict) or message.get("status") not in ("ok", "exception", "error"):
        return {"status": "killed", "detail": "garbage on result channel: bad message"}
    out: dict[str, Any] = {"status": message["status"]}
    for key in ("value_repr", "exc_type", "exc_message", "detail"):
        text = message.get(key)
        if text is not None and not isinstance(text, str):
            return {"status": "killed", "detail": "garbage on result channel: bad field"}
        out[key] = text if text is None or len(text) <= max_chars else text[: max_chars - 3] + "..."
    if out["status"] == "ok":
        out["value"] = message.get("value")
    elif out["status"] == "exception" and not out["exc_type"]:
        return {"status": "killed", "detail": "garbage on result channel: no exception type"}
    elif out["status"] == "error" and not out["detail"]:
        out["detail"] = "unspecified error"
    return out


def _provide_exit_builtins() -> None:
    """``exit()``/``quit()`` as under a plain interpreter (``-S`` skips site, which defines them)."""
    import builtins

    def _exit(code: Any = None) -> None:
        raise SystemExit(code)

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, _exit)


def _namespace_memory_mb(spare: tuple[int, ...] = ()) -> float:
    """Memory used by every process of the namespace except the server, in MiB.

    RLIMIT_AS bounds each process, not their sum, so a program that forks up
    to the process limit could otherwise hold max_processes x memory_mb.  With
    a single process the address-space limit already applies and nothing is
    read; with several, their proportional set sizes (shared pages split
    between sharers) are added up.  ``spare`` (the template, and a loader, see
    ``fork_per_call``) is left out, as a single run has no such process.
    """
    skip = {"1", *map(str, spare)}
    pids = [name for name in os.listdir("/proc") if name.isdigit() and name not in skip]
    if len(pids) < 2:
        return 0.0
    total_kb = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Pss:"):
                        total_kb += int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total_kb / 1024


def _kill_namespace(spare: tuple[int, ...] = ()) -> None:
    """SIGKILL every process of the namespace but the server and ``spare``, without reaping."""
    skip = {"1", *map(str, spare)}
    for name in os.listdir("/proc"):
        if name.isdigit() and name not in skip:
            try:
                os.kill(int(name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _kill_group(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def _only_loopback() -> bool:
    try:
        with open("/proc/net/dev") as fh:
            names = [line.split(":")[0].strip() for line in fh.readlines()[2:]]
    except OSError:
        return False
    return names == ["lo"]


def main(config_json: str) -> None:
    server = ForkServer(json.loads(config_json))
    code = 0
    try:
        server.setup()
    except BaseException as exc:  # noqa: BLE001 - tell the host why, then give up
        try:
            write_frame(server.out, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        except BaseException:  # noqa: BLE001
            pass
        os._exit(1)
    try:
        server.serve()
    except BaseException:  # noqa: BLE001 - e.g. the host closed the pipe mid-reply
        code = 1
    finally:
        confine.sweep(server.pidns, server.uid, budget_s=1.0)
        if server.work_base and not server.cfg.get("mountns"):
            shutil.rmtree(server.work_base, ignore_errors=True)
    os._exit(code)


def _not_started(exc: TemplateGone) -> dict[str, Any]:
    """The reply when a job could not be started because the template process is gone:
    the server is replaced, and the job may be retried (it never ran)."""
    return {"status": "error", "detail": f"sandbox server fault: {exc}", "restart": True, "not_started": True}


def _lift_flags(outcome: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """Move a single run's 'restart' and 'host_gone' flags up to the reply they belong to."""
    for flag in ("restart", "host_gone"):
        if outcome.pop(flag, False):
            reply[flag] = True
    return outcome


def _empty(folder: str) -> None:
    """Remove everything inside ``folder`` (a call's leftovers), keeping the folder."""
    with os.scandir(folder) as entries:
        for item in entries:
            if item.is_dir(follow_symlinks=False):
                shutil.rmtree(item.path, ignore_errors=True)
            else:
                try:
                    os.unlink(item.path)
                except OSError:
                    pass


def _job_main(cfg: dict[str, Any], channel: int) -> None:  # pragma: no cover - a job process
    """Entry of a job process forked from the template: wait for this job, then run it as
    a single run, a loader or a command.  Never returns."""
    try:
        job, fds = template.read_job(channel)
        entry = job.get("entry")
        if entry == "run":
            child_main(cfg, job["req"], fds[0], job["workdir"], job["deadline"])
        elif entry == "each":
            fork_per_call.loader_main(
                cfg, job["req"], fds[0], fds[1], job["workdir"], job["deadline"], job["cap"]
            )
        elif entry == "command":
            command.command_child_main(
                cfg,
                job["argv"],
                job["env"],
                *fds[:4],
                job["workdir"],
                SandboxLimits.from_dict(job["limits"]),
                float(job["timeout"]),
            )
    finally:
        _real_exit(6)
