"""Warm starts for local runs: jobs forked from a process that has imported torch already.

A job that loads a model spends 5 to 7 seconds of a 2-core machine importing torch,
transformers and PEFT before it does anything (profiled on the default run: 7 of the 10
seconds of a small evaluation job; ~105 such jobs in `make run`). With ``SELFPLAY_WARM=1``
in its environment (``make run`` sets it), a workflow step hands its whole job to a warm
server instead: one background process per user, Python and environment that has done
those imports once and forks a child for each job. The child runs the job's script from
its first line, in the job's folder, with the job's environment, argv and stdin/stdout/
stderr (passed over the socket), so its logs, outputs and exit status are the job's;
only the imports are shared (copy-on-write memory). The job's own process waits, relays
SIGTERM/SIGINT to the child, and exits with the child's status; a child whose job
process dies is killed.

What stays the same: every job is still a Snakemake job over files, outputs are
byte-identical (tests/test_warm_start.py), and the project's modules are imported fresh
in each child (edits apply at once). What differs: Snakemake's benchmark files measure
the waiting process, so their memory and CPU columns are not the job's (the seconds
are). Never used on a cluster or in a container: only where ``SELFPLAY_WARM=1`` is set.

Fallbacks: no server yet (the first job starts one in the background and runs cold), a
server that does not answer, or an environment the server was not started for (the
socket's name holds a hash of the interpreter and of the variables read at import time)
-> the job runs in its own process as without warm starts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ENABLE = "SELFPLAY_WARM"  # "1": hand steps to the warm server
CHILD = "SELFPLAY_WARM_CHILD"  # set in a forked job: it runs, it does not hand off again
# Set in SLURM jobs and Apptainer/Singularity containers, where jobs never run warm.
NEVER_UNDER = ("SLURM_JOB_ID", "APPTAINER_CONTAINER", "SINGULARITY_CONTAINER")
IDLE = "SELFPLAY_WARM_IDLE"  # seconds a server waits for a job before it exits (default 300)
# Modules whose import is the cost (the project's own modules are never imported here).
PRELOAD = (
    "torch",
    "transformers.modeling_utils",
    "transformers.models.auto.tokenization_auto",
    "transformers.models.llama.modeling_llama",
    "peft",
    "trl",
    "datasets",
)
# Variables read when those modules are imported: a server serves only jobs that agree.
_IMPORT_TIME_PREFIXES = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "TORCH", "PYTORCH_", "OMP_", "MKL_", "CUDA_")
_MAX_HEADER = 1 << 20


def _import_time_env(env: dict[str, str]) -> dict[str, str]:
    keys = sorted(k for k in env if k.startswith(_IMPORT_TIME_PREFIXES) or k in ("PYTHONPATH", "PATH"))
    return {k: env[k] for k in keys}


def socket_path(env: dict[str, str] | None = None) -> Path:
    """Where the server for this interpreter and import-time environment listens."""
    env = dict(os.environ if env is None else env)
    env.pop(CHILD, None)
    key = json.dumps([sys.executable, sys.version, _import_time_env(env)], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return _private_dir() / f"{digest}.sock"


def _private_dir() -> Path:
    folder = Path(tempfile.gettempdir()) / f"selfplay-warm-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not folder.is_dir() or folder.is_symlink():
        raise OSError(f"{folder} is not a private folder of this user")
    return folder


# --------------------------------------------------------------------------- the job's side


def hand_off() -> None:
    """Called as a step starts: with ``SELFPLAY_WARM=1``, run this job in a warm child and
    exit with its status (SystemExit); otherwise (or if no server answers) return and let
    the job run here."""
    if os.environ.get(ENABLE) != "1" or os.environ.get(CHILD):
        return
    if any(os.environ.get(name) for name in NEVER_UNDER):
        return  # a cluster job or a container: its own interpreter, as documented
    script = getattr(sys.modules.get("__main__"), "__real_file__", None)  # Snakemake's script file
    if not script or not Path(script).is_file():
        return
    try:
        path = socket_path()
    except OSError:
        return
    status = _run_in_server(path, script)
    if status is None:
        _start_server(path)
        return
    raise SystemExit(status)


def _run_in_server(path: Path, script: str) -> int | None:
    """The child's exit status, or None if no child was started (the job runs here)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
        header = json.dumps(
            {"script": script, "argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}
        ).encode()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        socket.send_fds(conn, [len(header).to_bytes(8, "big") + header], [0, 1, 2])
        reader = conn.makefile("rb")
        line = reader.readline()
        if not line.startswith(b"pid "):
            return None
        child = int(line.split()[1])
    except (OSError, ValueError):
        conn.close()
        return None

    relayed: list[int] = []

    def relay(signum, _frame):
        relayed.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, relay)
    try:
        line = reader.readline()
    except OSError:
        line = b""
    conn.close()
    if line.startswith(b"status "):
        return int(line.split()[1])
    print(f"warm start: the job's process {child} ended without a status (killed?)", file=sys.stderr)
    return 128 + relayed[-1] if relayed else 1


