"""The Haskell lexer and token helpers shared by ``signature`` and ``liquid``.

Neither caller needs a full Haskell lexer. Both need to know which parts of a text are
code and which are not, so that words inside comments or literals are never mistaken
for code, and both need a few predicates on names and tokens. This module holds that
common ground:

* :func:`lex` cuts a text into consecutive :class:`Segment` s: ``code``, ``comment``
  (``--`` to the end of the line, or a nested ``{- -}`` block), ``pragma``
  (``{-# .. #-}``), ``annotation`` (a Liquid Haskell ``{-@ .. @-}``), ``string`` and
  ``char``. A run of dashes touching another symbol character (``-->``, ``|--``) is an
  operator, not a comment, as in Haskell. :class:`Lexed` gives a "view" of the text
  with the unwanted kinds blanked (offsets and newlines kept), the annotations, and
  which construct, if any, was still open at the end of the text.
* :func:`tokens` splits code (or an annotation's inside) into a flat token list;
  :func:`matching`, :func:`top_level`, :func:`split_top` and :func:`strip_parens` work
  on bracket structure in such a list.
* :func:`is_identifier`, :func:`is_operator`, :func:`is_symbolic` and
  :func:`unqualified` classify names.

Two readings of malformed literals
----------------------------------
The lexer was written twice before it lived here, once for finding signatures (and
screening programs before GHC builds them) and once for the Liquid Haskell proof check,
which reads untrusted model text while looking for escape hatches. The two copies cut
every *well-formed* Haskell text the same way; they differ only on literals GHC would
reject anyway, and each caller's reading is kept behind ``lex(text, guarded=...)``:

* ``guarded=False`` (the default; ``signature``, ``ghc_check``): a string gap
  (backslash, whitespace, backslash) always consumes the character after its
  whitespace, whatever it is; a character escape is a backslash followed by any run of
  non-blank characters (``'\\SOH'``, ``'\\x41'``, and also nonsense such as
  ``'\\abcdefghijkl'``).
* ``guarded=True`` (the Liquid Haskell check): a broken string gap ends at its first
  non-blank character unless that is the closing backslash, so a quote right after a
  broken gap still closes the string and the text after it is read as code; a character
  escape is a backslash, any one character and at most ten more characters other than
  a quote or a newline, so a quote pair can never hide more than a dozen characters of
  code (the price: a valid but zero-padded escape such as ``'\\x000000000041'`` is not
  read as a literal).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

# ------------------------------------------------------------------------------ names

SYMBOL_CHARS: frozenset[str] = frozenset("!#$%&*+./<=>?@\\^|-~:")
"""Characters operator symbols are made of."""

RESERVED_WORDS: frozenset[str] = frozenset(
    "case class data default deriving do else foreign if import in infix infixl infixr "
    "instance let module newtype of then type where _".split()
)
"""Haskell 2010's reserved identifiers (``_`` included): none of them can name a function."""

RESERVED_OPERATORS: frozenset[str] = frozenset({"..", "::", "=", "\\", "|", "<-", "->", "@", "~", "=>"})
"""Symbol sequences that are syntax, not operators one can define."""

_VARID_RE = re.compile(r"[a-z_][\w']*\Z")


def is_identifier(name: str) -> bool:
    """Is ``name`` a plain Haskell variable name (``foo``, ``f'``, ``_go``), not a keyword?"""
    return bool(_VARID_RE.match(name)) and name not in RESERVED_WORDS


def is_symbolic(tok: str) -> bool:
    """Is ``tok`` non-empty and made only of symbol characters? True for reserved
    symbols such as ``=``, ``::`` and ``->`` as well as for operators."""
    return bool(tok) and all(ch in SYMBOL_CHARS for ch in tok)


def is_operator(name: str) -> bool:
    """Is ``name`` an operator one can define, such as ``<+>`` (written without
    parentheses)? Reserved symbols (``=``, ``->``, ``::`` ...) are not."""
    return is_symbolic(name) and name not in RESERVED_OPERATORS


def unqualified(tok: str) -> str:
    """A name without its module qualifier: ``Data.List.sort`` gives ``sort``."""
    return tok.rsplit(".", 1)[-1] if "." in tok and tok[0].isupper() else tok


# ------------------------------------------------------------------------------ segments


