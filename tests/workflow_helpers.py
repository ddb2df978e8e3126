"""Helpers for tests that run the real Snakemake workflow in a temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
# the threads a job may use, read from `make run`'s profile: two torch threads in a job
# beside the other pytest worker's work spin against each other (several times slower)
JOB_THREADS = str(yaml.safe_load((REPO / "profiles/local/config.yaml").read_text())["max-threads"])


def snakemake_argv(workdir: Path, *args: str, python: str = sys.executable) -> list[str]:
    """The command line of Snakemake on the project's Snakefile with ``workdir`` as its
    working directory (``python -m snakemake``; ``python``: another interpreter's)."""
    return [
        python,
        "-m",
        "snakemake",
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        *args,
    ]


def run_snakemake(
    workdir: Path, *args: str, timeout: int = 1500, check: bool = True, warm: bool = True
) -> subprocess.CompletedProcess:
    """Run the project's Snakefile with `workdir` as working directory (its own config there).
    ``warm``: with warm starts, as `make run` runs (src/selfplay/pipeline/warm_start.py)."""
    cmd = snakemake_argv(
        workdir,
        "--configfile",
        str(workdir / "config.yaml"),
        "--cores",
        "2",
        "--max-threads",
        JOB_THREADS,
        *args,
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if warm:
        env.update(SELFPLAY_WARM="1", SELFPLAY_WARM_IDLE="60")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({proc.returncode}):\n{proc.stdout[-6000:]}\n{proc.stderr[-12000:]}"
        )
    return proc


def plan_workflow(
    workdir: Path, *args: str, cores: str | None = "2", env: dict | None = None, timeout: int = 300
) -> subprocess.CompletedProcess:
    """``snakemake -n`` of the project's Snakefile in ``workdir`` (no config of its own:
    ``args`` name it), from the repository root; the process is returned unchecked."""
    cmd = snakemake_argv(workdir, "-n", *(["--cores", cores] if cores else []), *args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env)


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


def bundle_and_replay(
    workdir: Path, name: str, tmp_path_factory
) -> tuple[Path, subprocess.CompletedProcess, Path, subprocess.CompletedProcess]:
    """`snakemake bundle` on a finished run, then `selfplay bundle replay` of its
    ``results/bundle/<name>.tar.gz`` with no model library importable: (workdir, the
    bundle run, the replay's folder, the replay run)."""
    proc = run_snakemake(workdir, "bundle")
    out = tmp_path_factory.mktemp(f"{name}_replayed") / "replay"
    env = no_model_env(tmp_path_factory.mktemp("no_model_site"))
    bundle = str(workdir / f"results/bundle/{name}.tar.gz")
    replay = selfplay_cli("bundle", "replay", bundle, "--out", str(out), "--cores", "2", env=env)
    return workdir, proc, out, replay


def unpack_bundle(workdir: Path, name: str, dest: Path) -> tuple[Path, dict[str, str]]:
    """Unpack ``results/bundle/<name>.tar.gz`` into ``dest``: (its top folder, the kind
    its MANIFEST.json gives each file, by path)."""
    import json
    import tarfile

    with tarfile.open(workdir / f"results/bundle/{name}.tar.gz") as tar:
        tar.extractall(dest, filter="data")
    root = dest / name
    manifest = json.loads((root / "MANIFEST.json").read_text())
    return root, {e["path"]: e["kind"] for e in manifest["files"]}
