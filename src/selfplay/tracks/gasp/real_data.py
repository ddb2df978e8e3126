"""Real-data RL for GASP (paper 004): the baseline's prompts and reward.

The paper's Real-data RL baseline is standard RLVR (GRPO, 500 steps, 8 answers per
prompt, 3 seeds) on LiveCodeBench's training split, i.e. the problems dated before the
training cut (``livecodebench.training_problems``); the joint variant, GASP + Real-data RL
(Sec. 3.4), adds after every GASP iteration RLVR updates on questions sampled from that
same split. Both train on what this module builds:

- :func:`prompt_records`: one GRPO prompt record per LiveCodeBench row, with the prompt
  the benchmark layer's LiveCodeBench adapter shows at evaluation (its ``messages``), so
  training and evaluation ask the same question in the same words; the record carries
  the problem's id (``problem_id``) and the partition columns ``task`` / ``role`` the
  task-relative estimator needs.
- :func:`reward_function`: the reward ``selfplay.train.rl.grpo.train_grpo`` calls (TRL's
  contract: keyword lists of the record's columns, one float per completion). Each
  completion's program is read as LiveCodeBench reads an answer (the lines between the
  last two fence lines) and judged on all of the problem's public and private tests in
  the sandbox by the adapter's own scoring (``LiveCodeBench._score_sample``: a fresh
  confined process per test, the verdict decided in the host from the returned value):
  1.0 when every test passes, 0.0 otherwise. An answer with no program (no closed code
  fence) scores ``format_error``, a setting: 0.0 by default, which makes the reward the
  plain pass/fail of RLVR (the paper gives no format penalty for this baseline);
  Absolute Zero's solver would use -1.
- :func:`joint_batch`: the real-data questions of one joint-variant iteration, drawn
  without replacement from the training split's records with a seed derived from the
  run's seed and the iteration (how many per iteration is a setting of the track: the
  paper does not say).

Nothing the model writes runs outside the sandbox; the tests' expected outputs never
enter it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ...errors import UserError
from ...evaluate.benchmark import Sample
from ...evaluate.benchmarks import livecodebench as lcb
from ...records import derive_seed
from ...train.rl.grpo import completion_text

TASK = "real_data"
ROLE = "solver"
FORMAT_ERROR = "parse:no_code"  # LiveCodeBench's reason for an answer without a program


def items_of(rows: list[dict], settings: dict | None = None) -> dict[str, dict]:
    """{question_id: prepared LiveCodeBench item} of ``rows``; a row the adapter cannot
    read, or an id seen twice, stops with the reason."""
    s = lcb.settings_of(settings)
    max_bytes = int(s["max_decompressed_mb"]) * 1024 * 1024
    items: dict[str, dict] = {}
    for n, row in enumerate(rows, 1):
        item, why = lcb.item_from_row(row, max_bytes)
        if item is None:
            raise UserError(f"real-data row {n} ({row.get('question_id')!r}): {why}")
        if item["id"] in items:
            raise UserError(f"real-data row {n}: question_id {item['id']!r} appears twice")
        items[item["id"]] = item
    return items


def prompt_records(rows: list[dict], cot: bool = False) -> list[dict]:
    """GRPO prompt records of LiveCodeBench rows: the evaluation's prompt (with a request
    to reason first when ``cot``), the problem id the reward looks up, task and role."""
    bench = lcb.LiveCodeBench()
    return [
        {"prompt": bench.messages(item, cot), "problem_id": pid, "task": TASK, "role": ROLE}
        for pid, item in items_of(rows).items()
    ]


def open_sandbox(settings: dict | None = None, workers: int = 2):
    """A checked sandbox with the limits LiveCodeBench's scoring uses (``settings``:
    ``evaluation.benchmarks.livecodebench``); close it when training ends."""
    from ...sandbox import Sandbox
    from ...verifier_canary import checked_sandbox

    return checked_sandbox(Sandbox(workers=max(1, int(workers)), limits=lcb.sandbox_limits(settings)))


def reward_function(
    rows: list[dict],
    sandbox: Any,
    *,
    format_error: float = 0.0,
    settings: dict | None = None,
    workers: int = 2,
) -> Callable[..., list[float]]:
    """The reward of one completion per problem id: 1.0 when the program passes every
    test of its LiveCodeBench problem, 0.0 when not, ``format_error`` when the answer
    holds no program. ``settings`` (``evaluation.benchmarks.livecodebench``) gives the
    per-test timeout, as at evaluation; completions are judged ``workers`` at a time."""
    s = lcb.settings_of(settings)
    items = items_of(rows, s)
    timeout = float(s["timeout"])
    max_bytes = int(s["max_decompressed_mb"]) * 1024 * 1024
    penalty = float(format_error)
    bench = lcb.LiveCodeBench()
    tests = {pid: lcb.all_tests(item, max_bytes) for pid, item in items.items()}

    def judge(completion: Any, pid: str) -> float:
        if pid not in items:
            raise UserError(f"real-data reward: no LiveCodeBench problem {pid!r} among the training rows")
        row = bench._score_sample(
            sandbox, items[pid], tests[pid], Sample(pid, 0, completion_text(completion)), timeout
        )
        if row["reason"] == FORMAT_ERROR:
            return penalty
        return 1.0 if row["passed"] else 0.0

    def reward(prompts, completions, problem_id, **_) -> list[float]:
        if len(completions) != len(problem_id):
            raise UserError(
                f"real-data reward: {len(completions)} completions for {len(problem_id)} problem ids"
            )
        with ThreadPoolExecutor(max(1, int(workers))) as pool:
            return list(pool.map(judge, completions, problem_id))

    reward.__name__ = "lcb_all_tests_pass"
    return reward


def joint_batch(records: list[Mapping[str, Any]], size: int, seed: int, iteration: int) -> list[dict]:
    """The real-data records of one joint-variant iteration: ``size`` of them drawn
    without replacement (all, in a drawn order, when there are fewer), the same for the
    same seed and iteration."""
    if int(size) < 1:
        raise UserError(f"real-data batch size must be at least 1, got {size}")
    rng = random.Random(derive_seed(seed, "gasp-real-data", iteration))
    picked = rng.sample(range(len(records)), min(int(size), len(records)))
    return [dict(records[i]) for i in picked]