@dataclass(frozen=True)
class Segment:
    """``text[start:end]`` is one ``kind`` of thing: ``code``, ``comment``, ``pragma``,
    ``annotation``, ``string`` or ``char``."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Annotation:
    """A ``{-@ .. @-}`` annotation: the text between the braces, the 1-based line it
    starts on, and whether it is properly closed by ``@-}``."""

    inner: str
    line: int
    closed: bool


@dataclass(frozen=True)
class Lexed:
    """A text cut into segments that cover it exactly, in order.

    ``unterminated`` names the construct still open at the end of the text, if any:
    ``block_comment``, ``pragma`` or ``annotation`` (a ``{-`` never closed, which then
    runs to the end) or ``string`` (a string literal cut off by a newline or by the end).
    An unclosed block overrides an earlier unclosed string.
    """

    text: str
    segments: tuple[Segment, ...]
    unterminated: str | None = None

    def view(self, keep: Collection[str] = ("code",)) -> str:
        """The text with every character outside the ``keep`` kinds replaced by a space.
        Newlines stay, so offsets, lines and columns in the view are those of the text."""
        out: list[str] = []
        for seg in self.segments:
            piece = self.text[seg.start : seg.end]
            out.append(piece if seg.kind in keep else re.sub(r"[^\n]", " ", piece))
        return "".join(out)

    def annotations(self) -> list[Annotation]:
        """The ``{-@ .. @-}`` annotations, in order."""
        out: list[Annotation] = []
        for seg in self.segments:
            if seg.kind != "annotation":
                continue
            raw = self.text[seg.start : seg.end]
            closed = raw.endswith("@-}") and len(raw) >= 6
            inner = raw[3:-3] if closed else raw[3:]
            out.append(Annotation(inner, self.text.count("\n", 0, seg.start) + 1, closed))
        return out


_CHAR_LITERAL_RE = re.compile(r"'(?:\\(?:'|\\|[^'\s\\][^'\s]*)|[^'\\\n])'")
_GUARDED_CHAR_LITERAL_RE = re.compile(r"'(?:[^'\\\n]|\\[^\n][^'\n]{0,10})'")


def _is_ident_char(c: str) -> bool:
    return c.isalnum() or c in "_'"


def _block_end(text: str, i: int) -> tuple[int, bool]:
    """Where the ``{-`` block at ``i`` ends (nested blocks counted) and whether it is
    closed; an unclosed block runs to the end of the text."""
    depth = 0
    n = len(text)
    while i < n:
        if text.startswith("{-", i):
            depth += 1
            i += 2
        elif text.startswith("-}", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i, True
        else:
            i += 1
    return n, False


def _starts_line_comment(text: str, i: int) -> bool:
    """Does the ``--`` at ``i`` open a comment? Not when the run of dashes touches
    another symbol character on either side: then it is part of an operator."""
    if i > 0 and text[i - 1] in SYMBOL_CHARS:
        return False
    j = i
    while j < len(text) and text[j] == "-":
        j += 1
    return j >= len(text) or text[j] not in SYMBOL_CHARS


def _string_end(text: str, i: int, guarded: bool) -> tuple[int, bool]:
    """Where the string literal opened at ``i`` ends, and whether a closing quote ends
    it. An unclosed string stops before the newline that cuts it off (or at the end)."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\":
            if j + 1 < n and text[j + 1].isspace():  # a gap: backslash, blanks, backslash
                k = j + 1
                while k < n and text[k].isspace():
                    k += 1
                if guarded and not (k < n and text[k] == "\\"):
                    j = k  # a broken gap: read on from its first non-blank character
                else:
                    j = k + 1
                continue
            j += 2
        elif c == '"':
            return j + 1, True
        elif c == "\n":
            return j, False
        else:
            j += 1
    return n, False


def lex(text: str, *, guarded: bool = False) -> Lexed:
    """Cut ``text`` into code, comments, pragmas, annotations and literals.

    ``guarded`` selects the reading of malformed literals meant for untrusted text (see
    the module docstring); well-formed Haskell is cut the same way either way.
    """
    char_literal = _GUARDED_CHAR_LITERAL_RE if guarded else _CHAR_LITERAL_RE
    segments: list[Segment] = []
    unterminated: str | None = None
    n = len(text)
    code_start = 0
    i = 0

    def emit(kind: str, start: int, end: int) -> None:
        nonlocal code_start
        if code_start < start:
            segments.append(Segment("code", code_start, start))
        segments.append(Segment(kind, start, end))
        code_start = end

    while i < n:
        c = text[i]
        if c == "{" and text.startswith("{-", i):
            kind = (
                "annotation"
                if text.startswith("{-@", i)
                else "pragma"
                if text.startswith("{-#", i)
                else "comment"
            )
            end, closed = _block_end(text, i)
            if not closed:
                unterminated = "block_comment" if kind == "comment" else kind
            emit(kind, i, end)
            i = end
        elif c == "-" and text.startswith("--", i) and _starts_line_comment(text, i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            emit("comment", i, end)
            i = end
        elif c == '"':
            end, closed = _string_end(text, i, guarded)
            if not closed:
                unterminated = unterminated or "string"
            emit("string", i, end)
            i = end
        elif c == "'" and (i == 0 or not _is_ident_char(text[i - 1])):
            m = char_literal.match(text, i)
            if m:
                emit("char", i, m.end())
                i = m.end()
            else:
                i += 1
        else:
            i += 1
    if code_start < n:
        segments.append(Segment("code", code_start, n))
    return Lexed(text, tuple(segments), unterminated)


# ------------------------------------------------------------------------------ tokens

_TOKEN_RE = re.compile(
    r"""(?P<id>(?:[A-Z][\w']*\.)*[A-Za-z_][\w']*)
      |(?P<num>[0-9][\w.]*)
      |(?P<op>[!#$%&*+./<=>?@\\^|~:-]+)
      |(?P<sp>[()\[\],;`{}])
      |(?P<other>\S)""",
    re.VERBOSE,
)

OPENING: dict[str, str] = {"(": ")", "[": "]", "{": "}"}
"""Each opening bracket and the bracket that closes it."""
CLOSING: frozenset[str] = frozenset(OPENING.values())


def tokens(text: str) -> list[str]:
    """The tokens of a code view (comments and literals already blanked): names, with
    any module qualifier attached (``M.f``); numbers; runs of symbol characters; single
    brackets, commas, semicolons and backticks; any other single character."""
    return [m.group(0) for m in _TOKEN_RE.finditer(text)]


def matching(toks: list[str], start: int) -> int:
    """Index of the bracket that closes the one at ``start``, or -1 (none, or a
    mismatched bracket comes first)."""
    stack: list[str] = []
    for k in range(start, len(toks)):
        t = toks[k]
        if t in OPENING:
            stack.append(OPENING[t])
        elif t in CLOSING:
            if not stack or stack.pop() != t:
                return -1
            if not stack:
                return k
    return -1


def top_level(toks: list[str]) -> list[tuple[int, str]]:
    """The (index, token) pairs outside all brackets; an opening bracket at depth 0
    is listed, its contents and closing bracket are not."""
    out: list[tuple[int, str]] = []
    depth = 0
    for k, t in enumerate(toks):
        if t in OPENING:
            if depth == 0:
                out.append((k, t))
            depth += 1
        elif t in CLOSING:
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append((k, t))
    return out


def split_top(toks: list[str], seps: Collection[str]) -> list[list[str]]:
    """Split a token list at the separators that sit outside all brackets."""
    parts: list[list[str]] = []
    last = 0
    for k, t in top_level(toks):
        if t in seps:
            parts.append(toks[last:k])
            last = k + 1
    parts.append(toks[last:])
    return parts


def strip_parens(toks: list[str]) -> list[str]:
    """Drop the parentheses that wrap a whole token list, as many layers as there are,
    but never those of a tuple or of unit.

    One pass over the list: the ``i``-th wrapping pair goes when its ``(`` is at index
    ``i``, its ``)`` at index ``n - 1 - i``, and no comma sits directly inside it
    (at bracket depth ``i + 1``).
    """
    n = len(toks)
    if n <= 2 or toks[0] != "(":
        return toks
    match = [-1] * n
    stack: list[int] = []
    comma_depths: set[int] = set()
    for k, t in enumerate(toks):
        if t in OPENING:
            stack.append(k)
        elif t in CLOSING:
            if not stack:
                return toks
            match[stack.pop()] = k
        elif t == ",":
            comma_depths.add(len(stack))
    i = 0
    while n - 2 * i > 2 and toks[i] == "(" and match[i] == n - 1 - i and (i + 1) not in comma_depths:
        i += 1
    return toks[i : n - i]


__all__ = [
    "CLOSING",
    "OPENING",
    "RESERVED_OPERATORS",
    "RESERVED_WORDS",
    "SYMBOL_CHARS",
    "Annotation",
    "Lexed",
    "Segment",
    "is_identifier",
    "is_operator",
    "is_symbolic",
    "lex",
    "matching",
    "split_top",
    "strip_parens",
    "tokens",
    "top_level",
    "unqualified",
]
