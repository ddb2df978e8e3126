"""GASP's Real-data RL (paper 004): the GRPO prompt records carry the evaluation's own
LiveCodeBench prompt, and the reward judges each completion's program on all of its
problem's tests in the sandbox: right 1.0, wrong or hostile 0.0, no program the
format-error setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfplay.errors import UserError
from selfplay.evaluate.benchmarks import livecodebench as lcb
from selfplay.tracks.gasp import goalposts as gp
from selfplay.tracks.gasp import real_data as rd
from selfplay.train.rl.grpo import validate_prompt_records

LCB_DATA = Path(lcb.__file__).resolve().parents[2] / "data" / "eval"
SMOKE_REFERENCES = json.loads((LCB_DATA / "livecodebench.smoke.references.json").read_text())

RIGHT = (
    "class Solution:\n    def rotateRight(self, nums, k):\n        k %= len(nums)\n"
    "        return nums[len(nums) - k:] + nums[:len(nums) - k]\n"
)
WRONG = "class Solution:\n    def rotateRight(self, nums, k):\n        k %= len(nums)\n        return nums[k:] + nums[:k]\n"
HOSTILE = [
    "import os\nos._exit(0)\n" + RIGHT,  # exits before any test runs
    "raise SystemExit(0)\n" + RIGHT,
    "class Solution:\n    def rotateRight(self, nums, k):\n        while True:\n            pass\n",
    "print('All tests passed')\nclass Solution:\n    def rotateRight(self, nums, k):\n        return 'passed'\n",
    "class Everything(list):\n    def __eq__(self, other):\n        return True\n\n"
    "class Solution:\n    def rotateRight(self, nums, k):\n        return Everything()\n",
    # the expected outputs are in the shipped rows: the sandbox must not show them
    f"import base64, json, pickle, zlib\nclass Solution:\n    def rotateRight(self, nums, k):\n"
    f"        for line in open({str(lcb.GOALPOST_ROWS)!r}):\n            row = json.loads(line)\n"
    "            cases = json.loads(pickle.loads(zlib.decompress(base64.b64decode(row['private_test_cases']))))\n"
    "            for case in cases + json.loads(row['public_test_cases']):\n"
    "                if case['input'] == json.dumps(nums) + '\\n' + json.dumps(k):\n"
    "                    return json.loads(case['output'])\n        return []\n",
]


def answer(code: str) -> list[dict]:
    """A completion as TRL hands a conversational one to the reward."""
    return [{"role": "assistant", "content": f"Rotate by slicing.\n\n```python\n{code}```"}]


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    train, _ = gp.training_split(None, {})  # LiveCodeBench's smoke rows before the cut (one stdin)
    return gp.load_rows() + train


@pytest.fixture(scope="module")
def sandbox():
    box = rd.open_sandbox({"timeout": 1.0}, workers=2)
    yield box
    box.close()


def test_prompt_records_carry_the_evaluation_prompt_and_the_partition_columns(rows):
    records = rd.prompt_records(rows)
    items = rd.items_of(rows)
    assert [r["problem_id"] for r in records] == [r["question_id"] for r in rows]
    for record in records:
        assert record["prompt"] == lcb.LiveCodeBench().messages(items[record["problem_id"]], False)
        assert (record["task"], record["role"]) == ("real_data", "solver")
    assert validate_prompt_records(records, "task_relative_reinforce_pp")
    cot = rd.prompt_records(rows[:1], cot=True)[0]["prompt"][-1]["content"]
    assert "step by step" in cot and "step by step" not in records[0]["prompt"][-1]["content"]
    with pytest.raises(UserError, match="appears twice"):
        rd.prompt_records(rows[:1] * 2)
    with pytest.raises(UserError, match=r"real-data row 1 \('gasp-gp-01'\): no tests"):
        rd.prompt_records([{**rows[0], "public_test_cases": "[]", "private_test_cases": "[]"}])


def test_the_reward_judges_right_wrong_and_missing_programs(rows, sandbox):
    reward = rd.reward_function(rows, sandbox, settings={"timeout": 1.0})
    stdin_id = "smoke-lcb-4"  # a stdin problem: the program reads standard input
    completions = [
        answer(RIGHT),
        answer(WRONG),
        [{"role": "assistant", "content": "Just rotate it."}],
        answer(SMOKE_REFERENCES[stdin_id]),
        answer("print(input())\n"),
        "```python\n" + RIGHT + "```",
    ]
    ids = ["gasp-gp-08"] * 3 + [stdin_id] * 2 + ["gasp-gp-08"]
    got = reward(
        prompts=[None] * len(ids), completions=completions, problem_id=ids, task=["real_data"] * len(ids)
    )
    assert got == [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    assert all(type(v) is float for v in got)
    assert reward.__name__ == "lcb_all_tests_pass"
    # the format-error value is a setting
    strict = rd.reward_function(rows, sandbox, format_error=-1.0, settings={"timeout": 1.0})
    got = strict(prompts=[None] * 3, completions=completions[:3], problem_id=ids[:3])
    assert got == [1.0, 0.0, -1.0]


def test_hostile_programs_earn_nothing(rows, sandbox):
    reward = rd.reward_function(rows, sandbox, format_error=-1.0, settings={"timeout": 1.0})
    got = reward(
        prompts=[None] * len(HOSTILE),
        completions=[answer(code) for code in HOSTILE],
        problem_id=["gasp-gp-08"] * len(HOSTILE),
    )
    assert got == [0.0] * len(HOSTILE)


def test_the_reward_refuses_an_unknown_problem_or_a_column_mismatch(rows, sandbox):
    reward = rd.reward_function(rows[:1], sandbox)
    with pytest.raises(UserError, match="no LiveCodeBench problem 'gasp-gp-08'"):
        reward(prompts=[None], completions=[answer(RIGHT)], problem_id=["gasp-gp-08"])
    with pytest.raises(UserError, match="2 completions for 1 problem ids"):
        reward(prompts=[None], completions=[answer(RIGHT)] * 2, problem_id=["gasp-gp-01"])


def test_joint_batches_are_drawn_without_replacement_per_iteration(rows):
    records = rd.prompt_records(rows)
    first = rd.joint_batch(records, 4, seed=3, iteration=1)
    assert len(first) == 4 and len({r["problem_id"] for r in first}) == 4
    assert first == rd.joint_batch(records, 4, seed=3, iteration=1)
    draws = {
        tuple(r["problem_id"] for r in rd.joint_batch(records, 4, seed=3, iteration=i)) for i in range(6)
    }
    assert len(draws) > 1  # another iteration draws another batch
    everything = rd.joint_batch(records, 100, seed=3, iteration=1)
    assert sorted(r["problem_id"] for r in everything) == sorted(r["problem_id"] for r in records)
    with pytest.raises(UserError, match="at least 1"):
        rd.joint_batch(records, 0, seed=3, iteration=1)


@pytest.mark.slow
def test_grpo_trains_on_the_records_with_this_reward(tmp_path, rows, sandbox):
    """TRL's contract, for real: train_grpo (a tiny random Qwen3, one optimizer step) calls
    the reward with the records' problem_id column; the random model writes no program in
    8 tokens, so every rollout earns the format-error value, recorded with its problem."""
    from selfplay.llm.tiny_random import ensure_tiny_model
    from selfplay.records import read_jsonl
    from selfplay.train.rl.grpo import train_grpo

    model = ensure_tiny_model("qwen3", tmp_path / "qwen3", dtype="float32")
    records = rd.prompt_records(gp.load_rows()[:2])
    reward = rd.reward_function(rows, sandbox, format_error=-1.0, settings={"timeout": 1.0})
    settings = {
        "group_size": 2,
        "batch_size": 4,
        "steps_per_generation": 1,
        "grad_accum": 1,
        "max_steps": 1,
        "max_completion_length": 8,
        "max_prompt_tokens": 1024,
        "learning_rate": 1e-4,
        "temperature": 1.0,
        "finetune": "lora",
        "lora": {"r": 4, "alpha": 8, "dropout": 0.0},
        "checkpoint_steps": 0,
        "seed": 7,
    }
    train_grpo(
        model, records, reward, settings, tmp_path / "policy", recordings_path=tmp_path / "rollouts.jsonl"
    )
    rollouts = read_jsonl(tmp_path / "rollouts.jsonl")
    assert sorted(r["meta"]["columns"]["problem_id"] for r in rollouts) == ["gasp-gp-01", "gasp-gp-02"]
    assert all(r["meta"]["rewards"] == [-1.0, -1.0] for r in rollouts)
