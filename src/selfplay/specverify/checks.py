"""The two verdicts the PSV track asks of a verifier, the same for every back-end:

* :meth:`Backend.check_specs`: is a proposed spec valid and not vacuous? A text that
  is not a spec is refused at once (``spec:<code>``); the others get their check files
  (validity, maybe preconditions, postconditions), and the outcomes combine into one
  verdict (:mod:`.spec_verdict`);
* :meth:`Backend.verify_solutions`: is a solver's answer a verified solution of its
  spec? It must pass the back-end's screen, and the verifier must accept the file and
  have verified the target itself.

Every file of a call goes to the back-end's runner in one call (so it can batch or
parallelise them), and the records have the same shapes for every back-end: a
solution's record carries the verifier's verdict under the back-end's ``name``
(``dafny``, ``verus``), and a refusal by the verifier reads ``<name>:<status>``.

A back-end subclasses :class:`Backend` and fills in the language- and tool-specific
steps (reading a spec, screening, building the files, running the tool, reading its
verdicts); the flow above stays here.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

from .problems import Problem, ScreenResult
from .spec_verdict import POSTCONDITIONS, PRECONDITIONS, VALIDITY, SpecVerdict


class Backend(abc.ABC):
    """One verifier behind the shared front-end (see the module docstring)."""

    name: ClassVar[str] = ""
    """The verifier's key in a solution record and the prefix of its refusals."""

    # ------------------------------------------------------------ what a back-end fills in

    @abc.abstractmethod
    def inspect_spec(self, text: str) -> tuple[Any | None, list[Problem]]:
        """The spec in ``text`` (None when refused) and every problem found."""

    @abc.abstractmethod
    def spec_check_jobs(self, index: int, spec: Any) -> list[Any]:
        """The runner jobs checking ``spec``, validity first; each named ``<index>:<check>``."""

    @abc.abstractmethod
    def outcome_of(self, verdict: Any, check: str) -> str:
        """A run read for the spec check ``check``: verified, refuted or inconclusive."""

    @abc.abstractmethod
    def spec_verdict(self, validity: str, preconditions: str | None, postconditions: str) -> SpecVerdict:
        """The checks' outcomes combined, worded in the back-end's reasons."""

    @abc.abstractmethod
    def solution_spec(self, spec: Any) -> tuple[Any | None, str | None]:
        """The spec a solution answers (given as a spec or its text), or None and the
        reason its solutions are refused (``spec:<codes>``); may raise instead."""

    @abc.abstractmethod
    def screen_solution(self, spec: Any, text: str) -> ScreenResult:
        """The language's screen of a solution against its spec."""

    @abc.abstractmethod
    def solution_job(self, name: str, spec: Any, text: str) -> Any:
        """The runner job verifying a screened solution."""

    @abc.abstractmethod
    def verify(self, jobs: list[Any], settings: Any, sandbox: Any) -> list[Any]:
        """Run every job; verdicts (with ``status``, ``messages`` and ``to_dict``) in order."""

    @abc.abstractmethod
    def target_proved(self, verdict: Any, spec: Any) -> bool:
        """Given the tool accepted the file: did it verify the target itself?"""

    # ------------------------------------------------------------ the shared flow

    def check_specs(self, texts: Sequence[str], settings: Any = None, sandbox: Any = None) -> list[dict]:
        """One record per spec text: ``ok``, ``reason`` (None when ok; ``spec:<code>``
        for a text that is not a spec, else a verdict code), ``detail``, ``target`` (the
        function to implement) and ``checks`` (per check: ``outcome``, ``status`` and the
        first five messages)."""
        records: list[dict] = []
        jobs: list[Any] = []
        for i, text in enumerate(texts):
            spec, problems = self.inspect_spec(text)
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
            jobs.extend(self.spec_check_jobs(i, spec))
        if jobs:
            for job, verdict in zip(jobs, self.verify(jobs, settings, sandbox)):
                index, check = job.name.split(":", 1)
                records[int(index)]["checks"][check] = {
                    "outcome": self.outcome_of(verdict, check),
                    "status": verdict.status,
                    "messages": verdict.messages[:5],
                }
        for record in records:
            if record["ok"] is None:
                checks = record["checks"]
                verdict = self.spec_verdict(
                    checks[VALIDITY]["outcome"],
                    checks[PRECONDITIONS]["outcome"] if PRECONDITIONS in checks else None,
                    checks[POSTCONDITIONS]["outcome"],
                )
                record.update(
                    ok=verdict.ok, reason=None if verdict.ok else verdict.code, detail=verdict.detail
                )
        return records

    def verify_solutions(
        self, pairs: Sequence[tuple[Any, str]], settings: Any = None, sandbox: Any = None
    ) -> list[dict]:
        """One record per (spec, solution text): ``verified``, ``reason`` (None when
        verified; ``screen:<codes>`` when the screen refused it, ``<name>:<status>`` when
        the verifier did not accept the file, ``target_not_verified`` when it did but
        did not verify the target), the screen's findings (``screen``) and the
        verifier's verdict (under :attr:`name`; None when it did not run)."""
        records: list[dict] = []
        jobs: list[tuple[int, Any, Any]] = []
        for i, (given, text) in enumerate(pairs):
            spec, refused = self.solution_spec(given)
            if spec is None:
                records.append({"verified": False, "reason": refused, "screen": None, self.name: None})
                continue
            screen = self.screen_solution(spec, text)
            record: dict = {"verified": False, "screen": screen.to_dict(), self.name: None}
            if not screen.ok:
                record["reason"] = "screen:" + ",".join(screen.reasons)
            else:
                jobs.append((i, self.solution_job(str(i), spec, text), spec))
            records.append(record)
        if jobs:
            verdicts = self.verify([job for _, job, _ in jobs], settings, sandbox)
            for (i, _, spec), verdict in zip(jobs, verdicts):
                record = records[i]
                record[self.name] = verdict.to_dict()
                if verdict.status != "verified":
                    record["reason"] = f"{self.name}:{verdict.status}"
                elif not self.target_proved(verdict, spec):
                    record["reason"] = "target_not_verified"
                else:
                    record.update(verified=True, reason=None)
        return records
