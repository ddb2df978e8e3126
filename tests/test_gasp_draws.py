"""GASP's seeded uniform draws: the same seed and place draw the same, another place or
kind of draw draws differently, and the frequencies are the ones the paper asks for."""

from collections import Counter

import pytest

from selfplay.tracks.gasp import draws


def test_parents_are_reproducible_uniform_with_replacement():
    ids = ["g0", "g1", "g2", "g3"]
    first = draws.draw_parents(ids, 50, 7, 1, "lemma", 1)
    assert first == draws.draw_parents(ids, 50, 7, 1, "lemma", 1)
    assert first != draws.draw_parents(ids, 50, 7, 1, "lemma", 2)
    assert first != draws.draw_parents(ids, 50, 8, 1, "lemma", 1)
    assert set(first) <= set(ids) and len(set(first)) == 4  # with replacement: 50 from 4
    big = Counter(draws.draw_parents(ids, 8000, 0, "freq"))
    assert all(1800 < big[i] < 2200 for i in ids)
    assert draws.draw_parents([], 0, 0) == []
    with pytest.raises(ValueError):
        draws.draw_parents([], 1, 0)


def test_axes_uniform_and_restricted_for_the_no_io_ablation():
    axes = draws.draw_axes(4000, 3, 0, "lemma", 1)
    assert axes == draws.draw_axes(4000, 3, 0, "lemma", 1)
    counts = Counter(axes)
    assert set(counts) == {"io", "f"} and 1850 < counts["io"] < 2150
    assert set(draws.draw_axes(100, 3, 0, "lemma", 1, axes=("f",))) == {"f"}
    with pytest.raises(ValueError):
        draws.draw_axes(1, 0, axes=("x",))


def test_forms_uniform_by_default_and_weighted_by_setting():
    forms = draws.draw_forms(6000, 1, 2, "solver")
    counts = Counter(forms)
    assert all(1800 < counts[f] < 2200 for f in draws.FORMS)
    assert forms == draws.draw_forms(
        6000, 1, 2, "solver", weights={"abduction": 1, "induction": 1, "deduction": 1}
    )
    half = Counter(
        draws.draw_forms(6000, 1, 2, "solver", weights={"induction": 2, "deduction": 1, "abduction": 1})
    )
    assert 2800 < half["induction"] < 3200
    assert set(draws.draw_forms(50, 1, weights={"induction": 0, "deduction": 1})) == {"deduction"}
    for bad in ({"induction": 0, "deduction": 0, "abduction": 0}, {"induction": -1}, {"proof": 1}):
        with pytest.raises(ValueError):
            draws.draw_forms(1, 0, weights=bad)


def test_kinds_of_draw_at_one_place_use_separate_streams():
    # the same seed and place must not hand the parent draw and the axis draw one stream
    assert (
        draws.rng(5, "parents", 1).integers(0, 2**31, 4).tolist()
        != draws.rng(5, "axes", 1).integers(0, 2**31, 4).tolist()
    )


def test_pairs_and_references():
    pairs = draws.draw_pairs(3000, 4, 1, "solver")
    assert pairs == draws.draw_pairs(3000, 4, 1, "solver") and set(pairs) == {0, 1, 2}
    assert all(900 < c < 1100 for c in Counter(pairs).values())
    items = [{"id": i} for i in range(10)]
    refs = draws.draw_references(items, 3, 0, 1, "propose", 1, 0)
    assert len(refs) == 3 and len({r["id"] for r in refs}) == 3
    assert refs == draws.draw_references(items, 3, 0, 1, "propose", 1, 0)
    assert sorted(r["id"] for r in draws.draw_references(items[:2], 3, 0)) == [0, 1]  # fewer than k: all
    assert draws.draw_references([], 3, 0) == []
