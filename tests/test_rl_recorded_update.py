"""Policy-gradient updates on recorded rollouts (selfplay.train.rl.recorded).

Every model here is the tiny random llama of ``selfplay.llm.tiny_random`` (hidden size 64,
2 layers, ~3 M parameters), trained in float32 on CPU; one job takes about a second, and
the tests that train are marked slow (25-60 s together on 2 busy cores, plus ~75 s for
the two 2-process runs). The input and settings checks run no model.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selfplay.errors import UserError
from selfplay.train.rl.recorded import (
    OPTIMIZER_FILE,
    POLICY_DIR,
    RNG_FILE,
    SCHEDULER_FILE,
    STATE_FILE,
    RecordedUpdateSettings,
    clipped_token_loss,
    update_on_recorded,
)
from selfplay.train.sft import RECORD_NAME, TrainingSkipped

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning")

REPO = Path(__file__).resolve().parents[1]
BETA1 = 0.9


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from selfplay.llm.tiny_random import ensure_tiny_model

    return ensure_tiny_model("llama", tmp_path_factory.mktemp("tiny") / "llama", dtype="float32")


def rollout(
    question: str,
    outputs: list[str],
    rewards: list,
    task: str | None = "deduction",
    role: str | None = "solver",
    **meta,
) -> dict:
    """A rollout record in the recording format (only the fields the update reads)."""
    extra = {} if task is None else {"task": task, "role": role}
    return {
        "key": "k",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}],
        "outputs": outputs,
        "meta": {"rewards": rewards, **extra, **meta},
    }


# Two (task, role) partitions whose rewards live on different scales, one response per prompt.
AZR_BATCH = [
    rollout("What is 1 + 2?", ["3"], [1.0]),
    rollout("What is 2 + 2?", ["five, I think"], [0.0]),
    rollout("Write f.", ["def f(x):\n    return x * 2"], [0.5], task="abduction", role="proposer"),
    rollout("Write g.", ["def g(): pass"], [-0.5], task="abduction", role="proposer"),
    rollout("Write h.", ["def h(a, b): return a"], [-1.0], task="abduction", role="proposer"),
]
# Groups of two answers per prompt.
GRPO_BATCH = [
    rollout("Name a fruit.", ["apple", "a red apple from the tree"], [1.0, 0.0], task=None),
    rollout("Name a colour.", ["blue", "green"], [0.2, 0.9], task=None),
    rollout("Count to three.", ["1 2 3", "one two"], [1.0, -0.5], task=None),
]
SECOND_BATCH = [
    rollout("What is 3 + 3?", ["6"], [1.0]),
    rollout("What is 5 - 2?", ["2"], [0.0]),
    rollout("What is 4 * 2?", ["8 of course"], [1.0]),
    rollout("Write k.", ["def k(s): return s[::-1]"], [0.8], task="abduction", role="proposer"),
    rollout("Write m.", ["def m(): return 0"], [0.1], task="abduction", role="proposer"),
]


def read_adam(state_dir: Path) -> dict:
    return torch.load(state_dir / OPTIMIZER_FILE, map_location="cpu", weights_only=False)


def policy_tensors(state_dir: Path) -> dict:
    from safetensors.torch import load_file

    name = (
        "adapter_model.safetensors"
        if (state_dir / POLICY_DIR / "adapter_config.json").is_file()
        else "model.safetensors"
    )
    return load_file(str(state_dir / POLICY_DIR / name))


# --------------------------------------------------------------------------- (1) by hand


def hand_advantages(batch: list[dict], counts: list[int], estimator: str) -> list[float]:
    """Advantages written out from the definitions (not through selfplay's estimators)."""
    out = []
    if estimator == "task_relative_reinforce_pp":
        flat = [(r["meta"]["task"], r["meta"]["role"], r["meta"]["rewards"][0]) for r in batch]
        for task, role, reward in flat:
            part = [(flat[k][2], counts[k]) for k in range(len(flat)) if flat[k][:2] == (task, role)]
            n = sum(c for _, c in part)  # every token of a completion carries its reward
            mean = sum(r * c for r, c in part) / n
            var = sum(c * (r - mean) ** 2 for r, c in part) / (n - 1)
            out.append((reward - mean) / math.sqrt(var + 1e-8))
    else:
        for r in batch:
            rewards = r["meta"]["rewards"]
            mean = sum(rewards) / len(rewards)
            std = math.sqrt(sum((x - mean) ** 2 for x in rewards) / (len(rewards) - 1))
            out.extend((x - mean) / (std + 1e-4) for x in rewards)
    return out


@pytest.mark.slow  # trains the tiny model (about a second a job)
@pytest.mark.parametrize("estimator,batch", [("task_relative_reinforce_pp", AZR_BATCH), ("grpo", GRPO_BATCH)])
def test_update_equals_hand_computation(tiny, tmp_path, monkeypatch, estimator, batch):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import selfplay.train.rl.recorded as recorded

    monkeypatch.setattr(recorded, "LOGPROB_CHUNK", 7)  # log-probs in several chunks per sequence
    settings = {"estimator": estimator, "learning_rate": 1e-3, "max_grad_norm": 0.0, "micro_batch_size": 2}
    record = update_on_recorded(str(tiny), [batch], settings, tmp_path / "state")

    # By hand: one sequence at a time (no padding), log-softmax written out in float64.
    tok = AutoTokenizer.from_pretrained(str(tiny))
    model = AutoModelForCausalLM.from_pretrained(str(tiny), dtype=torch.float32)
    sequences = []
    for r in batch:
        prompt = tok.apply_chat_template(r["messages"], tokenize=False, add_generation_prompt=True)
        prompt_ids = tok(prompt, add_special_tokens=False)["input_ids"]
        for text in r["outputs"]:
            completion = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
            sequences.append((prompt_ids, completion))
    counts = [len(c) for _, c in sequences]
    advantages = hand_advantages(batch, counts, estimator)
    tokens = sum(counts)
    terms = []
    for (prompt_ids, completion), adv in zip(sequences, advantages):
        ids = torch.tensor([prompt_ids + completion])
        logits = model(input_ids=ids).logits[0].double()
        logsoftmax = (
            logits
            - torch.log(torch.exp(logits - logits.max(-1, keepdim=True).values).sum(-1, keepdim=True))
            - logits.max(-1, keepdim=True).values
        )
        for pos in range(len(prompt_ids), len(prompt_ids) + len(completion)):
            logp = logsoftmax[pos - 1, ids[0, pos]]
            ratio = torch.exp(logp - logp.detach())  # one step: the old log-prob is the current one
            terms.append(torch.minimum(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv))
    loss = -torch.stack(terms).sum() / tokens
    loss.backward()

    params = list(model.parameters())
    grad_norm = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in params))
    row = record["history"][0]
    assert len(record["history"]) == 1 and row["tokens"] == tokens
    assert row["loss"] == pytest.approx(loss.item(), rel=1e-5, abs=1e-7)
    assert row["grad_norm"] == pytest.approx(grad_norm, rel=1e-5)
    assert row["clipped_fraction"] == 0.0 and row["ratio_max_deviation"] == 0.0
    if estimator == "grpo":
        assert abs(loss.item()) > 1e-3  # a loss the check can tell apart from zero
    # Adam's first step stores (1 - beta1) x gradient as its first moment: the job's gradient.
    adam = read_adam(tmp_path / "state")["state"]
    names = [n for n, _ in model.named_parameters()]
    for name in ("model.layers.0.self_attn.q_proj.weight", "model.layers.1.mlp.down_proj.weight"):
        k = names.index(name)
        job_grad = adam[k]["exp_avg"].double() / (1 - BETA1)
        hand_grad = params[k].grad.double()
        assert hand_grad.abs().max() > 1e-6
        # float32 sums in another order (the job's LM head runs on fewer positions): entries
        # near zero differ by ~1e-6 of the largest
        assert torch.allclose(job_grad, hand_grad, rtol=1e-4, atol=1e-5 * hand_grad.abs().max().item()), name
    assert int(adam[0]["step"]) == 1


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_lm_head_runs_from_the_first_completion_token_of_each_micro_batch(tiny, tmp_path):
    """A prompt's positions need hidden states, not logits: the LM head sees each
    right-padded micro-batch from the position that predicts its earliest completion token."""
    from transformers import AutoConfig, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tiny))
    vocab = AutoConfig.from_pretrained(str(tiny)).vocab_size
    lengths = []
    for r in AZR_BATCH:
        prompt = tok.apply_chat_template(r["messages"], tokenize=False, add_generation_prompt=True)
        prompt_len = len(tok(prompt, add_special_tokens=False)["input_ids"])
        completion_len = len(tok(r["outputs"][0], add_special_tokens=False)["input_ids"]) + 1
        lengths.append((prompt_len, prompt_len + completion_len))
    micro = [lengths[0:2], lengths[2:4], lengths[4:5]]  # micro_batch_size 2, one process
    expected = [max(n for _, n in m) - (min(p for p, _ in m) - 1) for m in micro]
    assert any(min(p for p, _ in m) > 1 for m in micro)  # prompts the head can skip

    seen = []

    def record(module, args, output):
        if isinstance(module, torch.nn.Linear) and module.out_features == vocab:
            seen.append(args[0].shape[1])

    handle = torch.nn.modules.module.register_module_forward_hook(record)
    try:
        update_on_recorded(str(tiny), [AZR_BATCH], {"micro_batch_size": 2}, tmp_path / "state")
    finally:
        handle.remove()
    assert seen == expected


