"""The workflow on a real SLURM cluster: sbatch, srun, gres, squeue, scancel.

One module starts a one-node cluster on this machine (selfplay.cluster.local_slurm:
slurmctld + slurmd + munged, a fake GPU), runs reduced real workflows through
`snakemake --executor slurm --profile tests/slurm/profile`, checks them against
SLURM's own records, and stops the cluster, all in one process (the VM clock can jump
between separate commands, which breaks munge credentials).

Generation uses the replay backend (answers written by tests/test_workflow_replay.py's
scenario), so the GPU rules run on the CPU without a model; one LoRA training job uses
the real tiny model. Needs root and the Debian packages slurm-wlm and munge
(scripts/install_system_test.sh); without them every test here skips, saying which
piece is missing.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import etc_slurm_files
from test_workflow_replay import build_scenario
from workflow_helpers import REPO, jobs_run, plan_workflow, snakemake_argv, write_config

from selfplay.records import read_json, read_jsonl

pytestmark = pytest.mark.slow

TEST_PROFILE = REPO / "tests" / "slurm" / "profile"
USER_PROFILE = REPO / "profiles" / "slurm"
GPU_RULES = ("sinq_alice_generate", "sinq_bob_generate", "train_alice", "train_bob")
# What the tests' workflow asks of the cluster (config resources): GPU jobs at the test cluster's size.
TEST_RESOURCES = {
    "generate": {"gpu": 1, "cpus_per_task": 0, "cpus_per_gpu": 1, "mem_mb": 1000, "runtime": 10},
    "train": {"gpu": 1, "cpus_per_task": 0, "cpus_per_gpu": 1, "mem_mb": 4000, "runtime": 15},
    "verify": {"cpus_per_task": 1, "mem_mb": 1000, "runtime": 10},
    "prove": {"cpus_per_task": 1, "mem_mb": 1000, "runtime": 10},
}
EXP = "results/sinq/replaytest"
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+)")


# ----------------------------------------------------------------------------- helpers
def snakemake_cmd(workdir: Path, *args: str) -> list[str]:
    config = ("--configfile", str(workdir / "config.yaml"))
    return snakemake_argv(workdir, *config, "--executor", "slurm", "--profile", str(TEST_PROFILE), *args)


def run_on_slurm(cluster, workdir: Path, *args: str, timeout: int = 400) -> subprocess.CompletedProcess:
    env = cluster.client_env()
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return subprocess.run(
        snakemake_cmd(workdir, *args), capture_output=True, text=True, timeout=timeout, env=env
    )


def output_of(proc) -> str:
    return proc.stdout + proc.stderr


def slurm_ids(text: str) -> dict[str, str]:
    """snakemake job id -> SLURM job id, from the plugin's 'has been submitted' lines."""
    return {m.group(1): m.group(2) for m in SUBMITTED.finditer(text)}


def scontrol_job(cluster, slurm_id: str) -> dict[str, str]:
    """`scontrol show job -d -o` as a dict (finished jobs stay for MinJobAge seconds)."""
    proc = subprocess.run(
        ["scontrol", "show", "job", "-d", "-o", slurm_id],
        capture_output=True,
        text=True,
        env=cluster.client_env(),
        timeout=20,
    )
    assert proc.returncode == 0, proc.stderr
    fields = {}
    for part in proc.stdout.split():
        key, sep, value = part.partition("=")
        if sep and key not in fields:
            fields[key] = value
    return fields


def fingerprint(path: Path) -> tuple[int, str]:
    return path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()


def job_outputs(text: str) -> dict[str, str]:
    """snakemake job id -> its (first) output path, from the job blocks snakemake prints."""
    out = {}
    for block in re.split(r"\n(?=\S)", text):
        jobid = re.search(r"^\s+jobid: (\d+)$", block, re.M)
        output = re.search(r"^\s+output: ([^,\s]+)", block, re.M)
        if jobid and output:
            out[jobid.group(1)] = output.group(1)
    return out


