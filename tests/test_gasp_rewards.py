"""GASP's teacher and solver rewards (paper 004, Eq. 4-9): the values at N = 10 against
a table worked out by hand from the equations, the band edges decided
on the integer count, the closed forms of Eq. 4 and 5, and the settings' refusals."""

import math

import pytest

from selfplay.errors import UserError
from selfplay.tracks.gasp import rewards as R
from selfplay.tracks.gasp.rewards import SCHEDULES, SolverRewards, TeacherRewards

OUT = -0.5
# k: (lemma, lift, one-step medium) at N = 10, from the note. Lift k = 3 is 3 (7/9)^9 =
# 0.31248, so 0.312 at 3 decimals (the note's 0.313 is a rounding slip).
TABLE = {
    0: (OUT, OUT, OUT),
    1: (OUT, 1.000, 0.077),
    2: (OUT, 0.693, 0.625),
    3: (0.418, 0.312, 1.000),
    4: (0.815, 0.104, 0.698),
    5: (1.000, 0.025, 0.254),
    6: (0.815, OUT, OUT),
    7: (0.418, OUT, OUT),
    8: (OUT, OUT, OUT),
    9: (OUT, OUT, OUT),
    10: (OUT, OUT, OUT),
}


@pytest.mark.parametrize("column,name", list(enumerate(["lemma", "lift", "onestep_medium"])))
def test_reward_curve_at_n10_matches_the_hand_computed_table(column, name):
    curve = R.reward_curve(SCHEDULES[name], 10)
    assert [k for k, _, _ in curve] == list(range(11))
    assert [p for _, p, _ in curve] == [k / 10 for k in range(11)]
    assert [round(r, 3) for _, _, r in curve] == [TABLE[k][column] for k in range(11)]


def test_onestep_hard_is_the_lift_curve_on_the_same_band():
    assert R.reward_curve(SCHEDULES["onestep_hard"], 10) == R.reward_curve(SCHEDULES["lift"], 10)
    hard = SCHEDULES["onestep_hard"]
    assert (hard.a, hard.b, hard.lo, hard.hi) == (0.1, 1.0, 0.1, 0.5)


@pytest.mark.parametrize("p", [0.0, 0.05, 0.1, 0.25, 0.3, 1 / 3, 0.5, 0.62, 0.7, 0.9, 1.0])
def test_closed_forms_of_eq4_and_eq5(p):
    assert R.learnability(p, 0.5, 5) == pytest.approx((4 * p * (1 - p)) ** 5, abs=1e-12)
    assert R.learnability(p, 0.1, 1) == pytest.approx(10 * p * ((1 - p) / 0.9) ** 9, abs=1e-12)


@pytest.mark.parametrize("a,b", [(0.5, 5), (0.1, 1), (0.3, 5), (0.2, 2.5)])
def test_learnability_peaks_at_a_with_value_one(a, b):
    assert R.learnability(a, a, b) == pytest.approx(1.0)
    for p in (a - 0.05, a + 0.05, 0.0, 1.0):
        assert R.learnability(p, a, b) < 1.0
    assert R.learnability(0.0, a, b) == 0.0 and R.learnability(1.0, a, b) == 0.0


def test_band_edges_are_decided_on_the_integer_count():
    lemma, lift = SCHEDULES["lemma"], SCHEDULES["lift"]
    assert [k for k in range(11) if R.in_band(k, 10, lemma)] == [3, 4, 5, 6, 7]
    assert [k for k in range(11) if R.in_band(k, 10, lift)] == [1, 2, 3, 4, 5]
    # 0.1 * 3 == 0.30000000000000004 and 7 / 10 == 0.7 as floats; the fractions are exact
    assert R.in_band(3, 10, lemma) and not R.in_band(2, 10, lemma)
    assert R.in_band(7, 10, lemma) and not R.in_band(8, 10, lemma)
    assert R.in_band(30, 100, lemma) and not R.in_band(29, 100, lemma) and R.in_band(70, 100, lemma)
    assert not R.in_band(71, 100, lemma)
    assert R.in_band(1, 10, lift) and not R.in_band(0, 10, lift) and not R.in_band(6, 10, lift)
    assert R.in_band(3, 6, lift) and not R.in_band(4, 6, lift)
    # N = 4 leaves the lemma band only k = 2 (the note's reason to keep N = 10)
    assert [k for k in range(5) if R.in_band(k, 4, lemma)] == [2]


def test_in_band_refuses_impossible_counts():
    for k, n in ((11, 10), (-1, 10), (0, 0), (2.0, 10), (True, 10)):
        with pytest.raises(ValueError):
            R.in_band(k, n, SCHEDULES["lemma"])


