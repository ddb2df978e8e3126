"""The Verus files that check a spec, the file that checks a solution, and how the
verdicts on them are read.

This module only builds texts; the runner verifies them. Each spec check is the spec's
own text with a body given to its target (everything before the target stays byte for
byte), then ``fn main() {}`` when the spec has none, then the closing brace of the
``verus!`` block when the spec left it open (a spec without a block is wrapped in one,
and ``use vstd::prelude::*;`` is put first when the spec has no ``use vstd`` line):

===============  ==========================================  ==============================================
check            target                                      when the file verifies
===============  ==========================================  ==============================================
validity         ``#[verifier::external_body]`` and the      the spec is well-formed: it compiles, its
                 body ``assume(false); arbitrary()``         types and modes check, its helpers verify
                 (the paper's Appendix D stub)               (spec fn termination, proof fns, exec
                                                             dependencies)
preconditions    ``proof { assert(false); }`` then           the ``requires`` are contradictory: the spec
                 ``vstd::pervasive::unreached()``            is vacuous (nothing to implement)
postconditions   each ``&mut`` parameter and the result      the ``ensures`` hold whatever the function
                 set to ``selfplay_arbitrary_value()``, an   returns and leaves behind: they constrain
                 external_body helper with no contract       nothing, the spec is vacuous
                 (added to the file)
===============  ==========================================  ==============================================

Only the target is stubbed; other exec functions of a spec keep their bodies and are
verified with it (the released code stubbed every non-spec function; a dependency
whose body does not verify makes the spec invalid here). The ``external_body``
attribute and ``assume(false)`` exist only in this generated file: the screen refuses
both in specs and in answers.

Order and reading (:func:`spec_verdict`): validity first; the other two matter only
when it verified. A spec is kept when validity *verified* and the preconditions and
postconditions files were each *refuted* (Verus finished and reported verification
errors). Otherwise one reason: ``spec_invalid`` (validity refuted, or the spec does not
compile: :func:`~selfplay.verus.checks.outcome_of` reads a compile error of the
validity file as refuted), ``vacuous_requires``, ``vacuous_ensures``, or
``spec_check_inconclusive`` (a timeout, a crash, or one of our generated bodies that
did not compile: a spec is only kept on clear answers). A target without ``requires``
has no preconditions file.

Solutions (:func:`solution_file`): the answer as written, plus ``fn main() {}`` just
before the closing brace of its last ``verus!`` block when it declares no ``main``
(the file is compiled as a program; the line numbers of the answer do not move).
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
from .declarations import VerusSyntaxError, parse
from .spec import Spec

ARBITRARY_HELPER = "selfplay_arbitrary_value"
MAIN = "fn main() {}"

SPEC_VERDICT_REASONS = verdict_reasons(
    spec_invalid="the spec does not compile or does not verify with a stub body"
)


@dataclass(frozen=True)
class SpecCheckFile:
    """One file to verify for a spec check: ``check`` (one of :data:`CHECKS`) and its text."""

    check: str
    text: str


def _indent_of(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    lead = text[line_start:offset]
    return lead if lead.strip() == "" else ""


def _with_body(
    spec: Spec, statements: list[str], *, attribute: str | None = None, extra_items: tuple[str, ...] = ()
) -> str:
    """The spec's text with the target's body replaced by ``statements`` (see the
    module docstring for what else is added)."""
    indent = _indent_of(spec.text, spec.target.start)
    body = "\n" + indent + "{\n" + "".join(f"{indent}    {s}\n" for s in statements) + indent + "}\n"
    return _assemble(spec, body, attribute=attribute, extra_items=extra_items)


def _assemble(
    spec: Spec,
    body: str,
    *,
    attribute: str | None = None,
    extra_items: tuple[str, ...] = (),
    add_main: bool = True,
) -> str:
    """The spec's text with ``body`` (text starting at the body's ``{``) after the
    target's header, in place of the target's own body or ``;``; then ``main`` (unless
    the spec has one or ``add_main`` is false), the verus! close, the vstd import."""
    text = spec.text
    target = spec.target
    indent = _indent_of(text, target.start)
    head = text[: target.start]
    if attribute is not None:
        head += attribute + "\n" + indent
    tail = "" if target.open_body else text[target.end :]  # a body or a closing ';' is replaced
    items = list(extra_items)
    if add_main and not spec.has_main:
        items.append(MAIN)
    added = "".join("\n" + indent + item.replace("\n", "\n" + indent) + "\n" for item in items)
    out = head + text[target.start : target.header_end] + body + added + tail
    if spec.block_open:
        out = out.rstrip() + "\n\n} // verus!\n"
    if not spec.has_block:
        out = "verus! {\n\n" + out.rstrip() + "\n\n} // verus!\n"
    if not any(d.kind == "use" and "vstd" in d.text for d in spec.program.items):
        out = "use vstd::prelude::*;\n\n" + out
    return out


def program_with_body(spec: Spec, completion: str, declares_main: bool = False) -> str:
    """The program a body-format answer stands for (``psv.solve.completion: body``, as the
    paper's release assembles it): the spec, then ``completion`` (the target's body from
    its ``{``, and any items of the solver's own after it) as the target's body, then
    ``fn main() {}`` unless the spec or the completion (``declares_main``) has one, inside
    the spec's verus! block. Screen the result as any solution."""
    return _assemble(spec, "\n" + completion.strip("\n") + "\n", add_main=not declares_main)


def validity_file(spec: Spec) -> str:
    """The paper's spec-check file: the target becomes an ``external_body`` stub whose
    body is ``assume(false); arbitrary()``. It verifies exactly when the spec itself is
    well-formed."""
    return _with_body(spec, ["assume(false);", "arbitrary()"], attribute="#[verifier::external_body]")


def precondition_file(spec: Spec) -> str | None:
    """The target with a body that asserts ``false`` (and then calls vstd's
    ``unreached``, whose precondition is ``false``, for a value of the return type), or
    None when the target has no ``requires``. If this VERIFIES the requires cannot hold
    together: the spec is vacuous."""
    if not spec.target.clause_texts("requires"):
        return None
    return _with_body(spec, ["proof { assert(false); }", "vstd::pervasive::unreached()"])


ARBITRARY_ITEM = f"#[verifier::external_body]\nfn {ARBITRARY_HELPER}<A>() -> A {{\n    unimplemented!()\n}}"


def postcondition_file(spec: Spec) -> str:
    """The target with a body that gives every ``&mut`` parameter and the result a value
    the prover knows nothing about, and nothing else. If this VERIFIES the ensures hold
    whatever the function does: the spec is vacuous."""
    statements = [
        f"*{p.name} = {ARBITRARY_HELPER}();" for p in spec.target.params if p.mut_ref and p.name != "self"
    ]
    if spec.target.returns_value:
        statements.append(f"{ARBITRARY_HELPER}()")
    return _with_body(spec, statements, extra_items=(ARBITRARY_ITEM,))


def spec_check_files(spec: Spec) -> list[SpecCheckFile]:
    """Every file the spec check verifies, validity first."""
    files = [SpecCheckFile(VALIDITY, validity_file(spec))]
    pre = precondition_file(spec)
    if pre is not None:
        files.append(SpecCheckFile(PRECONDITIONS, pre))
    files.append(SpecCheckFile(POSTCONDITIONS, postcondition_file(spec)))
    return files


def spec_verdict(validity: str, preconditions: str | None, postconditions: str | None) -> SpecVerdict:
    """The spec's verdict from its checks' outcomes (selfplay.specverify.spec_verdict.combine)."""
    return combine(validity, preconditions, postconditions, SPEC_VERDICT_REASONS)


def solution_file(spec: Spec, solution_text: str) -> str:
    """What is verified for a screened solution: the text as written, with
    ``fn main() {}`` added inside its last verus! block when it has no ``main``.
    ``spec`` states which spec the text answers (nothing of it is added)."""
    del spec
    try:
        program = parse(solution_text)
    except VerusSyntaxError:
        return solution_text
    if program.named("main") or not program.blocks:
        return solution_text
    block = program.blocks[-1]
    assert block.body is not None
    close = block.body[1] - 1  # the block's closing brace
    return solution_text[:close] + "\n" + MAIN + "\n" + solution_text[close:]
