"""The RL layer: advantage estimators by hand, GRPO settings, and real GRPO runs on CPU.

The real runs use SmolLM2-135M-Instruct with a LoRA adapter: one generation of two
prompts x 4 rollouts of 16 tokens, trained on in 2 optimizer steps (so the second
step trains on rollouts of the policy before the first, and clipping can act), once
per estimator. On a busy 2-core machine each run takes about a minute.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import fields

import numpy as np
import pytest

from selfplay.errors import UserError
from selfplay.llm.base import GenerationRequest
from selfplay.llm.replay import ReplayBackend
from selfplay.records import read_jsonl
from selfplay.train.rl import GRPOSettings, group_relative_advantages, task_relative_advantages, train_grpo
from selfplay.train.rl.advantages import TRL_STD_EPS, WHITEN_VAR_EPS, weighted_mean_std
from selfplay.train.rl.grpo import RECORD_NAME, combined_rewards, step_history, validate_prompt_records
from selfplay.train.rl.settings import grpo_config_kwargs
from selfplay.train.sft import TrainingSkipped

pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning")

ESTIMATORS = ("grpo", "task_relative_reinforce_pp")


# --------------------------------------------------------------------------- GRPO advantages


def test_grpo_advantages_by_hand():
    # group 1: mean 3, deviations -2 -1 0 3, sample std sqrt(14/3); group 2: mean 1, std 0
    got = group_relative_advantages([1, 2, 3, 6, 1, 1, 1, 1], group_size=4)
    std = math.sqrt(14 / 3)
    expected = [d / (std + TRL_STD_EPS) for d in (-2, -1, 0, 3)] + [0, 0, 0, 0]
    assert got == pytest.approx(expected, abs=1e-12)


def test_grpo_advantages_unscaled_and_batch_scaled():
    rewards = [0, 2, 5, 7]
    assert group_relative_advantages(rewards, 2, "none") == pytest.approx([-1, 1, -1, 1])
    batch_std = math.sqrt(
        sum((r - 3.5) ** 2 for r in rewards) / 3
    )  # the spread of all rewards, not of groups
    assert group_relative_advantages(rewards, 2, "batch") == pytest.approx(
        [a / (batch_std + TRL_STD_EPS) for a in (-1, 1, -1, 1)]
    )


def test_grpo_advantages_skip_unscorable_rewards():
    # None (NaN) is left out of the group's mean and spread and gets advantage 0
    got = group_relative_advantages([1, None, 3, float("nan"), None, None], group_size=3)
    scale = math.sqrt(2) + TRL_STD_EPS  # mean 2 and std sqrt(2) of (1, 3)
    assert got == pytest.approx([-1 / scale, 0, 1 / scale, 0, 0, 0])
    assert not np.isnan(got).any()


def test_grpo_advantages_single_scorable_member_is_zero():
    assert group_relative_advantages([5, None], group_size=2).tolist() == [0.0, 0.0]


def test_grpo_advantages_refuse_partial_groups():
    with pytest.raises(ValueError, match="groups of 4"):
        group_relative_advantages([1, 2, 3], group_size=4)
    with pytest.raises(ValueError, match="scale_rewards"):
        group_relative_advantages([1, 2], group_size=2, scale_rewards="tokens")


# --------------------------------------------------------------------------- task-relative REINFORCE++


def test_task_relative_whitens_each_partition_separately():
    rewards = [1, 0, 10, 2, 20, 7, 30]
    tasks = ["ded", "ded", "abd", "ded", "abd", "ind", "abd"]
    roles = ["solve", "solve", "solve", "solve", "solve", "propose", "solve"]
    got = task_relative_advantages(rewards, tasks, roles)
    unit = 1 / math.sqrt(1 + WHITEN_VAR_EPS)
    # (ded, solve) = 1, 0, 2: mean 1, sample std 1.  (abd, solve) = 10, 20, 30: mean 20, std 10.
    # (ind, propose) holds one completion: nothing to compare with, advantage 0.
    ten = 10 / math.sqrt(100 + WHITEN_VAR_EPS)
    assert got == pytest.approx([0, -unit, -ten, unit, 0, 0, ten], abs=1e-12)


def test_task_relative_uses_one_baseline_across_prompts():
    # Two prompts of the same (task, role): GRPO compares each with its own group (all zero),
    # the task-relative estimator with the partition (the better prompt's rollouts gain).
    rewards = [1, 1, 0, 0]
    assert group_relative_advantages(rewards, 2).tolist() == [0, 0, 0, 0]
    got = task_relative_advantages(rewards, ["t"] * 4, ["r"] * 4)
    std = math.sqrt(1 / 3)  # deviations of +-0.5, sample variance 1/3
    a = 0.5 / math.sqrt(std**2 + WHITEN_VAR_EPS)
    assert got == pytest.approx([a, a, -a, -a])


def test_task_relative_token_weights():
    # token-level whitening: 1 token with reward 1, 3 tokens with reward 3 -> mean 2.5,
    # weighted squares 2.25 + 3 * 0.25 = 3 over (4 - 1) observations -> std 1
    got = task_relative_advantages([1, 3], ["t", "t"], ["r", "r"], token_counts=[1, 3])
    assert got == pytest.approx([-1.5 / math.sqrt(1 + WHITEN_VAR_EPS), 0.5 / math.sqrt(1 + WHITEN_VAR_EPS)])


def test_task_relative_zero_spread_and_unscorable_give_zero_not_nan():
    got = task_relative_advantages([0.1, 0.1, 0.1, None, 4, None], ["a"] * 3 + ["b"] * 3, ["s"] * 6)
    assert got.tolist() == [0, 0, 0, 0, 0, 0]
    got = task_relative_advantages([None, None], ["a", "a"], ["s", "s"])
    assert got.tolist() == [0, 0]


def test_task_relative_keeps_the_original_order():
    rewards = np.array([5.0, 1.0, 3.0, 9.0, 2.0, 4.0])
    tasks = ["a", "b", "a", "b", "a", "b"]
    got = task_relative_advantages(rewards, tasks, ["r"] * 6)
    by_hand = np.empty(6)
    for t in ("a", "b"):
        idx = [i for i, x in enumerate(tasks) if x == t]
        part = rewards[idx]
        by_hand[idx] = (part - part.mean()) / math.sqrt(part.var(ddof=1) + WHITEN_VAR_EPS)
    assert got == pytest.approx(by_hand)


def test_task_relative_refuses_mismatched_labels():
    with pytest.raises(ValueError, match="task labels"):
        task_relative_advantages([1, 2], ["a"], ["r"])
    with pytest.raises(ValueError, match="token_counts"):
        task_relative_advantages([1, 2], ["a", "a"], ["r", "r"], token_counts=[1])


def test_weighted_mean_std_edges():
    assert math.isnan(weighted_mean_std(np.array([np.nan]))[0])
    assert weighted_mean_std(np.array([3.0])) == (3.0, 0.0)
    assert weighted_mean_std(np.array([1.0, 3.0]), np.array([0.0, 2.0])) == (3.0, 0.0)


# --------------------------------------------------------------------------- settings


def test_defaults_are_paper_002_section_4_1():
    s = GRPOSettings.from_dict({})
    assert (s.group_size, s.temperature, s.top_p, s.learning_rate) == (8, 0.6, 0.95, 1e-6)
    assert (s.epsilon_low, s.epsilon_high, s.beta) == (0.2, 0.3, 0.0)
    assert (s.max_prompt_tokens, s.max_completion_length) == (4096, 32768)
    assert s.clipping_acts, "the default schedule must let the paper's clip values act"


@pytest.mark.parametrize(
    "section, fragment",
    [
        ({"group_sise": 8}, "'group_sise'"),
        ({"group_size": 1}, "'group_size' = 1"),
        ({"temperature": 0}, "'temperature'"),
        ({"top_p": 1.5}, "'top_p'"),
        ({"top_k": 0}, "'top_k'"),
        ({"learning_rate": "1e-6"}, "'learning_rate'"),
        ({"epsilon_low": 1.0}, "'epsilon_low'"),
        ({"epsilon_high": 0}, "'epsilon_high'"),
        ({"beta": -0.1}, "'beta'"),
        ({"loss_type": "cispo"}, "'loss_type'"),
        ({"scale_rewards": True}, "'scale_rewards'"),
        ({"num_iterations": 0}, "'num_iterations'"),
        ({"max_steps": 0}, "'max_steps'"),
        ({"max_prompt_tokens": -5}, "'max_prompt_tokens'"),
        ({"finetune": "qlora"}, "'finetune'"),
        ({"estimator": "ppo"}, "'estimator'"),
        ({"seed": -1}, "'seed'"),
        ({"gradient_checkpointing": "yes"}, "'gradient_checkpointing'"),
        ({"batch_size": 3}, "multiple of group_size"),
        ({"lora": {"r": 8}}, "'lora'"),
        ({"finetune": "lora", "lora": {"rank": 8}}, "'lora.rank'"),
        ({"finetune": "lora", "lora": {"r": 0}}, "'lora.r'"),
        ({"finetune": "lora", "lora": {"target_modules": "q_proj"}}, "'lora.target_modules'"),
        ({"finetune": "lora", "lora": [8]}, "'lora'"),
        ({"estimator": "task_relative_reinforce_pp", "scale_rewards": "batch"}, "'scale_rewards'"),
    ],
)
def test_bad_settings_name_the_key(section, fragment):
    with pytest.raises(UserError) as info:
        GRPOSettings.from_dict(section)
    message = str(info.value)
    assert fragment in message and "\n" not in message


def test_settings_must_be_a_mapping():
    with pytest.raises(UserError, match="mapping"):
        GRPOSettings.from_dict([("group_size", 8)])


@pytest.mark.parametrize(
    "schedule, acts",
    [
        ({"steps_per_generation": 2, "grad_accum": 1}, True),  # the default: 2 optimizer steps per generation
        ({"steps_per_generation": 1, "grad_accum": 1}, False),  # on-policy: ratio always 1
        ({"steps_per_generation": 2, "grad_accum": 2}, False),  # one generation per optimizer step
        ({"steps_per_generation": 2, "grad_accum": 4}, False),  # two generations per optimizer step
        ({"steps_per_generation": 1, "grad_accum": 1, "num_iterations": 2}, True),  # each batch trained twice
        ({"steps_per_generation": 4, "grad_accum": 6}, True),  # a generation straddles a step
    ],
)
def test_clipping_acts_only_off_policy(schedule, acts):
    assert GRPOSettings.from_dict(schedule).clipping_acts is acts


def test_clip_values_set_where_they_cannot_act_are_refused():
    with pytest.raises(UserError, match="cannot act.*steps_per_generation"):
        GRPOSettings.from_dict({"steps_per_generation": 1, "epsilon_low": 0.2, "epsilon_high": 0.3})


def test_default_clip_values_on_policy_warn_in_the_training_job_only(caplog, tmp_path):
    from selfplay.train.rl.grpo import _check_call

    # Parsing runs at every workflow start: it stays quiet; the training job says it once.
    with caplog.at_level(logging.WARNING, logger="selfplay.train.rl"):
        s = GRPOSettings.from_dict({"steps_per_generation": 1})
    assert not s.clipping_acts and s.to_record()["clipping_acts"] is False
    assert "cannot act" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="selfplay.train.rl"):
        _check_call(str(tmp_path), lambda **_: [], s, tmp_path / "r.jsonl", "cpu", "float32")
    assert "cannot act" in caplog.text


def test_settings_map_onto_trl_grpo_config():
    import trl

    s = GRPOSettings.from_dict(
        {"finetune": "lora", "lora": {"r": 4}, "top_k": 20, "loss_type": "grpo", "max_completion_length": 64}
    )
    kwargs = grpo_config_kwargs(
        s, output_dir="unused", use_cpu=True, bf16=False, gradient_checkpointing=False
    )
    assert set(kwargs) <= {f.name for f in fields(trl.GRPOConfig)}
    config = trl.GRPOConfig(**kwargs)
    assert (config.num_generations, config.epsilon, config.epsilon_high, config.beta) == (8, 0.2, 0.3, 0.0)
    assert (config.temperature, config.top_p, config.top_k, config.learning_rate) == (0.6, 0.95, 20, 1e-6)
    assert (config.loss_type, config.scale_rewards, config.max_completion_length) == ("grpo", "group", 64)
    assert (
        config.steps_per_generation,
        config.gradient_accumulation_steps,
        config.generation_batch_size,
    ) == (2, 1, 16)
    assert (
        config.bf16 is False and config.gradient_checkpointing is False
    )  # both transformers names (5.17 has only this one)
    assert s.to_record()["lora"]["r"] == 4


# --------------------------------------------------------------------------- prompt records


@pytest.mark.parametrize(
    "record, fragment",
    [
        ({"task": "x"}, "'prompt'"),
        ({"prompt": "text"}, "list of chat messages"),
        ({"prompt": [{"role": "robot", "content": "q"}]}, "'robot'"),
        (
            {"prompt": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]},
            "end with a user",
        ),
        (
            {"prompt": [{"role": "user", "content": "q"}], "task": "t", "role": "r", "completion": "a"},
            "reserves",
        ),
        ({"prompt": [{"role": "user", "content": "q"}], "task": "deduction"}, "'role'"),
    ],
)
def test_malformed_prompt_records_name_the_index(record, fragment):
    good = {"prompt": [{"role": "user", "content": "q"}], "task": "t", "role": "r"}
    with pytest.raises(UserError, match=fragment) as info:
        validate_prompt_records([good, record], "task_relative_reinforce_pp")
    assert "record 1" in str(info.value)


def test_rewards_combine_like_trl_and_keep_unscorable_as_nan():
    import torch

    per_func = torch.tensor([[1.0, float("nan")], [float("nan"), float("nan")], [2.0, 3.0]])
    got = combined_rewards(per_func, torch.tensor([1.0, 0.5]))
    assert got[0] == 1.0 and math.isnan(got[1]) and got[2] == 3.5


def test_step_history_keeps_one_entry_per_logged_step():
    log_history = [
        {
            "step": 1,
            "loss": 0.5,
            "reward": 2.0,
            "reward_std": 1.0,
            "clip_ratio/region_mean": 0.0,
            "step_time": 3.0,
        },
        {"step": 2, "loss": float("nan"), "clip_ratio/low_mean": 0.25},
        {"step": 2, "train_runtime": 9.0, "train_loss": 0.1},  # the summary line, not a step
    ]
    got = step_history(log_history, {1: 4.0, 2: 1.5})
    assert got == [
        {
            "step": 1,
            "seconds": 4.0,
            "loss": 0.5,
            "reward_mean": 2.0,
            "reward_std": 1.0,
            "clip_ratio_region": 0.0,
            "trl_step_time": 3.0,
        },
        {"step": 2, "seconds": 1.5, "loss": None, "clip_ratio_low": 0.25},
    ]


def test_bad_device_or_dtype_are_refused_before_loading(tmp_path):
    prompt = [{"prompt": [{"role": "user", "content": "q"}]}]
    for kwargs, fragment in (({"device": "tpu"}, "device"), ({"dtype": "int8"}, "dtype")):
        with pytest.raises(UserError, match=fragment):
            train_grpo(
                "unused",
                prompt,
                lambda **kw: [],
                {},
                tmp_path / "out",
                recordings_path=tmp_path / "r.jsonl",
                **kwargs,
            )
    assert not (tmp_path / "out").exists()


def test_no_prompts_skip_training(tmp_path):
    with pytest.raises(TrainingSkipped):
        train_grpo("unused", [], lambda **kw: [], {}, tmp_path / "out", recordings_path=tmp_path / "r.jsonl")
    assert not (tmp_path / "out").exists()


def test_all_prompts_too_long_skip_training(tiny_model_dir, tmp_path):
    records = [{"prompt": [{"role": "user", "content": "word " * 200}]}]
    with pytest.raises(TrainingSkipped, match="max_prompt_tokens=32"):
        train_grpo(
            str(tiny_model_dir),
            records,
            lambda **kw: [],
            {"max_prompt_tokens": 32},
            tmp_path / "out",
            recordings_path=tmp_path / "r.jsonl",
        )
    assert not (tmp_path / "out").exists() and not (tmp_path / "r.jsonl").exists()


# --------------------------------------------------------------------------- real GRPO runs

GROUP = 4
RUN_SETTINGS = {
    "group_size": GROUP,
    "batch_size": GROUP,
    "steps_per_generation": 2,
    "grad_accum": 1,
    "max_steps": 2,
    "max_completion_length": 16,
    "max_prompt_tokens": 64,
    "learning_rate": 1e-4,
    "finetune": "lora",
    "lora": {"r": 8, "alpha": 16, "dropout": 0.0},
    "seed": 7,
}
PROMPTS = [
    {
        "prompt": [{"role": "user", "content": "Say something about the sea."}],
        "task": "deduction",
        "role": "solver",
    },
    {
        "prompt": [{"role": "user", "content": "Name a fruit and describe it."}],
        "task": "abduction",
        "role": "solver",
    },
    {
        "prompt": [{"role": "user", "content": "Describe a tree. " * 30}],
        "task": "deduction",
        "role": "solver",
    },
]


def count_e(prompts, completions, **columns):
    """Reward: how many times the letter e occurs; varies between rollouts of one prompt."""
    assert columns["task"] and columns["role"]  # the dataset's columns reach the reward function
    return [float(c[0]["content"].count("e")) for c in completions]


@pytest.fixture(scope="module", params=ESTIMATORS)
def grpo_run(request, tiny_model_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"grpo-{request.param}")
    record = train_grpo(
        str(tiny_model_dir),
        PROMPTS,
        count_e,
        {**RUN_SETTINGS, "estimator": request.param},
        out / "policy",
        recordings_path=out / "rollouts.jsonl",
    )
    return request.param, out, record


def test_run_records_every_step_with_finite_loss(grpo_run):
    _, out, record = grpo_run
    assert json.loads((out / "policy" / RECORD_NAME).read_text()) == record
    assert record["steps"] == 2 and [h["step"] for h in record["history"]] == [1, 2]
    for entry in record["history"]:
        assert math.isfinite(entry["loss"]) and entry["seconds"] > 0
        assert "clip_ratio_region" in entry
    assert record["history"][0]["reward_std"] > 0
    assert record["clipping_acts"] is True and record["settings"]["epsilon_high"] == 0.3
    assert record["n_prompts"] == 3 and record["n_prompts_dropped_too_long"] == 1
    assert record["libraries"]["trl"] and record["adapter_sha256"]


def test_run_changes_the_lora_adapter(grpo_run):
    from safetensors.numpy import load_file

    _, out, record = grpo_run
    assert {"adapter_config.json", "adapter_model.safetensors"} <= set(record["adapter_files"])
    weights = load_file(str(out / "policy" / "adapter_model.safetensors"))
    lora_b = [w for name, w in weights.items() if "lora_B" in name]
    assert lora_b, "no LoRA B matrices saved"
    # PEFT starts every B at zero; training must have moved them.
    assert any(np.abs(w).max() > 0 for w in lora_b)


def test_run_records_rollouts_with_their_advantages(grpo_run):
    estimator, out, record = grpo_run
    rollouts = read_jsonl(out / "rollouts.jsonl")
    assert len(rollouts) == 2 and record["n_rollouts"] == 2 * GROUP  # the long prompt was dropped
    assert any(len(set(r["meta"]["rewards"])) > 1 for r in rollouts), "rewards never vary within a group"
    rewards = [x for r in rollouts for x in r["meta"]["rewards"]]
    advantages = [x for r in rollouts for x in r["meta"]["advantages"]]
    if estimator == "grpo":
        expected = group_relative_advantages(rewards, GROUP)  # what TRL computed (in float32)
    else:
        columns = [r["meta"]["columns"] for r in rollouts for _ in range(GROUP)]
        tokens = [n for r in rollouts for n in r["meta"]["completion_tokens"]]
        expected = task_relative_advantages(
            rewards, [c["task"] for c in columns], [c["role"] for c in columns], tokens
        )
    assert advantages == pytest.approx(expected.tolist(), abs=1e-4)
    for r in rollouts:
        assert r["backend"]["name"] == "trl-grpo" and r["meta"]["step"] == 0
        assert r["sampling"]["temperature"] == 0.6 and r["sampling"]["n"] == GROUP


def test_rollouts_replay(grpo_run):
    _, out, _ = grpo_run
    rollouts = read_jsonl(out / "rollouts.jsonl")
    replay = ReplayBackend([str(out / "rollouts.jsonl")])
    requests = [GenerationRequest(r["messages"], r["sampling"]) for r in rollouts]
    assert replay.generate(requests) == [r["outputs"] for r in rollouts]
