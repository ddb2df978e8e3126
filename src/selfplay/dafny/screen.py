"""Specs and solutions of the PSV track: reading a spec, and screening a solution before
Dafny verifies it.

A *spec* is Dafny 2.3 text with exactly one *target*: a (compiled, non-ghost) ``method``
declared without a body, with at least one ``ensures``; besides it, only functions,
predicates (all their forms), ``datatype``/``codatatype``, ``type``/``newtype`` and
``const`` declarations, every callable with a body. :func:`parse_spec` reads one or
raises :class:`SpecError` naming every reason it is refused.

A *solution* is a whole program: the spec with a body after the target's header, plus
any helpers. Dafny 2.3 accepts many programs that prove nothing (``assume false``, an
``{:axiom}`` lemma, ``{:verify false}``, a bodiless lemma or function whose ``ensures``
is then taken on trust, a loop without a body whose invariant is then assumed, ``free``
clauses, a changed spec ...), so :func:`screen_solution` refuses, before Dafny runs, any
solution that

* does not contain every spec declaration byte for byte (``spec_decl_missing``,
  ``spec_decl_changed``; two declarations of a spec name: ``redefines_spec_decl``), or
  the target's header byte for byte, modifiers and attributes included: from its first
  word to the end of its last clause (``target_missing``, ``target_header_changed``: a
  clause added, removed or altered, a parameter renamed, ``ghost`` added ...); only the
  blanks and comments between the header and the body's ``{`` may differ;
* leaves any method, lemma, function or predicate without a body, the target included
  (``bodiless_declaration``), or has a loop or a ``forall`` statement without a body
  (``bodiless_loop``, ``bodiless_forall``: Dafny assumes what they promise);
* says ``assume`` anywhere (``assume``), ``free`` (``free_clause``: an unchecked
  ``requires``/``ensures``/``invariant``), ``decreases *`` (``decreases_star``);
* carries an attribute outside :data:`ALLOWED_ATTRIBUTES`: ``{:axiom}``
  (``axiom_attribute``), any ``{:verify ...}`` (``verify_attribute``), ``{:extern}``
  (``extern_attribute``), ``{:autocontracts}`` (``autocontracts_attribute``), anything
  else (``attribute_not_allowed``: ``{:timeLimit}``, ``{:options}``, ``{:imported}``,
  ``{:autoReq}`` ...);
* uses ``include`` (it reads a host file), ``import``, ``refines`` or ``module``
  (codes of the same names), or declares a ``class``, ``trait``, ``iterator``,
  top-level ``var``, ``export``, or a datatype or newtype with members
  (``declaration_not_allowed``: the screen does not read inside them);
* has characters outside printable ASCII in code (``odd_character``), is unreadable
  (``syntax``: unbalanced brackets, an unterminated comment, string or attribute) or
  too long (``too_large``).

Words inside comments, strings and character literals are never code: a solution that
*mentions* ``assume`` or ``{:axiom}`` in a comment or a string passes. Every reason found
is reported (each code once per line), not only the first; a solution that cannot be
parsed still gets the word and attribute checks.

Allowed attributes
------------------
``{:trigger}`` (quantifier instantiation hints), ``{:induction}`` (which variables
Dafny's automatic induction uses; it proves the induction it applies), ``{:opaque}``
(hides a function's body until ``reveal``: it can only make a proof harder) and
``{:fuel}`` (how far function definitions are unrolled). Each only steers the prover's
search; none makes Dafny assume anything or skip a check. Everything else is refused:
attributes that skip or weaken checking (``axiom``, ``verify``, ``extern``,
``imported``, ``autoReq``, ``autocontracts``, ``options``), change resource limits
(``timeLimit``, ``timeLimitMultiplier``) or steer compilation, none of which a solution
to a spec needs.

What the screen cannot see
--------------------------
It reads text, not Dafny's parse tree, so the verifier should still run with
``/noCheating:1`` on solutions (it turns any ``assume`` into a check and refuses
bodiless methods, lemmas and functions), and the runner must see the target's own
implementation verified (the summary counts alone cannot tell).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..specverify import problems as shared
from ..specverify import screen as front
from ..specverify.clauses import clause_difference
from ..specverify.problems import Problem, ScreenResult
from .source import (
    FUNCTION_KINDS,
    MAX_SOURCE_CHARS,
    DafnySyntaxError,
    Declaration,
    ExprState,
    Lexed,
    Program,
    lex,
    line_of,
    parse,
)

ALLOWED_ATTRIBUTES = frozenset({"trigger", "induction", "opaque", "fuel"})
"""Attributes a spec or solution may carry (see the module docstring for why)."""

# Every reason code, with one line saying what it means.
REASONS: dict[str, str] = {
    # reading
    "empty": "the text is empty or only blanks and comments",
    "too_large": f"the text is longer than {MAX_SOURCE_CHARS} characters",
    "syntax": "the text cannot be read as Dafny (unbalanced brackets, unterminated comment/string, ...)",
    "odd_character": "a character outside printable ASCII in code (outside comments and literals)",
    # escape hatches
    "assume": "an 'assume' (an unchecked assumption)",
    "free_clause": "a 'free' requires/ensures/invariant (assumed, never checked)",
    "decreases_star": "'decreases *' (gives up termination, so any postcondition can be 'proved')",
    "axiom_attribute": "an {:axiom} attribute (a declaration taken on trust)",
    "verify_attribute": "a {:verify ...} attribute (switches verification off)",
    "extern_attribute": "an {:extern} attribute (a declaration implemented outside Dafny, taken on trust)",
    "autocontracts_attribute": "an {:autocontracts} attribute (generates contracts)",
    "attribute_not_allowed": "an attribute other than {:trigger}, {:induction}, {:opaque}, {:fuel}",
    "include": "an 'include' (reads another file)",
    "import": "an 'import' of a module",
    "refines": "a 'refines' clause",
    "module": "a 'module' declaration",
    "declaration_not_allowed": "a class, trait, iterator, var, export, or datatype/newtype with members",
    "bodiless_declaration": "a method, lemma, function or predicate without a body (its contract is trusted)",
    "bodiless_loop": "a loop without a body (Dafny assumes its invariant and exit condition)",
    "bodiless_forall": "a forall statement without a body (Dafny assumes what it ensures)",
    "too_complex": "the text needs too much work to screen",
    # the spec part of a solution
    "spec_decl_missing": "a declaration of the spec is missing from the solution",
    "spec_decl_changed": "a declaration of the spec is not copied byte for byte",
    "redefines_spec_decl": "a name of the spec is declared more than once",
    "target_missing": "the solution has no method with the target's name",
    "target_header_changed": "the target's header (modifiers, signature, clauses) is not copied byte for byte",
    # spec only
    "no_target": "the spec has no bodiless method (the target)",
    "several_targets": "the spec has more than one bodiless method",
    "target_kind": "a bodiless declaration that is not a plain compiled method (lemma, ghost method, ...)",
    "spec_helper_kind": "a spec declaration other than a function, predicate, type or constant",
    "no_ensures": "the target has no ensures clause",
    "duplicate_name": "two spec declarations share a name",
}

# Declaration kinds a spec may hold besides its target.
SPEC_HELPER_KINDS = FUNCTION_KINDS | {"datatype", "codatatype", "type", "newtype", "const"}
# Kinds a solution may not declare at all (each has its own code or 'declaration_not_allowed').
_NOT_ALLOWED_KINDS = {
    "class": "declaration_not_allowed",
    "trait": "declaration_not_allowed",
    "iterator": "declaration_not_allowed",
    "var": "declaration_not_allowed",
    "export": "declaration_not_allowed",
    "module": "module",
    "import": "import",
    "include": "include",
}
_KEYWORD_CODES = {
    "assume": "assume",
    "free": "free_clause",
    "include": "include",
    "import": "import",
    "refines": "refines",
    "module": "module",
}
_ATTRIBUTE_CODES = {
    "axiom": "axiom_attribute",
    "verify": "verify_attribute",
    "extern": "extern_attribute",
    "autocontracts": "autocontracts_attribute",
}
# Words that may follow a finished operand inside a loop or forall header.
# ('case' is not one: after a bodiless loop in a match, the next 'case' starts the next
# alternative, so a brace that follows belongs to that alternative, not to the loop.)
_CONTINUATION = frozenset(
    {
        "in",
        "as",
        "is",
        "then",
        "else",
        "invariant",
        "decreases",
        "modifies",
        "free",
        "requires",
        "reads",
        "ensures",
    }
)
_SPEC_WORDS = frozenset({"invariant", "decreases", "modifies", "free", "requires", "reads", "ensures"})
# Words that can only start a statement: one of them ends a loop or forall header.
_STATEMENT_WORDS = frozenset(
    {
        "while",
        "var",
        "assert",
        "assume",
        "return",
        "print",
        "calc",
        "modify",
        "reveal",
        "label",
        "break",
        "yield",
    }
)
_SCAN_BUDGET = 500_000


class _Problems(shared.Problems):
    """Problems of a Dafny text (codes of :data:`REASONS`)."""

    reasons = REASONS


@dataclass(frozen=True)
class Spec:
    """A parsed spec: its text, its bodiless target method and its other declarations."""

    text: str
    target: Declaration
    helpers: tuple[Declaration, ...]
    program: Program = field(repr=False, compare=False)

    @property
    def target_name(self) -> str:
        assert self.target.name is not None
        return self.target.name


class SpecError(shared.SpecError):
    """A text that is not a usable Dafny spec (one line naming every reason)."""


# --------------------------------------------------------------------------- shared checks


def _read(text: str, problems: _Problems) -> tuple[Lexed | None, Program | None]:
    """Lex and parse, recording why not; the lexing is returned whenever there is one."""
    return front.read_source(
        text, problems, max_chars=MAX_SOURCE_CHARS, lex=lex, parse=parse, syntax_error=DafnySyntaxError
    )


def _escape_hatches(lexed: Lexed, program: Program | None, problems: _Problems) -> None:
    """Words, attributes and odd characters anywhere in the code; bodiless declarations,
    loops and forall statements where the text could be parsed."""
    text = lexed.text
    front.report_odd_characters(lexed, problems)
    toks = program.tokens if program is not None else tuple(lexed.structure_tokens())
    for tok in lexed.tokens:
        if tok.kind == "ident" and tok.text in _KEYWORD_CODES:
            code = _KEYWORD_CODES[tok.text]
            problems.add(code, f"'{tok.text}'", line_of(text, tok.start))
    for k, tok in enumerate(toks):
        if tok.text == "decreases" and k + 1 < len(toks) and toks[k + 1].text == "*":
            problems.add("decreases_star", "'decreases *'", line_of(text, tok.start))
    for attr in lexed.attributes:
        code = _ATTRIBUTE_CODES.get(attr.name)
        if code is None and attr.name in ALLOWED_ATTRIBUTES:
            continue
        raw = text[attr.start : attr.end]
        shown = raw if len(raw) <= 60 else raw[:57] + "..."
        problems.add(code or "attribute_not_allowed", f"attribute {shown}", line_of(text, attr.start))
    if program is None:
        return
    for decl in program.declarations:
        if decl.is_callable and decl.bodiless:
            problems.add(
                "bodiless_declaration",
                f"{decl.kind} {decl.name or ''} has no body".replace("  ", " "),
                decl.line,
            )
        if decl.kind in ("datatype", "codatatype", "newtype", "type") and decl.body is not None:
            problems.add("declaration_not_allowed", f"{decl.kind} {decl.name} has members", decl.line)
    _statements(program, problems)


def _statements(program: Program, problems: _Problems) -> None:
    """Loops and forall statements without a body, inside every callable's body."""
    toks = program.tokens
    starts = [t.start for t in toks]
    budget = [_SCAN_BUDGET]
    for decl in program.declarations:
        if not decl.is_callable or decl.body is None:
            continue
        lo = bisect.bisect_left(starts, decl.body[0])
        hi = bisect.bisect_left(starts, decl.body[1])
        for k in range(lo, hi):
            word = toks[k].text
            if toks[k].kind != "ident" or word not in ("while", "forall"):
                continue
            verdict = _has_body(program, k, budget)
            if budget[0] <= 0:
                problems.add("too_complex", "loop and forall headers too long to read", None)
                return
            if verdict is False:
                code = "bodiless_loop" if word == "while" else "bodiless_forall"
                problems.add(code, f"'{word}' without a body", line_of(program.text, toks[k].start))


