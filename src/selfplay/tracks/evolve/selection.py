"""Which tests and which solutions each step of EvolveCoder's test evolution looks at
(paper 002, Sec. 2.3), as pure functions over a pass matrix.

A pass matrix here is a sequence of rows, one per candidate solution, each a sequence
of booleans, one per test (``rows[s][t]`` is True when solution ``s`` passes test
``t``). Tests that could not be evaluated at all (malformed) are removed by the caller
before these functions see the matrix.

* ``adversarial_pick``: drop the tests that nearly every solution passes, then take the
  two solutions with the highest pass rate on what is left, and three more whose
  pass/fail patterns disagree most (largest smallest pairwise Hamming distance, ties
  broken by the larger total distance, then by a seeded draw).
* ``discriminative_pick``: drop tests passed by fewer than 10% of the pool, keep one
  test per distinct pass vector, then take five solutions whose patterns on that suite
  are identical or closest (smallest total pairwise Hamming distance).
* ``split_tests``: the new tests that separate the picked solutions (passed by at least
  one of them and failed by at least one).
* ``final_filter``: the paper's end-of-round filter: tests passed by under 10% of the
  pool go, at most five tests are kept per identical pass vector, and the problem goes
  when fewer than five tests remain or more than 60 solutions pass every one.

Every choice that is not forced is made by a ``random.Random`` the caller seeds, so a
run is repeatable; where the paper leaves a number open, the functions take it as an
argument and the track's config names the value it chose.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

Rows = Sequence[Sequence[bool]]


def _array(rows: Rows) -> np.ndarray:
    """The matrix as a boolean (solutions x tests) array; a ragged matrix is an error."""
    if not rows:
        return np.zeros((0, 0), dtype=bool)
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError("pass matrix rows differ in length")
    return np.asarray(rows, dtype=bool).reshape(len(rows), width)


def per_test_pass_rates(rows: Rows) -> list[float]:
    """For each test, the share of solutions that pass it (0.0 for an empty pool)."""
    m = _array(rows)
    if m.shape[0] == 0:
        return [0.0] * (len(rows[0]) if rows else 0)
    return m.mean(axis=0).tolist()


def per_solution_pass_rates(rows: Rows, tests: Sequence[int] | None = None) -> list[float]:
    """For each solution, the share of the given tests (default: all) it passes; a
    solution facing no tests has rate 0.0."""
    m = _array(rows)
    if tests is not None:
        m = m[:, list(tests)] if m.size else m
    if m.shape[1] == 0:
        return [0.0] * m.shape[0]
    return m.mean(axis=1).tolist()


def hamming_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pairwise Hamming distances between the rows of a boolean array."""
    v = vectors.astype(np.int16)
    return (v[:, None, :] != v[None, :, :]).sum(axis=2)


def _seeded_order(n: int, rng: random.Random) -> list[int]:
    """A seeded tie-breaking rank for n items (lower rank wins a tie)."""
    order = list(range(n))
    rng.shuffle(order)
    rank = [0] * n
    for position, item in enumerate(order):
        rank[item] = position
    return rank


@dataclass(frozen=True)
class Pick:
    """The tests a generation step shows the model and the solutions it picked."""

    tests: list[int]  # column indices of the suite shown with the programs
    solutions: list[int]  # row indices of the chosen programs, in pool order
    why: dict = field(default_factory=dict)  # the numbers behind the choice


def adversarial_pick(
    rows: Rows,
    rng: random.Random,
    *,
    easy_pass_rate: float = 0.95,
    top: int = 2,
    diverse: int = 3,
    diverse_window: tuple[float, float] | None = None,
) -> Pick:
    """Paper 002's adversarial selection.

    Tests whose pass rate is at least ``easy_pass_rate`` are the ones "passed by nearly
    all solutions" and are left out of the reduced suite. On that suite the ``top``
    solutions with the highest pass rate are taken (ties: seeded), then ``diverse`` of
    the others maximising their smallest pairwise Hamming distance (ties: larger total
    distance, then seeded). ``diverse_window`` (lo, hi), when given, first limits the
    diverse candidates to pass rates in [lo, hi), as the authors' released code does;
    if fewer than ``diverse`` qualify, every remaining solution is a candidate.
    """
    m = _array(rows)
    n_sol = m.shape[0]
    rates = per_test_pass_rates(rows)
    kept_tests = [t for t, r in enumerate(rates) if r < easy_pass_rate]
    sub = m[:, kept_tests] if m.size else m
    sol_rates = per_solution_pass_rates(rows, kept_tests)
    rank = _seeded_order(n_sol, rng)
    by_rate = sorted(range(n_sol), key=lambda s: (-sol_rates[s], rank[s]))
    best = by_rate[:top]
    rest = [s for s in range(n_sol) if s not in best]
    if diverse_window is not None:
        lo, hi = diverse_window
        windowed = [s for s in rest if lo <= sol_rates[s] < hi]
        if len(windowed) >= diverse:
            rest = windowed
    chosen = _most_spread(sub, rest, diverse, rank)
    return Pick(
        tests=kept_tests,
        solutions=sorted(best + chosen),
        why={
            "dropped_easy_tests": len(rates) - len(kept_tests),
            "pass_rates": {s: round(sol_rates[s], 6) for s in sorted(best + chosen)},
            "top": sorted(best),
            "diverse": sorted(chosen),
        },
    )


