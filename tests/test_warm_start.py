"""Warm starts (selfplay.pipeline.warm_start): a step handed to a forked child of a server
that has imported torch behaves as the job itself, and dies with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from selfplay.pipeline import warm_start

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable

# A stand-in for a script as Snakemake writes it: its preamble sets __real_file__.
SCRIPT = """\
__real_file__ = __file__; __file__ = "/elsewhere/the_script.py"
import json, os, sys
warm_at_start = "torch" in sys.modules
from selfplay.pipeline.step import step
with step("probe", "probe.log"):
    import torch
    print("on stdout", flush=True)
    print("on stderr", file=sys.stderr, flush=True)
    with open("probe.json", "w") as out:
        json.dump({"pid": os.getpid(), "parent": os.getppid(), "child": os.environ.get("SELFPLAY_WARM_CHILD"),
                   "torch_before": warm_at_start, "cwd": os.getcwd(), "mark": os.environ.get("MARK"),
                   "threads": torch.get_num_threads(), "argv": sys.argv[1:],
                   "sum": float(torch.arange(10, dtype=torch.float32).sum())}, out)
    if os.environ.get("SLEEP"):
        import time
        time.sleep(float(os.environ["SLEEP"]))
    code = int(os.environ.get("EXIT", "0"))
    if code:
        raise SystemExit(code)
