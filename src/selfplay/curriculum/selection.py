"""Biasing a training set towards hard instances.

Early on most of Alice's instances are easy for Bob; training on all of them would
mostly teach her to write easy programs. So every hard instance is kept and only a
limited number of easy ones is added: ``easy_fraction`` times the number of hard
ones (rounded, halves up). The easy ones are drawn without replacement by cycling
over their integer difficulty bins in ascending order, one item per bin per round,
so that each easy difficulty level is represented before any level gets a second
item. Within a bin the order is a seeded shuffle.
"""

from __future__ import annotations

import math
import numbers
import random

from .difficulty import is_hard, round_difficulty, round_half_up


def _difficulty_of(item: dict, key: str, index: int) -> float:
    try:
        value = item[key]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"item {index} has no '{key}' value") from exc
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"item {index}: '{key}' must be a finite number, got {value!r}")
    return float(value)


def select_hard_and_easy(
    items: list[dict],
    *,
    key: str = "difficulty",
    hard_threshold: float,
    easy_fraction: float | None = None,
    easy_share: float | None = None,
    seed: int,
    strictly_above: bool = False,
) -> list[dict]:
    """All hard items (in input order) followed by the drawn easy items (in draw order).

    The number of easy items is set by one of ``easy_fraction`` (times the number of
    hard items: paper 001, 20% for Alice's main examples) or ``easy_share`` (their
    share of the whole selection: paper 000's difficulty-prediction subset is 50% easy,
    i.e. as many easy items as hard ones). Items are returned as the same objects,
    unchanged. The result depends only on the items' order and difficulties and on ``seed``.
    """
    if (easy_fraction is None) == (easy_share is None):
        raise ValueError("give exactly one of easy_fraction and easy_share")
    if easy_share is not None:
        if not math.isfinite(easy_share) or not 0 <= easy_share < 1:
            raise ValueError(f"easy_share must be a number in [0, 1), got {easy_share}")
        easy_fraction = easy_share / (1 - easy_share)
    if not math.isfinite(easy_fraction) or easy_fraction < 0:
        raise ValueError(f"easy_fraction must be a finite number >= 0, got {easy_fraction}")
    hard: list[dict] = []
    bins: dict[int, list[dict]] = {}
    for index, item in enumerate(items):
        d = _difficulty_of(item, key, index)
        if is_hard(d, hard_threshold, strictly_above):
            hard.append(item)
        else:
            bins.setdefault(round_difficulty(d), []).append(item)

    n_easy_available = sum(len(members) for members in bins.values())
    n_easy = min(round_half_up(easy_fraction * len(hard)), n_easy_available)
    if n_easy <= 0:
        return hard

    rng = random.Random(seed)
    queues = []
    for level in sorted(bins):
        members = list(bins[level])
        rng.shuffle(members)
        queues.append(members)

    easy: list[dict] = []
    position = [0] * len(queues)
    while len(easy) < n_easy:
        for q, members in enumerate(queues):
            if len(easy) == n_easy:
                break
            if position[q] < len(members):
                easy.append(members[position[q]])
                position[q] += 1
    return hard + easy
