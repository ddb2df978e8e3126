"""Host side of starting a confined interpreter: namespaces, uid leases, command line.

The strongest available wrapper is chosen once per host process:

* root: ``unshare --net --pid --fork --mount-proc --kill-child`` (new network,
  PID and mount namespaces; the interpreter becomes PID 1, so when it exits the
  kernel kills everything left in the namespace), and children switch to an
  unprivileged uid leased from a small reserved range;
* not root but user namespaces allowed: the same under ``--map-root-user``
  (no separate uid is possible then);
* otherwise no wrapper at all, and the ``isolation`` report says so.

Each sandbox process gets its own uid (65000 and up, skipping real accounts),
leased with a lock file in /run/selfplay-sandbox-uids so that concurrent host
processes do not share one.  RLIMIT_NPROC counts processes per uid: with one
shared uid such as ``nobody``, a fork bomb in one worker would starve
legitimate executions in the others, and one worker's sweep could kill another's.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .confine import scrubbed_env
from .fs_view import interpreter_paths
from .limits import SandboxLimits
from .protocol import FrameError, read_frame, write_frame

SRC_ROOT = str(Path(__file__).resolve().parents[2])
BOOT = "import sys;sys.path[0]=sys.argv[1];from selfplay.sandbox.forkserver import main;main(sys.argv[2])"
UID_FIRST = 65000
UID_COUNT = 500
LEASE_DIR_NAME = "selfplay-sandbox-uids"
DEBUG = os.environ.get("SELFPLAY_SANDBOX_DEBUG") == "1"


@dataclass(frozen=True)
class Strategy:
    prefix: tuple[str, ...]
    netns: bool
    pidns: bool
    mountns: bool
    userns: bool
    drop_uid: bool
    fallback: str | None


_strategy: Strategy | None = None
_strategy_lock = threading.Lock()
_interpreter: list[str] | None = None


def _works(cmd: list[str]) -> bool:
    try:
        done = subprocess.run(
            cmd + ["true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=20,
            env=scrubbed_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def strategy() -> Strategy:
    """The wrapper used for every sandbox process of this host process (probed once)."""
    global _strategy
    with _strategy_lock:
        if _strategy is not None:
            return _strategy
        unshare = shutil.which("unshare", path="/usr/bin:/bin:/usr/sbin:/sbin")
        root = os.geteuid() == 0
        base = ["--net", "--pid", "--fork", "--mount-proc", "--kill-child"]
        chosen = None
        if unshare and root and _works([unshare, *base]):
            chosen = Strategy((unshare, *base), True, True, True, False, True, None)
        elif unshare and not root and _works([unshare, "--map-root-user", *base]):
            chosen = Strategy(
                (unshare, "--map-root-user", *base),
                True,
                True,
                True,
                True,
                False,
                "not root: user namespace without a separate uid",
            )
        if chosen is None:
            reason = "unshare unavailable or not permitted: no network/PID/mount namespaces"
            chosen = Strategy((), False, False, False, False, root, reason)
        _strategy = chosen
        return chosen


def interpreter() -> list[str]:
    """``fs_view.interpreter_paths()``, worked out once per host process."""
    global _interpreter
    if _interpreter is None:
        _interpreter = interpreter_paths()
    return list(_interpreter)


def _lease_dir() -> str:
    """A root-only directory for the uid lock files (refuses one someone else prepared)."""
    base = "/run" if os.path.isdir("/run") and os.access("/run", os.W_OK) else tempfile.gettempdir()
    path = os.path.join(base, LEASE_DIR_NAME)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise RuntimeError(f"refusing to use {path}: not a private directory of this user")
    return path


class UidLease:
    """An unprivileged uid reserved for one sandbox process (root only)."""

    _local_lock = threading.Lock()
    _local_taken: set[int] = set()

    def __init__(self) -> None:
        self.uid: int | None = None
        self._fd: int | None = None
        self._dir = _lease_dir()
        for uid in range(UID_FIRST, UID_FIRST + UID_COUNT):
            if self._try(uid):
                return
        raise RuntimeError("no free sandbox uid (all leased)")

    def _try(self, uid: int) -> bool:
        try:
            pwd.getpwuid(uid)
            return False  # a real account: never borrow it
        except KeyError:
            pass
        with UidLease._local_lock:
            if uid in UidLease._local_taken:
                return False
            fd = os.open(
                os.path.join(self._dir, str(uid)),
                os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                0o600,
            )
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
            UidLease._local_taken.add(uid)
        self.uid, self._fd = uid, fd
        return True

    def release(self) -> None:
        with UidLease._local_lock:
            if self._fd is not None:
                os.close(self._fd)
                UidLease._local_taken.discard(self.uid)
                self._fd = None


MAX_SEED = 2**32 - 1  # the largest PYTHONHASHSEED Python accepts


def check_seed(seed: int) -> int:
    """``seed`` when it can be both a PYTHONHASHSEED and a ``random.seed`` (an int in
    0..2**32-1); ValueError otherwise."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an int from 0 to {MAX_SEED}, got {seed!r}")
    return seed