def finished_jobs(text: str) -> list[str]:
    return re.findall(r"Finished jobid: (\d+)", text)


# ----------------------------------------------------------------------------- fixtures
# The cluster itself (fixture `cluster`, one per session) is in tests/conftest.py: the
# paper rehearsals (tests/rehearsal.py) share it.
@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory, tiny_model_dir):
    """Round 1 of the replay scenario through SLURM: generation (GPU rules), verification,
    Bob's answers (GPU rule), labels, then Alice's training set and one LoRA training job."""
    workdir = tmp_path_factory.mktemp("slurm_workflow")
    cfg = build_scenario(workdir)
    cfg["model"]["path"] = str(tiny_model_dir)
    cfg["resources"] = TEST_RESOURCES
    # the cluster's GPU is fake (gres without CUDA): a training job that asked for it trains
    # on the CPU only when told to (otherwise it stops: tests/test_training_device.py)
    cfg["sinq"]["training"]["alice"]["device"] = "cpu"
    write_config(workdir, cfg)
    targets = [
        f"{EXP}/round1/labeled_untrained/shard0.jsonl",
        f"{EXP}/round1/labeled_untrained/shard1.jsonl",
        f"{EXP}/round1/adapter_alice",
    ]
    t0 = time.monotonic()
    proc = run_on_slurm(cluster, workdir, *targets)
    wall = time.monotonic() - t0
    assert proc.returncode == 0, f"snakemake failed ({proc.returncode}):\n{output_of(proc)[-15000:]}"
    print(f"\n[slurm] workflow through SLURM: {wall:.1f} s, {len(slurm_ids(output_of(proc)))} SLURM jobs")
    return workdir, proc, wall


# ----------------------------------------------------------------------------- profiles
def test_profiles_say_only_what_is_site_specific():
    """What jobs need is declared by the rules (config resources), not per rule in a profile."""
    user = yaml.safe_load((USER_PROFILE / "config.yaml").read_text())
    test = yaml.safe_load((TEST_PROFILE / "config.yaml").read_text())
    for prof, folder in ((user, USER_PROFILE), (test, TEST_PROFILE)):
        assert prof["executor"] == "slurm" and prof["rerun-incomplete"] is True
        assert "set-resources" not in prof
        # Beside the profile: Snakemake resolves a profile's relative path against its folder,
        # so the file is found whatever --directory a run uses.
        partitions = yaml.safe_load((folder / prof["slurm-partition-config"]).read_text())["partitions"]
        assert any(limits.get("max_gpu", 0) >= 1 for limits in partitions.values())
    assert set(user["default-resources"]) == {"slurm_account"}
    assert set(test["default-resources"]) <= {"mem_mb", "runtime", "cpus_per_task"}
    # The user profile: marked lines to change, containers not forced, --nv ready.
    text = (USER_PROFILE / "config.yaml").read_text()
    assert len(re.findall(r"<- change \(\d\)", text)) == 1
    assert len(re.findall(r"CHANGE_ME", (USER_PROFILE / "partitions.yaml").read_text())) == 2
    assert "software-deployment-method" not in user and "sdm" not in user
    assert user["apptainer-args"] == "--nv"
    # The paper configs size GPU jobs for a 7B model; the rules read it.
    for paper in ("sinq", "seq"):
        res = yaml.safe_load((REPO / f"config/papers/{paper}.yaml").read_text())["resources"]
        assert res["generate"]["gpu"] == 1 and res["train"]["gpu"] == 1
        assert "gpu" not in res["verify"]
    # The test profile: squeue (no accounting on the test cluster), fast first check.
    assert test["slurm-status-command"] == "squeue"
    assert 1 <= test["slurm-init-seconds-before-status-checks"] <= 2


