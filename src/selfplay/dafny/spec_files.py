"""The Dafny texts that check a spec, the text that checks a solution, and how to read
the verifier's verdicts on them.

This module only builds texts; the runner verifies them. Each spec check is the spec
with a body given to its target (everything else stays byte for byte, so Dafny's line
numbers before the target are the spec's own):

===============  ================================  =========================================
check            target body                       when the file verifies
===============  ================================  =========================================
validity         ``assume false;``                 the spec is well-formed: it resolves, its
                                                   helpers verify (termination, preconditions
                                                   of calls), its clauses are well-defined
preconditions    ``assert false;``                 the ``requires`` clauses are contradictory:
                                                   the spec is vacuous (nothing to implement)
postconditions   ``r := *;`` for each out-param,   the ``ensures`` clauses hold whatever the
                 ``modify F;`` for each            method returns and does: they constrain
                 ``modifies F``                    nothing, the spec is vacuous
===============  ================================  =========================================

The validity file is the Dafny counterpart of the PSV paper's ``external_body`` stub: a
body that proves anything, so that only the spec itself is checked. It must be verified
WITHOUT ``/noCheating:1`` (which would turn its ``assume`` into a failing check). The
other two contain no assumption and may be verified with or without it.

Order and reading (:func:`spec_verdict`): run the validity file first; only when it
verifies are the other two meaningful. A spec is kept when validity *verified*, and the
preconditions and postconditions files were each *refuted* (Dafny finished and reported
verification errors, e.g. "assertion violation", "A postcondition might not hold").
Anything else is a refusal with one reason: ``spec_invalid`` (validity refuted),
``vacuous_requires``, ``vacuous_ensures``, or ``spec_check_inconclusive`` (a check that
timed out, could not run, or hit a parse/resolution error: a spec is only kept on clear
answers). A target without ``requires`` has no preconditions file (None): nothing can be
contradictory.

Reading one run (the runner's part): *verified* is exit status 0 with "0 errors" in the
summary line; *refuted* is exit status 4 with a nonzero error count and nothing but
verification errors; every other ending (parse or resolution errors, exit status 2, a
timeout, a crash, a missing summary) is *inconclusive*.

Solutions (:func:`solution_file`): the text verified is the solution exactly as written.
Nothing needs adding: :func:`~selfplay.dafny.screen.screen_solution` has already checked
that every spec declaration and the target's header are in it byte for byte, and a
wrapper or an appended check would only shift the line numbers the solver sees in
Dafny's errors. Verify it with ``/noCheating:1`` (a second line of defence behind the
screen) and accept it only when the target's own implementation is reported verified,
not merely "0 errors".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..specverify.spec_verdict import (  # noqa: F401
    CHECKS,
    INCONCLUSIVE,
    OUTCOMES,
    POSTCONDITIONS,
    PRECONDITIONS,
    REFUTED,
    VALIDITY,
    VERIFIED,
    SpecVerdict,
    combine,
    verdict_reasons,
)
from .screen import Spec

SPEC_VERDICT_REASONS = verdict_reasons(
    spec_invalid="the spec does not verify with a stub body (ill-formed clauses or helpers)"
)


@dataclass(frozen=True)
class SpecCheckFile:
    """One file to verify for a spec check.

    check        :data:`VALIDITY`, :data:`PRECONDITIONS` or :data:`POSTCONDITIONS`
    text         the Dafny program
    no_cheating  whether ``/noCheating:1`` may be passed (False for validity: its stub assumes)
    """

    check: str
    text: str
    no_cheating: bool


def _with_body(spec: Spec, statements: list[str]) -> str:
    """The spec's text with a body holding ``statements`` right after the target's header."""
    cut = spec.target.header_end
    body = "\n{\n" + "".join(f"  {s}\n" for s in statements) + "}"
    return spec.text[:cut] + body + spec.text[cut:]


def program_with_body(spec: Spec, completion: str) -> str:
    """The program a body-format answer stands for (``psv.solve.completion: body``, as the
    paper's release assembles it): the spec with ``completion`` (the target's body from
    its ``{``, and any declarations of the solver's own after it) right after the
    target's header. Screen the result as any solution."""
    cut = spec.target.header_end
    return spec.text[:cut] + "\n" + completion.strip("\n") + "\n" + spec.text[cut:].lstrip("\n")


def validity_file(spec: Spec) -> str:
    """The target with an ``assume false;`` stub body. Verify WITHOUT ``/noCheating``: the
    spec is valid exactly when this verifies (the stub proves the body, so what is left to
    check is the spec: its helpers and the well-definedness of its clauses)."""
    return _with_body(spec, ["assume false;"])


def precondition_file(spec: Spec) -> str | None:
    """The target with an ``assert false;`` body, or None when it has no ``requires``.
    If this VERIFIES, the requires clauses cannot all hold: the spec is vacuous. Refuted
    (an assertion violation) means some input satisfies them, as far as the prover sees."""
    if not spec.target.clause_texts("requires"):
        return None
    return _with_body(spec, ["assert false;"])


def postcondition_file(spec: Spec) -> str:
    """The target with a body that gives every out-parameter an arbitrary value
    (``r := *;``) and havocs everything its ``modifies`` clauses allow (``modify F;``),
    and nothing else. If this VERIFIES, the ensures clauses hold whatever the method
    does: they say nothing about the result, the spec is vacuous. Refuted means the
    ensures constrain the outcome. (With no out-parameters and no ``modifies`` the body
    is empty: ensures that hold for doing nothing speak only about the inputs.)"""
    statements = [f"{out.name} := *;" for out in spec.target.outs]
    statements += [
        f"modify {clause.expression};"
        for clause in spec.target.clauses
        if clause.keyword == "modifies" and clause.expression
    ]
    return _with_body(spec, statements)


def spec_check_files(spec: Spec) -> list[SpecCheckFile]:
    """Every file the spec check verifies, validity first (see the module docstring)."""
    files = [SpecCheckFile(VALIDITY, validity_file(spec), no_cheating=False)]
    pre = precondition_file(spec)
    if pre is not None:
        files.append(SpecCheckFile(PRECONDITIONS, pre, no_cheating=True))
    files.append(SpecCheckFile(POSTCONDITIONS, postcondition_file(spec), no_cheating=True))
    return files


def spec_verdict(validity: str, preconditions: str | None, postconditions: str | None) -> SpecVerdict:
    """The spec's verdict from its checks' outcomes (selfplay.specverify.spec_verdict.combine)."""
    return combine(validity, preconditions, postconditions, SPEC_VERDICT_REASONS)


def solution_file(spec: Spec, solution_text: str) -> str:
    """What is verified for a solution: the solution exactly as written (see the module
    docstring). Screen it first with :func:`~selfplay.dafny.screen.screen_solution`;
    ``spec`` is taken so that callers state which spec the text answers, and so that a
    later change (e.g. appending a check) needs no change of signature."""
    del spec  # nothing is added: the screen has checked the spec part already
    return solution_text
