"""Difficulty measure, rounding, and the hard/easy training-set selection."""

from __future__ import annotations

import math

import pytest

from selfplay.curriculum import difficulty, is_hard, round_difficulty, select_hard_and_easy
from selfplay.curriculum.difficulty import round_half_up


def test_difficulty_values():
    assert difficulty(4, 10) == 6.0
    assert difficulty(0, 10) == 10.0
    assert difficulty(10, 10) == 0.0
    assert difficulty(3, 10) == 7.0
    assert difficulty(1, 3) == pytest.approx(20 / 3)


@pytest.mark.parametrize("n_correct,n", [(0, 0), (1, 0), (-1, 5), (6, 5), (1, -3)])
def test_difficulty_rejects_bad_counts(n_correct, n):
    with pytest.raises(ValueError):
        difficulty(n_correct, n)


@pytest.mark.parametrize(
    "d,expected",
    [
        (2.5, 3),
        (7.49, 7),
        (7.5, 8),
        (0.5, 1),
        (0.49999999999999994, 0),
        (9.5, 10),
        (10.0, 10),
        (12.0, 10),
        (-0.4, 0),
        (-3.0, 0),
        (6.0, 6),
        (2.4999999, 2),
        (3.5, 4),
        (4.5, 5),
    ],
)
def test_round_difficulty_halves_up_and_clamps(d, expected):
    assert round_difficulty(d) == expected
    assert isinstance(round_difficulty(d), int)


def test_round_half_up_negative_and_nan():
    assert round_half_up(-2.5) == -2
    with pytest.raises(ValueError):
        round_difficulty(math.nan)


def test_is_hard():
    assert is_hard(5.0, 5)
    assert is_hard(10.0, 5)
    assert not is_hard(4.99, 5)


def _items(*difficulties):
    return [{"id": f"i{k}", "difficulty": d} for k, d in enumerate(difficulties)]


def test_selection_counts_ten_hard_two_easy():
    items = _items(*([5.0, 8.0] * 5), *([0.0] * 20))
    out = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.2, seed=1)
    hard = [it for it in out if it["difficulty"] >= 5]
    assert len(hard) == 10 and len(out) == 12
    assert out[:10] == [it for it in items if it["difficulty"] >= 5]  # hard first, input order


def test_selection_fraction_rounds_half_up():
    items = _items(6.0, 7.0, 9.0, *([1.0] * 10))
    out = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.5, seed=0)
    assert len(out) == 3 + 2  # 0.5 * 3 = 1.5 -> 2


def test_selection_no_hard_gives_nothing():
    items = _items(0.0, 1.0, 2.0, 4.9)
    assert select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.2, seed=0) == []
    assert select_hard_and_easy([], hard_threshold=5, easy_fraction=0.2, seed=0) == []


def test_selection_easy_pool_smaller_than_requested():
    items = _items(*([9.0] * 10), 1.0, 2.0)
    out = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.5, seed=0)
    assert len(out) == 12  # wants 5 easy, only 2 exist


def test_selection_zero_fraction_and_bad_fraction():
    items = _items(9.0, 1.0)
    assert select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.0, seed=0) == [items[0]]
    for bad in (-0.1, math.nan, math.inf):
        with pytest.raises(ValueError):
            select_hard_and_easy(items, hard_threshold=5, easy_fraction=bad, seed=0)


def test_selection_round_robin_over_bins():
    easy = _items(*([0.0] * 30), *([1.2] * 30), *([2.4] * 30))
    hard = [{"id": f"h{k}", "difficulty": 10.0} for k in range(30)]
    out = select_hard_and_easy(hard + easy, hard_threshold=5, easy_fraction=0.3, seed=3)
    drawn = out[30:]
    assert len(drawn) == 9
    bins = [round_difficulty(it["difficulty"]) for it in drawn]
    assert bins == [0, 1, 2] * 3  # ascending bins, one item per bin per round


def test_selection_skips_exhausted_bins():
    items = _items(*([9.0] * 10), 0.0, 3.0, 3.0, 3.0, 3.0)
    out = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.4, seed=0)
    bins = [round_difficulty(it["difficulty"]) for it in out[10:]]
    assert bins == [0, 3, 3, 3]


def test_selection_deterministic_no_duplicates_items_unchanged():
    items = _items(*([7.0] * 50), *[k % 5 for k in range(200)])
    snapshot = [dict(it) for it in items]
    a = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.5, seed=11)
    b = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.5, seed=11)
    c = select_hard_and_easy(items, hard_threshold=5, easy_fraction=0.5, seed=12)
    assert [it["id"] for it in a] == [it["id"] for it in b]
    assert [it["id"] for it in a] != [it["id"] for it in c]
    assert len({it["id"] for it in a}) == len(a) == 75
    assert items == snapshot
    assert all(any(x is it for it in items) for x in a)  # the same objects, not copies


def test_selection_custom_key_and_threshold():
    items = [{"d": 3.0}, {"d": 1.0}, {"d": 0.0}]
    out = select_hard_and_easy(items, key="d", hard_threshold=3, easy_fraction=1.0, seed=0)
    assert out == [{"d": 3.0}, {"d": 0.0}]  # bin 0 is visited first


@pytest.mark.parametrize("bad", [{}, {"difficulty": None}, {"difficulty": "5"}, {"difficulty": math.nan}])
def test_selection_rejects_items_without_a_difficulty(bad):
    with pytest.raises(ValueError):
        select_hard_and_easy([{"difficulty": 9.0}, bad], hard_threshold=5, easy_fraction=1, seed=0)
