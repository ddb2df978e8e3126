"""The two verdicts the PSV track asks of Dafny, each with a recorded reason:

* :func:`check_specs`: is a proposed spec valid and not vacuous? It must parse as a
  spec (screen.inspect_spec), verify with a stub body, have satisfiable preconditions
  and ensures that constrain the result (spec_files.py says how each file is read);
* :func:`verify_solutions`: is a solver's answer a verified solution of its spec? It
  must pass the screen (the spec part unchanged, no escape hatch), and Dafny, run with
  ``/noCheating:1``, must accept the file and report the target's own body verified.

Every Dafny file of a call goes to the runner at once, so it batches them into as few
Dafny processes as it can (runner.py); the verdicts are the same as one at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..specverify.checks import Backend
from .runner import DafnyJob, DafnySettings, DafnyVerdict, verify
from .screen import Spec, inspect_spec, parse_spec, screen_solution
from .spec_files import (
    INCONCLUSIVE,
    REFUTED,
    VERIFIED,
    spec_check_files,
    spec_verdict,
)


def outcome_of(verdict: DafnyVerdict) -> str:
    """A run read for a spec check: verified, refuted (Dafny finished and reported only
    verification errors, none of them a prover giving up) or inconclusive."""
    if verdict.status == "verified":
        return VERIFIED
    if verdict.status == "failed" and "inconclusive" not in verdict.implementations.values():
        return REFUTED
    return INCONCLUSIVE


class DafnyBackend(Backend):
    """Dafny behind the shared front-end: a spec check's files are verified without
    ``/noCheating:1`` only for the validity stub; a solution is verified as written with
    ``/noCheating:1`` and counts when Dafny reports the target's own body verified.
    A solution of a spec text that is not a spec raises :class:`~.screen.SpecError`."""

    name = "dafny"

    inspect_spec = staticmethod(inspect_spec)
    spec_verdict = staticmethod(spec_verdict)
    screen_solution = staticmethod(screen_solution)
    verify = staticmethod(verify)

    def spec_check_jobs(self, index: int, spec: Spec) -> list[DafnyJob]:
        return [
            DafnyJob(f"{index}:{f.check}", f.text, no_cheating=f.no_cheating) for f in spec_check_files(spec)
        ]

    def outcome_of(self, verdict: DafnyVerdict, check: str) -> str:
        return outcome_of(verdict)

    def solution_spec(self, spec: Spec | str) -> tuple[Spec, None]:
        return (parse_spec(spec) if isinstance(spec, str) else spec), None

    def solution_job(self, name: str, spec: Spec, text: str) -> DafnyJob:
        return DafnyJob(name, text, no_cheating=True)

    def target_proved(self, verdict: DafnyVerdict, spec: Spec) -> bool:
        return verdict.proved(spec.target.name)


BACKEND = DafnyBackend()


def check_specs(
    texts: Sequence[str], settings: DafnySettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per spec text: ``ok``, ``reason`` (None when ok, else ``spec:<code>``
    for a text that is not a spec in the shared data model, or a code of
    spec_files.SPEC_VERDICT_REASONS), ``detail``, ``target`` and each check's outcome
    (see :meth:`selfplay.specverify.checks.Backend.check_specs`)."""
    return BACKEND.check_specs(texts, settings, sandbox)


def verify_solutions(
    pairs: Sequence[tuple[Spec | str, str]], settings: DafnySettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per (spec, solution text): ``verified``, ``reason`` (None when
    verified; ``screen:<codes>`` when the screen refused it, ``dafny:<status>`` when
    Dafny did not accept the file, ``target_not_verified`` when it did but never
    verified the target's body), the screen's problems and Dafny's verdict (``dafny``)
    (see :meth:`selfplay.specverify.checks.Backend.verify_solutions`)."""
    return BACKEND.verify_solutions(pairs, settings, sandbox)
