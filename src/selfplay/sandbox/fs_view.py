"""The filesystem a confined program sees: a new root holding only what it needs.

Inside its mount namespace the fork server plans a view (``FsView``), builds it on
a small tmpfs and pivots into it once, before serving.  Each allowed host path is
shown read-only at its own absolute path, so sys.path entries, tool paths and
symlinks stay valid; everything else (the checkout, home directories, /work, /srv,
/opt, /var, /run, /mnt, other jobs' files) does not exist in there, for the server
and for every child it forks.

What ``standard_view`` puts in:

* programs and shared libraries: /usr, and /bin, /sbin, /lib* (links into /usr on
  merged-/usr systems, read-only binds otherwise); /var/lib/ghc, GHC's package
  database on Debian (nothing else of /var);
* Python: the directories on the server's sys.path (the standard library) and what
  an interpreter started as ``sys.executable`` needs (its symlinks, the binary,
  libpython, pyvenv.cfg, the environment's site-packages; see
  ``interpreter_paths``);
* /etc: the host's ld.so.cache, localtime, alternatives (Debian's command links),
  mono (Dafny's runtime reads its configuration there) and python3* (Debian's
  sitecustomize), plus generated passwd, group, nsswitch.conf and hosts that name
  only root, nobody and localhost;
* /dev: the host's null, zero, full, random and urandom nodes, the fd/stdin/
  stdout/stderr links, and an empty, read-only shm;
* /proc (the PID namespace's own) and /sys/devices/system/cpu (runtimes size
  their thread pools from it);
* /tmp: a private tmpfs for the work directories;
* the caller's tool directories (a compiler's, a verifier's, recorded outputs).

A directory on the way to an exposed path is created empty, traversable by
everyone and listable where the host's is.  Mounts nested below an exposed path
are not carried in.  The root itself is read-only once entered.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from typing import Any

from . import confine

SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Tool data that a link under /usr points to: Debian's GHC keeps its global package
# database there (/usr/lib/ghc/package.conf.d -> /var/lib/ghc/package.conf.d).
TOOL_DATA = ("/var/lib/ghc",)
ETC_FROM_HOST = ("ld.so.cache", "localtime", "alternatives", "mono")
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
CPU_INFO = "/sys/devices/system/cpu"
GENERATED_ETC = {
    "passwd": "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "group": "root:x:0:\nnogroup:x:65534:\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
    "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
}
SCRATCH = "/tmp"
# Places the view manages itself: a caller's directory may not replace or contain them.
RESERVED = ("/tmp", "/proc", "/dev", "/etc")
ROOT_TMPFS_MB = 1
MAX_LINK_HOPS = 40


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def refused_tool_dir(path: str) -> str | None:
    """Why ``path`` cannot be a tool directory of the view (None when it can)."""
    path = os.path.normpath(path)
    if path == "/" or path in RESERVED or under(path, "/proc") or under(path, "/dev"):
        return f"{path} would replace part of the sandbox's own filesystem (/, /tmp, /etc, /proc, /dev)"
    return None


def interpreter_paths() -> list[str]:
    """Host paths (computed on the host) that make ``sys.executable`` usable in the view.

    The fork server runs without ``site``, so its sys.path holds only the standard
    library; an interpreter a program starts itself also needs the executable, the
    shared libpython, pyvenv.cfg and site-packages.
    """
    import sysconfig

    paths = [sys.executable]
    if sysconfig.get_config_var("Py_ENABLE_SHARED"):
        libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
        if libdir and soname:
            paths.append(os.path.join(libdir, soname))
    if sys.prefix != sys.base_prefix:
        paths.append(os.path.join(sys.prefix, "pyvenv.cfg"))
    paths += [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    return [p for p in dict.fromkeys(paths) if p and os.path.exists(p)]


class FsView:
    """A plan of the new root (``expose``, ``generate``, ``symlink``, ...), then its
    construction (``build``) and the switch to it (``enter``).

    Planning only reads the host and keeps an O_PATH descriptor of everything to
    bind, so the sources stay reachable once the build has covered the staging
    directory.
    """

    def __init__(self) -> None:
        self._steps: list[tuple[str, str, Any]] = []
        self._nodes: dict[str, str] = {"/": "dir"}
        self._fds: list[int] = []
        self.read_only: list[str] = []
        self.devices: list[str] = []
        self.generated: list[str] = []
        self.private: list[str] = []
        self.links: dict[str, str] = {}

    # ------------------------------------------------------------ planning

    def _covered(self, path: str) -> bool:
        """True when ``path`` lies inside a host tree already bound into the view."""
        return any(under(path, b) for b in self.read_only + self.devices if b != path)

    def _add(self, kind: str, path: str, arg: Any = None) -> None:
        self._steps.append((kind, path, arg))
        self._nodes[path] = kind
        if kind == "link":
            self.links[path] = arg

    def _parent(self, path: str) -> None:
        """Plan the directories leading to ``path`` that the plan does not have yet."""
        parent = os.path.dirname(path)
        if parent not in self._nodes:
            self._parent(parent)
            self._add("dir", parent, 0o755)

    def expose(self, path: str) -> bool:
        """Show host ``path`` read-only at the same place; False when the host has no such path.

        Symlinks on the way are recreated as they are and followed, so the view
        holds both the link and its target.
        """
        todo = [c for c in os.path.normpath(path).split("/") if c]
        done: list[str] = []
        hops = 0
        while todo:
            name = todo.pop(0)
            if name == ".":
                continue
            if name == "..":
                if done:
                    done.pop()
                continue
            here = "/" + "/".join(done + [name])
            try:
                st = os.lstat(here)
            except OSError:
                return False
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise OSError(errno.ELOOP, f"too many symlinks below {path}")
                target = os.readlink(here)
                if here not in self._nodes and not self._covered(here):
                    self._add("link", here, target)
                todo = [c for c in target.split("/") if c] + todo
                if target.startswith("/"):
                    done = []
                continue
            done.append(name)
            if self._covered(here) or self._nodes.get(here, "dir") != "dir":
                continue  # already shown, or one of the view's own mounts or files
            if not todo:
                self._bind(here, st)
            elif stat.S_ISDIR(st.st_mode):
                if here not in self._nodes:
                    self._add("dir", here, (st.st_mode & 0o755) | 0o111)
            else:
                return False
        return True

    def _bind(self, path: str, st: os.stat_result) -> None:
        if stat.S_ISCHR(st.st_mode):
            kind = "device"
        elif stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            kind = "bind"
        else:
            raise OSError(errno.EINVAL, f"{path}: only directories, files and character devices can be shown")
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
        self._fds.append(fd)
        self._add(kind, path, (fd, stat.S_ISDIR(st.st_mode)))
        (self.devices if kind == "device" else self.read_only).append(path)

    def symlink(self, path: str, target: str) -> None:
        self._parent(path)
        self._add("link", path, target)

    def directory(self, path: str, mode: int = 0o755) -> None:
        """An empty directory of the view's own (read-only once the view is entered)."""
        self._parent(path)
        self._add("dir", path, mode)

    def generate(self, path: str, text: str) -> None:
        """A small read-only file of the view's own."""
        self._parent(path)
        self._add("file", path, text.encode("utf-8"))
        self.generated.append(path)

    def tmpfs(self, path: str, size_mb: int, mode: int) -> None:
        """A private, writable tmpfs (plan it before anything that lies under it)."""
        self.directory(path)
        self._add("tmpfs", path, (size_mb, mode))
        self.private.append(path)

    def proc(self) -> None:
        """The PID namespace's own /proc (mounted there by ``unshare --mount-proc``)."""
        self.directory("/proc", 0o555)
        fd = os.open("/proc", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self._fds.append(fd)
        self._add("proc", "/proc", fd)
        self.private.append("/proc")

    # ------------------------------------------------------------ building

    def _build(self, root: str) -> None:
        for kind, path, arg in self._steps:
            where = root + path
            if kind == "dir":
                if not os.path.isdir(where):
                    os.mkdir(where)
                os.chmod(where, arg)
            elif kind == "link":
                os.symlink(arg, where)
            elif kind == "file":
                fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
                try:
                    os.write(fd, arg)
                finally:
                    os.close(fd)
                os.chmod(where, 0o644)
            elif kind in ("bind", "device"):
                fd, is_dir = arg
                if is_dir:
                    if not os.path.isdir(where):  # else a folder of the plan, now shown whole
                        os.mkdir(where, 0o755)
                else:
                    os.close(os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644))
                confine.bind(f"/proc/self/fd/{fd}", where)
                if kind == "bind":
                    confine.remount_readonly(where)
            elif kind == "proc":
                confine.bind(f"/proc/self/fd/{arg}", where, recursive=True)
            elif kind == "tmpfs":
                size_mb, mode = arg
                confine.mount_tmpfs(where, size_mb, mode)

    def close(self) -> None:
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()

    def build(self, staging: str) -> None:
        """Build the view on a tmpfs mounted at ``staging``; on failure nothing of it stays.

        ``staging`` is covered by the new tmpfs first, so nothing planned may need
        a path below it except through the descriptors taken while planning.
        """
        try:
            confine.mount_tmpfs(staging, ROOT_TMPFS_MB, 0o755, inodes=4096)
            try:
                self._build(staging)
            except BaseException:
                confine.unmount(staging)
                raise
        finally:
            self.close()

    @staticmethod
    def enter(staging: str) -> None:
        """Make the built view the root (for good: the old root is detached)."""
        confine.pivot_root(staging)
        confine.remount_readonly("/")

    def report(self) -> dict[str, Any]:
        """What the view holds, for the ``isolation`` report: host paths shown read-only,
        host devices, generated files, private mounts, and symlinks (path -> target)."""
        return {
            "read_only": sorted(self.read_only),
            "devices": sorted(self.devices),
            "generated": sorted(self.generated),
            "private": sorted(self.private),
            "links": dict(sorted(self.links.items())),
        }