def test_padding_starts_the_window_at_the_first_predicted_completion_token():
    from selfplay.train.rl.recorded import _pad

    rows = [
        {"input_ids": [1, 2, 3, 4, 5], "completion_mask": [0, 0, 0, 1, 1]},
        {"input_ids": [6, 7, 8, 9], "completion_mask": [0, 0, 1, 1]},
    ]
    ids, attention, mask, adv, first = _pad(rows, [0.5, -2.0], 0, "cpu")
    assert first == 1  # position 1 predicts row 1's first completion token (position 2)
    assert ids.tolist() == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 0]] and attention[1].tolist() == [1, 1, 1, 1, 0]
    # the completion mask of the predicted tokens 2..4, as token_logprobs(first=1) scores them
    assert mask.tolist() == [[0, 1, 1], [1, 1, 0]]
    assert adv.tolist() == [[0.5] * 3, [-2.0] * 3]
    # no completion token at all: the whole sequence, as without the window
    _, _, mask, adv, first = _pad([{"input_ids": [1, 2, 3], "completion_mask": [0, 0, 0]}], [1.0], 0, "cpu")
    assert first == 0 and mask.shape == (1, 2) and adv.shape == (1, 2) and not mask.any()


def test_clipped_token_loss_by_hand():
    logp = torch.tensor([0.0, 0.5, -0.5, 0.1, -0.1], requires_grad=True)
    old = torch.zeros(5)
    adv = torch.tensor([1.0, 1.0, -2.0, -1.0, 3.0])
    loss, ratio, clipped = clipped_token_loss(logp, old, adv, 0.2, 0.3)
    r = [math.exp(x) for x in (0.0, 0.5, -0.5, 0.1, -0.1)]
    # r=1: r A; r=1.65 > 1.3 with A>0: 1.3 A (clipped); r=0.61 < 0.8 with A<0: 0.8 A (clipped);
    # r=1.105 with A<0 inside the range: r A; r=0.905 with A>0: r A
    expected = [-r[0] * 1, -1.3 * 1, -0.8 * -2, -r[3] * -1, -r[4] * 3]
    assert loss.tolist() == pytest.approx(expected, rel=1e-6)
    assert ratio.tolist() == pytest.approx(r, rel=1e-6)
    assert clipped.tolist() == [False, True, True, False, False]
    loss.sum().backward()
    # clipped tokens give no gradient; the others d(-r A)/dlogp = -r A
    assert logp.grad.tolist() == pytest.approx([-r[0], 0.0, 0.0, r[3], -3 * r[4]], rel=1e-6)


