"""Screening a solver's answer before Verus sees it.

A *solution* is a whole file: the spec's declarations, the target with a body, and
any helpers of the solver's own (spec, proof and exec functions with bodies, structs,
enums, consts, type aliases, broadcast groups), all inside ``verus! { .. }``. The
released PSV code handed answers to Verus unread, so an answer could replace the
spec, or leave its proof unchecked, and still count as verified. :func:`screen_solution`
refuses, before verification, any solution that

* has no ``verus!`` block (``no_verus_block``), or items outside it other than ``use``,
  ``fn main`` and file-level ``#![allow(..)]`` (``outside_verus_block``: Verus would not
  verify them);
* does not contain every helper of the spec byte for byte, inside the block
  (``spec_decl_missing``, ``spec_decl_changed``; a second item of a spec name:
  ``redefines_spec_decl``);
* does not contain the target's header byte for byte: from its first attribute (or
  qualifier, or ``fn``) to the end of its last clause, so a changed signature, an
  added, removed or altered ``requires``/``ensures``/``decreases`` clause, a changed
  mode, or an added attribute all count (``target_missing``,
  ``target_header_changed``); only blanks and comments between the header and the
  body's ``{`` may differ;
* uses any escape hatch of :mod:`.hatches` (``assume``, ``admit``, ``external_body`` ...),
  leaves a function without a body (the target included), or has code that cannot be
  read (``syntax``, ``odd_character``, ``too_large``, ``empty``).

Words inside comments, strings and character literals are never code: a solution
that *mentions* ``assume(false)`` in a comment or a string passes. Every reason found
is reported (each code once per line); a text that cannot be parsed still gets the
word and attribute checks.

What the screen cannot see: it reads tokens and items, not Verus's typed program. It
cannot tell whether a library function called from the answer has a trusted
contract in vstd (vstd's own axioms are part of Verus's trusted base, as for every
Verus user), and it does not check that the answer compiles: Verus does.
"""

from __future__ import annotations

from ..specverify import screen as front
from ..specverify.clauses import clause_difference
from .declarations import Declaration, Program
from .lexer import lex
from .problems import Problems, ScreenResult
from .spec import Spec, outside_items, parse_spec, read


def screen_solution(spec: Spec | str, solution_text: str) -> ScreenResult:
    """Screen a solution of ``spec`` (a Spec, or spec text, which must be a valid spec);
    see the module docstring for what is refused."""
    return front.screen(
        spec, solution_text, parse_spec=parse_spec, problems=Problems(), check=_check_solution
    )


def _check_solution(spec: Spec, solution_text: str, problems: Problems) -> None:
    program = read(solution_text, problems, open_end=False)
    if program is not None:
        if not program.blocks:
            problems.add("no_verus_block", "no verus! { ... } block")
        outside_items(program, problems)
        spec_part(spec, program, problems)


def extract_spec_part(spec: Spec | str, solution_text: str) -> dict[str, str] | None:
    """The solution's copy of the spec: helper name -> its text in the solution, and the
    target's name -> the solution's target header (names the solution lacks are absent);
    None when the solution cannot be read as items."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    program = read(solution_text, Problems(), open_end=False)
    return None if program is None else spec_part(spec, program, Problems())


def spec_part(spec: Spec, program: Program, problems: Problems) -> dict[str, str]:
    """Compare the solution's copy of the spec with the spec; record every difference
    and return what was found: declaration name -> its text in the solution (for the
    target, its header)."""
    return front.compare_spec_part(
        spec,
        lambda name: program.named(name, "verus"),
        problems,
        target_missing=f"no fn named {spec.target_name} inside verus! {{ }}",
        header_difference=header_difference,
        target_like=lambda decl: decl.kind == "fn",
    )


def header_difference(spec_decl: Declaration, decl: Declaration) -> str:
    """One line saying how a solution's target header differs from the spec's."""
    if decl.kind != "fn":
        return f"'{decl.name}' is a {decl.kind}, the spec's is a fn"
    if decl.mode != spec_decl.mode or decl.qualifiers != spec_decl.qualifiers:
        got = " ".join((*decl.qualifiers, "fn"))
        want = " ".join((*spec_decl.qualifiers, "fn"))
        return f"declared as '{got}', the spec says '{want}'"

    return clause_difference(spec_decl, decl, lex)