def test_dry_run_paper_config_scales_out(tmp_path):
    """Plan the paper config with the user profile: hundreds of jobs, generation and
    verification sharded by sinq.shards. A dry run submits nothing (no sbatch needed)."""
    paper = yaml.safe_load((REPO / "config/papers/sinq.yaml").read_text())
    # Stand-ins for the SLURM clients, first on PATH: each notes that it was called and fails.
    stubs, calls = tmp_path / "stub-bin", tmp_path / "slurm-calls.txt"
    stubs.mkdir()
    for tool in ("sbatch", "srun", "squeue", "sacct", "scancel", "scontrol", "sinfo"):
        (stubs / tool).write_text(f"#!/bin/sh\necho {tool} >> '{calls}'\nexit 1\n")
        (stubs / tool).chmod(0o755)
    env = dict(os.environ, HF_HUB_OFFLINE="1", PATH=f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}")
    t0 = time.monotonic()
    proc = plan_workflow(
        tmp_path,
        "--configfile",
        str(REPO / "config/papers/sinq.yaml"),
        "--profile",
        str(USER_PROFILE),
        cores=None,
        env=env,
        timeout=600,
    )
    seconds = time.monotonic() - t0
    assert proc.returncode == 0, output_of(proc)[-6000:]
    jobs = jobs_run(proc)
    total = sum(jobs.values())
    shards, rounds = paper["sinq"]["shards"], paper["sinq"]["rounds"]
    stages = rounds + 2  # Alice rounds + eval_train + eval_test
    assert jobs["sinq_alice_generate"] == shards * stages
    assert jobs["sinq_verify"] == shards * stages
    assert jobs["sinq_bob_generate"] == shards * (rounds + 4)  # eval stages: untrained and trained Bob
    assert jobs["sinq_label"] == shards * (rounds + 4)
    assert jobs["train_alice"] == rounds and jobs["train_bob"] == 1
    assert total >= 300
    submitted = calls.read_text().split() if calls.exists() else []
    assert "sbatch" not in submitted and "srun" not in submitted  # nothing was submitted
    print(f"\n[slurm] paper config dry run: {total} jobs, {seconds:.1f} s to build the DAG and plan")


