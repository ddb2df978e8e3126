"""The screening flow both verifier languages share.

A spec or a solution is read the same way in both: refused when too long, when it
holds no code, or when it does not parse (each with its code), its escape hatches
looked for on whatever could be lexed (the back-end's own list). A solution must then
hold the spec's declarations byte for byte and the target's header byte for byte;
:func:`compare_spec_part` records every difference the same way for both, and
:func:`.clauses.clause_difference` says in one line how a changed header differs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .lexing import line_of
from .problems import Problem, Problems, ScreenResult, SpecError


def refuse_non_text(value: Any, what: str, problems: Problems) -> bool:
    """Record ``syntax`` and say True when ``value`` (a ``what``: spec, solution) is not text."""
    if isinstance(value, str):
        return False
    problems.add("syntax", f"a {what} must be text, not {type(value).__name__}")
    return True


def read_source(
    text: str,
    problems: Problems,
    *,
    max_chars: int,
    lex: Callable[[str], Any],
    parse: Callable[[str], Any],
    syntax_error: type[Exception],
) -> tuple[Any | None, Any | None]:
    """Lex and parse ``text``, recording why not (``too_large``, ``empty``, ``syntax``):
    the lexing (None only for a text too long to read) and the program (None when it
    does not parse). The caller then looks for escape hatches in what was lexed."""
    if len(text) > max_chars:
        problems.add("too_large", f"{len(text)} characters")
        return None, None
    lexed = lex(text)
    if not lexed.tokens and lexed.unterminated is None:
        problems.add("empty", "no code")
        return lexed, None
    try:
        return lexed, parse(text)
    except syntax_error as exc:
        problems.add("syntax", str(exc))
        return lexed, None


def report_odd_characters(lexed: Any, problems: Problems, most: int = 20) -> None:
    """``odd_character`` for the first ``most`` code characters outside printable ASCII."""
    text = lexed.text
    for offset in lexed.odd_chars[:most]:
        problems.add("odd_character", f"character {ascii(text[offset])} in code", line_of(text, offset))


def note_name(names: dict[str, int], decl: Any, problems: Problems) -> None:
    """Record ``decl``'s name and line in ``names``; ``duplicate_name`` when it was there."""
    if decl.name in names:
        problems.add(
            "duplicate_name",
            f"'{decl.name}' is declared on lines {names[decl.name]} and {decl.line}",
            decl.line,
        )
    names.setdefault(decl.name, decl.line)


def spec_or_raise(inspected: tuple[Any | None, list[Problem]], error: type[SpecError]) -> Any:
    """The spec of an ``inspect_spec`` answer, or ``error`` carrying every reason."""
    spec, problems = inspected
    if spec is None:
        raise error(problems or [Problem("syntax", "not a spec")])
    return spec


def screen(
    spec: Any,
    solution_text: Any,
    *,
    parse_spec: Callable[[str], Any],
    problems: Problems,
    check: Callable[[Any, str, Problems], None],
) -> ScreenResult:
    """Screen a solution of ``spec`` (a spec, or spec text, which must be a valid spec:
    ``parse_spec`` raises otherwise): refused as ``syntax`` when it is not text, else
    ``check`` (the back-end's reading, escape hatches and spec comparison) records
    what it finds in ``problems``."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    if not refuse_non_text(solution_text, "solution", problems):
        check(spec, solution_text, problems)
    return problems.result()


def compare_spec_part(
    spec: Any,
    named: Callable[[str], list[Any]],
    problems: Problems,
    *,
    target_missing: str,
    header_difference: Callable[[Any, Any], str],
    target_like: Callable[[Any], bool] = lambda decl: True,
) -> dict[str, str]:
    """Compare a solution's copy of the spec with the spec and record every difference:
    a helper missing (``spec_decl_missing``), not byte for byte (``spec_decl_changed``)
    or declared twice (``redefines_spec_decl``); the target missing (``target_missing``
    with the detail given), its header changed (``target_header_changed``, worded by
    ``header_difference``) or declared twice. ``named`` gives the solution's
    declarations of a name; only those that are ``target_like`` can match the
    target's header. Returns what was found: a name -> its text in the solution (for the
    target, its header)."""
    found: dict[str, str] = {}
    for helper in spec.helpers:
        assert helper.name is not None
        same = named(helper.name)
        verbatim = [d for d in same if d.kind == helper.kind and d.text == helper.text]
        if not same:
            problems.add("spec_decl_missing", f"{helper.kind} {helper.name} is missing")
        elif not verbatim:
            problems.add(
                "spec_decl_changed", f"{helper.kind} {helper.name} differs from the spec's", same[0].line
            )
        elif len(same) > 1:
            extra = next(d for d in same if d is not verbatim[0])
            problems.add("redefines_spec_decl", f"'{helper.name}' is declared again", extra.line)
        if same:
            found[helper.name] = (verbatim or same)[0].text
    target = spec.target
    same = named(spec.target_name)
    if not same:
        problems.add("target_missing", target_missing)
        return found
    exact = [d for d in same if target_like(d) and d.header == target.header]
    if not exact:
        problems.add("target_header_changed", header_difference(target, same[0]), same[0].line)
    elif len(same) > 1:
        extra = next(d for d in same if d is not exact[0])
        problems.add("redefines_spec_decl", f"'{spec.target_name}' is declared again", extra.line)
    found[spec.target_name] = (exact or same)[0].header
    return found