def _most_spread(sub: np.ndarray, candidates: list[int], k: int, rank: list[int]) -> list[int]:
    """The k candidates whose pass vectors have the largest smallest pairwise distance."""
    if len(candidates) <= k:
        return sorted(candidates)
    dist = hamming_matrix(sub[candidates]) if sub.shape[1] else np.zeros((len(candidates),) * 2, int)
    best_key, best = None, None
    for combo in itertools.combinations(range(len(candidates)), k):
        pairs = [dist[a, b] for a, b in itertools.combinations(combo, 2)]
        key = (min(pairs) if pairs else 0, sum(pairs), -sum(rank[candidates[c]] for c in combo))
        if best_key is None or key > best_key:
            best_key, best = key, combo
    return sorted(candidates[c] for c in best)


def distinct_vector_tests(rows: Rows, tests: Sequence[int]) -> list[int]:
    """The first test (in suite order) of each distinct pass vector among ``tests``."""
    m = _array(rows)
    seen, kept = set(), []
    for t in tests:
        key = m[:, t].tobytes()
        if key not in seen:
            seen.add(key)
            kept.append(t)
    return kept


def discriminative_pick(
    rows: Rows, rng: random.Random, *, min_test_pass_rate: float = 0.1, size: int = 5
) -> Pick:
    """Paper 002's discriminative selection.

    The suite is reduced to tests with pass rate >= ``min_test_pass_rate``, one per
    distinct pass vector. Then ``size`` solutions are chosen whose vectors on that suite
    are identical or nearly so: for every solution, a group is grown from it by adding
    the solution closest in total distance to the group; the group with the smallest
    total pairwise Hamming distance wins (ties: fewer solutions that pass the whole
    reduced suite, since programs that are all correct cannot be split; then seeded).
    """
    m = _array(rows)
    n_sol = m.shape[0]
    rates = per_test_pass_rates(rows)
    reliable = [t for t, r in enumerate(rates) if r >= min_test_pass_rate]
    kept_tests = distinct_vector_tests(rows, reliable)
    sub = m[:, kept_tests] if m.size else m
    rank = _seeded_order(n_sol, rng)
    if n_sol <= size:
        chosen = list(range(n_sol))
    else:
        dist = hamming_matrix(sub) if sub.shape[1] else np.zeros((n_sol, n_sol), int)
        perfect = sub.all(axis=1) if sub.shape[1] else np.ones(n_sol, bool)
        best_key, chosen = None, []
        for start in range(n_sol):
            group = [start]
            while len(group) < size:
                nxt = min(
                    (s for s in range(n_sol) if s not in group),
                    key=lambda s: (int(dist[s, group].sum()), rank[s]),
                )
                group.append(nxt)
            total = int(sum(dist[a, b] for a, b in itertools.combinations(group, 2)))
            key = (total, int(perfect[group].sum()), sorted(rank[s] for s in group))
            if best_key is None or key < best_key:
                best_key, chosen = key, group
    chosen = sorted(chosen)
    total = sum(int((sub[a] != sub[b]).sum()) for a, b in itertools.combinations(chosen, 2))
    return Pick(
        tests=kept_tests,
        solutions=chosen,
        why={
            "dropped_unreliable_tests": len(rates) - len(reliable),
            "dropped_same_vector_tests": len(reliable) - len(kept_tests),
            "total_distance": total,
        },
    )


def split_tests(rows_of_picked: Rows) -> list[bool]:
    """For each new test, whether the picked solutions disagree on it (at least one
    passes and at least one fails): the discriminative step's split requirement."""
    m = _array(rows_of_picked)
    if m.shape[0] == 0:
        return []
    return (m.any(axis=0) & ~m.all(axis=0)).tolist()


@dataclass(frozen=True)
class FilterResult:
    """What the end-of-round filter keeps of one problem's accumulated suite."""

    tests: list[int]  # kept column indices, in suite order
    dropped: dict[int, str]  # column -> reason
    kept_problem: bool
    reason: str | None  # why the problem is dropped (None when kept)
    perfect_solutions: int  # solutions passing every kept test


def final_filter(
    rows: Rows,
    *,
    min_test_pass_rate: float = 0.1,
    max_per_vector: int = 5,
    min_tests: int = 5,
    max_perfect: int = 60,
) -> FilterResult:
    """Paper 002's test-suite filtering over the accumulated suite of one problem.

    Tests passed by fewer than ``min_test_pass_rate`` of the pool are dropped
    (``low_pass_rate``); of each group of tests with identical pass vectors the first
    ``max_per_vector`` in suite order (the oldest, so seed tests come first) are kept
    (``same_vector``). The problem is dropped with fewer than ``min_tests`` kept tests
    or more than ``max_perfect`` solutions passing all of them.
    """
    m = _array(rows)
    rates = per_test_pass_rates(rows)
    dropped: dict[int, str] = {}
    per_vector: dict[bytes, int] = defaultdict(int)
    kept: list[int] = []
    for t, rate in enumerate(rates):
        if rate < min_test_pass_rate:
            dropped[t] = "low_pass_rate"
            continue
        key = m[:, t].tobytes()
        if per_vector[key] >= max_per_vector:
            dropped[t] = "same_vector"
            continue
        per_vector[key] += 1
        kept.append(t)
    perfect = int(m[:, kept].all(axis=1).sum()) if kept and m.shape[0] else 0
    reason = None
    if len(kept) < min_tests:
        reason = f"fewer_than_{min_tests}_tests"
    elif perfect > max_perfect:
        reason = f"more_than_{max_perfect}_perfect_solutions"
    return FilterResult(
        tests=kept, dropped=dropped, kept_problem=reason is None, reason=reason, perfect_solutions=perfect
    )
