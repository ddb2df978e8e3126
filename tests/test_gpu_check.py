"""bench/gpu_check.py: the GPU check script, run here on the CPU (there is no GPU in CI).

The slow test runs the whole script with ``--device cpu`` and reads what it wrote; the
others check its verdicts: the GPU-mode expectations against every shipped paper config
with torch made to report a bf16 GPU, a config that would train in float32 or on the CPU
caught by name, and a failing part ending the script with exit 1 and a one-line reason.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "gpu_check.py"


@pytest.fixture(scope="module")
def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def bf16_gpu(monkeypatch):
    """torch reports one bf16-capable GPU (nothing runs on it)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)


def test_every_paper_config_gets_the_gpu_and_bf16_on_a_gpu_machine(gpu_check, bf16_gpu):
    ctx = gpu_check.Context("cuda", Path("."), 2, 8)
    facts = gpu_check.part_paper_configs(ctx)
    assert {"sinq", "seq", "seq+seq_e1", "psv", "evolve"} <= set(facts)
    rows = {(name, r["job"]): r for name, rs in facts.items() for r in rs}
    assert rows[("evolve", "grpo evolve (full)")]["device"] == "cuda"
    assert rows[("evolve", "grpo evolve (full)")]["precision"] == "bf16"
    assert rows[("sinq", "sft sinq.alice (LoRA)")] == {
        "job": "sft sinq.alice (LoRA)",
        "gpus": 1,
        "device": "cuda",
        "dtype": "bfloat16",
        "precision": "bf16",
    }
    assert all(r["device"] == "cuda" for r in rows.values())


def test_a_job_that_would_not_train_in_bf16_or_on_the_gpu_is_named(gpu_check, bf16_gpu):
    cfg = gpu_check.paper_config([REPO / "config/papers/sinq.yaml"])
    bad = copy.deepcopy(cfg)
    bad["sinq"]["training"]["bob"]["dtype"] = "float32"
    with pytest.raises(gpu_check.CheckFailed, match=r"^sinq: sft sinq.bob \(LoRA\): weights in float32"):
        gpu_check.check_jobs("sinq", gpu_check.resolve_jobs(bad), cuda=True)
    bad = copy.deepcopy(cfg)
    bad["sinq"]["training"]["alice"]["bf16"] = False
    with pytest.raises(
        gpu_check.CheckFailed, match=r"sft sinq.alice \(LoRA\): trains in as weights, not bf16"
    ):
        gpu_check.check_jobs("sinq", gpu_check.resolve_jobs(bad), cuda=True)
    bad = copy.deepcopy(cfg)
    bad["backend"]["device"] = "cpu"
    with pytest.raises(
        gpu_check.CheckFailed, match=r"generate \(vllm\) asks for 1 GPU\(s\) but would run on cpu"
    ):
        gpu_check.check_jobs("sinq", gpu_check.resolve_jobs(bad), cuda=True)


def test_without_a_gpu_the_grpo_job_must_refuse(gpu_check, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    rows = gpu_check.resolve_jobs(gpu_check.paper_config([REPO / "config/papers/evolve.yaml"]))
    grpo = next(r for r in rows if r["job"].startswith("grpo"))
    assert grpo["device"] == "refused" and "asked for 1 GPU" in grpo["note"]
    gpu_check.check_jobs("evolve", rows, cuda=False)
    with pytest.raises(gpu_check.CheckFailed, match="asked for a GPU, sees none, would train on cpu"):
        gpu_check.check_jobs("evolve", [{**grpo, "device": "cpu"}], cuda=False)


def test_a_failed_part_exits_1_with_one_line_and_is_written_down(gpu_check, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # main() hides the GPU; restored after the test

    def broken(ctx):
        gpu_check.check(False, "the weights did not move")

    monkeypatch.setattr(gpu_check, "PARTS", [("models", lambda ctx: {}), ("grpo_full", broken)])
    assert gpu_check.main(["--device", "cpu", "--out", str(tmp_path / "r.md")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "gpu_check: FAILED: grpo_full: the weights did not move"
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["ok"] is False
    assert result["parts"][1]["ok"] is False and result["parts"][1]["error"] == "the weights did not move"
    assert (tmp_path / "r.md").read_text().startswith("# GPU check: FAILED on CPU only")


@pytest.mark.slow
def test_the_script_runs_on_the_cpu_and_writes_its_results(tmp_path):
    out = tmp_path / "gpu_check.md"
    # .venv has no vLLM (paper 002's GRPO rollouts come from vLLM colocated): the policy's
    # generate, asked for by name and recorded (tests/test_grpo_vllm.py runs the vLLM path)
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--device",
            "cpu",
            "--rollout-engine",
            "transformers",
            "--out",
            str(out),
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.with_suffix(".json").read_text())
    assert result["ok"] is True
    assert [p["name"] for p in result["parts"]] == [
        "models",
        "generation",
        "sft_lora",
        "grpo_full",
        "grpo_lora",
        "paper_configs",
    ]
    assert all(p["ok"] and p["seconds"] > 0 for p in result["parts"])
    env = result["environment"]
    assert env["device"] == "cpu" and env["gpu"] is None and env["torch"] and env["trl"]
    parts = {p["name"]: p["facts"] for p in result["parts"]}
    assert set(parts["generation"]) == {"llama", "qwen2", "qwen3"}
    assert parts["sft_lora"]["device"] == "cpu" and parts["sft_lora"]["steps"] == 2
    assert parts["grpo_full"]["steps"] == 2 and parts["grpo_full"]["max_weight_change"] > 0
    assert parts["grpo_full"]["master_dtype"] == "float32" and parts["grpo_full"]["bf16"] is False
    assert parts["grpo_full"]["rollout_engine"] == parts["grpo_lora"]["rollout_engine"] == "transformers"
    grpo = next(r for r in parts["paper_configs"]["evolve"] if r["job"].startswith("grpo"))
    assert grpo["device"] == "refused"
    text = out.read_text()
    assert text.startswith("# GPU check: passed on CPU only")
    assert "| paper_configs | yes |" in text and "| evolve | grpo evolve (full) | 1 | refused |" in text
    assert proc.stderr.strip().splitlines()[-1].startswith("gpu_check: passed on the CPU in ")