def _has_body(program: Program, k: int, budget: list[int]) -> bool | None:
    """Does the ``while`` or ``forall`` at token ``k`` have a body? None for a ``forall``
    that is a quantifier (its ``::`` comes before anything that makes it a statement).

    The header is read with :class:`ExprState`; it ends at the first ``{`` that opens a
    block (the body), or, without a body, at a ``;`` that does not precede another loop
    clause or the body, at the end of the enclosing block, at a statement keyword, or at
    a name or literal right after a finished operand (the next statement).
    """
    toks, partner = program.tokens, program.partner
    n = len(toks)
    is_loop = toks[k].text == "while"
    j = k + 1
    if is_loop and j < n and toks[j].text == "{":
        return True  # while { case ... } : the alternatives are the body
    state = ExprState(expect_operand=True)
    quantifiers = 1
    statement = is_loop
    after_match = False
    while j < n:
        budget[0] -= 1
        if budget[0] <= 0:
            return True
        tok = toks[j]
        nxt = toks[j + 1] if j + 1 < n else None
        text = tok.text
        if text in (")", "]", "}"):
            return False
        if text == ";":
            if nxt is not None and nxt.text == "{":
                return True
            if nxt is not None and nxt.text in _SPEC_WORDS:
                j += 1
                continue
            return False
        if text == "{" and state.brace_is_block(nxt):
            return True
        if text == "{" and is_loop and nxt is not None and nxt.text == "case" and not after_match:
            return True  # while invariant I { case g => ... } : the alternatives are the body
        after_match = text == "match" or (after_match and text != "{")
        if tok.kind == "ident":
            if text in _SPEC_WORDS:
                statement = statement or text == "ensures"
                state = ExprState(expect_operand=True)
                j += 1 + (text == "free")
                continue
            if text in _STATEMENT_WORDS or (not state.expect_operand and text not in _CONTINUATION):
                return False
            if not statement and (
                text in ("forall", "exists")
                or (text in ("set", "iset", "map", "imap") and nxt is not None and nxt.kind == "ident")
            ):
                quantifiers += 1
        elif tok.kind in ("number", "string", "char") and not state.expect_operand:
            return False
        if not statement and text == "::":
            quantifiers -= 1
            if quantifiers == 0:
                return None
        state.feed(tok)
        if text in ("(", "[", "{"):
            j = partner[j]
            state.feed(toks[j])
        j += 1
    return False


