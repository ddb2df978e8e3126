"""Where a training job runs: on the GPU its resources asked for, never silently on the CPU.

Paper 002's GRPO jobs ask SLURM for a GPU, but the job used to train on the CPU in
float32 whenever the generation backend named no device (the paper config names none:
vLLM runs on the GPU by default). These tests fake only what torch reports about CUDA.
"""

from __future__ import annotations

import contextlib
import json

import pytest
import torch

from selfplay.errors import UserError
from selfplay.pipeline import evolve
from selfplay.train.settings import training_device
from selfplay.train.sft import TrainingSkipped


@pytest.fixture
def gpu_visible(monkeypatch):
    def set_visible(flag: bool) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: flag)

    return set_visible


def test_auto_follows_what_torch_sees(gpu_visible):
    gpu_visible(True)
    assert training_device("auto") == "cuda"
    assert training_device("auto", gpus_requested=1) == "cuda"
    gpu_visible(False)
    assert training_device("auto") == "cpu"
    assert training_device("cpu", gpus_requested=1) == "cpu"  # asked for in so many words


def test_a_job_that_asked_for_a_gpu_and_sees_none_stops(gpu_visible):
    gpu_visible(False)
    with pytest.raises(UserError, match="asked for 2 GPU"):
        training_device("auto", gpus_requested=2)
    with pytest.raises(UserError, match="GPU"):
        training_device("cuda")
    with pytest.raises(UserError, match="training device must be one of"):
        training_device("tpu")


def test_the_grpo_job_trains_on_its_gpu(gpu_visible, monkeypatch, tmp_path):
    """The paper config's backend (vllm) names no device; the GRPO job must still train on
    the GPU it was given, with float32 master weights (bf16 compute is TRL's 'auto')."""
    seen = {}

    def fake_train(model_dir, prompts, reward, settings, out_dir, **kwargs):
        seen.update(kwargs)
        raise TrainingSkipped("recorded the call only")

    import selfplay.train.rl.grpo as grpo

    monkeypatch.setattr(grpo, "train_grpo", fake_train)
    monkeypatch.setattr(evolve, "grpo_prompts", lambda suite, dataset: [])
    monkeypatch.setattr(evolve, "_sandbox", lambda cfg: contextlib.nullcontext())
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("")
    cfg = {
        "seed": 0,
        "backend": {"name": "vllm"},
        "evolve": {"grpo": {}, "matrix": {"time_limit": 1.0}, "reward": "all_pass"},
    }
    gpu_visible(True)
    record = evolve.grpo_round(
        cfg,
        0,
        str(tmp_path / "suite.jsonl"),
        str(dataset),
        "model",
        str(tmp_path / "out"),
        str(tmp_path / "rollouts.jsonl"),
        gpus=1,
    )
    assert record["trained"] is False
    assert seen["device"] == "cuda" and seen["dtype"] == "float32"
    gpu_visible(False)
    with pytest.raises(UserError, match="asked for 1 GPU"):
        evolve.grpo_round(
            cfg,
            0,
            str(tmp_path / "suite.jsonl"),
            str(dataset),
            "model",
            str(tmp_path / "out2"),
            str(tmp_path / "rollouts2.jsonl"),
            gpus=1,
        )


EXAMPLE = {
    "prompt": [{"role": "user", "content": "Say hi."}],
    "completion": [{"role": "assistant", "content": "hi"}],
}


def test_an_sft_job_that_asked_for_a_gpu_and_sees_none_stops_before_loading_anything(gpu_visible, tmp_path):
    """Papers 000, 001 and 003 train LoRA adapters in jobs that ask for a GPU; without one
    visible the job stops in one line (it used to train on the CPU, days instead of hours),
    and leaves no output behind."""
    from selfplay.pipeline.agents import train_agent

    gpu_visible(False)
    trainset = tmp_path / "train.jsonl"
    trainset.write_text(json.dumps(EXAMPLE) + "\n")
    cfg = {"seed": 1, "sinq": {"training": {"alice": {"max_steps": 1}}}}
    out = tmp_path / "adapter"
    with pytest.raises(UserError, match=r"asked for 1 GPU\(s\) but torch sees none"):
        train_agent(cfg, "alice", str(trainset), "no-model-needed", str(out), "round1", gpus=1)
    assert not out.exists()


def test_the_sft_device_setting_is_checked_and_cpu_is_obeyed(gpu_visible):
    from selfplay.train.settings import validate_settings
    from selfplay.train.sft import _device_facts

    assert validate_settings({})["device"] == "auto"
    with pytest.raises(UserError, match="'device'"):
        validate_settings({"device": "gpu"})
    gpu_visible(False)
    assert _device_facts("cpu", gpus=1) == (False, False)  # told to: the fake GPU of a test cluster
    assert _device_facts("auto", gpus=0) == (False, False)
