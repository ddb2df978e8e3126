"""Teacher and solver rewards of GASP (paper 004, Eq. 4-9 and App. A.1).

The generalized learnability reward (Eq. 6)

    R(p; a, b) = [ (p / a) * ((1 - p) / (1 - a)) ** ((1 - a) / a) ] ** b

peaks at p = a with value 1; ``a`` sets the target pass rate, ``b`` the sharpness. A
``Schedule`` pairs one curve with the pass-rate band inside which it applies; outside the
band the teacher gets a flat penalty. The paper's schedules (``SCHEDULES``):

=================  ====  ===  =========  =========================================
name               a     b    band       where
=================  ====  ===  =========  =========================================
lemma              0.5   5    0.3..0.7   Eq. 4, equals [4p(1-p)]^5
lift               0.1   1    0.1..0.5   Eq. 5, equals 10p((1-p)/0.9)^9
onestep_medium     0.3   5    0.1..0.5   Eq. 8 (App. C.3)
onestep_hard       0.1   1    0.1..0.5   Eq. 9 (App. C.3)
unguided           -     -    0 < p < 1  our unguided self-play: Absolute Zero's 1 - p
=================  ====  ===  =========  =========================================

Band membership is decided on the integer count k of N passes, exactly (``in_band``
compares the fraction k/N with the band's decimal bounds as fractions), so k = 3 of
N = 10 is inside the lemma band and no float rounding of 0.3 can move it out. Both
bounds are inclusive, as the paper writes them (0.3 <= p <= 0.7). The ``unguided``
schedule is the Absolute Zero proposer reward (1 - solve rate), with its open band:
the AZR code gives a proposal every try of which passes, or none, the flat penalty
(-0.5; the AZR paper's text says 0, its code and issue #37 say -0.5); this one is not a
paper-004 reward, it stands in for the paper's AZR row (see ``methods``).

Teacher outcomes (``teacher_reward``), in the order a candidate meets the checks:

- ``format_error``: the answer could not be parsed into a proposal. The paper: -1.
- ``invalid``: parsed, but refused by the validity checks (malformed code, unsafe,
  non-deterministic). The paper leaves the value open. Default **-0.5**: Eq. 4 and 5
  have exactly two branches, the curve inside the band and -0.5 "otherwise", and the
  only other value the paper names is the -1 for a format error. A parsed but invalid
  proposal has no pass rate, so it cannot be inside the band: it falls under
  "otherwise". This is also Absolute Zero's value for a well-formed answer that fails
  (its proposer gets -1 only for a format error). Set it below -0.5 to push the teacher
  toward valid code harder than toward in-band difficulty.
- ``not_novel``: valid, but too similar to an accepted item of the global buffers. The
  paper rejects it and leaves the reward open. Default **-0.5**: the novelty filter
  exists to stop the teacher collapsing onto one kind of question (App. C.1 shows that
  collapse without it); a near-copy that earned its learnability reward would pay the
  teacher for exactly that collapse. -0.5 treats it as the other rejections do, and it
  needs no pass rate, so a near-copy costs no student tries. ``None`` instead scores a
  near-copy like any other candidate (its k must then be measured): Algorithm 1's
  literal order, which computes the reward (line 6) before the acceptance test (line 7).
- ``scored``: valid and novel, k of N tries passed: the schedule's curve at p = k/N
  inside the band, ``outside_band`` (-0.5, Eq. 4-9) outside it.

Solver rewards (``solver_reward``): the paper only says the student is rewarded "based on
pass/fail" (Sec. 3.3.2) and gives no values. The defaults are Absolute Zero's, which
GASP builds on and whose Task-Relative REINFORCE++ it uses: correct 1, wrong -0.5,
format error -1 (AZR's solver gets its accuracy, 1 for one correct answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .sections import from_section, number

OUTCOMES = ("format_error", "invalid", "not_novel", "scored")
CURVES = ("learnability", "one_minus_p")


def learnability(p: float, a: float, b: float) -> float:
    """Eq. 6: R(p; a, b), 1 at p = a, 0 at p = 0 and p = 1 (for b > 0)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"pass rate p must be in [0, 1], not {p}")
    if not 0.0 < a < 1.0:
        raise ValueError(f"learnability peak a must be in (0, 1), not {a}")
    if p == 0.0 or p == 1.0:
        return 0.0
    return ((p / a) * ((1.0 - p) / (1.0 - a)) ** ((1.0 - a) / a)) ** b


def _exact(x: float) -> Fraction:
    """A band bound as the decimal it was written as (0.3 is 3/10, not the binary float)."""
    return Fraction(repr(float(x)))