# --------------------------------------------------------------------------- (2) state across jobs

CARRY_SETTINGS = {
    "finetune": "lora",
    "lora": {"r": 4, "alpha": 8, "dropout": 0.1},  # dropout draws: the RNG must be carried
    "learning_rate": 5e-3,
    "ppo_epochs": 2,
    "micro_batch_size": 2,
    "lr_scheduler": "linear",
    "total_steps": 10,
    "seed": 3,
}


@pytest.fixture(scope="module")
def carried(tiny, tmp_path_factory):
    root = tmp_path_factory.mktemp("carry")
    first = update_on_recorded(str(tiny), [AZR_BATCH], CARRY_SETTINGS, root / "job1")
    second = update_on_recorded(
        str(tiny), [SECOND_BATCH], CARRY_SETTINGS, root / "job2", previous_state=root / "job1"
    )
    both = update_on_recorded(str(tiny), [AZR_BATCH, SECOND_BATCH], CARRY_SETTINGS, root / "one_job")
    return root, first, second, both


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_two_jobs_equal_one_job_of_two_updates(carried):
    root, first, second, both = carried
    two, one = root / "job2", root / "one_job"
    a, b = policy_tensors(two), policy_tensors(one)
    assert sorted(a) == sorted(b) and a
    for name in a:
        assert torch.equal(a[name], b[name]), name
    start = policy_tensors(root / "job1")
    assert any(not torch.equal(start[n], a[n]) for n in a)  # the second job did move the policy
    adam_two, adam_one = read_adam(two), read_adam(one)
    assert adam_two["state"].keys() == adam_one["state"].keys()
    for k, s in adam_two["state"].items():
        assert int(s["step"]) == int(adam_one["state"][k]["step"]) == 4
        for key in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(s[key], adam_one["state"][k][key]), (k, key)
    sched_two = torch.load(two / SCHEDULER_FILE, weights_only=False)
    assert sched_two == torch.load(one / SCHEDULER_FILE, weights_only=False)
    assert sched_two["last_epoch"] == 4
    state_two, state_one = (json.loads((d / STATE_FILE).read_text()) for d in (two, one))
    assert (state_two["step"], state_two["updates"], state_two["jobs"]) == (4, 2, 2)
    assert (state_one["step"], state_one["updates"], state_one["jobs"]) == (4, 2, 1)
    assert second["rng_restored"] and not first["rng_restored"]
    assert [r["step"] for r in second["history"]] == [3, 4] and [r["update"] for r in second["history"]] == [
        1,
        1,
    ]
    assert [(r["step"], r["loss"]) for r in both["history"][2:]] == [
        (r["step"], r["loss"]) for r in second["history"]
    ]
    # a linear schedule over total_steps=10, carried: step 3 runs at 8/10 of the rate
    assert second["history"][0]["learning_rate"] == pytest.approx(5e-3 * 8 / 10)


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_state_folder_contents_and_record(carried):
    root, first, _, _ = carried
    job1 = root / "job1"
    assert {p.name for p in job1.iterdir()} == {
        POLICY_DIR,
        OPTIMIZER_FILE,
        SCHEDULER_FILE,
        RNG_FILE,
        STATE_FILE,
        RECORD_NAME,
    }
    assert (job1 / POLICY_DIR / "adapter_config.json").is_file()
    assert json.loads((job1 / RECORD_NAME).read_text()) == first
    parts = first["updates"][0]["partitions"]
    assert set(parts) == {"deduction/solver", "abduction/proposer"}
    for stats in parts.values():  # whitened over tokens inside each partition
        assert stats["advantage_token_mean"] == pytest.approx(0.0, abs=1e-9)
        assert stats["advantage_token_std"] == pytest.approx(1.0, abs=1e-6)
    assert parts["deduction/solver"]["completions"] == 2 and parts["abduction/proposer"]["completions"] == 3
    assert first["tokens"] == sum(p["tokens"] for p in parts.values()) == first["history"][0]["tokens"]
    assert "before that update's first optimizer step" in first["old_logprobs"]
    assert first["libraries"]["accelerate"] and first["seconds"] > 0 and first["history"][0]["seconds"] >= 0


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_changed_optimizer_setting_is_refused(carried, tiny):
    root = carried[0]
    with pytest.raises(UserError, match="'learning_rate' = 0.1 differs") as err:
        update_on_recorded(
            str(tiny),
            [SECOND_BATCH],
            {**CARRY_SETTINGS, "learning_rate": 0.1},
            root / "bad",
            previous_state=root / "job1",
        )
    assert "\n" not in str(err.value) and not (root / "bad").exists()


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_gradient_checkpointing_gives_the_same_update(tiny, tmp_path):
    settings = {"learning_rate": 1e-3, "ppo_epochs": 2, "micro_batch_size": 2}
    plain = update_on_recorded(str(tiny), [AZR_BATCH], settings, tmp_path / "plain")
    ckpt = update_on_recorded(
        str(tiny), [AZR_BATCH], {**settings, "gradient_checkpointing": True}, tmp_path / "ckpt"
    )
    assert (
        ckpt["resolved"]["gradient_checkpointing"] is True
        and plain["resolved"]["gradient_checkpointing"] is False
    )
    assert ckpt["activation_checkpointing"] is True and plain["activation_checkpointing"] is False
    for a, b in zip(plain["history"], ckpt["history"]):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-5, abs=1e-8)
        assert b["grad_norm"] == pytest.approx(a["grad_norm"], rel=1e-5)
    w1, w2 = policy_tensors(tmp_path / "plain"), policy_tensors(tmp_path / "ckpt")
    assert all(torch.allclose(w1[n], w2[n], atol=1e-6, rtol=0) for n in w1)


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_failed_job_leaves_no_state_and_keeps_the_previous(carried, tiny, monkeypatch):
    import selfplay.train.rl.recorded as recorded

    root = carried[0]
    before = sorted(p.name for p in root.iterdir())
    job1_policy = policy_tensors(root / "job1")

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(recorded, "_save_policy", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        update_on_recorded(
            str(tiny), [SECOND_BATCH], CARRY_SETTINGS, root / "job3", previous_state=root / "job1"
        )
    assert sorted(p.name for p in root.iterdir()) == before  # no job3, no staging folder left
    after = policy_tensors(root / "job1")
    assert all(torch.equal(job1_policy[n], after[n]) for n in after)


# --------------------------------------------------------------------------- (3) bad input


def _set(path, value):
    def change(rec):
        target = rec
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return rec

    return change


BAD_RECORDS = [
    (_set(["messages"], KeyError), "messages"),
    (_set(["messages"], [{"role": "assistant", "content": "x"}]), "end with a user message"),
    (_set(["outputs"], []), "'outputs' must be a non-empty list"),
    (_set(["outputs"], [3]), "output 0 is not a string"),
    (_set(["meta"], None), "'meta' must be an object"),
    (_set(["meta", "rewards"], [1.0, 2.0]), "one entry per output"),
    (_set(["meta", "rewards"], ["1"]), "meta.rewards[0]"),
    (_set(["meta", "rewards"], [float("inf")]), "not a finite number"),
    (_set(["meta", "rewards"], [True]), "meta.rewards[0]"),
    (_set(["meta", "task"], KeyError), "meta.task"),
    (_set(["meta", "role"], ""), "meta.role"),
    (_set(["meta", "truncated"], ["yes"]), "meta.truncated[0]"),
    (_set(["meta", "truncated"], [True, False]), "one entry per output"),
]


@pytest.mark.parametrize("change,fragment", BAD_RECORDS)
def test_bad_records_give_one_line_errors(tmp_path, change, fragment):
    batch = json.loads(json.dumps(AZR_BATCH))
    batch[1] = change(batch[1])
    with pytest.raises(UserError) as err:
        update_on_recorded("unused-model", [AZR_BATCH, batch], {}, tmp_path / "out")
    message = str(err.value)
    assert message.startswith("update 1: rollout record 1:") and fragment in message and "\n" not in message
    assert not (tmp_path / "out").exists()


def test_grpo_needs_equal_groups_of_two_or_more(tmp_path):
    uneven = GRPO_BATCH[:2] + [rollout("q", ["a", "b", "c"], [1, 0, 1], task=None)]
    single = [rollout("q", ["a"], [1.0], task=None)]
    for batch, fragment in (
        (uneven, "rollout record 2: estimator 'grpo' needs groups of one size"),
        (single, "rollout record 0: estimator 'grpo' needs a group of >= 2"),
    ):
        with pytest.raises(UserError, match=fragment):
            update_on_recorded("unused", [batch], {"estimator": "grpo"}, tmp_path / "out")


@pytest.mark.parametrize(
    "settings,fragment",
    [
        ({"learnig_rate": 1e-6}, "unknown training setting(s) 'learnig_rate'"),
        ({"lora": {"r": 4}}, "'lora'"),
        ({"lr_scheduler": "linear"}, "'total_steps'"),
        ({"epsilon_low": 1.5}, "'epsilon_low'"),
        ({"mini_batches": 0}, "'mini_batches'"),
        ({"scale_rewards": "batch"}, "'scale_rewards'"),
    ],
)
def test_bad_settings_are_refused(tmp_path, settings, fragment):
    with pytest.raises(UserError) as err:
        update_on_recorded("unused", [AZR_BATCH], settings, tmp_path / "out")
    assert fragment in str(err.value) and "\n" not in str(err.value)


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_unscorable_batch_is_skipped_and_unscorable_completions_left_out(tiny, tmp_path):
    nothing = [rollout("q", ["a"], [None]), rollout("r", ["b"], [None])]
    with pytest.raises(TrainingSkipped):
        update_on_recorded("unused", [nothing], {}, tmp_path / "none")
    assert not (tmp_path / "none").exists()
    record = update_on_recorded(str(tiny), [AZR_BATCH + nothing], {}, tmp_path / "out")
    assert record["updates"][0]["completions"] == 7 and record["updates"][0]["trained"] == 5
    assert record["updates"][0]["partitions"]["deduction/solver"]["unscorable"] == 2


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_more_mini_batches_than_completions_is_refused(tiny, tmp_path):
    with pytest.raises(UserError, match="'mini_batches' = 6: mini-batch 5 holds 0 completions"):
        update_on_recorded(str(tiny), [AZR_BATCH], {"mini_batches": 6}, tmp_path / "out")


def test_missing_files_and_state_folders_are_refused(tmp_path, capsys):
    from selfplay.train.rl.recorded import main

    code = main(
        ["--base-model", "unused", "--update", str(tmp_path / "a.jsonl"), "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "rollout file" in err and "a.jsonl" in err and err.count("\n") == 1
    (tmp_path / "not_a_state").mkdir()
    with pytest.raises(UserError, match="is not a state folder"):
        update_on_recorded(
            "unused", [AZR_BATCH], {}, tmp_path / "out", previous_state=tmp_path / "not_a_state"
        )
    with pytest.raises(UserError, match="cannot replace the one it reads"):
        update_on_recorded("unused", [AZR_BATCH], {}, tmp_path / "s", previous_state=tmp_path / "s")
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- (4) clipping


@pytest.mark.slow  # trains the tiny model (about a second a job)
@pytest.mark.parametrize("schedule", [{"ppo_epochs": 2}, {"mini_batches": 2}])
def test_clipping_acts_only_after_the_first_step(tiny, tmp_path, schedule):
    settings = {"learning_rate": 1e-2, "micro_batch_size": 2, **schedule}
    record = update_on_recorded(str(tiny), [AZR_BATCH], settings, tmp_path / "two")
    first, second = record["history"]
    assert record["clipping_acts"] is True
    # Step 1 trains on the policy that scored the batch (ratio 1, bit for bit); step 2 on tokens
    # scored before step 1, which moved the policy a lot at this learning rate.
    assert first["ratio_max_deviation"] == 0.0 and first["clipped_fraction"] == 0.0
    assert second["ratio_max_deviation"] > 0.2 and second["ratio_outside_fraction"] > 0
    assert 0 < second["clipped_fraction"] <= second["ratio_outside_fraction"]


@pytest.mark.slow  # trains the tiny model (about a second a job)
def test_one_step_never_clips(tiny, tmp_path):
    record = update_on_recorded(
        str(tiny), [AZR_BATCH, SECOND_BATCH], {"learning_rate": 1e-2}, tmp_path / "one"
    )
    assert record["clipping_acts"] is False and len(record["history"]) == 2
    for row in record["history"]:  # each update recomputes its old log-probs: ratio 1 again
        assert row["ratio_max_deviation"] == 0.0 and row["clipped_fraction"] == 0.0


def test_settings_record_says_when_clipping_acts():
    assert RecordedUpdateSettings.from_dict({}).to_record()["clipping_acts"] is False
    assert RecordedUpdateSettings.from_dict({"mini_batches": 2}).steps_per_update == 2


# --------------------------------------------------------------------------- processes


PORTS = itertools.count(29500 + os.getpid() % 1000)  # a fresh one per run


def torchrun(n: int, tiny: Path, batches: list[Path], settings: Path, out: Path, **env_extra: str):
    """``python -m selfplay.train.rl.recorded`` in ``n`` CPU processes (one update per batch file)."""
    args = ["--base-model", str(tiny), "--settings", str(settings), "--out", str(out)]
    for batch in batches:
        args += ["--update", str(batch)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO / "src"), **env_extra}
    # accelerate launch --cpu starts one process (several CPU processes need mpirun there);
    # torch's own launcher starts N, and Accelerator(cpu=True) joins them with gloo.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            str(n),
            "--master_port",
            str(next(PORTS)),
            "-m",
            "selfplay.train.rl.recorded",
            *args,
        ],
        check=True,
        env=env,
        timeout=600,
        cwd=out.parent,
    )


