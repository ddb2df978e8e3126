"""Start a job in a subprocess and SIGKILL it once it has written some of its work."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable


def kill_when(args: list[str], ready: Callable[[], bool], timeout: float = 900, **popen) -> None:
    """Run ``args``; SIGKILL the process as soon as ``ready()`` is true (polled every 20 ms).
    Fails if the job ended, or the time ran out, before it could be killed."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    deadline = time.time() + timeout
    try:
        while time.time() < deadline and proc.poll() is None:
            if ready():
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None and time.time() >= deadline:
            proc.kill()
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL and time.time() < deadline, (
        "the job ended before it could be killed"
    )
