"""GRPO in two processes (accelerate launch, gloo on CPU) makes the same update as one
process with the same global batch.

Both runs train a LoRA adapter on a tiny random Qwen3 (float32) for 2 optimizer steps,
one generation of 4 prompts x 2 rollouts each, the whole generation in one optimizer step
(grad_accum = steps_per_generation, so both runs sum the loss over the same 8
completions; a smaller step would take a random, process-dependent part of it). One
process: 4 completions per micro-batch; two processes: 2 each, so the global batch is
the same. The two-process run goes through the shipped config
(config/accelerate/lora_ddp.yaml) and the launcher's entry point, as the SLURM job does.

Same completions in both runs. Each process samples its slice of a generation from its
own torch generator, so sampled rollouts differ between 1 and 2 processes. Here the
sampler keeps only the most likely token (top_k 1, greedy), so both runs train on the
same completions whatever the random state; the test checks that they did (the two
rollouts files are equal record for record, but for generation times). With greedy
rollouts the two answers to one prompt are equal (the random model's greedy answer is
the same run of newlines for every prompt), so the reward is the prompt's length: it
does not depend on sampling, and it differs between prompts, not within a group. So
group-relative GRPO has nothing to learn, and the estimator is task-relative
REINFORCE++: its baseline is shared by the prompts of one (task, role) partition, which
lie on both processes. It is the estimator
that must see the whole batch: whitening each process's half alone gives other
advantages, and another update.

Tolerance: the adapters agree within 3e-5 per weight, about 1.5% of what two Adam steps
at lr 1e-3 move a weight (2e-3). The two runs add the same per-token terms in another
order (per process, then averaged by DDP), so float32 rounding differs, and Adam divides
each gradient by its own running size, which magnifies the rounding of the smallest
gradients. Measured on the 2-core test machine: 3.6e-6. Whitening each process's half
of the generation alone (the bug this guards against) gave 3.7e-3.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from selfplay.records import read_jsonl
from selfplay.train.rl import task_relative_advantages
from selfplay.train.rl.launch import config_file, run_launched

REPO = Path(__file__).resolve().parents[1]
GROUP = 2
BASE = {
    "group_size": GROUP,
    "steps_per_generation": 2,
    "grad_accum": 2,
    "max_steps": 2,
    "max_completion_length": 8,
    "max_prompt_tokens": 64,
    "learning_rate": 1e-3,
    "temperature": 1.0,
    "top_k": 1,
    "finetune": "lora",
    "lora": {"r": 4, "alpha": 8, "dropout": 0.0},
    "estimator": "task_relative_reinforce_pp",
    "checkpoint_steps": 0,
    "seed": 5,
}
TOPICS = ["the sea", "a fruit", "a tree", "the moon", "a river", "a cat", "the sky", "a bird"]
# One (task, role) partition for 6 prompts, and a second one for 2.
PROMPTS = [
    {
        "prompt": [{"role": "user", "content": f"Say something about {t}."}],
        "task": "deduction" if i < 6 else "abduction",
        "role": "solver",
    }
    for i, t in enumerate(TOPICS)
]
TOLERANCE = 3e-5

JOB = textwrap.dedent("""
    from selfplay.train.rl import train_grpo

    def prompt_length(prompts, completions, **columns):
        return [float(len(p[-1]["content"])) for p in prompts]

    def job(model, prompts, settings, out, rollouts):
        train_grpo(model, prompts, prompt_length, settings, out, recordings_path=rollouts)
