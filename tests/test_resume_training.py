"""Training survives a kill: checkpoints beside the output, resumed by a rerun (issue 19).

LoRA SFT (``train_lora_sft``: TRL's SFTTrainer on the real tiny model) saves a
transformers checkpoint every ``checkpoint_steps`` optimizer steps into
``.<output>.checkpoints``; a rerun of the same training hands the last complete one to
``Trainer.train(resume_from_checkpoint=...)``. The slow test SIGKILLs a training
subprocess once its first checkpoint is on disk, runs it again, and compares the final
adapter with an uninterrupted run's, tensor by tensor (float32 on the CPU, one thread:
they agree to 1e-6, measured exactly equal). The fast tests cover the folder's rules:
a checkpoint of other work is not resumed, an unfinished last checkpoint is dropped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kill_midway import kill_when

from selfplay.train.checkpoints import RESUME_KEY, checkpoint_folder, resume_key, resume_point, save_args

REPO = Path(__file__).resolve().parents[1]


def make_checkpoint(folder: Path, step: int, complete: bool = True) -> Path:
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "adapter_model.safetensors").write_bytes(b"weights")
    if complete:
        (path / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return path


def test_the_last_complete_checkpoint_of_the_same_work_is_resumed(tmp_path):
    folder = checkpoint_folder(tmp_path / "adapter")
    assert folder == tmp_path / ".adapter.checkpoints"
    key = resume_key(examples=[1, 2], settings={"lr": 1}, seed=3)
    assert resume_point(folder, key) is None  # a first run: nothing to resume, the key is written
    assert json.loads((folder / RESUME_KEY).read_text())["key"] == key
    make_checkpoint(folder, 2)
    make_checkpoint(folder, 4)
    unfinished = make_checkpoint(folder, 6, complete=False)  # killed while saving it
    assert resume_point(folder, key) == str(folder / "checkpoint-4")
    assert not unfinished.exists()


def test_checkpoints_of_other_work_are_not_resumed(tmp_path):
    folder = checkpoint_folder(tmp_path / "adapter")
    resume_point(folder, resume_key(seed=1))
    make_checkpoint(folder, 2)
    assert resume_point(folder, resume_key(seed=2)) is None  # another seed (or data, settings, model)
    assert not (folder / "checkpoint-2").exists()
    assert json.loads((folder / RESUME_KEY).read_text())["key"] == resume_key(seed=2)


def test_the_interval_is_a_setting():
    from selfplay.errors import UserError
    from selfplay.train.settings import validate_settings

    assert save_args(0) == {"save_strategy": "no"}
    assert save_args(25)["save_steps"] == 25 and save_args(25)["save_total_limit"] == 1
    assert validate_settings({})["checkpoint_steps"] == 50
    with pytest.raises(UserError, match="training setting 'checkpoint_steps' = -1 is invalid"):
        validate_settings({"checkpoint_steps": -1})


# ----------------------------------------------------------------------------- real training

JOB = r"""
import json, sys
import torch
torch.set_num_threads(1)
from selfplay.train import train_lora_sft

model_dir, out = sys.argv[1:3]
colours = ["Red.", "Green.", "Blue.", "Yellow."]
examples = [{"prompt": [{"role": "user", "content": f"Name the colour number {i}."}],
             "completion": [{"role": "assistant", "content": colours[i % 4]}]} for i in range(8)]
settings = {"max_length": 64, "batch_size": 1, "grad_accum": 2, "max_steps": 8, "checkpoint_steps": 3,
            "learning_rate": 2e-3, "lora_r": 4, "lora_alpha": 8, "target_modules": ["q_proj", "v_proj"]}
record = train_lora_sft(model_dir, examples, out, settings, seed=5)
print("RECORD " + json.dumps({"steps": record["steps"], "resumed_from_step": record["resumed_from_step"]}))
"""


def run_training(model_dir: Path, out: Path, kill_after_checkpoint: int | None = None):
    args = [sys.executable, "-c", JOB, str(model_dir), str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    if kill_after_checkpoint is None:
        proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads([x for x in proc.stdout.splitlines() if x.startswith("RECORD ")][0][7:])
    state = checkpoint_folder(out) / f"checkpoint-{kill_after_checkpoint}" / "trainer_state.json"
    kill_when(args, state.is_file, timeout=900, cwd=REPO, env=env)
    return None


def adapter_tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


@pytest.mark.slow
def test_a_killed_sft_run_resumes_to_the_uninterrupted_adapter(tiny_model_dir, tmp_path):
    whole = run_training(tiny_model_dir, tmp_path / "whole" / "adapter")
    assert whole == {"steps": 8, "resumed_from_step": None}
    assert not checkpoint_folder(
        tmp_path / "whole" / "adapter"
    ).exists()  # removed once the adapter is in place

    out = tmp_path / "killed" / "adapter"
    run_training(tiny_model_dir, out, kill_after_checkpoint=3)
    assert not out.exists() and (checkpoint_folder(out) / "checkpoint-3").is_dir()
    resumed = run_training(tiny_model_dir, out)
    assert resumed["steps"] == 8 and resumed["resumed_from_step"] in (3, 6)
    assert not checkpoint_folder(out).exists()

    a, b = adapter_tensors(tmp_path / "whole" / "adapter"), adapter_tensors(out)
    assert set(a) == set(b) and a
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    moved = max(float(a[k].abs().max()) for k in a if "lora_B" in k)  # lora_B starts at zero
    print(f"largest difference between the resumed and the uninterrupted adapter: {worst:.3g}")
    assert moved > 1e-3 and worst <= 1e-6
