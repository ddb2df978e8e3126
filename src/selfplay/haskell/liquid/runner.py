"""Running Liquid Haskell on an assembled file, plainly (:func:`run_liquid`) or confined
in the project's sandbox (:func:`run_liquid_confined`), and turning the run into a
verdict."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .output import ANSI_RE
from .settings import (
    DEFAULT_MODULE_NAME,
    MAX_FEEDBACK_CHARS,
    OUTPUT_HEAD_BYTES,
    OUTPUT_TAIL_BYTES,
    normalise_command,
    resolve_command,
)
from .verdicts import make_verdict, missing_verdict, verdict_of_run


def _kill_group(pid: int) -> None:
    """SIGKILL the whole process group led by ``pid``, if any of it is left."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_bounded(fh: Any) -> str:
    """The output file's text; when it is large, only its head and tail, with a note of
    how much was left out between them."""
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    fh.seek(0)
    if size <= OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES:
        data = fh.read()
    else:
        head = fh.read(OUTPUT_HEAD_BYTES)
        fh.seek(size - OUTPUT_TAIL_BYTES)
        tail = fh.read()
        data = head + f"\n[... {size - len(head) - len(tail)} bytes of output omitted ...]\n".encode() + tail
    return data.decode("utf-8", errors="replace")


def run_liquid(
    source: str,
    command: str | Sequence[str] | None,
    timeout: float,
    workdir: str | os.PathLike[str] | None = None,
    *,
    file_name: str | None = None,
    env: Mapping[str, str] | None = None,
    max_feedback_chars: int = MAX_FEEDBACK_CHARS,
    part_lines: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, Any]:
    """Run LH on ``source`` and return a verdict (see :mod:`.verdicts`).

    ``command`` is the argv prefix (the file name is appended); None, or a program that
    cannot be found, gives :func:`missing_verdict`. The file is written to a fresh
    temporary directory under ``workdir`` (the system temp dir when None) that is also
    LH's working directory and is removed afterwards. LH runs in its own session and
    process group; the whole group is killed with SIGKILL when ``timeout`` seconds pass,
    and also after LH exits (nothing it started outlives it). Output (stdout and stderr
    together) goes to an unnamed file and is read back bounded.
    """
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if file_name is None:
        m = re.search(r"^module\s+([A-Z][\w.']*)", source, re.MULTILINE)
        file_name = f"{m.group(1) if m else DEFAULT_MODULE_NAME}.hs"
    base = {
        "file_name": file_name,
        "file_sha256": digest,
        "part_lines": {k: list(v) for k, v in (part_lines or {}).items()},
    }
    argv = resolve_command(command)
    if argv is None:
        return missing_verdict(command=list(normalise_command(command) or []) or None, **base)
    root = Path(workdir) if workdir is not None else Path(tempfile.gettempdir())
    root.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="liquid-", dir=root)
    try:
        (Path(tmp) / file_name).write_text(source, encoding="utf-8")
        with tempfile.TemporaryFile() as out:
            start = time.monotonic()
            try:
                proc = subprocess.Popen(
                    [*argv, file_name],
                    cwd=tmp,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                    env=dict(env) if env is not None else None,
                )
            except FileNotFoundError:
                return missing_verdict(command=argv, **base)
            except OSError as exc:
                return make_verdict(
                    "crashed",
                    "liquid_launch_failed",
                    "not checked: Liquid Haskell could not be started",
                    detail=str(exc),
                    command=argv,
                    **base,
                )
            timed_out = False
            delay = 0.005
            try:
                while True:
                    # Wait without reaping, so the group id stays ours until we kill it.
                    try:
                        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                            break
                    except ChildProcessError:
                        break
                    left = start + timeout - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    time.sleep(min(delay, left))
                    delay = min(delay * 2, 0.1)
            finally:
                _kill_group(proc.pid)
                proc.wait()
            seconds = round(time.monotonic() - start, 3)
            output = _read_bounded(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    output = ANSI_RE.sub("", output).replace(tmp + os.sep, "").replace(tmp, ".")
    return verdict_of_run(
        output, proc.returncode, timed_out, seconds, argv, base, timeout, max_feedback_chars, part_lines
    )


def run_liquid_confined(
    source: str,
    command: str | Sequence[str] | None,
    timeout: float,
    sandbox: Any,
    *,
    limits: Any = None,
    file_name: str | None = None,
    max_feedback_chars: int = MAX_FEEDBACK_CHARS,
    part_lines: Mapping[str, Sequence[int]] | None = None,
) -> dict[str, Any]:
    """:func:`run_liquid` inside :class:`selfplay.sandbox.Sandbox` (``run_command``): the
    same confinement as every other run of model-written code (network/PID/mount
    namespaces, an unprivileged uid, rlimits, a private work directory holding only the
    file, a scrubbed environment, a whole-namespace kill at ``timeout``). LH compiles the
    proof with GHC, so this is where model text meets a compiler."""
    if file_name is None:
        m = re.search(r"^module\s+([A-Z][\w.']*)", source, re.MULTILINE)
        file_name = f"{m.group(1) if m else DEFAULT_MODULE_NAME}.hs"
    base = {
        "file_name": file_name,
        "file_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
        "part_lines": {k: list(v) for k, v in (part_lines or {}).items()},
    }
    argv = resolve_command(command)
    if argv is None:
        return missing_verdict(command=list(normalise_command(command) or []) or None, **base)
    res = sandbox.run_command(
        [*argv, file_name],
        timeout,
        files={file_name: source},
        limits=limits,
        max_output_kb=OUTPUT_HEAD_BYTES // 1024 + OUTPUT_TAIL_BYTES // 1024,
    )
    if res.status == "error":
        if res.detail and ("No such file" in res.detail or "not found" in res.detail):
            return missing_verdict(command=argv, detail=res.detail, **base)
        return make_verdict(
            "crashed",
            "liquid_launch_failed",
            "not checked: Liquid Haskell could not be started",
            detail=res.detail or "",
            command=argv,
            **base,
        )
    output = ANSI_RE.sub("", res.text("stdout") + res.text("stderr"))
    rc = res.exit_code if res.status == "exited" else (-9 if res.status == "killed" else None)
    verdict = verdict_of_run(
        output,
        rc,
        res.status == "timeout",
        round(res.seconds, 3),
        argv,
        base,
        timeout,
        max_feedback_chars,
        part_lines,
    )
    verdict["isolation"] = res.isolation
    return verdict