# --------------------------------------------------------------------------- specs


def inspect_spec(text: str) -> tuple[Spec | None, list[Problem]]:
    """Read a spec: the Spec (None when refused) and every problem found."""
    problems = _Problems()
    if front.refuse_non_text(text, "spec", problems):
        return None, problems.items
    lexed, program = _read(text, problems)
    if lexed is not None:
        _escape_hatches(lexed, program, problems)
    if program is None:
        return None, problems.items
    targets: list[Declaration] = []
    helpers: list[Declaration] = []
    names: dict[str, int] = {}
    for decl in program.declarations:
        if decl.name is not None:
            front.note_name(names, decl, problems)
        if decl.kind in _NOT_ALLOWED_KINDS:
            problems.add(_NOT_ALLOWED_KINDS[decl.kind], f"{decl.kind} {decl.name or ''}".strip(), decl.line)
            continue
        if decl.is_callable and decl.bodiless and not decl.is_function:
            if decl.kind == "method" and not decl.modifiers:
                targets.append(decl)
            else:
                problems.add(
                    "target_kind",
                    f"bodiless {' '.join(decl.modifiers + (decl.kind,))} {decl.name}: the "
                    "target must be a plain (compiled) method",
                    decl.line,
                )
            continue
        if decl.kind not in SPEC_HELPER_KINDS:
            problems.add("spec_helper_kind", f"{decl.kind} {decl.name or ''}".strip(), decl.line)
            continue
        helpers.append(decl)
    if not targets and not any(p.code == "target_kind" for p in problems.items):
        problems.add("no_target", "no method without a body")
    if len(targets) > 1:
        problems.add(
            "several_targets", "bodiless methods: " + ", ".join(str(d.name) for d in targets), targets[1].line
        )
    # Targets (and would-be targets) were also reported as bodiless by the shared checks.
    wrong_kind = {p.line for p in problems.items if p.code == "target_kind"}
    items = [
        p
        for p in problems.items
        if not (
            p.code == "bodiless_declaration"
            and (p.line in wrong_kind or any(p.line == t.line for t in targets))
        )
    ]
    if len(targets) == 1:
        target = targets[0]
        if not target.clause_texts("ensures"):
            items.append(Problem("no_ensures", f"method {target.name} has no ensures clause", target.line))
        if not items:
            return Spec(text, target, tuple(helpers), program), []
    return None, items


