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

from .runner import VerusJob, VerusVerdict, verify
from .screen import screen_solution
from .settings import VerusSettings
from .spec import Spec, inspect_spec
from .spec_files import (
    INCONCLUSIVE,
    POSTCONDITIONS,
    PRECONDITIONS,
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


def check_specs(
    texts: Sequence[str], settings: VerusSettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per spec text: ``ok``, ``reason`` (None when ok; ``spec:<code>`` for a
    text that is not a spec or uses an escape hatch; else a code of
    spec_files.SPEC_VERDICT_REASONS), ``detail``, ``target`` (the function to implement)
    and ``checks`` (per check: ``outcome``, ``status`` and the first messages)."""
    records: list[dict] = []
    jobs: list[VerusJob] = []
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
            jobs.append(VerusJob(f"{i}:{f.check}", f.text))
    if jobs:
        for job, verdict in zip(jobs, verify(jobs, settings, sandbox)):
            index, check = job.name.split(":", 1)
            records[int(index)]["checks"][check] = {
                "outcome": outcome_of(verdict, check),
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
    pairs: Sequence[tuple[Spec | str, str]], settings: VerusSettings | None = None, sandbox: Any = None
) -> list[dict]:
    """One record per (spec, solution text): ``verified``, ``reason`` (None when
    verified; ``screen:<codes>`` when the screen refused it, ``verus:<status>`` when
    Verus did not accept the file, ``target_not_verified`` when it did but reported
    fewer than :data:`MIN_VERIFIED` verified functions), the screen's findings
    (``screen``) and Verus's verdict (``verus``, None when it did not run)."""
    records: list[dict] = []
    jobs: list[tuple[int, VerusJob]] = []
    for i, (spec, text) in enumerate(pairs):
        if isinstance(spec, str):
            parsed, problems = inspect_spec(spec)
            if parsed is None:
                codes = ",".join(dict.fromkeys(p.code for p in problems)) or "unreadable"
                records.append({"verified": False, "reason": f"spec:{codes}", "screen": None, "verus": None})
                continue
            spec = parsed
        screen = screen_solution(spec, text)
        record: dict = {"verified": False, "screen": screen.to_dict(), "verus": None}
        if not screen.ok:
            record["reason"] = "screen:" + ",".join(screen.reasons)
        else:
            jobs.append((i, VerusJob(str(i), solution_file(spec, text))))
        records.append(record)
    if jobs:
        verdicts = verify([job for _, job in jobs], settings, sandbox)
        for (i, _), verdict in zip(jobs, verdicts):
            record = records[i]
            record["verus"] = verdict.to_dict()
            if verdict.status != "verified":
                record["reason"] = f"verus:{verdict.status}"
            elif verdict.verified < MIN_VERIFIED:
                record["reason"] = "target_not_verified"
            else:
                record.update(verified=True, reason=None)
    return records
