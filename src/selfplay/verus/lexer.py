"""Cutting Rust + Verus source text into comments, literals and code tokens.

This reads model-written text, so it never runs anything and never raises. It follows
rustc's own lexical rules (Verus code inside ``verus! { ... }`` is tokenised by rustc
before the macro sees it), because the one thing that must not happen is that we read
a piece of code as a comment or a literal while rustc reads it as code:

* ``//`` comments (doc comments ``///`` and ``//!`` included) run to the next ``\\n``
  only: rustc does not end them at a lone carriage return or a Unicode line
  separator, so neither do we.
* ``/* .. */`` comments nest (``/* /* */ still a comment */``); nothing else inside
  them counts (quotes, ``//``).
* Strings ``".."`` may span lines; a backslash escapes the next character.
  Prefixed strings ``b".."`` and ``c".."`` behave the same. Raw strings ``r".."``,
  ``r#".."#``, ``br##".."##``, ``cr".."`` have no escapes and end at the first quote
  followed by as many ``#`` as opened them.
* A quote ``'`` opens a character literal when a backslash follows (``'\\n'``,
  ``'\\u{41}'``) or when the character after next is a quote (``'a'``, ``'"'``);
  otherwise a name after it is a lifetime or label (``'a``, ``'static``, ``'outer:``).
* Identifiers are ASCII letters, digits and ``_``; ``r#name`` is the raw form of
  ``name`` and is read as ``name`` (so ``r#assume`` is ``assume``). Rust allows other
  Unicode letters in names and as blanks; Verus code never needs them, so any
  character in code that is not printable ASCII or a space, tab, newline or carriage
  return is recorded in ``odd_chars`` (the screen refuses it: look-alike letters and
  exotic blanks are ruled out at once).

When a comment or literal is never closed the rest of the text is that comment or
literal and ``unterminated`` says which (rustc refuses such text; the screen does too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..specverify.lexing import CODE_BLANKS, Segment, blank, comment_at, is_odd, line_of, longest_first

__all__ = ["SEGMENT_KINDS", "TOKEN_KINDS", "Lexed", "Segment", "Token", "lex", "line_of"]

SEGMENT_KINDS = ("code", "comment", "string", "char")
TOKEN_KINDS = ("ident", "lifetime", "number", "string", "char", "op")

# Multi-character operators, longest first. Verus adds ==>, <==, <==>, =~=, !~=,
# =~~=, !~~=, and the prefix forms &&& and ||| (which must not be read as || and |:
# a lone | may open a closure's or quantifier's parameter list).
_OPERATORS = longest_first(
    [
        "<==>",
        "==>",
        "<==",
        "=~~=",
        "!~~=",
        "=~=",
        "!~=",
        "&&&",
        "|||",
        "...",
        "..=",
        "<<=",
        ">>=",
        "::",
        "->",
        "=>",
        "==",
        "!=",
        "<=",
        ">=",
        "&&",
        "||",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "^=",
        "&=",
        "|=",
        "<<",
        ">>",
        "..",
    ]
)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RAW_IDENT_RE = re.compile(r"r#([A-Za-z_][A-Za-z0-9_]*)")
_NUMBER_RE = re.compile(
    r"0[xX][0-9A-Fa-f_]+|0[oO][0-7_]+|0[bB][01_]+|"
    r"[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9_]+)?"
)
_SUFFIX_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STRING_START_RE = re.compile(r'(?:b|c)?"')
_RAW_STRING_START_RE = re.compile(r'(?:b|c)?r(#*)"')


@dataclass(frozen=True)
class Token:
    """One code token. ``text`` is as written; ``value`` is the name an identifier
    stands for (``r#assume`` -> ``assume``), else the text."""

    kind: str
    text: str
    start: int
    end: int
    value: str = ""

    @property
    def word(self) -> str | None:
        """The identifier's name, or None for any other token."""
        return self.value if self.kind == "ident" else None


@dataclass(frozen=True)
class Lexed:
    """A text cut into segments that cover it exactly, and its code tokens.

    ``unterminated`` is None, ``block_comment``, ``string`` or ``char``;
    ``odd_chars`` holds the offsets of code characters outside printable ASCII
    and the four blanks.
    """

    text: str
    segments: tuple[Segment, ...]
    tokens: tuple[Token, ...]
    unterminated: str | None = None
    odd_chars: tuple[int, ...] = ()

    def masked(self) -> str:
        """The text with comments and the insides of literals replaced by spaces
        (newlines kept, so offsets and line numbers stay those of the text)."""
        out: list[str] = []
        for seg in self.segments:
            piece = self.text[seg.start : seg.end]
            if seg.kind == "code":
                out.append(piece)
            else:
                out.append(blank(piece))
        return "".join(out)


def _string_end(text: str, quote: int) -> int | None:
    """End of the escaped string whose opening quote is at ``quote``."""
    n = len(text)
    j = quote + 1
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            return j + 1
        j += 1
    return None


def _raw_string_end(text: str, quote: int, hashes: int) -> int | None:
    closing = '"' + "#" * hashes
    j = text.find(closing, quote + 1)
    return None if j < 0 else j + len(closing)


def _char_literal_end(text: str, i: int) -> int | None:
    """End of the character literal opened by the quote at ``i`` (None: not one)."""
    n = len(text)
    if i + 1 >= n:
        return None
    if text[i + 1] == "\\":
        j = i + 2
        if j < n and text[j] == "u" and j + 1 < n and text[j + 1] == "{":
            close = text.find("}", j + 2, j + 12)
            if close < 0:
                return None
            j = close + 1
        elif j < n and text[j] == "x":
            j += 3
        else:
            j += 1
        return j + 1 if j < n and text[j] == "'" else None
    if text[i + 1] not in "'\n" and i + 2 < n and text[i + 2] == "'":
        return i + 3
    return None


def lex(text: str) -> Lexed:
    """Cut ``text`` into segments and code tokens (never raises; see :class:`Lexed`)."""
    n = len(text)
    segments: list[Segment] = []
    tokens: list[Token] = []
    odd: list[int] = []
    unterminated: str | None = None
    code_start = 0
    i = 0

    def close_code(at: int) -> None:
        if at > code_start:
            segments.append(Segment("code", code_start, at))

    def literal(kind: str, start: int, end: int | None) -> int:
        nonlocal unterminated, code_start
        if end is None:
            unterminated = unterminated or kind
            end = n
        close_code(start)
        segments.append(Segment(kind, start, end))
        tokens.append(Token(kind, text[start:end], start, end, text[start:end]))
        code_start = end
        return end

    while i < n:
        c = text[i]
        if c in CODE_BLANKS:
            i += 1
            continue
        comment = comment_at(text, i)
        if comment is not None:
            end, closed = comment
            if not closed:
                unterminated = "block_comment"
            close_code(i)
            segments.append(Segment("comment", i, end))
            code_start = i = end
            continue
        m = _RAW_STRING_START_RE.match(text, i)
        if m:
            quote = m.end() - 1
            i = literal("string", i, _raw_string_end(text, quote, len(m.group(1))))
            continue
        m = _STRING_START_RE.match(text, i)
        if m:
            i = literal("string", i, _string_end(text, m.end() - 1))
            continue
        if c == "b" and i + 1 < n and text[i + 1] == "'":
            end = _char_literal_end(text, i + 1)
            if end is not None:
                i = literal("char", i, end)
                continue
        if c == "'":
            end = _char_literal_end(text, i)
            if end is not None:
                i = literal("char", i, end)
                continue
            m = _IDENT_RE.match(text, i + 1)
            if m:
                tokens.append(Token("lifetime", text[i : m.end()], i, m.end(), text[i : m.end()]))
                i = m.end()
                continue
            tokens.append(Token("op", "'", i, i + 1, "'"))
            i += 1
            continue
        if c.isascii() and c.isdigit():
            m = _NUMBER_RE.match(text, i)
            assert m is not None
            end = m.end()  # "1..n" stays 1 followed by "..": a fraction needs a digit after the dot
            s = _SUFFIX_RE.match(text, end)
            if s:
                end = s.end()
            tokens.append(Token("number", text[i:end], i, end, text[i:end]))
            i = end
            continue
        m = _RAW_IDENT_RE.match(text, i)
        if m:
            tokens.append(Token("ident", m.group(0), i, m.end(), m.group(1)))
            i = m.end()
            continue
        m = _IDENT_RE.match(text, i)
        if m:
            tokens.append(Token("ident", m.group(0), i, m.end(), m.group(0)))
            i = m.end()
            continue
        for op in _OPERATORS:
            if text.startswith(op, i):
                tokens.append(Token("op", op, i, i + len(op), op))
                i += len(op)
                break
        else:
            if is_odd(c):
                odd.append(i)
            tokens.append(Token("op", c, i, i + 1, c))
            i += 1
    close_code(n)
    return Lexed(text, tuple(segments), tuple(tokens), unterminated, tuple(odd))
