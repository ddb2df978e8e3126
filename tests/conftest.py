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


def _worker_threads() -> int:
    """Each pytest-xdist worker's share of the machine's cores (at least one)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    return max(1, len(os.sched_getaffinity(0)) // workers)


# Under `make test`'s two workers on two cores, torch's default of a thread per core in
# each worker made the two spin against each other: a real-model test took 183 s in the
# suite and 26 s alone. OMP_NUM_THREADS (read by torch at import, inherited by every
# process a test starts) gives each worker its share, unless the caller set it.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.setdefault("OMP_NUM_THREADS", str(_worker_threads()))


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
    """/etc/slurm files as they were before the cluster (checked again after stop), once
    a cluster left by a killed run is undone: its files are not the machine's own."""
    from selfplay.cluster.local_slurm import clear_stale

    if os.geteuid() == 0:
        clear_stale()
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
# `make test` runs the suite in two pytest-xdist workers, a module at a time
# (`-n 2 --dist loadscope`): a module runs whole in one worker, so its module-scoped
# fixtures (often a whole workflow run) are built once. Modules holding slow tests are
# collected first, so the long ones start early and the short ones fill the end of the
# run (`--no-loadscope-reorder` keeps this order). The real SLURM cluster is one per
# machine (fixed ports, /etc/slurm): under xdist the tests that use it must sit in one
# module. (xdist's `loadgroup` would group across modules, but with pytest 9 its renamed
# node ids are lost and every test becomes its own unit.)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Tests that use the real SLURM cluster carry the `cluster` marker (added before `-m`
    selects), so the fast tier (`make test-fast`: not slow, rehearsal or cluster) leaves
    them out by fixture, not by list; of the selected tests, modules with slow ones come
    first (see above)."""
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)
    yield
    module = {item.nodeid: item.nodeid.split("::")[0] for item in items}
    on_cluster = sorted({module[i.nodeid] for i in items if i.get_closest_marker("cluster")})
    if len(on_cluster) > 1 and (
        os.environ.get("PYTEST_XDIST_WORKER") or config.getoption("dist", "no") != "no"
    ):
        raise pytest.UsageError(
            f"{len(on_cluster)} modules use the SLURM cluster ({', '.join(on_cluster)}): under pytest-xdist "
            "they would start one each at once; run them without -n (make rehearse) or keep them in one module"
        )
    slow = {module[i.nodeid] for i in items if i.get_closest_marker("slow")}
    order = {m: k for k, m in enumerate(dict.fromkeys(module.values()))}
    items.sort(key=lambda i: (module[i.nodeid] not in slow, order[module[i.nodeid]]))
