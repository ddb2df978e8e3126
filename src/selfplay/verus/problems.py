"""Reasons to refuse a Verus spec or solution: every code with its meaning, and the
records that carry them (the same shapes as the Dafny screen's)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import UserError
from .declarations import MAX_SOURCE_CHARS

REASONS: dict[str, str] = {
    # reading
    "empty": "the text is empty or only blanks and comments",
    "too_large": f"the text is longer than {MAX_SOURCE_CHARS} characters",
    "syntax": "the text cannot be read as Rust + Verus items (unbalanced brackets, unterminated comment or "
    "literal, something that is not an item)",
    "odd_character": "a character outside printable ASCII in code (outside comments and literals)",
    # escape hatches
    "assume": "an assume(...) or assume_new (an unchecked assumption)",
    "admit": "an admit() (gives up the proof obligation)",
    "external_body": "a verifier::external_body attribute (a body taken on trust)",
    "external": "a verifier::external... attribute (code Verus does not look at, or a trusted specification)",
    "assume_specification": "an assume_specification (a trusted contract for an outside function)",
    "exec_allows_no_decreases_clause": "verifier::exec_allows_no_decreases_clause (non-terminating exec code "
    "can 'prove' any postcondition)",
    "axiom": "an axiom (a proof fn taken on trust)",
    "attribute_not_allowed": "an attribute that is not on the allowed list",
    "bodiless_declaration": "a function without a body (its contract is trusted)",
    "unsafe": "unsafe code",
    "extern": "an extern block, extern fn or extern crate",
    "macro_rules": "a macro definition",
    "include": "include!, include_str! or include_bytes! (reads another file)",
    "module": "a mod item (code in another module or file)",
    "declaration_not_allowed": "a trait, impl, union, static, global, item macro or other item the screen "
    "does not read",
    "outside_verus_block": "an item outside verus! { ... } (Verus would not verify it), other than use and main",
    "no_verus_block": "the solution has no verus! { ... } block",
    "reserved_name": "a name starting with selfplay_ (reserved for the generated check files)",
    # the spec part of a solution
    "spec_decl_missing": "a declaration of the spec is missing from the solution",
    "spec_decl_changed": "a declaration of the spec is not copied byte for byte",
    "redefines_spec_decl": "a name of the spec is declared more than once",
    "target_missing": "the solution has no function with the target's name",
    "target_header_changed": "the target's header (attributes, signature, clauses) is not copied byte for byte",
    # spec only
    "no_target": "the spec has no exec function to implement (the target)",
    "several_targets": "the spec has more than one exec function without a body",
    "target_kind": "a bodiless function that is not an exec fn (a proof or spec fn cannot be the target)",
    "no_ensures": "the target has no ensures clause",
    "duplicate_name": "two spec declarations share a name",
}


@dataclass(frozen=True)
class Problem:
    """One reason to refuse: ``code`` (a key of :data:`REASONS`), a human ``detail``, and
    the 1-based ``line`` it was found on (None when it concerns the whole text)."""

    code: str
    detail: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Problems:
    """Problems in the order found; the same code on the same line is kept once."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self._seen: set[tuple[str, int | None]] = set()

    def add(self, code: str, detail: str, line: int | None = None) -> None:
        assert code in REASONS, code
        if (code, line) not in self._seen:
            self._seen.add((code, line))
            self.items.append(Problem(code, detail, line))

    def drop(self, code: str, lines: set[int | None]) -> None:
        """Forget the problems with this code on these lines."""
        self.items = [p for p in self.items if not (p.code == code and p.line in lines)]
        self._seen = {(p.code, p.line) for p in self.items}

    def sorted(self) -> list[Problem]:
        """By line (whole-text problems first), in the order found within a line."""
        return sorted(self.items, key=lambda p: p.line or 0)

    def codes(self) -> list[str]:
        return list(dict.fromkeys(p.code for p in self.sorted()))


@dataclass(frozen=True)
class ScreenResult:
    """The screen's verdict: ``ok`` when nothing was found; ``reasons`` the distinct
    codes; ``problems`` every finding, ordered by line (whole-text ones first)."""

    ok: bool
    reasons: list[str]
    problems: list[Problem] = field(default_factory=list)

    def summary(self) -> str:
        """One line: ``accepted`` or ``refused: code (line N: detail); ...``."""
        if self.ok:
            return "accepted"
        parts = [
            f"{p.code} ({'line ' + str(p.line) + ': ' if p.line else ''}{p.detail})" for p in self.problems
        ]
        return "refused: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "reasons": list(self.reasons),
            "problems": [p.to_dict() for p in self.problems],
        }


class SpecError(UserError):
    """A text that is not a usable spec; ``reasons`` holds the codes, ``problems`` the details."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        self.reasons = list(dict.fromkeys(p.code for p in problems))
        first = problems[0]
        where = f"line {first.line}: " if first.line else ""
        more = f" (and {len(problems) - 1} more: {', '.join(self.reasons[1:])})" if len(problems) > 1 else ""
        super().__init__(f"not a valid Verus spec: {first.code}: {where}{first.detail}{more}")
