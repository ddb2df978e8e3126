"""EvolveCoder's selection and filtering rules (paper 002, Sec. 2.3) on hand-built pass
matrices whose answers are worked out in the comments."""

import random

import pytest

from selfplay.tracks.evolve.selection import (
    adversarial_pick,
    discriminative_pick,
    distinct_vector_tests,
    final_filter,
    per_solution_pass_rates,
    per_test_pass_rates,
    split_tests,
)

T, F = True, False


def test_pass_rates_per_test_and_per_solution():
    rows = [[T, F, T, T], [T, F, F, T], [T, T, F, F], [T, F, F, F]]
    assert per_test_pass_rates(rows) == [1.0, 0.25, 0.25, 0.5]
    assert per_solution_pass_rates(rows) == [0.75, 0.5, 0.5, 0.25]
    assert per_solution_pass_rates(rows, [1, 2]) == [0.5, 0.0, 0.5, 0.0]


def test_ragged_matrix_is_refused():
    with pytest.raises(ValueError, match="differ in length"):
        per_test_pass_rates([[T, F], [T]])


def test_adversarial_drops_nearly_universal_tests_then_takes_best_and_most_spread():
    # Test 0 is passed by all 7 (rate 1.0 >= 0.95): left out of the reduced suite.
    # On tests 1..6: s0 passes 6, s1 passes 5, the rest fewer -> s0, s1 are the top two.
    # Among s2..s6, {s2, s3, s4} have pairwise distances 4, 4, 4 (min 4); any set with s5
    # or s6 (equal to s2 and s3 respectively) has a pair at distance 0.
    rows = [
        [T, T, T, T, T, T, T],  # s0
        [T, T, T, T, T, T, F],  # s1
        [T, T, T, F, F, F, F],  # s2
        [T, F, F, T, T, F, F],  # s3
        [T, F, T, F, T, F, T],  # s4 (distance to s2: 4, to s3: 4 on tests 1..6)
        [T, T, T, F, F, F, F],  # s5 == s2
        [T, F, F, T, T, F, F],  # s6 == s3
    ]
    pick = adversarial_pick(rows, random.Random(0))
    assert pick.tests == [1, 2, 3, 4, 5, 6]
    assert pick.why["top"] == [0, 1]
    assert pick.solutions[:2] == [0, 1]
    assert len(pick.solutions) == 5
    chosen = set(pick.solutions) - {0, 1}
    # the most spread triple never holds a duplicated pattern
    assert not {2, 5} <= chosen and not {3, 6} <= chosen
    assert 4 in chosen


def test_adversarial_with_few_solutions_takes_them_all():
    rows = [[T, F], [F, T], [F, F]]
    assert adversarial_pick(rows, random.Random(3)).solutions == [0, 1, 2]


def test_adversarial_window_limits_diverse_candidates_like_the_released_code():
    # Pass rates on all tests (none dropped: no test reaches 0.95):
    # s0 .8, s1 .8, s2 .6, s3 .4, s4 .2, s5 .0
    rows = [
        [T, T, T, T, F],
        [T, T, T, F, T],
        [T, T, F, F, T],
        [F, T, F, T, F],
        [F, F, T, F, F],
        [F, F, F, F, F],
    ]
    free = adversarial_pick(rows, random.Random(1), top=2, diverse=3)
    windowed = adversarial_pick(rows, random.Random(1), top=2, diverse=3, diverse_window=(0.1, 0.9))
    assert windowed.solutions == [0, 1, 2, 3, 4]  # s5 (rate 0) is outside [0.1, 0.9)
    assert len(free.solutions) == 5


def test_adversarial_ties_are_seeded():
    rows = [[T, F]] * 8  # every solution identical: every choice is a tie
    picks = {tuple(adversarial_pick(rows, random.Random(seed)).solutions) for seed in range(12)}
    assert len(picks) > 1
    assert adversarial_pick(rows, random.Random(5)) == adversarial_pick(rows, random.Random(5))


def test_discriminative_prefers_identical_patterns_and_skips_unreliable_tests():
    # Test 3 is passed by nobody (< 0.1): dropped. Tests 0 and 1 have the same vector:
    # only test 0 stays. s1..s5 share the vector (F, T, -) on tests 0,2 -> distance 0.
    rows = [
        [T, T, F, F],  # s0
        [F, F, T, F],  # s1
        [F, F, T, F],  # s2
        [F, F, T, F],  # s3
        [F, F, T, F],  # s4
        [F, F, T, F],  # s5
        [T, T, T, F],  # s6
    ]
    pick = discriminative_pick(rows, random.Random(0))
    assert pick.tests == [0, 2]
    assert pick.solutions == [1, 2, 3, 4, 5]
    assert pick.why["total_distance"] == 0
    assert pick.why["dropped_unreliable_tests"] == 1
    assert pick.why["dropped_same_vector_tests"] == 1


def test_discriminative_tie_avoids_groups_that_pass_everything():
    # Two groups of five identical vectors: one passes every reliable test (all correct:
    # nothing can split them), one does not. Both have total distance 0.
    perfect = [[T, T, T]] * 5
    flawed = [[T, F, T]] * 5
    pick = discriminative_pick(perfect + flawed, random.Random(0))
    assert pick.solutions == [5, 6, 7, 8, 9]


def test_distinct_vector_tests_keeps_first_of_each_vector():
    rows = [[T, T, F, T], [F, F, T, F]]
    assert distinct_vector_tests(rows, [0, 1, 2, 3]) == [0, 2]


def test_split_tests_needs_one_pass_and_one_fail():
    picked = [[T, T, F, F], [T, F, F, T], [T, F, F, F]]
    assert split_tests(picked) == [False, True, False, True]


def test_final_filter_rules():
    # 12 solutions, 9 tests.
    # t0: nobody passes -> low_pass_rate. t1: 1/12 = 0.083 -> low_pass_rate.
    # t2..t8: the same vector (first 6 solutions pass): 5 kept, t7 and t8 -> same_vector.
    col_same = [T] * 6 + [F] * 6
    col_one = [T] + [F] * 11
    columns = [[F] * 12, col_one] + [col_same] * 7
    rows = [[c[s] for c in columns] for s in range(12)]
    result = final_filter(rows)
    assert result.tests == [2, 3, 4, 5, 6]
    assert result.dropped == {0: "low_pass_rate", 1: "low_pass_rate", 7: "same_vector", 8: "same_vector"}
    assert result.kept_problem and result.reason is None
    assert result.perfect_solutions == 6


def test_final_filter_drops_problems_with_few_tests_or_too_many_perfect_solutions():
    rows = [[T, T, F, T]] * 3 + [[F, T, T, F]] * 3  # 4 distinct-enough tests < 5
    few = final_filter(rows)
    assert not few.kept_problem and few.reason == "fewer_than_5_tests"
    easy = [[T] * 6 for _ in range(61)] + [[F] * 6]
    too_easy = final_filter(easy)
    assert too_easy.perfect_solutions == 61
    assert not too_easy.kept_problem and too_easy.reason == "more_than_60_perfect_solutions"
    assert final_filter(easy, max_perfect=61).kept_problem