def assert_same_steps(one: dict, two: dict, norm_rel: float = 1e-5) -> None:
    """Two training records took the same optimizer steps, up to float32 summation order."""
    assert len(one["history"]) == len(two["history"]) > 0
    for a, b in zip(one["history"], two["history"]):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-5, abs=1e-7)
        assert b["grad_norm"] == pytest.approx(a["grad_norm"], rel=norm_rel)
        # a step's mini-batch scored before an earlier step has ratios away from 1
        for key in ("ratio_max_deviation", "clipped_fraction", "ratio_outside_fraction", "tokens"):
            assert b[key] == pytest.approx(a[key], rel=1e-3, abs=1e-9), key


@pytest.mark.slow
@pytest.mark.parametrize(
    "finetune", [{"finetune": "full"}, {"finetune": "lora", "lora": {"r": 4, "alpha": 8, "dropout": 0.0}}]
)
def test_two_processes_give_the_update_of_one(tiny, tmp_path, finetune):
    """The same global batch through 2 CPU processes (gloo) and through one: the same
    weights, up to float32 summation order."""
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps(r) + "\n" for r in AZR_BATCH + SECOND_BATCH))
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps({"learning_rate": 1e-4, "mini_batches": 2, "micro_batch_size": 1, **finetune})
    )
    for n in (1, 2):
        torchrun(n, tiny, [batch], settings, tmp_path / f"p{n}")
    one, two = (json.loads((tmp_path / f"p{n}" / RECORD_NAME).read_text()) for n in (1, 2))
    assert (one["processes"], two["processes"]) == (1, 2)
    assert_same_steps(one, two)
    assert one["history"][1]["ratio_max_deviation"] > 1e-4
    w1, w2 = policy_tensors(tmp_path / "p1"), policy_tensors(tmp_path / "p2")
    # 2 Adam steps at lr 1e-4 move weights by up to 2e-4 (LoRA's B starts at 0); the processes
    # agree to 1e-6 (measured: 2.6e-8 for full fine-tuning, losses and gradient norms to 1e-7).
    base = (
        policy_tensors_of_model(tiny)
        if finetune["finetune"] == "full"
        else {n: torch.zeros_like(w1[n]) for n in w1 if "lora_B" in n}
    )
    assert max((w1[n] - base[n]).abs().max().item() for n in base) > 1e-4
    for name in w1:
        assert (w1[name] - w2[name]).abs().max().item() <= 1e-6, name