def site_package_dirs() -> list[str]:
    """The environment's site-packages (already in the filesystem view, read-only), for
    sandboxes whose programs may import installed libraries."""
    import sysconfig

    return [
        p
        for p in dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
        if p and os.path.isdir(p)
    ]


class ServerProcess:
    """One confined interpreter running ``forkserver.main`` and the pipes to it."""

    def __init__(
        self,
        limits: SandboxLimits,
        mode: str,
        tool_dirs: list[str] | None = None,
        site_packages: bool = False,
        seed: int = 0,
    ):
        """``seed``: the interpreter's PYTHONHASHSEED (str/bytes hash order, fixed at its
        start and inherited by every child forked from it) and ``random.seed`` of each
        child (see ``harness.confine_child``)."""
        self.limits = limits
        self.seed = check_seed(seed)
        self.mode = mode
        self.tool_dirs = list(tool_dirs or [])
        self.site_packages = site_packages
        self.proc: subprocess.Popen | None = None
        self.lease: UidLease | None = None
        self.isolation: dict[str, Any] = {}

    def start(self) -> None:
        strat = strategy()
        if strat.drop_uid:
            self.lease = UidLease()
        uid = self.lease.uid if self.lease else None
        cfg = {
            "mode": self.mode,
            "limits": self.limits.to_dict(),
            "uid": uid,
            "gid": uid,
            "netns": strat.netns,
            "mountns": strat.mountns,
            "userns": strat.userns,
            "fallback": strat.fallback,
            "debug": DEBUG,
            "tool_dirs": self.tool_dirs,
            "interpreter": interpreter(),
            "site_packages": site_package_dirs() if self.site_packages else [],
            "seed": self.seed,
        }
        argv = [*strat.prefix, sys.executable, "-s", "-S", "-B", "-c", BOOT, SRC_ROOT, json.dumps(cfg)]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=None if DEBUG else subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
                cwd="/",
                env=scrubbed_env(hashseed=self.seed),
                bufsize=0,
            )
        except BaseException:
            self._release()
            raise

    def wait_ready(self, deadline: float) -> None:
        try:
            frame = read_frame(self.proc.stdout.fileno(), 1 << 20, deadline)
        except FrameError as exc:
            raise RuntimeError(f"sandbox server failed to start ({exc})") from None
        if not isinstance(frame, dict) or not frame.get("ready"):
            why = frame.get("error") if isinstance(frame, dict) else None
            raise RuntimeError(f"sandbox server failed to start: {why or 'no ready message'}")
        self.isolation = frame["isolation"]

    def request(self, req: dict[str, Any], deadline: float, max_reply: int | None = None) -> dict[str, Any]:
        write_frame(self.proc.stdin.fileno(), req)
        if max_reply is None:
            max_reply = 4 * self.limits.max_result_kb * 1024 + (1 << 20)
        reply = read_frame(self.proc.stdout.fileno(), max_reply, deadline)
        if not isinstance(reply, dict):
            raise FrameError("reply is not an object")
        return reply

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = 1.0) -> None:
        """Close the channel (the server exits on EOF), then SIGKILL the whole session."""
        proc = self.proc
        if proc is None:
            self._release()
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None
        self._release()

    def kill(self) -> None:
        self.stop(grace=0.0)

    def _release(self) -> None:
        if self.lease is not None:
            self.lease.release()
            self.lease = None
