"""Lexing helpers both verifier languages use. Dafny and Rust + Verus agree on these
points (each back-end's lexer documents its own rules): ``/* .. */`` comments nest and
nothing but ``/*`` and ``*/`` counts inside them; code needs no character outside
printable ASCII and the four blanks; a segment of a text is code, a comment, a string
or a character literal."""

from __future__ import annotations

import re
from dataclasses import dataclass

CODE_BLANKS = " \t\n\r"
"""The blank characters allowed in code (and skipped between tokens)."""


@dataclass(frozen=True)
class Segment:
    """``text[start:end]`` is one ``kind`` of thing: ``code``, ``comment``, ``string`` or ``char``."""

    kind: str
    start: int
    end: int


def line_of(text: str, offset: int) -> int:
    """The 1-based line of ``text[offset]``."""
    return text.count("\n", 0, max(0, offset)) + 1


def block_comment_end(text: str, i: int) -> int | None:
    """Where the nested ``/*`` comment opened at ``i`` ends (None: never closed)."""
    depth = 0
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return None


def comment_at(text: str, i: int, line_ends: str = "\n") -> tuple[int, bool] | None:
    """The comment starting at ``i``, if one does: where it ends and whether it is
    closed. A ``//`` comment runs up to (not including) the first of ``line_ends``, or
    to the end; a ``/*`` comment to its matching ``*/`` (nested), or, never closed,
    to the end of the text."""
    if text.startswith("//", i):
        n = len(text)
        j = i + 2
        while j < n and text[j] not in line_ends:
            j += 1
        return j, True
    if text.startswith("/*", i):
        end = block_comment_end(text, i)
        return (len(text), False) if end is None else (end, True)
    return None


def is_odd(c: str) -> bool:
    """Is ``c`` a character code may not hold (outside printable ASCII and the blanks)?"""
    return not (" " <= c <= "~" or c in "\t\n\r")


def blank(piece: str) -> str:
    """``piece`` with every character but newlines replaced by a space (so offsets and
    line numbers stay those of the text)."""
    return re.sub(r"[^\n]", " ", piece)


def longest_first(operators: list[str]) -> list[str]:
    """Operators in the order a lexer must try them: longest first."""
    return sorted(operators, key=len, reverse=True)
