"""Helpers for tests that run the real Snakemake workflow in a temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def run_snakemake(
    workdir: Path, *args: str, timeout: int = 1500, check: bool = True
) -> subprocess.CompletedProcess:
    """Run the project's Snakefile with `workdir` as working directory (its own config there)."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        "2",
        *args,
    ]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-12000:]}"
        )
    return proc


def write_config(workdir: Path, cfg: dict) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))


def default_config() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def jobs_run(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Job counts from Snakemake's 'Job stats' table."""
    text = proc.stdout + proc.stderr
    counts: dict[str, int] = {}
    if "Job stats:" not in text:
        return counts
    table = text.split("Job stats:", 1)[1].splitlines()[3:]
    for line in table:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        if parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


NO_MODEL_SITE = '''
import sys

class _NoModelLibraries:
    """Make every import of a model library fail: a bundle replay must not need one."""
    BLOCKED = {"torch", "transformers", "peft", "trl", "vllm", "accelerate"}

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.BLOCKED:
            raise ImportError(f"{name} is blocked in this test: the replay must not load a model")
        return None

sys.meta_path.insert(0, _NoModelLibraries())
'''


def no_model_env(folder: Path) -> dict:
    """An environment in which Python cannot import torch, transformers, peft, trl, vllm or
    accelerate (a sitecustomize.py written into ``folder``)."""
    (folder / "sitecustomize.py").write_text(NO_MODEL_SITE)
    return dict(os.environ, PYTHONPATH=str(folder), HF_HUB_OFFLINE="1")


def selfplay_cli(*args: str, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
    """The `selfplay` command line of this checkout, run from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "selfplay", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=str(REPO),
    )