"""


def _env(**extra) -> dict:
    env = dict(os.environ, SELFPLAY_WARM="1", SELFPLAY_WARM_IDLE="60", OMP_NUM_THREADS="1", **extra)
    env.pop("SELFPLAY_WARM_CHILD", None)
    return env


def _wait_for_server(env: dict, timeout: float = 120) -> Path:
    path = warm_start.socket_path({k: v for k, v in env.items() if k not in ("MARK", "EXIT", "SLEEP")})
    deadline = time.time() + timeout
    while not path.exists():
        assert time.time() < deadline, f"no warm server on {path}; its log: {path.with_suffix('.log')}"
        time.sleep(0.2)
    return path


@pytest.fixture(scope="module")
def job_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("warm")
    (folder / "job.py").write_text(SCRIPT)
    # a first job starts the server (and runs cold); the tests then find it warm
    cold = subprocess.run(
        [PYTHON, "job.py"], cwd=folder, env=_env(MARK="first"), capture_output=True, text=True
    )
    assert cold.returncode == 0, cold.stderr
    first = json.loads((folder / "probe.json").read_text())
    assert first["child"] is None and first["torch_before"] is False
    _wait_for_server(_env())
    return folder


def _run(folder: Path, **extra) -> tuple[subprocess.CompletedProcess, dict]:
    result = subprocess.run(
        [PYTHON, "job.py", "an", "argument"], cwd=folder, env=_env(**extra), capture_output=True, text=True
    )
    return result, json.loads((folder / "probe.json").read_text())


def test_a_handed_off_job_is_the_job_with_the_imports_done(job_dir):
    result, probe = _run(job_dir, MARK="warm")
    assert result.returncode == 0, result.stderr
    assert probe["child"] == "1" and probe["torch_before"] is True  # forked after the server's imports
    assert probe["pid"] != os.getpid() and probe["mark"] == "warm" and probe["argv"] == ["an", "argument"]
    assert Path(probe["cwd"]) == job_dir and probe["threads"] == 1 and probe["sum"] == 45.0
    assert "on stdout" in result.stdout and "on stderr" in result.stderr  # the job's own streams
    log = (job_dir / "probe.log").read_text()
    assert "step probe: start" in log and "step probe: done" in log


def test_the_job_exits_with_the_childs_status(job_dir):
    result, probe = _run(job_dir, EXIT="7")
    assert probe["child"] == "1"
    assert result.returncode == 7
    assert "step probe: done" not in (job_dir / "probe.log").read_text()


def test_without_the_setting_the_job_runs_in_its_own_process(job_dir):
    env = _env(MARK="plain")
    env.pop("SELFPLAY_WARM")
    result = subprocess.run([PYTHON, "job.py"], cwd=job_dir, env=env, capture_output=True, text=True)
    probe = json.loads((job_dir / "probe.json").read_text())
    assert result.returncode == 0 and probe["child"] is None and probe["torch_before"] is False


@pytest.mark.parametrize("where", ["SLURM_JOB_ID", "APPTAINER_CONTAINER"])
def test_cluster_and_container_jobs_never_hand_off(job_dir, where):
    result, probe = _run(job_dir, **{where: "1"})
    assert result.returncode == 0 and probe["child"] is None and probe["torch_before"] is False


def test_another_import_time_environment_gets_another_server():
    base = _env()
    assert warm_start.socket_path(base) == warm_start.socket_path(dict(base, MARK="x"))
    assert warm_start.socket_path(base) != warm_start.socket_path(dict(base, HF_HUB_OFFLINE="0"))
    assert warm_start.socket_path(base) != warm_start.socket_path(dict(base, OMP_NUM_THREADS="2"))


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_child_dies_with_the_job(job_dir, how):
    """SIGTERM is relayed to the child (status 128 + 15); a job process killed outright
    takes its child with it (the child sees the connection close)."""
    (job_dir / "probe.json").unlink(missing_ok=True)
    job = subprocess.Popen(
        [PYTHON, "job.py"], cwd=job_dir, env=_env(SLEEP="60"), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.time() + 30
    while not (job_dir / "probe.json").exists():
        assert time.time() < deadline and job.poll() is None
        time.sleep(0.1)
    time.sleep(0.2)
    child = json.loads((job_dir / "probe.json").read_text())["pid"]
    assert child != job.pid
    job.send_signal(getattr(signal, how))
    status = job.wait(timeout=30)
    assert status == (128 + signal.SIGTERM if how == "SIGTERM" else -signal.SIGKILL)
    deadline = time.time() + 10
    while _alive(child):
        assert time.time() < deadline, f"the child {child} outlived its job"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


@pytest.mark.slow
def test_a_snakemake_generation_job_writes_the_same_bytes_warm(tmp_path, tiny_model_dir):
    """A real Snakemake job generating with the tiny model: the cold run (which starts the
    server) and a warm one write identical records."""
    (tmp_path / "gen.py").write_text(
        "import os\n"
        "from selfplay.llm.base import GenerationRequest, SamplingParams\n"
        "from selfplay.llm.transformers_backend import TransformersBackend\n"
        "from selfplay.pipeline.step import step\n"
        "with step('gen', snakemake.log[0]):\n"
        "    backend = TransformersBackend(snakemake.params.model, batch_size=4, threads=1, progress=False)\n"
        "    request = GenerationRequest([{'role': 'user', 'content': 'Name two colours.'}],\n"
        "                                SamplingParams(temperature=0.8, max_new_tokens=12, n=2, seed=3))\n"
        "    texts = backend.generate([request])[0]\n"
        "    open(snakemake.output[0], 'w').write(repr(texts))\n"
        "    open(snakemake.output[1], 'w').write(os.environ.get('SELFPLAY_WARM_CHILD') or 'cold')\n"
    )
    (tmp_path / "Snakefile").write_text(
        "rule gen:\n"
        "    output: 'texts.txt', 'how.txt'\n"
        f"    params: model={str(tiny_model_dir)!r}\n"
        "    log: 'gen.log'\n"
        "    threads: 1\n"
        "    script: 'gen.py'\n"
    )
    snakemake = [str(Path(PYTHON).parent / "snakemake"), "--cores", "1", "--forceall", "--quiet"]
    env = _env()
    cold = dict(env)
    cold.pop("SELFPLAY_WARM")  # cold whether or not an earlier test left a server running

    def run(environment: dict) -> tuple[str, bytes]:
        done = subprocess.run(snakemake, cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return (tmp_path / "how.txt").read_text(), (tmp_path / "texts.txt").read_bytes()

    how, cold_bytes = run(cold)
    assert how == "cold"
    for _attempt in range(3):
        how, warm_bytes = run(env)
        if how == "1":
            break
        time.sleep(15)  # that job started the server; it imports before it listens
    assert how == "1", "never ran warm"
    assert warm_bytes == cold_bytes
