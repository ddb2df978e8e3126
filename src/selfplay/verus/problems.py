"""Reasons to refuse a Verus spec or solution: every code with its meaning. The records
that carry them are the shared front-end's (:mod:`selfplay.specverify.problems`)."""

from __future__ import annotations

from ..specverify import problems as shared
from ..specverify.problems import Problem, ScreenResult
from .declarations import MAX_SOURCE_CHARS

__all__ = ["REASONS", "Problem", "Problems", "ScreenResult", "SpecError"]

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


class Problems(shared.Problems):
    """Problems of a Verus text (codes of :data:`REASONS`)."""

    reasons = REASONS


class SpecError(shared.SpecError):
    """A text that is not a usable Verus spec (one line naming every reason)."""

    language = "Verus "