def test_missing_pieces_give_one_line(monkeypatch, capsys):
    """Without root or the Debian packages, start says so in one line naming them."""
    from selfplay.cluster import local_slurm

    monkeypatch.setattr(local_slurm.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(local_slurm.shutil, "which", lambda name, path=None: None)
    assert local_slurm.main(["start", "--state-file", "/nonexistent/state.json"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert (
        "root" in err and "'slurmctld' (Debian package slurm-wlm)" in err and "(Debian package munge)" in err
    )


def test_a_cluster_left_by_a_killed_run_is_undone(tmp_path, monkeypatch):
    """A run killed mid-way leaves its state file and the config files it wrote; with none
    of its daemons running, clear_stale puts each file back as it was before that run (a
    copy restored, one that was not there removed) and forgets the state; a cluster whose
    daemons still run is left alone."""
    from selfplay.cluster import local_slurm

    etc, backup = tmp_path / "etc", tmp_path / "run" / "backup"
    etc.mkdir()
    backup.mkdir(parents=True)
    (backup / "slurm.conf").write_text("the site's own slurm.conf\n")
    (etc / "slurm.conf").write_text("written by the killed run\n")
    (etc / "gres.conf").write_text("written by the killed run\n")
    dead = subprocess.Popen(["true"])
    dead.wait()
    state = tmp_path / "state.json"
    stale = local_slurm.LocalSlurm(
        state_file=state,
        run_dir=tmp_path / "run",
        started={"slurmctld": dead.pid, "slurmd": dead.pid, "munged": dead.pid},
        backups={str(etc / "slurm.conf"): str(backup / "slurm.conf"), str(etc / "gres.conf"): ""},
        keep_run_dir=True,
    )
    stale._write_state()
    assert local_slurm.clear_stale(state) is True
    assert (etc / "slurm.conf").read_text() == "the site's own slurm.conf\n"
    assert not (etc / "gres.conf").exists()
    assert not state.exists()
    assert local_slurm.clear_stale(state) is False  # nothing left to undo

    (etc / "gres.conf").write_text("written by a live cluster\n")
    stale.backups = {str(etc / "gres.conf"): ""}
    stale.started = {"slurmctld": os.getpid()}  # pretend: a running 'slurmctld'
    stale._write_state()
    real_is_running = local_slurm._is_running
    monkeypatch.setattr(
        local_slurm, "_is_running", lambda pid, name: pid == os.getpid() or real_is_running(pid, name)
    )
    assert local_slurm.clear_stale(state) is False
    assert (etc / "gres.conf").exists() and state.exists()


# ----------------------------------------------------------------------------- cluster
def test_cluster_is_up_and_gpu_is_schedulable(cluster):
    from selfplay.cluster.local_slurm import main

    assert cluster.node_state() == "idle"
    env = cluster.client_env()
    proc = subprocess.run(
        ["srun", "-n1", "--gpus=1", "printenv", "CUDA_VISIBLE_DEVICES"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "0", proc.stderr
    assert main(["status", "--state-file", str(cluster.state_file)]) == 0


def test_workflow_runs_through_slurm(cluster, slurm_run):
    workdir, proc, wall = slurm_run
    text = output_of(proc)
    jobs = jobs_run(proc)
    assert jobs == {
        "sinq_alice_generate": 2,
        "sinq_verify": 2,
        "sinq_bob_generate": 2,
        "sinq_label": 2,
        "sinq_alice_trainset": 1,
        "train_alice": 1,
    }
    ids = slurm_ids(text)
    assert len(set(ids.values())) == sum(jobs.values())  # every job was its own sbatch job
    ctld_log = cluster.slurmctld_log.read_text(errors="replace")
    gpu_jobs = 0
    for slurm_id in ids.values():
        info = scontrol_job(cluster, slurm_id)
        assert info["JobState"] == "COMPLETED", info
        assert f"JobId={slurm_id} " in ctld_log  # slurmctld scheduled and finished it
        rule = re.match(r"rule_(\w+?)(_wildcards_|$)", info["Comment"]).group(1)
        if rule in GPU_RULES:
            gpu_jobs += 1
            assert info.get("JOB_GRES", "").startswith("gpu"), info  # a GPU was allocated to it
            assert "gres:gpu:1" in info.get("TresPerJob", ""), info
            assert "gpu" in info.get("CpusPerTres", ""), info  # cpus_per_gpu took over from cpus_per_task
        else:
            assert info.get("JOB_GRES", "(null)") in ("(null)", ""), info
    assert gpu_jobs == 5  # 2 Alice + 2 Bob generation shards, 1 training job


def test_slurm_results_are_the_real_results(slurm_run):
    workdir, _, _ = slurm_run
    exp = workdir / EXP
    labeled = {
        i["entry_point"]: i
        for s in (0, 1)
        for i in read_jsonl(exp / f"round1/labeled_untrained/shard{s}.jsonl")
    }
    assert labeled["add"]["difficulty"] == pytest.approx(20 / 3)
    assert labeled["clip"]["difficulty"] == 10.0 and labeled["first_char"]["difficulty"] == 0.0
    rec = read_json(exp / "round1/adapter_alice/training_record.json")
    assert rec["trained"] is True and rec["n_examples"] == 5
    assert (exp / "round1/adapter_alice/adapter_model.safetensors").is_file()


def test_killed_jobs_rerun_without_redoing_finished_shards(cluster, tmp_path):
    """Cancel the run's SLURM jobs once one shard is done; snakemake exits; the rerun of
    the same command redoes only what was not finished."""
    cfg = build_scenario(tmp_path)
    cfg["model"]["path"] = "unused-with-replay"
    write_config(tmp_path, cfg)
    targets = [f"{EXP}/round1/candidates/shard0.jsonl", f"{EXP}/round1/candidates/shard1.jsonl"]
    # The node's one (fake) GPU runs the two generation shards one after the other, so
    # when the first is reported done the second is running: it is cancelled mid-run.
    args = targets
    env = cluster.client_env()
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    log_path = tmp_path / "first_run.log"
    with open(log_path, "w") as log:
        first = subprocess.Popen(
            snakemake_cmd(tmp_path, *args),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while not finished_jobs(log_path.read_text()):
            assert first.poll() is None, (
                f"snakemake ended before any job finished:\n{log_path.read_text()[-5000:]}"
            )
            assert time.monotonic() < deadline, log_path.read_text()[-5000:]
            time.sleep(0.3)
        text = log_path.read_text()
        done = {job_outputs(text)[j] for j in finished_jobs(text)}
        before = {p: fingerprint(tmp_path / p) for p in done}
        cancelled = set()
        deadline = time.monotonic() + 180
        while first.poll() is None:  # cancel whatever the run has in SLURM until it gives up
            queued = subprocess.run(
                ["squeue", "-h", "-t", "PD,R,CF", "-o", "%i"],
                capture_output=True,
                text=True,
                env=env,
                timeout=20,
            ).stdout.split()
            if queued:
                subprocess.run(["scancel", *queued], env=env, timeout=20, check=False)
                cancelled.update(queued)
            assert time.monotonic() < deadline, "snakemake did not exit after its jobs were cancelled"
            time.sleep(0.3)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    text = log_path.read_text()
    assert first.returncode != 0
    assert cancelled and "CANCELLED" in text, text[-5000:]
    # Finished shards survived the kill untouched (what was cancelled is redone below).
    # A job that ends while we cancel can be reported finished by the main process while
    # its job step, hit by scancel, removes the output it had not yet committed (seen in
    # CI); such an output is simply redone. Whatever exists is kept untouched.
    done_now = {job_outputs(text)[j] for j in finished_jobs(text)}
    for path in done_now - set(before):
        if (tmp_path / path).exists():
            before[path] = fingerprint(tmp_path / path)
    assert before and all(fingerprint(tmp_path / p) == fp for p, fp in before.items())

    t0 = time.monotonic()
    second = run_on_slurm(cluster, tmp_path, *args)
    assert second.returncode == 0, output_of(second)[-8000:]
    print(
        f"\n[slurm] kill test: cancelled SLURM jobs {sorted(cancelled, key=int)}, kept {sorted(before)}; "
        f"rerun {time.monotonic() - t0:.1f} s"
    )
    assert all(fingerprint(tmp_path / p) == fp for p, fp in before.items())  # not recomputed
    reran = jobs_run(second)
    assert sum(reran.values()) == 4 - len(before)  # 2 generation + 2 verification jobs in all
    assert not (set(job_outputs(output_of(second)).values()) & set(before))
    cands = [c for s in (0, 1) for c in read_jsonl(tmp_path / f"{EXP}/round1/candidates/shard{s}.jsonl")]
    assert {c["entry_point"] for c in cands if c["verified"]} == {"add", "clip", "first_char"}


def test_stop_ends_only_what_it_started(cluster, etc_slurm_before):
    from selfplay.cluster import local_slurm

    bystander = subprocess.Popen(["sleep", "300"])  # a process the cluster did not start
    try:
        started = dict(cluster.started)
        cluster.stop()
        for name, pid in started.items():
            assert not local_slurm._is_running(pid, name), f"{name} {pid} still runs"
        assert bystander.poll() is None  # still running
        assert etc_slurm_files() == etc_slurm_before  # /etc/slurm is as it was
        assert not cluster.state_file.exists()
    finally:
        bystander.kill()
        bystander.wait()
        cluster.start()  # the session's cluster, for the tests that come after (the rehearsals)
