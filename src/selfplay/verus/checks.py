"""The two verdicts the PSV track asks of Verus, each with a recorded reason (the same
record shapes as :mod:`selfplay.dafny.checks`, so the track can swap verifiers):

* :func:`check_specs`: is a proposed spec valid and not vacuous? It must read as a
  spec (:func:`~.spec.inspect_spec`: a target with ensures, no escape hatch), verify
  with the paper's ``external_body`` stub, and have satisfiable preconditions and
  ensures that constrain the result (:mod:`.spec_files` says how each file is read);
* :func:`verify_solutions`: is a solver's answer a verified solution of its spec? It
  must pass the screen (the spec part unchanged, no escape hatch), and Verus must
  accept the file (exit 0, zero errors) having verified at least
  :data:`MIN_VERIFIED` functions: the target and ``main``, as the released code
  required ("verified > 1").

Every file of a call goes to the runner at once, which runs them in parallel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..specverify.checks import Backend
from .runner import VerusJob, VerusVerdict, verify
from .screen import screen_solution
from .settings import VerusSettings
from .spec import Spec, inspect_spec
from .spec_files import (
    INCONCLUSIVE,
    REFUTED,
    VALIDITY,
    VERIFIED,
    solution_file,
    spec_check_files,
    spec_verdict,
)

MIN_VERIFIED = 2
"""Functions a solution's run must report verified: the target and ``main``."""


def spec_target_name(text: str) -> str | None:
    """The name of the function a spec asks for (no Verus run), or None when the text
    is not a spec (for de-duplicating proposals before the spec check)."""
    spec, _ = inspect_spec(text)
    return spec.target_name if spec is not None else None


def outcome_of(verdict: VerusVerdict, check: str) -> str:
    """A run read for a spec check: verified (Verus accepted the file and verified
    something), refuted (verification errors; for the validity check also a compile
    error, since then the spec itself does not compile) or inconclusive."""
    if verdict.status == "verified" and verdict.verified >= 1:
        return VERIFIED
    if verdict.status == "failed" or (verdict.status == "compile_error" and check == VALIDITY):
        return REFUTED
    return INCONCLUSIVE


class VerusBackend(Backend):
    """Verus behind the shared front-end: one file per job; a solution gets ``main``
    added when it has none and counts when Verus reports at least
    :data:`MIN_VERIFIED` functions verified. A solution of a spec text that is not a
    spec gets a record with reason ``spec:<codes>`` (Verus does not run)."""

    name = "verus"

    inspect_spec = staticmethod(inspect_spec)
    outcome_of = staticmethod(outcome_of)
    spec_verdict = staticmethod(spec_verdict)
    screen_solution = staticmethod(screen_solution)
    verify = staticmethod(verify)

    def spec_check_jobs(self, index: int, spec: Spec) -> list[VerusJob]:
        return [VerusJob(f"{index}:{f.check}", f.text) for f in spec_check_files(spec)]

    def solution_spec(self, spec: Spec | str) -> tuple[Spec | None, str | None]:
        if not isinstance(spec, str):
            return spec, None
        parsed, problems = inspect_spec(spec)
        if parsed is None:
            return None, "spec:" + (",".join(dict.fromkeys(p.code for p in problems)) or "unreadable")
        return parsed, None

    def solution_job(self, name: str, spec: Spec, text: str) -> VerusJob:
        return VerusJob(name, solution_file(spec, text))

    def target_proved(self, verdict: VerusVerdict, spec: Spec) -> bool:
        return verdict.verified >= MIN_VERIFIED


BACKEND = VerusBackend()


def check_specs(
    texts: Sequence[str], settings: VerusSettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per spec text: ``ok``, ``reason`` (None when ok; ``spec:<code>`` for a
    text that is not a spec or uses an escape hatch; else a code of
    spec_files.SPEC_VERDICT_REASONS), ``detail``, ``target`` (the function to implement)
    and ``checks`` (per check: ``outcome``, ``status`` and the first messages)."""
    return BACKEND.check_specs(texts, settings, sandbox)


def verify_solutions(
    pairs: Sequence[tuple[Spec | str, str]], settings: VerusSettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per (spec, solution text): ``verified``, ``reason`` (None when
    verified; ``screen:<codes>`` when the screen refused it, ``verus:<status>`` when
    Verus did not accept the file, ``target_not_verified`` when it did but reported
    fewer than :data:`MIN_VERIFIED` verified functions), the screen's findings
    (``screen``) and Verus's verdict (``verus``, None when it did not run)."""
    return BACKEND.verify_solutions(pairs, settings, sandbox)
