"""One problem's suite across EvolveCoder rounds: picks on usable tests, the round's
dataset entry, and the numbers behind Table 2 and Figures 4-6."""

import pytest

from selfplay.tracks.evolve.rounds import (
    generation_picks,
    method_counts,
    perfect_count,
    pool_pass_at_k,
    reference_failures,
    round_entry,
    table2_rows,
)

T, F = True, False
SETTINGS = {
    "adversarial": {"easy_pass_rate": 0.95, "top": 2, "diverse": 3, "diverse_window": None},
    "discriminative": {"min_test_pass_rate": 0.1, "size": 5},
    "filter": {"min_test_pass_rate": 0.1, "max_per_vector": 5, "min_tests": 2, "max_perfect_solutions": 60},
}


def test_picks_index_the_whole_suite_and_skip_malformed_tests():
    # 6 solutions, 4 tests; test 1 is malformed (its True/False cells are meaningless).
    rows = [[T, T, F, T], [T, T, T, F], [F, T, F, F], [T, T, F, F], [F, T, T, T], [F, T, F, F]]
    usable = [True, False, True, True]
    picks = generation_picks(rows, usable, seed=7, settings=SETTINGS)
    assert set(picks) == {"adversarial", "discriminative"}
    for pick in picks.values():
        assert 1 not in pick.tests
        assert set(pick.tests) <= {0, 2, 3}
        assert len(pick.solutions) == 5
    assert generation_picks(rows, usable, 7, SETTINGS) == picks


def test_entries_without_a_program_are_never_picked_and_leave_the_picks_whole():
    # 12 programs on 4 tests: t0 every program passes; the rest split them. Then 8 pool
    # entries with no program (all False). As candidates, those 8 identical rows would
    # win the discriminative group (distance 0) and be dropped afterwards: no programs
    # shown. They also kept t0 (100% of the programs) under the 0.95 easy cut.
    programs = [[T, s % 2 == 0, s % 3 == 0, s < 6] for s in range(12)]
    rows = programs + [[F, F, F, F]] * 8
    has_program = [True] * 12 + [False] * 8
    picks = generation_picks(rows, [True] * 4, seed=3, settings=SETTINGS, has_program=has_program)
    assert set(picks) == {"adversarial", "discriminative"}
    for pick in picks.values():
        assert len(pick.solutions) == 5
        assert all(s < 12 for s in pick.solutions)
    adversarial = picks["adversarial"]
    assert 0 not in adversarial.tests  # passed by every program: the easy cut holds
    assert set(adversarial.why["pass_rates"]) == set(adversarial.solutions)
    assert sorted(adversarial.why["top"] + adversarial.why["diverse"]) == adversarial.solutions
    # without the mask the empty rows take the whole discriminative group
    blind = generation_picks(rows, [True] * 4, seed=3, settings=SETTINGS)
    assert all(s >= 12 for s in blind["discriminative"].solutions)
    assert 0 in blind["adversarial"].tests
    # the mask changes nothing when every entry has a program
    assert generation_picks(programs, [True] * 4, 3, SETTINGS, has_program=[True] * 12) == generation_picks(
        programs, [True] * 4, 3, SETTINGS
    )
    assert generation_picks(rows, [True] * 4, 3, SETTINGS, has_program=[False] * 20) == {}


def test_a_disabled_method_is_not_picked():
    settings = {**SETTINGS, "discriminative": {**SETTINGS["discriminative"], "enabled": False}}
    assert set(generation_picks([[T], [F]], [True], 1, settings)) == {"adversarial"}


def test_round_entry_reports_suite_indices_and_malformed():
    # 10 solutions; t0 malformed; t1 passed by none (low); t2, t3 kept.
    rows = [[F, F, s < 5, s % 2 == 0] for s in range(10)]
    entry = round_entry(rows, [False, True, True, True], SETTINGS)
    assert entry.tests == [2, 3]
    assert entry.dropped == {0: "malformed", 1: "low_pass_rate"}
    assert entry.kept_problem
    assert entry.perfect_solutions == 3  # s0, s2, s4


def test_pool_pass_at_k_and_members():
    rows = [[T, T], [T, F], [F, F], [T, T]]
    assert perfect_count(rows, [0, 1]) == (4, 2)
    assert perfect_count(rows, [0]) == (4, 3)
    assert perfect_count(rows, [0, 1], members=[1, 2]) == (2, 0)
    got = pool_pass_at_k([(rows, [0, 1]), (rows, [0])], ks=[1])
    assert got[1] == pytest.approx((0.5 + 0.75) / 2)
    # pass@4 with 4 samples: 1 when any passes
    assert pool_pass_at_k([(rows, [0, 1])], ks=[4])[4] == 1.0
    # a model with 2 samples has no pass@4
    assert pool_pass_at_k([(rows, [0, 1])], ks=[4], members_of=lambda i: [0, 1])[4] is None


def test_method_counts_and_reference_failures():
    origins = [
        {"round": 0, "method": "seed"},
        {"round": 1, "method": "adversarial"},
        {"round": 1, "method": "adversarial"},
        {"round": 1, "method": "discriminative"},
        {"round": 2, "method": "discriminative"},
    ]
    rows = [[T, T, F, T, T]] * 3 + [[T, F, T, T, F]] * 3
    entry = round_entry(rows, [True] * 5, SETTINGS)
    counts = method_counts(origins, entry, 1)
    assert counts == {
        "adversarial": {"generated": 2, "retained": 2},
        "discriminative": {"generated": 1, "retained": 1},
    }
    ref = [T, F, T, T, F]
    assert reference_failures(ref, [True] * 5, origins) == {"seed": 0, "adversarial": 1, "discriminative": 1}
    assert reference_failures(None, [True] * 5, origins) is None


def test_table2_counts_kept_problems_per_source():
    keep = round_entry([[T, T, F]] * 3 + [[F, T, T]] * 3, [True] * 3, SETTINGS)
    drop = round_entry([[T]] * 3, [True], SETTINGS)
    rows = table2_rows([("TACO", keep), ("TACO", drop), ("APPS", keep)])
    assert rows["TACO"] == {"problems": 1, "avg_tests": 3.0}
    assert rows["Overall"] == {"problems": 2, "avg_tests": 3.0}
    assert not drop.kept_problem