def _start_server(path: Path) -> None:
    """Start a server in the background (it runs later jobs; this one runs cold). A second
    server for the same socket exits at once (it cannot take the lock)."""
    log = path.with_suffix(".log")
    env = {k: v for k, v in os.environ.items() if k != CHILD}
    with contextlib.suppress(OSError), open(log, "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "selfplay.pipeline.warm_start", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
            close_fds=True,
        )


# --------------------------------------------------------------------------- the server's side


def serve(path: Path, idle_seconds: float = 300.0) -> None:
    """Import PRELOAD, then fork a child per connection until idle for ``idle_seconds``."""
    import fcntl
    import importlib

    lock = open(path.with_suffix(".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server holds this socket
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    listener.settimeout(idle_seconds)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    print(f"{time.strftime('%F %T')} warm server {os.getpid()} ready on {path}", flush=True)
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                break
            try:
                header, fds = _receive(conn)
            except (OSError, ValueError) as exc:
                print(f"warm server: a bad request ({exc})", flush=True)
                conn.close()
                continue
            if os.fork() == 0:
                listener.close()
                _run_child(conn, header, fds)  # never returns
            conn.close()
            for fd in fds:
                os.close(fd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        print(f"{time.strftime('%F %T')} warm server {os.getpid()} idle, exiting", flush=True)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 8 + _MAX_HEADER, 3)
    if len(fds) != 3 or len(data) < 8:
        for fd in fds:
            os.close(fd)
        raise ValueError("expected a header and three file descriptors")
    size = int.from_bytes(data[:8], "big")
    body = data[8:]
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            raise ValueError("the header was cut short")
        body += more
    return json.loads(body), list(fds)


def _run_child(conn: socket.socket, header: dict, fds: list[int]) -> None:
    """In the forked child: become the job, run its script, report its status, exit."""
    import runpy
    import traceback

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    os.chdir(header["cwd"])
    os.environ.clear()
    os.environ.update(header["env"])
    os.environ[CHILD] = "1"
    sys.argv = list(header["argv"])
    for name in [m for m in sys.modules if m == "selfplay" or m.startswith("selfplay.")]:
        del sys.modules[name]  # the project's code as it is now, not as the server found it
    sys.path[0] = str(Path(header["script"]).parent)
    torch = sys.modules.get("torch")
    threads = os.environ.get("OMP_NUM_THREADS", "")
    if torch is not None and threads.isdigit() and int(threads) > 0:
        torch.set_num_threads(int(threads))
    conn.sendall(f"pid {os.getpid()}\n".encode())
    threading.Thread(target=_die_with_the_job, args=(conn,), daemon=True).start()
    status = 0
    try:
        runpy.run_path(header["script"], run_name="__main__")
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        status = 1
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        conn.sendall(f"status {status}\n".encode())
    os._exit(status)


def _die_with_the_job(conn: socket.socket) -> None:
    """The job's process never writes after its request: end of file means it is gone."""
    with contextlib.suppress(OSError):
        while conn.recv(1):
            pass
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(os.environ.get(IDLE) or 300))
