"""The clauses of a callable's header (``requires``, ``ensures`` ...), as both readers
record them, and how a solution's target header differs from the spec's."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Clause:
    """One clause of a header: its ``keyword`` (``requires``, ``free ensures`` ...), its
    raw ``text`` from the keyword to the end of its expression, its span, and the
    ``expression`` after the keyword(s) (without the separator that ends the clause: a
    Dafny ``;``, a Verus ``,``)."""

    keyword: str
    text: str
    start: int
    end: int
    expression: str


def clause_difference(spec_decl: Any, decl: Any, lex: Callable[[str], Any]) -> str:
    """One line saying how a target header with the spec's kind differs from the spec's:
    its signature (the header before the first clause), its clauses (added, removed,
    reordered), or only blanks and comments. Code is compared with comments and
    literals blanked (``lex``) and runs of blanks collapsed."""

    def normal(text: str) -> str:
        return re.sub(r"\s+", " ", lex(text).masked()).strip()

    def signature(d: Any) -> str:
        cut = d.clauses[0].start - d.start if d.clauses else len(d.header)
        return normal(d.header[:cut])

    if signature(decl) != signature(spec_decl):
        return f"signature changed: '{signature(decl)[:80]}' instead of '{signature(spec_decl)[:80]}'"
    want = [(c.keyword, normal(c.expression)) for c in spec_decl.clauses]
    got = [(c.keyword, normal(c.expression)) for c in decl.clauses]
    added = [c for c in got if c not in want]
    removed = [c for c in want if c not in got]
    if added or removed:
        parts = []
        if removed:
            parts.append("removed " + ", ".join(f"{k} {e[:60]}" for k, e in removed))
        if added:
            parts.append("added " + ", ".join(f"{k} {e[:60]}" for k, e in added))
        return "clauses changed: " + "; ".join(parts)
    if got != want:
        return "clauses reordered"
    return "blanks or comments inside the header differ (it must be copied byte for byte)"