def host_paths(python_dirs: list[str], interpreter: list[str], tool_dirs: list[str]) -> list[str]:
    """The host paths shown read-only as they are (symlinks are followed when shown): the
    system's, /etc's few, CPU information, Python's and the tools'.  A folder comes
    before what lies in it."""
    try:
        pythons = sorted(n for n in os.listdir("/etc") if n.startswith("python3"))
    except OSError:
        pythons = []
    fixed = [*SYSTEM_PATHS, *TOOL_DATA, *(f"/etc/{name}" for name in (*ETC_FROM_HOST, *pythons)), CPU_INFO]
    wanted = list(dict.fromkeys(os.path.normpath(p) for p in [*python_dirs, *interpreter]))
    wanted += [
        p for p in dict.fromkeys(os.path.normpath(t) for t in tool_dirs) if refused_tool_dir(p) is None
    ]
    return fixed + sorted(wanted, key=lambda p: (p.count("/"), p))


def standard_view(
    python_dirs: list[str], interpreter: list[str], tool_dirs: list[str], tmpfs_mb: int
) -> FsView:
    """The plan described in this module's docstring (see there)."""
    view = FsView()
    try:
        view.tmpfs(SCRATCH, tmpfs_mb, 0o711)
        view.proc()
        view.directory("/etc")
        for name, text in GENERATED_ETC.items():
            view.generate(f"/etc/{name}", text)
        for name in DEVICES:
            view.expose(f"/dev/{name}")
        for name, target in DEV_LINKS.items():
            view.symlink(f"/dev/{name}", target)
        view.directory("/dev/shm")
        for path in host_paths(python_dirs, interpreter, tool_dirs):
            view.expose(path)
    except BaseException:
        view.close()
        raise
    return view
