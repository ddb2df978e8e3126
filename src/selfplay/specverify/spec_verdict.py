"""How a proposed spec's three checks combine into one verdict, for every verifier
(selfplay.dafny.spec_files, selfplay.verus.spec_files): validity (the spec verifies
with a stub body), preconditions (a body asserting false must NOT verify: else the
requires are contradictory) and postconditions (an arbitrary result must NOT verify:
else the ensures constrain nothing). Each check's outcome is verified, refuted or
inconclusive; each verifier words its own reasons."""

from __future__ import annotations

from dataclasses import dataclass

VALIDITY = "validity"
PRECONDITIONS = "preconditions"
POSTCONDITIONS = "postconditions"
CHECKS = (VALIDITY, PRECONDITIONS, POSTCONDITIONS)

VERIFIED = "verified"
REFUTED = "refuted"
INCONCLUSIVE = "inconclusive"
OUTCOMES = (VERIFIED, REFUTED, INCONCLUSIVE)


def verdict_reasons(spec_invalid: str) -> dict[str, str]:
    """The verdict codes with their meanings; only why a spec is invalid is worded by
    each verifier (``spec_invalid``)."""
    return {
        "spec_ok": "the spec is well-formed and neither its requires nor its ensures are vacuous",
        "spec_invalid": spec_invalid,
        "vacuous_requires": "the requires clauses are contradictory: no input satisfies them",
        "vacuous_ensures": "the ensures clauses hold for any result: they constrain nothing",
        "spec_check_inconclusive": "a spec check timed out or could not be run to a clear answer",
    }


@dataclass(frozen=True)
class SpecVerdict:
    """The outcome of a spec's checks: ``ok``, a ``code`` (a key of the verifier's
    ``SPEC_VERDICT_REASONS``) and one human line."""

    ok: bool
    code: str
    detail: str


def combine(
    validity: str, preconditions: str | None, postconditions: str | None, reasons: dict[str, str]
) -> SpecVerdict:
    """Combine the outcomes (``preconditions`` None when there is no preconditions file;
    both ignored unless validity verified; ``postconditions`` None: not run) into the
    spec's verdict, worded with ``reasons``."""
    for name, value in (
        ("validity", validity),
        ("preconditions", preconditions),
        ("postconditions", postconditions),
    ):
        if value is not None and value not in OUTCOMES:
            raise ValueError(f"{name} outcome must be one of {OUTCOMES}, not {value!r}")

    def verdict(code: str, detail: str = "") -> SpecVerdict:
        return SpecVerdict(code == "spec_ok", code, detail or reasons[code])

    if validity == REFUTED:
        return verdict("spec_invalid")
    if validity != VERIFIED:
        return verdict("spec_check_inconclusive", "the validity check gave no clear answer")
    if preconditions == VERIFIED:
        return verdict("vacuous_requires")
    if postconditions == VERIFIED:
        return verdict("vacuous_ensures")
    if preconditions == INCONCLUSIVE:
        return verdict("spec_check_inconclusive", "the preconditions check gave no clear answer")
    if postconditions != REFUTED:
        return verdict("spec_check_inconclusive", "the postconditions check gave no clear answer")
    return verdict("spec_ok")
