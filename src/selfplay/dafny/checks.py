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

from .runner import DafnyJob, DafnySettings, DafnyVerdict, verify
from .screen import Spec, inspect_spec, screen_solution
from .spec_files import (
    INCONCLUSIVE,
    POSTCONDITIONS,
    PRECONDITIONS,
    REFUTED,
    VALIDITY,
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


def check_specs(
    texts: Sequence[str], settings: DafnySettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per spec text: ``ok``, ``reason`` (None when ok, else ``spec:<code>``
    for a text that is not a spec in the shared data model, or a code of
    spec_files.SPEC_VERDICT_REASONS), ``detail``, ``target`` and each check's outcome."""
    records: list[dict] = []
    jobs: list[DafnyJob] = []
    for i, text in enumerate(texts):
        spec, problems = inspect_spec(text)
        if spec is None:
            first = problems[0] if problems else None
            records.append(
                {
                    "ok": False,
                    "reason": f"spec:{first.code if first else 'unreadable'}",
                    "detail": first.detail if first else "not a spec",
                    "target": None,
                    "checks": {},
                }
            )
            continue
        records.append({"ok": None, "target": spec.target.name, "checks": {}})
        for f in spec_check_files(spec):
            jobs.append(DafnyJob(f"{i}:{f.check}", f.text, no_cheating=f.no_cheating))
    if jobs:
        for job, verdict in zip(jobs, verify(jobs, settings, sandbox)):
            index, check = job.name.split(":", 1)
            records[int(index)]["checks"][check] = {
                "outcome": outcome_of(verdict),
                "status": verdict.status,
                "messages": verdict.messages[:5],
            }
    for record in records:
        if record["ok"] is None:
            checks = record["checks"]
            verdict = spec_verdict(
                checks[VALIDITY]["outcome"],
                checks[PRECONDITIONS]["outcome"] if PRECONDITIONS in checks else None,
                checks[POSTCONDITIONS]["outcome"],
            )
            record.update(ok=verdict.ok, reason=None if verdict.ok else verdict.code, detail=verdict.detail)
    return records


def verify_solutions(
    pairs: Sequence[tuple[Spec | str, str]], settings: DafnySettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per (spec, solution text): ``verified``, ``reason`` (None when
    verified; ``screen:<codes>`` when the screen refused it, ``dafny:<status>`` when
    Dafny did not accept the file, ``target_not_verified`` when it did but never
    verified the target's body), the screen's problems and Dafny's verdict."""
    records: list[dict] = []
    jobs: list[tuple[int, DafnyJob, str]] = []
    for i, (spec, text) in enumerate(pairs):
        screen = screen_solution(spec, text)
        record: dict = {"verified": False, "screen": screen.to_dict(), "dafny": None}
        if not screen.ok:
            record["reason"] = "screen:" + ",".join(screen.reasons)
        else:
            target = (spec if isinstance(spec, Spec) else inspect_spec(spec)[0]).target.name
            jobs.append((i, DafnyJob(str(i), text, no_cheating=True), target))
        records.append(record)
    if jobs:
        verdicts = verify([job for _, job, _ in jobs], settings, sandbox)
        for (i, _, target), verdict in zip(jobs, verdicts):
            record = records[i]
            record["dafny"] = verdict.to_dict()
            if verdict.proved(target):
                record.update(verified=True, reason=None)
            elif verdict.status == "verified":
                record["reason"] = "target_not_verified"
            else:
                record["reason"] = f"dafny:{verdict.status}"
    return records