def parse_spec(text: str) -> Spec:
    """The :class:`Spec` in ``text``; raises :class:`SpecError` (a one-line UserError
    that carries every reason) when it is not one."""
    return front.spec_or_raise(inspect_spec(text), SpecError)


# --------------------------------------------------------------------------- solutions


def screen_solution(spec: Spec | str, solution_text: str) -> ScreenResult:
    """Screen a solution of ``spec`` (a Spec, or spec text, which must parse) before
    verification; see the module docstring for what is refused."""
    return front.screen(
        spec, solution_text, parse_spec=parse_spec, problems=_Problems(), check=_check_solution
    )


def _check_solution(spec: Spec, solution_text: str, problems: _Problems) -> None:
    lexed, program = _read(solution_text, problems)
    if lexed is not None:
        _escape_hatches(lexed, program, problems)
    if program is not None:
        for decl in program.declarations:
            if decl.kind in _NOT_ALLOWED_KINDS:
                problems.add(
                    _NOT_ALLOWED_KINDS[decl.kind], f"{decl.kind} {decl.name or ''}".strip(), decl.line
                )
        front.compare_spec_part(
            spec,
            program.named,
            problems,
            target_missing=f"no declaration named {spec.target_name}",
            header_difference=_header_difference,
        )


def _header_difference(spec_decl: Declaration, decl: Declaration) -> str:
    """Say how a solution's target header differs from the spec's (one line)."""
    if decl.kind != spec_decl.kind or decl.modifiers != spec_decl.modifiers:
        got = " ".join(decl.modifiers + (decl.kind,))
        want = " ".join(spec_decl.modifiers + (spec_decl.kind,))
        return f"declared as '{got}', the spec says '{want}'"

    return clause_difference(spec_decl, decl, lex)