""")


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory):
    from selfplay.llm.tiny_random import ensure_tiny_model

    return ensure_tiny_model("qwen3", tmp_path_factory.mktemp("tiny") / "qwen3", dtype="float32")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def adapter(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def without_seconds(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


@pytest.mark.slow
def test_two_processes_make_the_one_process_update(tiny_qwen3, tmp_path, monkeypatch):
    (tmp_path / "mpjob.py").write_text(JOB)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO / "src")]))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    runs = {}
    for processes, batch_size in ((1, 4), (2, 2)):
        out = tmp_path / f"p{processes}"
        kwargs = {
            "model": str(tiny_qwen3),
            "prompts": PROMPTS,
            "settings": {**BASE, "batch_size": batch_size},
            "out": str(out / "policy"),
            "rollouts": str(out / "rollouts.jsonl"),
        }
        started = time.perf_counter()
        if processes == 1:
            job = tmp_path / "single.json"
            job.write_text(json.dumps({"function": "mpjob:job", "kwargs": kwargs}))
            proc = subprocess.run(
                [sys.executable, "-m", "selfplay.train.rl.launch", str(job)],
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert proc.returncode == 0, proc.stderr[-4000:]
        else:
            run_launched(
                "mpjob:job",
                kwargs,
                processes=2,
                config=config_file("lora"),
                log_path=tmp_path / "launch.log",
                main_process_port=free_port(),
            )
        print(f"{processes} process(es): {time.perf_counter() - started:.1f} s")
        runs[processes] = out

    one, two = (json.loads((runs[n] / "policy" / "training_record.json").read_text()) for n in (1, 2))
    assert (one["processes"], two["processes"]) == (1, 2)
    assert one["steps"] == two["steps"] == 2 and one["generations"] == two["generations"] == 2

    # the same completions, rewards and advantages: the whole log is gathered and written once
    rollouts = read_jsonl(runs[1] / "rollouts.jsonl")
    assert len(rollouts) == 8 and [r["meta"]["generation"] for r in rollouts] == [0] * 4 + [1] * 4
    assert without_seconds(read_jsonl(runs[2] / "rollouts.jsonl")) == without_seconds(rollouts)
    for generation in (0, 1):
        recs = [r for r in rollouts if r["meta"]["generation"] == generation]
        rewards = [x for r in recs for x in r["meta"]["rewards"]]
        tasks = [r["meta"]["columns"]["task"] for r in recs for _ in range(GROUP)]
        expected = task_relative_advantages(
            rewards, tasks, ["solver"] * len(tasks), [n for r in recs for n in r["meta"]["completion_tokens"]]
        )
        assert [x for r in recs for x in r["meta"]["advantages"]] == pytest.approx(
            expected.tolist(), abs=1e-9
        )
    assert any(x != 0 for r in rollouts for x in r["meta"]["advantages"]), "nothing to learn from"

    first, second = adapter(runs[1] / "policy"), adapter(runs[2] / "policy")
    assert set(first) == set(second)
    diff = max(float(np.max(np.abs(first[k] - second[k]))) for k in first)
    moved = max(float(np.max(np.abs(first[k]))) for k in first if "lora_B" in k)  # B starts at zero
    print(f"max |2 processes - 1 process| = {diff:.3g}; largest LoRA B weight {moved:.3g}")
    assert moved > 1e-4, "the adapter did not move"
    assert diff <= TOLERANCE


# --------------------------------------------------------------------------- the launcher, without launching


def test_each_fine_tuning_has_a_shipped_accelerate_config():
    from accelerate.commands.config.config_args import load_config_from_file

    lora, full = (
        load_config_from_file(str(config_file("lora"))),
        load_config_from_file(str(config_file("full"))),
    )
    assert lora.distributed_type.value == "MULTI_GPU" and lora.num_machines == 1
    assert full.distributed_type.value == "FSDP" and full.fsdp_config["fsdp_version"] == 2
    assert (
        full.fsdp_config["fsdp_state_dict_type"] == "FULL_STATE_DICT"
    )  # the main process saves whole weights
    assert config_file("full").parent == REPO / "config" / "accelerate"


def test_launch_command_runs_the_entry_point_in_n_processes(tmp_path):
    from selfplay.errors import UserError
    from selfplay.train.rl.launch import launch_command

    command = launch_command(4, config_file("full"), tmp_path / "job.json")
    assert command[1:3] == ["-m", "accelerate.commands.launch"]
    assert command[command.index("--num_processes") + 1] == "4"
    assert command[command.index("--config_file") + 1] == str(config_file("full"))
    assert command[-3:] == ["-m", "selfplay.train.rl.launch", str(tmp_path / "job.json")]
    with pytest.raises(UserError, match="at least 2 processes"):
        launch_command(1, config_file("lora"), tmp_path / "job.json")
    with pytest.raises(UserError, match="'finetune'"):
        config_file("qlora")


def test_launch_grpo_round_launches_grpo_round_with_the_job_s_gpus(monkeypatch, tmp_path):
    from selfplay.pipeline import evolve
    from selfplay.train.rl import launch

    calls = []
    monkeypatch.setattr(
        launch, "run_launched", lambda function, kwargs, **kw: calls.append((function, kwargs, kw))
    )
    cfg = {"evolve": {"grpo": {"finetune": "lora", "lora": {"r": 4}}}, "seed": 1}
    evolve.launch_grpo_round(
        cfg, 2, "s.jsonl", "d.jsonl", "model", "out/adapter", "out/r.jsonl", gpus=4, log_path="x.log"
    )
    ((function, kwargs, kw),) = calls
    assert function == "selfplay.pipeline.evolve:grpo_round"
    assert kwargs["round_"] == 2 and kwargs["gpus"] == 4 and kwargs["cfg"] == cfg
    assert kw["processes"] == 4 and kw["config"] == config_file("lora") and kw["log_path"] == "x.log"
    json.dumps(kwargs)  # what the job file holds


@pytest.mark.parametrize(
    "gpus, called", [(0, "grpo_round"), (1, "grpo_round"), (2, "launch_grpo_round"), (8, "launch_grpo_round")]
)
def test_the_rule_s_script_launches_only_with_several_gpus(monkeypatch, tmp_path, gpus, called):
    import runpy
    from types import SimpleNamespace

    from selfplay.pipeline import evolve

    seen = []
    for name in ("grpo_round", "launch_grpo_round"):
        monkeypatch.setattr(evolve, name, lambda *a, _name=name, **kw: seen.append((_name, kw.get("gpus"))))

    class Files(SimpleNamespace):
        def get(self, key, default=None):
            return getattr(self, key, default)

    fake = SimpleNamespace(
        wildcards=SimpleNamespace(er="1"),
        log=[str(tmp_path / "grpo.log")],
        input=Files(suite="s.jsonl", dataset="d.jsonl", restored=[], restored_rollouts=[]),
        output=SimpleNamespace(adapter="a", rollouts="r.jsonl"),
        params=SimpleNamespace(cfg={"evolve": {"grpo": {}}}, model_dir="m", gpus=gpus),
    )
    runpy.run_path(str(REPO / "workflow_scripts" / "evolve_grpo.py"), init_globals={"snakemake": fake})
    assert seen == [(called, gpus)]
