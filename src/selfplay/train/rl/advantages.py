"""Advantage estimators for policy-gradient training on scalar, per-completion rewards.

Both functions take one reward per completion (``NaN`` marks a completion no reward
function could score, TRL's convention for a reward of ``None``) and return one
advantage per completion, in the order given. An unscorable completion gets advantage
0 and takes no part in any mean or spread, so it neither moves the policy nor shifts
the baseline of the others.

``group_relative_advantages`` is GRPO as TRL 1.16's ``GRPOTrainer`` computes it for a
single reward function: the completions come in consecutive groups of ``group_size``
answers to the same prompt; each reward minus its group's mean, then, by
``scale_rewards``, divided by the group's standard deviation (``"group"``), by the
whole batch's (``"batch"``), or by nothing (``"none"``), with TRL's 1e-4 added to the
divisor. Standard deviations use Bessel's correction, as TRL's does. It is here so the
estimator can be tested by hand and compared with what the trainer really used; the
trainer itself keeps TRL's own computation when ``estimator`` is ``"grpo"``.

``task_relative_advantages`` is the Task-Relative REINFORCE++ of Absolute Zero. Plain
REINFORCE++ has no per-prompt group: every completion's reward is compared with a
baseline taken over the batch (the mean reward), and the result is whitened, i.e.
divided by the batch's standard deviation. Absolute Zero trains several jobs at once
(task types abduction / deduction / induction, each in two roles, proposer and
solver), whose rewards live on different scales, so it does this separately inside
each (task type, role) partition and puts the pieces back together. In the reference
implementation the whitening runs over tokens (every token of a completion carries
that completion's return), so a long completion weighs more in the partition's mean
and spread than a short one; passing ``token_counts`` reproduces that, leaving it out
weighs every completion once.

How this differs from TRL, and why it is not a TRL setting. TRL's GRPO always
subtracts the mean of the prompt's group; ``scale_rewards="batch"`` only changes the
divisor, never the baseline, and there is no option to use a baseline shared by
different prompts. Nor can TRL partition a batch by a data column: its advantages
are computed inline in ``GRPOTrainer._generate_and_score_completions`` with no hook
(TRL's maintainers point to subclassing). So the task-relative estimator is computed
here and swapped in by the subclass in ``grpo.py``. Two cases TRL never meets need a
defined answer here: a partition with one scorable completion, and a partition whose
rewards are all equal; both give advantage 0 (nothing to compare with), never NaN.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

# Added to the divisor by TRL's GRPO when rewards are scaled.
TRL_STD_EPS = 1e-4
# Added to the variance before the square root when whitening (as the reference
# REINFORCE++ implementation does).
WHITEN_VAR_EPS = 1e-8
SCALE_REWARDS = ("group", "batch", "none")


def _as_rewards(rewards: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Rewards as a float64 vector with ``None`` turned into NaN."""
    values = [np.nan if r is None else r for r in rewards] if not isinstance(rewards, np.ndarray) else rewards
    out = np.asarray(values, dtype=np.float64).reshape(-1)
    if np.isinf(out).any():
        raise ValueError("rewards must be finite numbers or None/NaN (unscorable), not infinite")
    return out


def weighted_mean_std(values: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float]:
    """Mean and Bessel-corrected standard deviation of the non-NaN ``values``.

    ``weights`` count how many times each value occurs (e.g. its token count); the
    correction uses their sum as the number of observations. With one observation or
    fewer the spread is 0; with none the mean is NaN.
    """
    values = np.asarray(values, dtype=np.float64)
    weights = np.ones_like(values) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = ~np.isnan(values) & (weights > 0)
    total = float(weights[keep].sum())
    if total == 0.0:
        return float("nan"), 0.0
    mean = float((weights[keep] * values[keep]).sum() / total)
    if total <= 1.0:
        return mean, 0.0
    squares = float((weights[keep] * (values[keep] - mean) ** 2).sum())
    return mean, float(np.sqrt(squares / (total - 1.0)))


def group_relative_advantages(
    rewards: Sequence[float | None] | np.ndarray, group_size: int, scale_rewards: str = "group"
) -> np.ndarray:
    """GRPO advantages (TRL semantics): reward minus its group's mean, optionally scaled.

    ``rewards`` holds consecutive groups of ``group_size`` completions of one prompt.
    """
    values = _as_rewards(rewards)
    if group_size < 1 or values.size % group_size:
        raise ValueError(f"{values.size} rewards do not split into groups of {group_size}")
    if scale_rewards not in SCALE_REWARDS:
        raise ValueError(f"scale_rewards must be one of {', '.join(SCALE_REWARDS)}, got {scale_rewards!r}")
    groups = values.reshape(-1, group_size)
    stats = [weighted_mean_std(g) for g in groups]
    centered = groups - np.array([[mean] for mean, _ in stats])
    if scale_rewards == "group":
        centered = centered / (np.array([[std] for _, std in stats]) + TRL_STD_EPS)
    elif scale_rewards == "batch":
        centered = centered / (weighted_mean_std(values)[1] + TRL_STD_EPS)
    return np.nan_to_num(centered.reshape(-1), nan=0.0)


def whiten(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``(value - mean) / std`` over the non-NaN values (weighted); 0 where there is no spread."""
    values = np.asarray(values, dtype=np.float64)
    mean, std = weighted_mean_std(values, weights)
    if not std > 0.0 or std <= 1e-12 * max(1.0, abs(mean)):
        # One observation, or all equal (up to rounding of the mean): no signal.
        return np.zeros_like(values)
    return np.nan_to_num((values - mean) / np.sqrt(std**2 + WHITEN_VAR_EPS), nan=0.0)


def partitions(tasks: Sequence[Hashable], roles: Sequence[Hashable]) -> dict[tuple, list[int]]:
    """Indices of each (task, role) pair, pairs in order of first appearance."""
    if len(tasks) != len(roles):
        raise ValueError(f"{len(tasks)} task labels for {len(roles)} role labels")
    parts: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(tasks, roles)):
        parts.setdefault(key, []).append(i)
    return parts


def task_relative_advantages(
    rewards: Sequence[float | None] | np.ndarray,
    tasks: Sequence[Hashable],
    roles: Sequence[Hashable],
    token_counts: Sequence[int] | np.ndarray | None = None,
) -> np.ndarray:
    """Task-Relative REINFORCE++: whiten the rewards separately in every (task, role) partition.

    ``token_counts`` (one per completion) weigh each completion by its length, as
    token-level whitening does; without them every completion counts once.
    """
    values = _as_rewards(rewards)
    if len(tasks) != values.size:
        raise ValueError(f"{values.size} rewards but {len(tasks)} task labels")
    weights = None
    if token_counts is not None:
        weights = np.asarray(token_counts, dtype=np.float64).reshape(-1)
        if weights.size != values.size or (weights < 0).any():
            raise ValueError("token_counts must hold one non-negative count per reward")
    out = np.zeros_like(values)
    for indices in partitions(tasks, roles).values():
        idx = np.asarray(indices)
        out[idx] = whiten(values[idx], None if weights is None else weights[idx])
    return out
