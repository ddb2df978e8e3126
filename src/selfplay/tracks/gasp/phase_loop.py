"""When a GASP teacher phase ends (paper 004, Algorithm 1 and App. D).

Algorithm 1 loops each teacher phase "while |B| < M": generate, score, accept the
candidates that are valid, novel and in band. App. D adds that the loop also stops at
``max_attempts`` and that a rejection-sampling step "can contain multiple generation
steps", without giving M, ``max_attempts`` or what an attempt is. ``PhaseLoop`` keeps
the count:

- ``target`` (M): the phase ends once this many candidates are accepted. Candidates are
  generated in rounds, so the last round can overshoot M; every candidate it accepts is
  kept (the caller's update batch can hold more than M).
- ``max_attempts`` with ``count="generations"`` (default): at most this many generation
  rounds of ``per_attempt`` candidates each, App. D's "generation steps".
  ``count="candidates"``: at most this many candidates in all; the last round is cut to
  what is left.
- ``ended``: ``"target_reached"`` when M was reached (even on the very last attempt),
  ``"attempts_spent"`` otherwise; ``None`` while the phase runs.

``ShortPhase`` says what a phase that ends short of M does (``on_short``):

- ``"update"`` (default): the phase still ends in its one teacher update, on whatever
  it scored. App. D: "one model update per rejection sampling step", so every phase
  updates; and the rewards for rejections (-1 for a format error, -0.5 outside the band)
  are the only signal a teacher far from the band gets. Skipping would freeze the teacher
  exactly when it fails to reach M, which at tiny scale is nearly every phase.
- ``"skip"``: no update; reads Algorithm 1's loop as never ending short, so a short
  phase is a phase that did not happen for the teacher.
"""

from __future__ import annotations

from dataclasses import dataclass, field

COUNTS = ("generations", "candidates")
ENDINGS = ("target_reached", "attempts_spent")
ON_SHORT = ("update", "skip")


def _positive(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: must be a positive integer, not {value!r}")
    return value


@dataclass
class PhaseLoop:
    """The running count of one teacher phase: ask ``next_batch_size()``, generate and
    score that many candidates, ``record`` them, repeat until ``done``."""

    target: int
    max_attempts: int
    count: str = "generations"
    per_attempt: int = 1
    attempts: int = field(default=0, init=False)  # generation rounds recorded
    candidates: int = field(default=0, init=False)  # candidates recorded
    accepted: int = field(default=0, init=False)  # candidates accepted

    def __post_init__(self):
        _positive("target", self.target)
        _positive("max_attempts", self.max_attempts)
        _positive("per_attempt", self.per_attempt)
        if self.count not in COUNTS:
            raise ValueError(f"count: must be one of {', '.join(COUNTS)}, not {self.count!r}")

    @property
    def spent(self) -> bool:
        """Whether the attempt budget is used up."""
        used = self.attempts if self.count == "generations" else self.candidates
        return used >= self.max_attempts

    @property
    def done(self) -> bool:
        return self.accepted >= self.target or self.spent

    @property
    def ended(self) -> str | None:
        if self.accepted >= self.target:
            return "target_reached"
        return "attempts_spent" if self.spent else None

    def next_batch_size(self) -> int:
        """How many candidates the next round generates."""
        if self.done:
            raise RuntimeError(f"the phase has ended ({self.ended}); no further round")
        if self.count == "candidates":
            return min(self.per_attempt, self.max_attempts - self.candidates)
        return self.per_attempt

    def record(self, proposed: int, accepted: int) -> None:
        """One round: ``proposed`` candidates generated, ``accepted`` of them accepted."""
        if self.done:
            raise RuntimeError(f"the phase has ended ({self.ended}); nothing more to record")
        if isinstance(proposed, bool) or not isinstance(proposed, int) or proposed < 0:
            raise ValueError(f"proposed must be a count, not {proposed!r}")
        if isinstance(accepted, bool) or not isinstance(accepted, int) or not 0 <= accepted <= proposed:
            raise ValueError(f"accepted must be a count of at most proposed ({proposed}), not {accepted!r}")
        if self.count == "candidates":
            if proposed < 1:
                raise ValueError("counting candidates, a round of none would never end the phase")
            if proposed > self.max_attempts - self.candidates:
                raise ValueError(
                    f"{proposed} candidates recorded, but only "
                    f"{self.max_attempts - self.candidates} were left of max_attempts"
                )
        self.attempts += 1
        self.candidates += proposed
        self.accepted += accepted

    def summary(self) -> dict:
        """The counts for the phase's record (``phase.json``)."""
        return {
            "attempts": self.attempts,
            "candidates": self.candidates,
            "accepted": self.accepted,
            "target": self.target,
            "ended": self.ended,
        }


@dataclass(frozen=True)
class ShortPhase:
    """What a phase that ends with fewer than M accepted does (module docstring)."""

    on_short: str = "update"

    def __post_init__(self):
        if self.on_short not in ON_SHORT:
            raise ValueError(f"on_short: must be one of {', '.join(ON_SHORT)}, not {self.on_short!r}")

    def updates(self, loop: PhaseLoop) -> bool:
        """Whether the phase that ``loop`` counted ends in a teacher update."""
        if not loop.done:
            raise RuntimeError("the phase is still running")
        return loop.ended == "target_reached" or self.on_short == "update"