def policy_tensors_of_model(model_dir: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(model_dir / "model.safetensors"))


# --------------------------------------------------------------------------- a chain of jobs


@pytest.mark.slow
@pytest.mark.parametrize("finetune", ["lora", "full"])
def test_generate_score_update_generate_chain(tiny, tmp_path, finetune):
    """Generation records of the project's backend, scored, feed the update as they are; the
    next generation loads the state's policy (adapter or model) and records it."""
    from selfplay.llm.base import GenerationRequest, SamplingParams
    from selfplay.llm.factory import make_backend
    from selfplay.llm.recording import generate_and_record
    from selfplay.records import read_jsonl, sha256_tree, write_jsonl

    settings = {"finetune": finetune, "learning_rate": 1e-2, "seed": 5}
    if finetune == "lora":
        settings["lora"] = {"r": 4, "alpha": 8, "dropout": 0.0}
    questions = [
        ("Say a word.", "deduction"),
        ("Name a number.", "deduction"),
        ("Write a name.", "abduction"),
        ("Spell a letter.", "abduction"),
    ]
    state = None
    for phase in range(2):
        model = str(tiny) if finetune == "lora" or state is None else str(state / POLICY_DIR)
        adapter = str(state / POLICY_DIR) if finetune == "lora" and state is not None else None
        backend = make_backend(
            {
                "name": "transformers",
                "model": model,
                "dtype": "float32",
                "batch_size": 4,
                "threads": 1,
                "progress": False,
            }
        )
        try:
            requests = [
                GenerationRequest(
                    [{"role": "user", "content": q}],
                    SamplingParams(temperature=1.0, max_new_tokens=8, n=1, seed=phase),
                    adapter=adapter,
                )
                for q, _ in questions
            ]
            generated = generate_and_record(
                backend,
                requests,
                tmp_path / f"gen{phase}.jsonl",
                meta=[{"task": t, "role": "solver"} for _, t in questions],
            )
        finally:
            backend.close()
        assert generated[0]["backend"]["model"] == str(Path(model).resolve())
        if adapter is not None:
            assert {r["adapter_sha256"] for r in generated} == {sha256_tree(state / POLICY_DIR)}
        # score: the track adds one reward per output to each generation record
        scored = [
            {**r, "meta": {**r["meta"], "rewards": [float(len(r["outputs"][0]) % 5)]}} for r in generated
        ]
        write_jsonl(tmp_path / f"scored{phase}.jsonl", scored)
        out = tmp_path / f"state{phase}"
        record = update_on_recorded(
            str(tiny), [read_jsonl(tmp_path / f"scored{phase}.jsonl")], settings, out, previous_state=state
        )
        assert record["step"] == phase + 1 and record["updates"][0]["trained"] == len(questions)
        state = out
    assert json.loads((state / STATE_FILE).read_text())["jobs"] == 2


