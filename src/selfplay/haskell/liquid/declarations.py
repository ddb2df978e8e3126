"""The top-level declarations and annotations of one part (P, Q or the proof), read
from its code view; the lemma's name; and the name Q's function gets in the file.

Declarations are grouped by layout: a line starting in column 0 opens a declaration,
indented lines continue it. Each is classified by its first token (``import``,
``data``, ...), as a type ``signature`` (``f, g :: t``), as an ``equation`` defining a
name (also infix: ``x <+> y = ..``, ``x `op` y = ..``), or ``other``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lexer import (
    RESERVED_WORDS,
    is_identifier,
    is_symbolic,
    lex,
    matching,
    split_top,
    tokens,
    top_level,
    unqualified,
)

# Reserved words that cannot open a declaration of their own kind: a line starting with
# one of them (or with the wildcard "_") is classified like any other line.
_NOT_DECLARATION_KEYWORDS = ("let", "case", "if", "do", "_")


@dataclass(frozen=True)
class Decl:
    """A top-level declaration: first and last 1-based line, its code text (comments and
    literals blanked), its tokens, its kind and the names it defines or types."""

    first: int
    last: int
    text: str
    tokens: tuple[str, ...]
    kind: str  # keyword (import, data, ...), 'signature', 'equation' or 'other'
    names: tuple[str, ...]


def top_level_decls(code_view: str) -> tuple[list[Decl], int | None]:
    """Top-level declarations of a code view, and the line of an indented first code line."""
    lines = code_view.split("\n")
    groups: list[tuple[int, int]] = []
    indented_first: int | None = None
    start: int | None = None
    for idx, line in enumerate(lines):
        if not line.strip():
            continue
        if line[0].isspace():
            if start is None and indented_first is None:
                indented_first = idx + 1
            continue
        if start is not None:
            groups.append((start, idx))
        start = idx
    if start is not None:
        groups.append((start, len(lines)))
    out: list[Decl] = []
    for a, b in groups:
        text = "\n".join(lines[a:b])
        last = a
        for k in range(a, b):
            if lines[k].strip():
                last = k
        out.append(classify(a + 1, last + 1, text, tokens(text)))
    return out, indented_first


def classify(first: int, last: int, text: str, toks: list[str]) -> Decl:
    """Name the kind of one declaration and the names it defines or gives a type."""
    if not toks:
        return Decl(first, last, text, (), "other", ())
    head = toks[0]
    if head in RESERVED_WORDS and head not in _NOT_DECLARATION_KEYWORDS:
        return Decl(first, last, text, tuple(toks), head, ())
    top = top_level(toks)
    sig_at = next((k for k, t in top if t == "::"), -1)
    eq_at = next((k for k, t in top if t in ("=", "|")), -1)
    if sig_at >= 0 and (eq_at < 0 or sig_at < eq_at):
        names: list[str] = []
        for part in split_top(toks[:sig_at], {","}):
            if len(part) == 1 and is_identifier(part[0]):
                names.append(part[0])
            elif len(part) == 3 and part[0] == "(" and part[2] == ")" and is_symbolic(part[1]):
                names.append(part[1])
        return Decl(first, last, text, tuple(toks), "signature", tuple(names))
    name: str | None = None
    if is_identifier(head):
        if len(toks) > 1 and is_symbolic(toks[1]) and toks[1] not in ("=", "|", "@", "::", "->"):
            name = toks[1]
        elif len(toks) > 2 and toks[1] == "`" and is_identifier(toks[2]):
            name = toks[2]
        else:
            name = head
    elif head == "(":
        close = matching(toks, 0)
        if close == 2 and is_symbolic(toks[1]):
            name = toks[1]
        elif (
            close > 0
            and close + 1 < len(toks)
            and is_symbolic(toks[close + 1])
            and toks[close + 1] not in ("=", "|", "::")
        ):
            name = toks[close + 1]
        elif close > 0 and close + 2 < len(toks) and toks[close + 1] == "`":
            name = toks[close + 2]
    return Decl(first, last, text, tuple(toks), "equation" if name else "other", (name,) if name else ())


def parse_annotation(inner: str) -> tuple[str, list[str], str]:
    """Classify an annotation's inner text: ('reflect', [name], '') or ('spec', names,
    type text) or ('other', [first word], '')."""
    toks = tokens(inner)
    if not toks:
        return "other", [""], ""
    if toks[0] == "reflect":
        return "reflect", toks[1:], ""
    top = top_level(toks)
    sig_at = next((k for k, t in top if t == "::"), -1)
    if sig_at > 0:
        names: list[str] = []
        for part in split_top(toks[:sig_at], {","}):
            if len(part) == 1:
                names.append(part[0])
            elif len(part) == 3 and part[0] == "(" and part[2] == ")":
                names.append(part[1])
            else:
                names.append(" ".join(part))
        return "spec", names, inner.split("::", 1)[1]
    return "other", [toks[0]], ""


def find_signature(source: str, name: str) -> str | None:
    """The type text (whitespace collapsed) of ``name``'s top-level signature in a
    Haskell source, or None when there is none."""
    decls, _ = top_level_decls(lex(source, guarded=True).view())
    for d in decls:
        if d.kind == "signature" and name in d.names:
            after = d.text.split("::", 1)[1]
            return " ".join(after.split())
    return None


def default_lemma_name(p_name: str) -> str:
    """The lemma name the paper's prompt asks for: ``lemma_<P>_equiv``."""
    return f"lemma_{p_name}_equiv"


def ident_tokens(view: str) -> list[str]:
    """The name tokens (possibly qualified) of a code view."""
    return [t for t in tokens(view) if t[0].isalpha() or t[0] == "_"]


def q_file_name(p_name: str, q_name: str, *texts: str) -> str:
    """The name Q's function has in the checked file: Q's own name when it differs from
    P's, else P's name with primes added until it clashes with no identifier in ``texts``
    (pass P's and Q's sources)."""
    if q_name != p_name:
        return q_name
    used: set[str] = set()
    for t in texts:
        used.update(
            unqualified(tok)
            for tok in ident_tokens(lex(t, guarded=True).view(frozenset({"code", "annotation"})))
        )
    candidate = p_name + "'"
    while candidate in used:
        candidate += "'"
    return candidate


def rename(text: str, old: str, new: str) -> str:
    """Rename identifier ``old`` to ``new`` in code and annotations (not in comments or
    literals)."""
    lexed = lex(text, guarded=True)
    pattern = re.compile(r"(?<![\w'])" + re.escape(old) + r"(?![\w'])")
    out: list[str] = []
    for seg in lexed.segments:
        piece = text[seg.start : seg.end]
        if seg.kind in ("code", "annotation"):
            piece = pattern.sub(new, piece)
        out.append(piece)
    return "".join(out)
