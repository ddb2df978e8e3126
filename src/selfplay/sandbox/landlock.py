"""Landlock: the kernel's unprivileged access control, for hosts without mount namespaces.

Where the sandbox cannot build its own filesystem view (``fs_view``), the fork
server prepares one Landlock ruleset that allows the same host paths (read and
execute), the work directories (everything), the standard devices (read and
write) and /proc (read); each forked child enforces it on itself before it
touches the program, and every process it starts inherits it.  Anything else
on the host is refused (EACCES), whatever its permission bits.

Where the kernel supports them, the ruleset also refuses TCP bind/connect (ABI 4)
and scopes abstract UNIX sockets and signals to the program's own processes (ABI
6): without a network namespace, those are the ways out that remain.

The ruleset needs no privilege, only no_new_privs, which the server sets.
"""

from __future__ import annotations

import ctypes
import os
import stat
from typing import Any

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

# Filesystem rights each ABI version knows about.
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
# Rights that only make sense on a directory (refused by the kernel on a file rule).
_DIR_ONLY = (
    READ_DIR
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
    | REFER
)

READ_ONLY = EXECUTE | READ_FILE | READ_DIR
READ = READ_FILE | READ_DIR
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV
EVERYTHING = (1 << 16) - 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _call(number: int, *args: Any) -> int:
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock syscall {number}: {os.strerror(err)}")
    return result


def abi_version() -> int:
    """The Landlock ABI the kernel offers; 0 when there is none (or it is switched off)."""
    try:
        return _call(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except OSError:
        return 0


class Ruleset:
    """A ruleset under construction in the server; ``restrict_self`` runs in each child."""

    def __init__(self) -> None:
        self.abi = abi_version()
        if self.abi < 1:
            raise OSError("Landlock is not available")
        self.handled = _FS_BY_ABI.get(self.abi, _FS_BY_ABI[5])
        attr = _RulesetAttr(
            self.handled,
            NET_BIND_TCP | NET_CONNECT_TCP if self.abi >= 4 else 0,
            SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if self.abi >= 6 else 0,
        )
        size = ctypes.sizeof(_RulesetAttr) if self.abi >= 6 else (16 if self.abi >= 4 else 8)
        self.fd = _call(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        self.allowed: dict[str, list[str]] = {}

    def allow(self, path: str, access: int, kind: str) -> bool:
        """Allow ``access`` beneath ``path`` (links followed), listed under ``kind`` in the
        report; False when the path is missing."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            rights = access & self.handled
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= ~_DIR_ONLY
            rule = _PathBeneath(rights, fd)
            _call(
                SYS_ADD_RULE,
                ctypes.c_int(self.fd),
                ctypes.c_int(RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
        finally:
            os.close(fd)
        self.allowed.setdefault(kind, []).append(path)
        return True

    def close(self) -> None:
        os.close(self.fd)

    def report(self) -> dict[str, Any]:
        """What the ruleset allows, for the ``isolation`` report."""
        out: dict[str, Any] = {kind: sorted(paths) for kind, paths in sorted(self.allowed.items())}
        out.update(
            landlock_abi=self.abi,
            tcp="refused" if self.abi >= 4 else "allowed",
            scoped=["abstract unix sockets", "signals"] if self.abi >= 6 else [],
        )
        return out


def restrict_self(ruleset_fd: int) -> None:
    """Enforce the ruleset on this process and everything it starts (needs no_new_privs)."""
    _call(SYS_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0))