# --------------------------------------------------------------------------- FSDP (engine: fsdp)

# Full fine-tuning, two optimizer steps (the second one's ratios away from 1), one completion
# per micro-batch: with 5 completions per mini-batch, process 0 of 2 runs 3 passes and process
# 1 runs 2 real passes and one that counts zero (FSDP's passes are collectives).
FSDP_SETTINGS = {"learning_rate": 1e-4, "mini_batches": 2, "micro_batch_size": 1, "engine": "fsdp"}


def sharded_state(state_dir: Path, tmp_path: Path) -> dict:
    """The model and AdamW state a sharded (DCP) state folder holds, read back whole."""
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

    target = tmp_path / f"{state_dir.name}-whole.pt"
    dcp_to_torch_save(str(state_dir / "sharded"), str(target))
    return torch.load(target, weights_only=False)


@pytest.fixture(scope="module")
def fsdp_two(tiny, tmp_path_factory):
    """One FSDP update in 2 CPU processes (gloo) on the 10 completions of both batches."""
    root = tmp_path_factory.mktemp("fsdp")
    batch = root / "batch.jsonl"
    batch.write_text("".join(json.dumps(r) + "\n" for r in AZR_BATCH + SECOND_BATCH))
    settings = root / "settings.json"
    settings.write_text(json.dumps(FSDP_SETTINGS))
    # What `accelerate launch` with config/accelerate/full_fsdp.yaml sets. Left on, accelerate
    # would build its FSDP plugin (on CPU: "no available devices") and transformers would load
    # the weights on process 0 only; the job, which shards by itself, turns it off.
    torchrun(
        2,
        tiny,
        [batch],
        settings,
        root / "p2",
        ACCELERATE_USE_FSDP="true",
        FSDP_CPU_RAM_EFFICIENT_LOADING="true",
    )
    return root, json.loads((root / "p2" / RECORD_NAME).read_text())


