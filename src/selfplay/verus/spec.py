"""Reading a Verus spec: its target and the declarations a solution must copy.

A *spec* is Rust + Verus text, usually ``use vstd::prelude::*;`` and a ``verus! { .. }``
block (a spec without the block is read as if its items were inside one). Its
*target* is the last exec function (no ``spec``/``proof`` mode) other than ``main``:
the function the solver implements. As the proposer is told to (Appendix A), the
target's header may end the text with an open brace ``{``; it may also have no body
at all, or a body (a data set's reference solution), which is ignored. The target
needs at least one ``ensures`` clause (the released code kept only specs containing
"ensures").

Besides the target a spec may hold, inside the block: spec and proof functions with
bodies, other exec functions with bodies (a problem's dependencies, which the
solution must copy and which are verified with it), ``struct``, ``enum``, ``const``,
``type`` aliases and ``broadcast group`` items (its *helpers*, copied byte for byte by
a solution), plus ``use``, ``broadcast use`` and ``fn main`` (not compared). Outside the
block only ``use``, ``fn main`` and file-level ``#![allow(..)]`` may appear.

:func:`inspect_spec` reads one and reports every reason it is refused; the escape
hatches of :mod:`.hatches` are refused in specs as in solutions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..specverify import screen as front
from .declarations import MAX_SOURCE_CHARS, Declaration, Program, VerusSyntaxError, parse
from .hatches import find_escape_hatches
from .lexer import lex
from .problems import Problem, Problems, SpecError

HELPER_KINDS = frozenset({"fn", "struct", "enum", "const", "type", "broadcast_group"})
"""Item kinds a spec may hold besides its target (functions need a body)."""
IGNORED_KINDS = frozenset({"use", "broadcast_use", "empty", "inner_attribute"})
"""Item kinds a spec may hold that a solution need not copy."""
TOP_LEVEL_KINDS = frozenset({"use", "verus_block", "inner_attribute", "empty"})
"""Item kinds allowed outside verus! (besides ``fn main``)."""


@dataclass(frozen=True)
class Spec:
    """A read spec.

    text        the spec as given
    target      the function to implement
    helpers     the declarations a solution must contain byte for byte
    has_block   whether the text has a verus! block (else its items are read as inside one)
    block_open  whether that block is left open at the end of the text
    has_main    whether the spec declares ``fn main``
    """

    text: str
    target: Declaration
    helpers: tuple[Declaration, ...]
    has_block: bool
    block_open: bool
    has_main: bool
    program: Program = field(repr=False, compare=False)

    @property
    def target_name(self) -> str:
        assert self.target.name is not None
        return self.target.name


def read(text: str, problems: Problems, *, open_end: bool) -> Program | None:
    """Lex, screen and parse ``text``, recording why not; the Program when it parses."""
    lexed, program = front.read_source(
        text,
        problems,
        max_chars=MAX_SOURCE_CHARS,
        lex=lex,
        parse=lambda t: parse(t, open_end=open_end),
        syntax_error=VerusSyntaxError,
    )
    if lexed is not None:  # (a text without code has no escape hatch to find)
        find_escape_hatches(lexed, program, problems)
    return program


def outside_items(program: Program, problems: Problems) -> None:
    """Items outside every verus! block other than use, main and file attributes."""
    for decl in program.items:
        if (
            decl.scope == "top"
            and decl.kind not in TOP_LEVEL_KINDS
            and not (decl.kind == "fn" and decl.name == "main")
        ):
            problems.add(
                "outside_verus_block",
                f"{decl.kind} {decl.name or ''} is outside verus! {{ }}".replace("  ", " "),
                decl.line,
            )


def inspect_spec(text: str) -> tuple[Spec | None, list[Problem]]:
    """Read a spec: the Spec (None when refused) and every problem found."""
    problems = Problems()
    if front.refuse_non_text(text, "spec", problems):
        return None, problems.items
    program = read(text, problems, open_end=True)
    if program is None:
        return None, problems.sorted()
    has_block = bool(program.blocks)
    if has_block:
        outside_items(program, problems)
    inside = [d for d in program.items if (d.scope == "verus") == has_block and d.kind != "verus_block"]
    exec_fns = [d for d in inside if d.kind == "fn" and d.mode == "exec" and d.name != "main"]
    target = exec_fns[-1] if exec_fns else None
    names: dict[str, int] = {}
    helpers: list[Declaration] = []
    bodiless_ok: set[int | None] = set()
    for decl in inside:
        if decl.name is not None and decl.kind not in IGNORED_KINDS:
            front.note_name(names, decl, problems)
        if decl.open_body and decl.kind != "fn":
            problems.add(
                "syntax", f"{decl.kind} {decl.name or ''} is never closed".replace("  ", " "), decl.line
            )
            continue
        if decl is target or decl.kind in IGNORED_KINDS or (decl.kind == "fn" and decl.name == "main"):
            continue
        if decl.kind == "fn" and decl.mode != "exec" and decl.open_body:
            problems.add(
                "target_kind",
                f"{decl.mode} fn {decl.name} ends the spec with an open brace: the target must be an exec fn",
                decl.line,
            )
            continue
        if decl.kind == "fn" and decl.bodiless:
            if decl.mode == "exec":
                problems.add(
                    "several_targets", f"exec fns without a body: {decl.name} and {target.name}", decl.line
                )
                bodiless_ok.add(decl.line)
            elif decl.mode == "proof":
                problems.add(
                    "target_kind", f"bodiless proof fn {decl.name}: the target must be an exec fn", decl.line
                )
                bodiless_ok.add(decl.line)
            continue
        if decl.kind in HELPER_KINDS:  # the other kinds were refused by find_escape_hatches
            helpers.append(decl)
    if target is not None:
        bodiless_ok.add(target.line)
    problems.drop("bodiless_declaration", bodiless_ok)
    if target is None:
        if not any(p.code == "target_kind" for p in problems.items):
            problems.add("no_target", "no exec fn other than main")
        return None, problems.sorted()
    if not target.clause_texts("ensures"):
        problems.add("no_ensures", f"fn {target.name} has no ensures clause", target.line)
    if problems.items:
        return None, problems.sorted()
    blocks = program.blocks
    spec = Spec(
        text,
        target,
        tuple(helpers),
        has_block,
        any(b.open_body for b in blocks),
        bool(program.named("main")),
        program,
    )
    return spec, []


def parse_spec(text: str) -> Spec:
    """The :class:`Spec` in ``text``; raises :class:`SpecError` (a one-line UserError
    carrying every reason) when it is not one."""
    return front.spec_or_raise(inspect_spec(text), SpecError)
