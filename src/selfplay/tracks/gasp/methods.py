"""The self-play methods of paper 004's tables: GASP and the variants its ablations change.

A method fixes which teacher phases an iteration runs and with which reward schedule
(``rewards.SCHEDULES``), whether candidates are rejected for lack of novelty, which
difficulty axes a proposal is drawn along, and whether the teacher is shown a goalpost.
Everything else (counts, sampling, the update) is the track's config, the same for
every method, so an ablation differs from GASP in exactly what its name says.

=================  =========================  =======  ========  ======  ===========
method             teacher phases (schedule)  novelty  axes      guided  then
=================  =========================  =======  ========  ======  ===========
gasp               lemma, lift                yes      io, f     yes     solver
no_rejection       lemma, lift                no       io, f     yes     solver
no_io_axis         lemma, lift                yes      f         yes     solver
onestep_medium     onestep (onestep_medium)   yes      io, f     yes     solver
onestep_hard       onestep (onestep_hard)     yes      io, f     yes     solver
unguided           propose (unguided)         yes      io, f     no      solver
gasp_real_rl       lemma, lift                yes      io, f     yes     solver, real
real_rl            (none)                     -        -         no      real
filter_rl          (none)                     -        -         no      real
=================  =========================  =======  ========  ======  ===========

``real`` is an RLVR update on problems of the real training split (Sec. 3.4): a batch
drawn per iteration, each answered ``real_data.samples`` times and judged on all its
LiveCodeBench tests. ``gasp_real_rl`` is the paper's joint variant (after each GASP
iteration); ``real_rl`` is the Real-data RL baseline (App. D: GRPO, n = 8), run as the
same chain of recorded jobs, one iteration = one update.

``filter_rl`` is the goalpost filter's third stage (Sec. 3.2, "Final RL filter"): the
Real-data RL baseline's phase and update, trained only on the problems the first two
stages left (the prefilter's rows) instead of the whole training split. It is no method
of the tables (``gasp.methods`` cannot name it, see ``TABLE_METHODS``): it runs only when
``goalposts.source`` is filter and ``goalposts.filter.final_rl`` is set, and its
checkpoints are scored only on the filter's benchmark.

``unguided`` is our stand-in for the paper's AZR row (unguided self-play): the teacher
writes a task with no goalpost in view and is rewarded as Absolute Zero rewards its
proposer (``rewards.SCHEDULES["unguided"]``). The paper evaluates the released AZR
checkpoint instead; a paper-scale config can add it as a downloaded model for the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from ...errors import UserError


@dataclass(frozen=True)
class Phase:
    name: str  # lemma, lift, onestep, propose: file and partition name
    schedule: str  # key of rewards.SCHEDULES
    parent: str  # what a candidate is drawn from: goalpost, lemma (this iteration's accepted), none


@dataclass(frozen=True)
class Method:
    name: str
    phases: tuple[Phase, ...]
    novelty: bool = True
    axes: tuple[str, ...] = ("io", "f")
    title: str = ""
    solver: bool = True  # a solver phase on the accepted tasks
    real_data: bool = False  # an RLVR phase on real training problems ends each iteration
    real_data_training: bool = False

    @property
    def guided(self) -> bool:
        return any(p.parent == "goalpost" for p in self.phases)

    @cached_property
    def order(self) -> tuple[str, ...]:
        """Every phase of one iteration, in order; each ends in one update. Cached: the
        workflow's input functions ask it several times for each of a paper plan's ~10,000
        phase and update jobs (a frozen dataclass, so the tuple never changes)."""
        return (
            tuple(p.name for p in self.phases)
            + (("solver",) if self.solver else ())
            + (("real",) if self.real_data else ())
        )


# every teacher phase's name: a task's kind is the phase that accepted it
TEACHER_PHASES = ("lemma", "lift", "onestep", "propose")

LEMMA = Phase("lemma", "lemma", "goalpost")
LIFT = Phase("lift", "lift", "lemma")
REAL_RL = Method(
    "real_rl",
    (),
    novelty=False,
    axes=(),
    solver=False,
    real_data=True,
    real_data_training=True,
    title="Real-data RL",
)
# the goalpost filter's final RL run (Sec. 3.2, stage 3): Real-data RL on other rows, a
# method of the filter only
FILTER_RL = "filter_rl"

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("gasp", (LEMMA, LIFT), title="GASP"),
        Method("no_rejection", (LEMMA, LIFT), novelty=False, title="GASP w/o rejection sampling"),
        Method("no_io_axis", (LEMMA, LIFT), axes=("f",), title="GASP w/o i/o axis"),
        Method("onestep_medium", (Phase("onestep", "onestep_medium", "goalpost"),), title="One-step medium"),
        Method("onestep_hard", (Phase("onestep", "onestep_hard", "goalpost"),), title="One-step hard"),
        Method("unguided", (Phase("propose", "unguided", "none"),), title="Unguided self-play (ours)"),
        Method(
            "gasp_real_rl",
            (LEMMA, LIFT),
            real_data=True,
            real_data_training=True,
            title="GASP + Real-data RL",
        ),
        REAL_RL,
        replace(REAL_RL, name=FILTER_RL, title="Final RL filter (goalposts)"),
    )
}

# the methods gasp.methods may name (the tables' rows)
TABLE_METHODS = tuple(m for m in METHODS if m != FILTER_RL)


def method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise UserError(f"unknown GASP method {name!r}; known: {', '.join(METHODS)}") from None


def phase_of(method_name: str, phase_name: str) -> Phase:
    for p in method(method_name).phases:
        if p.name == phase_name:
            return p
    raise UserError(f"GASP method {method_name!r} has no phase {phase_name!r}")