@pytest.mark.slow  # 2 processes through torchrun (~30 s on 2 cores)
def test_fsdp_two_processes_give_the_update_of_one_data_parallel(fsdp_two, tiny, tmp_path):
    root, two = fsdp_two
    settings = {**FSDP_SETTINGS, "engine": "data_parallel"}
    one = update_on_recorded(str(tiny), [AZR_BATCH + SECOND_BATCH], settings, tmp_path / "dp")
    assert (two["processes"], two["engine"], one["engine"]) == (2, "fsdp", "data_parallel")
    assert two["fsdp_units"] == 3  # 2 decoder layers and the root
    assert len(one["history"]) == 2
    # The gradient norm's float32 sum over the 3M-element embedding gradient runs over its two
    # shards under FSDP: measured 4.7e-6 apart (the float64 norm lies between the two).
    assert_same_steps(one, two, norm_rel=3e-5)
    assert one["history"][1]["ratio_max_deviation"] > 1e-4
    w1, w2 = policy_tensors(tmp_path / "dp"), policy_tensors(root / "p2")
    base = policy_tensors_of_model(tiny)
    assert sorted(w1) == sorted(w2)
    assert max((w1[n] - base[n]).abs().max().item() for n in base) > 1e-4
    # measured: 1.4e-7 (2.6e-8 against a 1-thread torchrun reference); the steps move weights
    # by up to 2e-4
    assert max((w1[n] - w2[n]).abs().max().item() for n in w1) <= 1e-6


@pytest.mark.slow  # reads the 2-process run
def test_fsdp_state_folder_and_policy_that_loads_whole(fsdp_two, tmp_path):
    from transformers import AutoModelForCausalLM

    root, two = fsdp_two
    state = root / "p2"
    assert {p.name for p in state.iterdir()} == {
        POLICY_DIR,
        "sharded",
        SCHEDULER_FILE,
        RNG_FILE,
        STATE_FILE,
        RECORD_NAME,
    }
    assert {p.name for p in (state / "sharded").iterdir()} == {".metadata", "__0_0.distcp", "__1_0.distcp"}
    saved = json.loads((state / STATE_FILE).read_text())
    assert (saved["engine"], saved["settings"]["engine"], saved["processes"]) == ("fsdp", "fsdp", 2)
    assert len(torch.load(state / RNG_FILE, weights_only=False)) == 2
    whole = sharded_state(state, tmp_path)
    model = AutoModelForCausalLM.from_pretrained(str(state / POLICY_DIR), dtype=torch.float32)
    loaded = model.state_dict()
    assert set(whole["model"]) <= set(loaded) and len(whole["model"]) >= 19
    for name, tensor in whole["model"].items():
        assert torch.equal(loaded[name], tensor), name
    adam = whole["optimizer"]["state"]
    assert set(adam) <= set(whole["model"]) and len(adam) >= 19  # the tied output layer has no own entry
    assert set(policy_tensors(state)) == set(adam)  # each weight written once, under its first name
    assert all(int(s["step"]) == 2 and s["exp_avg"].abs().max() > 0 for s in adam.values())


@pytest.mark.slow  # 1-process FSDP jobs in this process (about a second each)
def test_fsdp_state_across_two_jobs_equals_one_job_of_two_updates(tiny, tmp_path):
    settings = {**FSDP_SETTINGS, "lr_scheduler": "linear", "total_steps": 10, "learning_rate": 1e-3}
    update_on_recorded(str(tiny), [AZR_BATCH], settings, tmp_path / "job1")
    second = update_on_recorded(
        str(tiny), [SECOND_BATCH], settings, tmp_path / "job2", previous_state=tmp_path / "job1"
    )
    both = update_on_recorded(str(tiny), [AZR_BATCH, SECOND_BATCH], settings, tmp_path / "one")
    assert second["rng_restored"] and second["step"] == 4 and second["engine"] == "fsdp"
    a, b = policy_tensors(tmp_path / "job2"), policy_tensors(tmp_path / "one")
    start = policy_tensors(tmp_path / "job1")
    assert any(not torch.equal(start[n], a[n]) for n in a)
    assert sorted(a) == sorted(b) and all(torch.equal(a[n], b[n]) for n in a)
    two, one = sharded_state(tmp_path / "job2", tmp_path), sharded_state(tmp_path / "one", tmp_path)
    for name, s in two["optimizer"]["state"].items():
        assert int(s["step"]) == int(one["optimizer"]["state"][name]["step"]) == 4
        for key in ("exp_avg", "exp_avg_sq"):
            assert torch.equal(s[key], one["optimizer"]["state"][name][key]), (name, key)
    assert torch.load(tmp_path / "job2" / SCHEDULER_FILE, weights_only=False) == torch.load(
        tmp_path / "one" / SCHEDULER_FILE, weights_only=False
    )
    assert [(r["step"], r["loss"]) for r in both["history"][2:]] == [
        (r["step"], r["loss"]) for r in second["history"]
    ]


