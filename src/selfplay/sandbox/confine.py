"""Operating-system confinement primitives (Linux).

Small wrappers used by the fork server and by each child it forks: prctl
flags, mounts, rlimits, privilege drop, a scrubbed environment, and a sweep that
SIGKILLs every leftover process of an execution.  Nothing here runs untrusted
code; it only prepares the ground for it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import stat
import time
from collections.abc import Iterable

from .limits import SandboxLimits

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

# pivot_root has no libc wrapper; its number differs between architectures.
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def set_no_new_privs() -> bool:
    try:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        return True
    except OSError:
        return False


def set_parent_death_signal(sig: int = signal.SIGKILL) -> None:
    prctl(PR_SET_PDEATHSIG, int(sig))


def set_child_subreaper() -> bool:
    try:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        return True
    except OSError:
        return False


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def make_mounts_private() -> None:
    mount(None, "/", None, MS_REC | MS_PRIVATE)


def mount_tmpfs(target: str, size_mb: int, mode: int, inodes: int = 20000) -> None:
    flags = MS_NOSUID | MS_NODEV
    mount("tmpfs", target, "tmpfs", flags, f"size={size_mb}m,nr_inodes={inodes},mode={mode:o}")


def bind(source: str, target: str, recursive: bool = False) -> None:
    """Show ``source`` at ``target`` (without the mounts below it unless ``recursive``)."""
    mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))


def remount_readonly(target: str) -> None:
    """Make the mount at ``target`` read-only, nosuid and nodev.

    noexec is kept where the mount already has it: inside a user namespace the
    kernel refuses a remount that would drop a flag inherited from the host.
    """
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
    if os.statvfs(target).f_flag & os.ST_NOEXEC:
        flags |= MS_NOEXEC
    mount(None, target, None, flags)


def unmount(target: str) -> None:
    """Detach the mount at ``target`` and everything mounted below it."""
    _check(_libc.umount2(target.encode(), MNT_DETACH), f"umount {target}")


def pivot_root(new_root: str) -> None:
    """Make ``new_root`` (a mount point) this mount namespace's root and drop the old one.

    Uses pivot_root(".", "."): the old root ends up stacked on the new one and is
    detached at once, so nothing of it stays reachable from this namespace.
    """
    number = _SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise OSError(errno.ENOSYS, f"pivot_root: unknown syscall number on {os.uname().machine}")
    os.chdir(new_root)
    _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def others_can_enter(path: str) -> bool:
    """True when a user that is neither owner nor group can list ``path`` and reach it."""
    path = os.path.abspath(path)
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or (st.st_mode & 0o005) != 0o005:
        return False
    parent = os.path.dirname(path)
    while True:
        try:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
        if parent == "/":
            return True
        parent = os.path.dirname(parent)


def scrubbed_env(home: str | None = None, hashseed: int = 0) -> dict[str, str]:
    """The whole environment a sandboxed program sees: nothing from the host.
    ``hashseed``: PYTHONHASHSEED (see ``Sandbox(seed=...)``)."""
    env = {
        "PATH": SAFE_PATH,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": str(int(hashseed)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MALLOC_ARENA_MAX": "2",
    }
    if home is not None:
        env["HOME"] = home
        env["TMPDIR"] = home
    return env


def apply_rlimits(limits: SandboxLimits, timeout: float, extra_nproc: int = 0) -> None:
    """Lower soft and hard limits so the sandboxed code cannot raise them again."""
    cpu = SandboxLimits.cpu_seconds(timeout)
    mib = 1024 * 1024
    wanted = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, limits.memory_mb * mib, limits.memory_mb * mib),
        (resource.RLIMIT_NPROC, limits.max_processes + extra_nproc, limits.max_processes + extra_nproc),
        (resource.RLIMIT_NOFILE, limits.max_open_files, limits.max_open_files),
        (resource.RLIMIT_FSIZE, limits.max_file_mb * mib, limits.max_file_mb * mib),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if hasattr(resource, "RLIMIT_MSGQUEUE"):
        wanted.append((resource.RLIMIT_MSGQUEUE, 0, 0))
    for which, soft, hard in wanted:
        _, cur_hard = resource.getrlimit(which)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))


def drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != gid:
        raise OSError(errno.EPERM, "privilege drop did not take effect")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> None:
    """Empty the effective, permitted and inheritable capability sets of this process.

    Used when there is no separate uid to switch to (root inside a user
    namespace): the process keeps uid 0 there but loses every capability.
    """
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def count_processes_of(uid: int) -> int:
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += 1
            except OSError:
                pass
    return count


def _status_fields(pid: int) -> tuple[int, int] | None:
    """(ppid, real uid) of a process, or None when it is gone."""
    ppid = uid = -1
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"PPid:"):
                    ppid = int(line.split()[1])
                elif line.startswith(b"Uid:"):
                    uid = int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return ppid, uid


def reap_all() -> None:
    """Collect every exited child (the server is pid 1 or a subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def leftovers(whole_namespace: bool, sandbox_uid: int | None, spare: Iterable[int] = ()) -> list[int]:
    """Processes an execution left behind: everything but this process (and ``spare``) in
    a private PID namespace; without one, processes running as the sandbox uid and
    orphans re-parented to this subreaper."""
    kept = {os.getpid(), *spare}
    me = os.getpid()
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid in kept:
            continue
        if whole_namespace:
            found.append(pid)
            continue
        fields = _status_fields(pid)
        if fields is None:
            continue
        ppid, uid = fields
        if ppid == me or (sandbox_uid is not None and uid == sandbox_uid):
            found.append(pid)
    return found


def sweep(
    whole_namespace: bool, sandbox_uid: int | None, budget_s: float = 3.0, spare: Iterable[int] = ()
) -> bool:
    """SIGKILL every process left over from an execution and reap it.

    In a private PID namespace the server is the only legitimate process, so
    everything else dies.  Without one, the victims are processes running as the
    sandbox uid and orphans re-parented to this subreaper.  ``spare`` (the template, see
    ``template``, and a loader that stays alive between the calls it serves, see
    ``fork_per_call``) is left alone.
    Returns True when the namespace is clean again.
    """
    give_up = time.monotonic() + budget_s
    while True:
        victims = leftovers(whole_namespace, sandbox_uid, spare)
        if not victims:
            reap_all()
            return True
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        reap_all()
        if time.monotonic() > give_up:
            return False
        if any(os.path.exists(f"/proc/{pid}") for pid in victims):
            time.sleep(0.001)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def close_fds_except(keep: Iterable[int]) -> None:
    keep = sorted(set(keep))
    low = 0
    for fd in keep:
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
