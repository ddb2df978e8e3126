"""GRPO checkpoints and resume: a run killed (SIGKILL) after a checkpoint, run again, ends
with the same policy and the same rollouts file as a run never killed.

Each run is a subprocess on a tiny random Qwen3 (selfplay.llm.tiny_random, float32):
3 generations of 2 prompts x 4 rollouts, 2 optimizer steps each (6 steps), a checkpoint
every 2 steps. The killed run's reward function kills its own process when it is called
for the generation after step 4 (so checkpoint-4 is complete and generation 3's rollouts
exist only in memory). The rerun must resume from step 4: its reward function is only
called from step 4 on, and what it ends with equals the uninterrupted run's, the weights
within 1e-6 (measured: equal to the bit; the resumed run reloads float32 weights, the
optimizer and the RNG states exactly) and the rollouts record for record (all but the
``seconds`` each generation took). Once with a LoRA adapter and TRL's GRPO advantages,
once with full fine-tuning and the task-relative estimator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from selfplay.errors import UserError
from selfplay.records import read_jsonl
from selfplay.train.checkpoints import checkpoint_folder
from selfplay.train.rl import GRPOSettings

REPO = Path(__file__).resolve().parents[1]
GROUP = 4
SETTINGS = {
    "group_size": GROUP,
    "batch_size": GROUP,
    "steps_per_generation": 2,
    "grad_accum": 1,
    "max_steps": 6,
    "max_completion_length": 8,
    "max_prompt_tokens": 64,
    "learning_rate": 1e-3,
    "temperature": 1.0,
    "checkpoint_steps": 2,
    "seed": 11,
}
TOPICS = ["the sea", "a fruit", "a tree", "the moon", "a river", "a cat"]
PROMPTS = [
    {
        "prompt": [{"role": "user", "content": f"Say something about {t}."}],
        "task": ("deduction", "abduction")[i % 2],
        "role": "solver",
    }
    for i, t in enumerate(TOPICS)
]
KILL_AT = 4

JOB = textwrap.dedent("""
    import json, os, signal, sys
    from pathlib import Path
    from selfplay.train.rl import train_grpo

    args = json.loads(Path(sys.argv[1]).read_text())

    def ord_mod7(prompts, completions, trainer_state, **columns):
        with open(args["calls"], "a") as f:
            f.write(f"{trainer_state.global_step}\\n")
        if args["kill_at"] is not None and trainer_state.global_step >= args["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return [float(sum(map(ord, c[0]["content"])) % 7) for c in completions]

    train_grpo(args["model"], args["prompts"], ord_mod7, args["settings"], args["out"],
               recordings_path=args["rollouts"])
""")


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory):
    from selfplay.llm.tiny_random import ensure_tiny_model

    return ensure_tiny_model("qwen3", tmp_path_factory.mktemp("tiny") / "qwen3", dtype="float32")


def run_job(
    tmp: Path, name: str, model: Path, settings: dict, out: Path, kill_at: int | None
) -> tuple[int, list[int]]:
    """Run one training in a fresh process; return its exit code and the steps its reward was called at."""
    script = tmp / "job.py"
    script.write_text(JOB)
    calls = tmp / f"{name}.calls"
    calls.unlink(missing_ok=True)
    args = tmp / f"{name}.json"
    args.write_text(
        json.dumps(
            {
                "model": str(model),
                "prompts": PROMPTS,
                "settings": settings,
                "out": str(out / "policy"),
                "rollouts": str(out / "rollouts.jsonl"),
                "calls": str(calls),
                "kill_at": kill_at,
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, str(script), str(args)], env=env, capture_output=True, text=True, timeout=600
    )
    steps = [int(x) for x in calls.read_text().split()] if calls.exists() else []
    if kill_at is None and proc.returncode != 0:
        raise AssertionError(f"training failed:\n{proc.stderr[-4000:]}")
    return proc.returncode, steps


def weights(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    files = sorted(folder.glob("*.safetensors"))
    assert files, f"no weights in {folder}"
    out = {}
    for f in files:
        out.update(load_file(str(f)))
    return out


def without_seconds(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


@pytest.mark.slow
@pytest.mark.parametrize("finetune, estimator", [("lora", "grpo"), ("full", "task_relative_reinforce_pp")])
def test_killed_run_resumes_to_the_uninterrupted_result(tiny_qwen3, tmp_path, finetune, estimator):
    settings = {**SETTINGS, "finetune": finetune, "estimator": estimator}
    if finetune == "lora":
        settings["lora"] = {"r": 4, "alpha": 8, "dropout": 0.0}

    whole = tmp_path / "whole"
    _, whole_steps = run_job(tmp_path, "whole", tiny_qwen3, settings, whole, None)
    assert whole_steps == [0, 2, 4]  # one reward call per generation
    assert not checkpoint_folder(whole / "policy").exists()  # removed once the output is in place

    killed = tmp_path / "killed"
    code, steps = run_job(tmp_path, "killed", tiny_qwen3, settings, killed, KILL_AT)
    assert code == -9 and steps == [0, 2, 4]
    assert not (killed / "policy").exists() and not (killed / "rollouts.jsonl").exists()
    kept = sorted(p.name for p in checkpoint_folder(killed / "policy").glob("checkpoint-*"))
    assert kept == [f"checkpoint-{KILL_AT}"]

    _, rerun_steps = run_job(tmp_path, "rerun", tiny_qwen3, settings, killed, None)
    assert rerun_steps == [KILL_AT], "the rerun did not resume from the checkpoint"
    record = json.loads((killed / "policy" / "training_record.json").read_text())
    assert record["resumed_from_step"] == KILL_AT and record["steps"] == 6 and record["generations"] == 3
    assert [h["step"] for h in record["history"]] == [1, 2, 3, 4, 5, 6]
    assert not checkpoint_folder(killed / "policy").exists()

    first, again = weights(whole / "policy"), weights(killed / "policy")
    assert set(first) == set(again)
    base = weights(tiny_qwen3) if finetune == "full" else None
    moved = 0.0
    for name, w in first.items():
        assert np.max(np.abs(w - again[name])) <= 1e-6, name
        ref = base[name] if base is not None and name in base else np.zeros_like(w)
        moved = max(moved, float(np.max(np.abs(w - ref))))
    assert moved > 1e-4, "training did not change the policy"

    full = read_jsonl(whole / "rollouts.jsonl")
    assert [r["meta"]["generation"] for r in full] == [0, 0, 1, 1, 2, 2]
    assert without_seconds(read_jsonl(killed / "rollouts.jsonl")) == without_seconds(full)


def test_checkpoint_steps_must_fall_where_a_generation_is_used_up():
    # 2 optimizer steps per generation (grad_accum 1, steps_per_generation 2): 3 would
    # resume in the middle of a generation TRL no longer holds.
    with pytest.raises(UserError, match=r"'checkpoint_steps' = 3 .*multiple of 2"):
        GRPOSettings.from_dict({"checkpoint_steps": 3})
    with pytest.raises(UserError, match="'checkpoint_steps'"):
        GRPOSettings.from_dict({"checkpoint_steps": -1})
    assert GRPOSettings.from_dict({"checkpoint_steps": 4}).checkpoint_interval == 4
    assert GRPOSettings.from_dict({"checkpoint_steps": 0}).checkpoint_interval == 0
    # the default (50) is rounded up to whole cycles: grad_accum 4 and 8 micro-batches per
    # generation make a cycle of 2 steps; grad_accum 3 and 2 make one of 2 (6 micro-batches)
    assert (
        GRPOSettings.from_dict(
            {"steps_per_generation": 8, "batch_size": 1, "grad_accum": 4}
        ).checkpoint_interval
        == 50
    )
    odd = GRPOSettings.from_dict({"steps_per_generation": 3, "batch_size": 8})
    assert odd.steps_per_checkpoint_cycle == 3 and odd.checkpoint_interval == 51
    assert GRPOSettings.from_dict({"grad_accum": 3}).steps_per_checkpoint_cycle == 2


def test_checkpoints_reach_trl_config():
    from selfplay.train.rl.settings import grpo_config_kwargs

    s = GRPOSettings.from_dict({"checkpoint_steps": 4})
    kwargs = grpo_config_kwargs(
        s, output_dir="unused", use_cpu=True, bf16=False, gradient_checkpointing=False
    )
    assert (kwargs["save_strategy"], kwargs["save_steps"], kwargs["save_only_model"]) == ("steps", 4, False)
    none = grpo_config_kwargs(
        GRPOSettings.from_dict({"checkpoint_steps": 0}),
        output_dir="unused",
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
    )
    assert none["save_strategy"] == "no"


def test_only_the_main_process_stages_the_output(tmp_path, monkeypatch):
    from selfplay.train.rl.grpo import _output_folders, is_main_process

    out = tmp_path / "policy"
    monkeypatch.setenv("RANK", "1")
    assert not is_main_process()
    with _output_folders(out) as (staging, scratch):
        assert scratch == checkpoint_folder(out) and scratch.is_dir()
        assert staging.parent != tmp_path  # a throwaway folder, not beside the output
        (staging / "x").write_text("not an output")
    assert not out.exists() and not staging.exists()
    monkeypatch.setenv("RANK", "0")
    assert is_main_process()
    with _output_folders(out) as (staging, scratch):
        assert staging.parent == tmp_path and scratch == checkpoint_folder(out)
        (staging / "x").write_text("the output")
    assert (out / "x").read_text() == "the output" and not scratch.exists()


def test_rollout_log_round_trips_through_a_checkpoint(tmp_path):
    from selfplay.train.rl.grpo import RolloutLog, TrainerRollouts

    settings = GRPOSettings.from_dict({"group_size": 2, "batch_size": 2})
    log = RolloutLog(settings, TrainerRollouts({"model": "m"}))
    prompt = [{"role": "user", "content": "q"}]
    for generation in range(2):
        log.add_generation(
            step=2 * generation,
            inputs=[{"prompt": prompt, "task": "t"}] * 2,
            completions=[[{"role": "assistant", "content": c}] for c in ("a", "bb")],
            rewards=np.array([0.0, 1.0]),
            advantages=np.array([-1.0, 1.0]),
            token_counts=np.array([1, 2]),
            seconds=0.5,
        )
    log.save(tmp_path, {"step_seconds": {"1": 0.1}})
    again = RolloutLog(settings, TrainerRollouts({"model": "m"}))
    assert again.load(tmp_path)["step_seconds"] == {"1": 0.1}
    assert (again.records, again.generations) == (log.records, 2)
    (tmp_path / "selfplay_grpo.json").write_text(json.dumps({"generations": 3}))
    with pytest.raises(RuntimeError, match="3 generations"):
        again.load(tmp_path)