@dataclass(frozen=True)
class Schedule:
    """One teacher reward: a curve and the band of pass rates inside which it applies.

    ``curve="learnability"``: R(p; a, b) on the closed band lo <= p <= hi.
    ``curve="one_minus_p"``: Absolute Zero's 1 - p on the open band lo < p < hi (a, b unused).
    """

    name: str
    a: float | None
    b: float | None
    lo: float
    hi: float
    curve: str = "learnability"

    def __post_init__(self):
        if self.curve not in CURVES:
            raise ValueError(f"curve: must be one of {', '.join(CURVES)}, not {self.curve!r}")
        if self.curve == "learnability":
            if self.a is None or not 0.0 < self.a < 1.0:
                raise ValueError(f"a: the learnability peak must be in (0, 1), not {self.a!r}")
            if self.b is None or not self.b > 0.0:
                raise ValueError(
                    f"b: the learnability sharpness must be positive (else R has no peak), not {self.b!r}"
                )
        if not 0.0 <= self.lo <= self.hi <= 1.0:
            raise ValueError(f"lo, hi: the band must satisfy 0 <= lo <= hi <= 1, not {self.lo}..{self.hi}")

    @property
    def closed(self) -> bool:
        """Whether the band's ends belong to it (the paper's bands do; AZR's does not)."""
        return self.curve == "learnability"

    def contains(self, p: Fraction) -> bool:
        lo, hi = _exact(self.lo), _exact(self.hi)
        return lo <= p <= hi if self.closed else lo < p < hi

    def value(self, p: float) -> float:
        """The curve at pass rate ``p`` (ignoring the band)."""
        if self.curve == "one_minus_p":
            return 1.0 - p
        return learnability(p, self.a, self.b)


SCHEDULES: dict[str, Schedule] = {
    s.name: s
    for s in (
        Schedule("lemma", 0.5, 5.0, 0.3, 0.7),  # Eq. 4
        Schedule("lift", 0.1, 1.0, 0.1, 0.5),  # Eq. 5
        Schedule("onestep_medium", 0.3, 5.0, 0.1, 0.5),  # Eq. 8
        Schedule("onestep_hard", 0.1, 1.0, 0.1, 0.5),  # Eq. 9
        Schedule("unguided", None, None, 0.0, 1.0, curve="one_minus_p"),  # AZR's proposer reward
    )
}


def _count(k: Any, n: Any) -> None:
    for name, v in (("k", k), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"pass count {name} must be an integer, not {v!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"pass count must satisfy 0 <= k <= n and n >= 1, not k={k}, n={n}")


def in_band(k: int, n: int, schedule: Schedule) -> bool:
    """Whether k passes of n tries put the pass rate inside ``schedule``'s band, decided on
    the fraction k/n exactly."""
    _count(k, n)
    return schedule.contains(Fraction(k, n))


@dataclass(frozen=True)
class TeacherRewards:
    """The teacher rewards besides the curve (module docstring: why these defaults).
    ``not_novel=None`` scores a near-copy by its pass rate instead."""

    format_error: float = -1.0
    invalid: float = -0.5
    not_novel: float | None = -0.5
    outside_band: float = -0.5

    def __post_init__(self):
        for name in ("format_error", "invalid", "outside_band"):
            object.__setattr__(self, name, number(name, getattr(self, name)))
        if self.not_novel is not None:
            object.__setattr__(self, "not_novel", number("not_novel", self.not_novel))

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None, prefix: str) -> TeacherRewards:
        """Config ``section`` (keys under ``prefix``, e.g. ``gasp.teacher.rewards``) over the defaults."""
        return from_section(cls, section, prefix)


def teacher_reward(
    outcome: str, k: int | None, n: int | None, schedule: Schedule, rewards: TeacherRewards = TeacherRewards()
) -> float:
    """The teacher's reward for one candidate. ``k`` and ``n`` (passes of tries) are read
    only when the outcome is ``scored`` (or ``not_novel`` with ``rewards.not_novel=None``)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown candidate outcome {outcome!r}; known: {', '.join(OUTCOMES)}")
    if outcome == "format_error":
        return rewards.format_error
    if outcome == "invalid":
        return rewards.invalid
    if outcome == "not_novel" and rewards.not_novel is not None:
        return rewards.not_novel
    _count(k, n)
    if not in_band(k, n, schedule):
        return rewards.outside_band
    return schedule.value(k / n)


def reward_curve(
    schedule: Schedule, n: int, rewards: TeacherRewards = TeacherRewards()
) -> list[tuple[int, float, float]]:
    """``(k, p, reward)`` of a scored candidate for every k = 0..n: the points of
    Fig. 3 and 12 that N tries can reach."""
    _count(0, n)
    return [(k, k / n, teacher_reward("scored", k, n, schedule, rewards)) for k in range(n + 1)]


def continuous_curve(schedule: Schedule, points: int = 201) -> list[tuple[float, float]]:
    """``(p, R(p))`` on an even grid of ``points`` over [0, 1], ignoring the band: the
    smooth line of Fig. 3 and 12 (the band is drawn from ``schedule.lo``/``hi``)."""
    if points < 2:
        raise ValueError(f"a curve needs at least 2 points, not {points}")
    return [(i / (points - 1), schedule.value(i / (points - 1))) for i in range(points)]


@dataclass(frozen=True)
class SolverRewards:
    """Solver rewards; the paper says only pass/fail, these are Absolute Zero's values."""

    correct: float = 1.0
    wrong: float = -0.5
    format_error: float = -1.0

    def __post_init__(self):
        for name in ("correct", "wrong", "format_error"):
            object.__setattr__(self, name, number(name, getattr(self, name)))

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None, prefix: str) -> SolverRewards:
        """Config ``section`` (keys under ``prefix``, e.g. ``gasp.solver.rewards``) over the defaults."""
        return from_section(cls, section, prefix)


def solver_reward(format_ok: bool, correct: bool, rewards: SolverRewards = SolverRewards()) -> float:
    """The student's reward for one answer: a format error first, then right or wrong."""
    if not format_ok:
        return rewards.format_error
    return rewards.correct if correct else rewards.wrong