@pytest.mark.slow  # continues the 2-process run in 1 process
def test_fsdp_state_of_two_processes_continues_in_one(fsdp_two, tiny, tmp_path):
    """DCP reshards: a state written by 2 processes carries into a 1-process job, which
    then equals one 1-process job doing both updates (up to float32 summation order)."""
    root, _ = fsdp_two
    batch = AZR_BATCH + SECOND_BATCH
    cont = update_on_recorded(
        str(tiny), [SECOND_BATCH], FSDP_SETTINGS, tmp_path / "cont", previous_state=root / "p2"
    )
    ref = update_on_recorded(str(tiny), [batch, SECOND_BATCH], FSDP_SETTINGS, tmp_path / "ref")
    assert cont["processes"] == 1 and not cont["rng_restored"] and cont["step"] == 4
    for a, b in zip(ref["history"][2:], cont["history"]):
        assert b["loss"] == pytest.approx(a["loss"], rel=1e-4, abs=1e-6)
    w1, w2 = policy_tensors(tmp_path / "cont"), policy_tensors(tmp_path / "ref")
    assert max((w1[n] - w2[n]).abs().max().item() for n in w1) <= 1e-6
    s1 = sharded_state(tmp_path / "cont", tmp_path)["optimizer"]["state"]
    s2 = sharded_state(tmp_path / "ref", tmp_path)["optimizer"]["state"]
    # measured: weights 1.4e-7 apart; moments 3.0e-6 (exp_avg) and 8.8e-6 (exp_avg_sq) of
    # their largest entry, from the first update's gradient clip (its float32 norm, see above)
    for name in s2:
        assert int(s1[name]["step"]) == int(s2[name]["step"]) == 4
        for key in ("exp_avg", "exp_avg_sq"):
            scale = s2[name][key].abs().max().item()
            assert (s1[name][key] - s2[name][key]).abs().max().item() <= 5e-5 * scale, (name, key)


def test_fsdp_with_lora_is_refused(tmp_path):
    with pytest.raises(UserError) as err:
        update_on_recorded("unused", [AZR_BATCH], {"engine": "fsdp", "finetune": "lora"}, tmp_path / "out")
    message = str(err.value)
    assert "'engine' = 'fsdp'" in message and "full fine-tuning only" in message and "\n" not in message
    with pytest.raises(UserError, match="'engine' = 'zero3'"):
        RecordedUpdateSettings.from_dict({"engine": "zero3"})


def state_of(engine: str | None, folder: Path) -> Path:
    """A state folder's policy_state.json as an engine writes it (None: written before the
    setting existed); nothing else is read before the engine is checked."""
    settings = RecordedUpdateSettings.from_dict({} if engine is None else {"engine": engine}).to_record()
    from selfplay.train.rl.recorded import CARRIED, STATE_FORMAT

    carried = {k: settings[k] for k in CARRIED if engine is not None or k != "engine"}
    folder.mkdir()
    (folder / STATE_FILE).write_text(
        json.dumps({"format": STATE_FORMAT, "step": 1, "updates": 1, "jobs": 1, "settings": carried})
    )
    return folder


@pytest.mark.parametrize(
    "written,asked,fragment",
    [
        ("data_parallel", "fsdp", "'engine' = 'fsdp' differs from 'data_parallel'"),
        (None, "fsdp", "'engine' = 'fsdp' differs from 'data_parallel'"),
        ("fsdp", "data_parallel", "'engine' = 'data_parallel' differs from 'fsdp'"),
    ],
)
def test_engine_differing_from_the_carried_state_is_refused(tmp_path, written, asked, fragment):
    previous = state_of(written, tmp_path / "prev")
    with pytest.raises(UserError) as err:
        update_on_recorded(
            "unused", [AZR_BATCH], {"engine": asked}, tmp_path / "out", previous_state=previous
        )
    assert fragment in str(err.value) and "\n" not in str(err.value) and not (tmp_path / "out").exists()


@pytest.mark.slow  # reads the 2-process run
def test_data_parallel_job_refuses_an_fsdp_state(fsdp_two, tiny, tmp_path):
    root, _ = fsdp_two
    with pytest.raises(UserError, match="'engine' = 'data_parallel' differs from 'fsdp'"):
        update_on_recorded(str(tiny), [SECOND_BATCH], {}, tmp_path / "out", previous_state=root / "p2")


@pytest.mark.slow  # 1-process FSDP jobs in this process (about a second each)
def test_fsdp_with_gradient_checkpointing_gives_the_same_update(tiny, tmp_path):
    """Checkpointed layers recompute their forward pass inside backward, where FSDP gathers
    the layer's weights a second time (on a GPU, gradient_checkpointing: auto turns it on)."""
    settings = {"engine": "fsdp", "learning_rate": 1e-3, "ppo_epochs": 2, "micro_batch_size": 2}
    plain = update_on_recorded(str(tiny), [AZR_BATCH], settings, tmp_path / "plain")
    ckpt = update_on_recorded(
        str(tiny), [AZR_BATCH], {**settings, "gradient_checkpointing": True}, tmp_path / "ckpt"
    )
    assert ckpt["activation_checkpointing"] is True and plain["activation_checkpointing"] is False
    assert_same_steps(plain, ckpt)
    w1, w2 = policy_tensors(tmp_path / "plain"), policy_tensors(tmp_path / "ckpt")
    assert all(torch.allclose(w1[n], w2[n], atol=1e-6, rtol=0) for n in w1)


@pytest.mark.parametrize(
    "kind,engine,fragment",
    [
        ("FSDP", "data_parallel", "setting 'engine' is 'data_parallel': set engine: fsdp"),
        ("DEEPSPEED", "fsdp", "launched with DEEPSPEED"),
        ("DEEPSPEED", "data_parallel", "launched with DEEPSPEED"),
    ],
)
def test_sharding_launchers_the_engine_does_not_drive_are_refused(kind, engine, fragment):
    """accelerate's FSDP launch reaches the job as distributed type FSDP only when the
    job's engine left accelerate's FSDP on (data_parallel); on CPU accelerate cannot build
    its FSDP plugin, so the check is called with the type a GPU launch gives."""
    from selfplay.train.rl.recorded import _check_launcher

    with pytest.raises(UserError) as err:
        _check_launcher(kind, engine)
    assert fragment in str(err.value) and "'engine'" in str(err.value) and "\n" not in str(err.value)
    for plain in ("NO", "MULTI_CPU", "MULTI_GPU"):
        _check_launcher(plain, engine)