def test_teacher_reward_by_outcome():
    lemma = SCHEDULES["lemma"]
    assert R.teacher_reward("format_error", None, None, lemma) == -1.0
    assert R.teacher_reward("invalid", None, None, lemma) == -0.5
    assert R.teacher_reward("not_novel", None, None, lemma) == -0.5
    assert R.teacher_reward("scored", 5, 10, lemma) == 1.0
    assert R.teacher_reward("scored", 0, 10, lemma) == -0.5
    custom = TeacherRewards(format_error=-2, invalid=-0.75, not_novel=-0.25, outside_band=-0.1)
    assert R.teacher_reward("format_error", 5, 10, lemma, custom) == -2.0
    assert R.teacher_reward("invalid", 5, 10, lemma, custom) == -0.75
    assert R.teacher_reward("not_novel", 5, 10, lemma, custom) == -0.25
    assert R.teacher_reward("scored", 9, 10, lemma, custom) == -0.1
    # not_novel None: a near-copy is scored on its pass rate (Algorithm 1's literal order)
    literal = TeacherRewards(not_novel=None)
    assert R.teacher_reward("not_novel", 4, 10, lemma, literal) == pytest.approx((4 * 0.4 * 0.6) ** 5)
    with pytest.raises(ValueError):
        R.teacher_reward("not_novel", None, None, lemma, literal)
    with pytest.raises(ValueError, match="unknown candidate outcome"):
        R.teacher_reward("accepted", 5, 10, lemma)
    with pytest.raises(ValueError):
        R.teacher_reward("scored", None, 10, lemma)


def test_unguided_schedule_is_azr_one_minus_p_with_open_band():
    unguided = SCHEDULES["unguided"]
    values = [r for _, _, r in R.reward_curve(unguided, 4)]
    assert values == [-0.5, 0.75, 0.5, 0.25, -0.5]


def test_teacher_rewards_from_dict_merges_and_refuses_unknown_keys():
    got = TeacherRewards.from_dict({"invalid": -0.75, "not_novel": None}, "gasp.teacher.rewards")
    assert got == TeacherRewards(format_error=-1.0, invalid=-0.75, not_novel=None, outside_band=-0.5)
    assert TeacherRewards.from_dict(None, "gasp.teacher.rewards") == TeacherRewards()
    with pytest.raises(UserError, match=r"gasp\.teacher\.rewards\.novel\b") as err:
        TeacherRewards.from_dict({"novel": -0.5}, "gasp.teacher.rewards")
    assert "\n" not in str(err.value)
    with pytest.raises(UserError, match=r"gasp\.teacher\.rewards\.invalid: must be a finite number"):
        TeacherRewards.from_dict({"invalid": "low"}, "gasp.teacher.rewards")
    with pytest.raises(UserError, match=r"gasp\.teacher\.rewards\.outside_band"):
        TeacherRewards.from_dict({"outside_band": math.nan}, "gasp.teacher.rewards")
    with pytest.raises(UserError, match="must be a mapping"):
        TeacherRewards.from_dict([1], "gasp.teacher.rewards")


def test_solver_rewards():
    assert SolverRewards() == SolverRewards(correct=1.0, wrong=-0.5, format_error=-1.0)
    assert R.solver_reward(True, True) == 1.0
    assert R.solver_reward(True, False) == -0.5
    assert R.solver_reward(False, True) == -1.0 and R.solver_reward(False, False) == -1.0
    zero_one = SolverRewards.from_dict({"wrong": 0, "format_error": 0}, "gasp.solver.rewards")
    assert R.solver_reward(True, False, zero_one) == 0.0 and R.solver_reward(False, False, zero_one) == 0.0
    with pytest.raises(UserError, match=r"gasp\.solver\.rewards\.right"):
        SolverRewards.from_dict({"right": 1}, "gasp.solver.rewards")


def test_schedule_refuses_curves_without_a_peak():
    with pytest.raises(ValueError, match="a:"):
        R.Schedule("bad", 1.0, 1.0, 0.1, 0.5)
    with pytest.raises(ValueError, match="b:"):
        R.Schedule("bad", 0.5, -1.0, 0.1, 0.5)
    with pytest.raises(ValueError, match="band"):
        R.Schedule("bad", 0.5, 1.0, 0.6, 0.5)


def test_continuous_curve_spans_zero_to_one_and_peaks_at_a():
    curve = R.continuous_curve(SCHEDULES["lift"], 11)
    assert curve[0] == (0.0, 0.0) and curve[-1][0] == 1.0
    assert max(curve, key=lambda pr: pr[1])[0] == pytest.approx(0.1)
