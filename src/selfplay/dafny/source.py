"""The structure of a Dafny 2.3 source text: a lexer and a parser of top-level declarations.

This is not a Dafny front end. It reads just enough of a program to answer the questions
the PSV track asks of a spec or a solution (which declarations are there, with which
attributes, clauses and bodies), and it reads model-written text, so it never runs
anything and never raises anything but :class:`DafnySyntaxError` (a one-line
:class:`~selfplay.errors.UserError`).

Lexing (:func:`lex`)
--------------------
Dafny's lexical rules, as Dafny 2.3 itself applies them (each was checked against the
real ``dafny`` binary):

* ``//`` comments run to the end of the line. A carriage return ends them too (Dafny
  2.3 does so), and so, to be safe, does any other line or page separator: if Dafny
  read on past such a character we would see *more* code than it does, never less.
* ``/* .. */`` comments nest. Inside a block comment nothing else is special: ``//``
  and quotes do not count, only ``/*`` and ``*/``.
* String literals ``".."`` with backslash escapes end at the first unescaped quote and
  may not span a line; verbatim strings ``@".."`` may, and double a quote to escape it.
* Identifiers are made of letters, digits, ``_``, ``?`` and ``'`` and may even *start*
  with ``'``. A quote therefore opens either a character literal (``'a'``, ``'\\n'``,
  ``'\\u0041'``) or an identifier (``'ab``, ``'a'b``); like Dafny's scanner we take the
  longer of the two, the character literal on a tie. So ``x'`` and ``'a'b`` are names and
  can never hide code behind a quote.
* Attributes are ``{:name args}``; Dafny also accepts blanks (even comments) between
  the brace and the colon, so a ``{`` followed by any token starting with ``:`` opens
  one. An attribute runs to its matching brace.

:class:`Lexed` keeps the segments (``code``, ``comment``, ``string``, ``char``), the code
tokens, which construct is left open at the end (``unterminated``) and the offsets of
characters outside printable ASCII found in code (``odd_chars``): Dafny code needs none,
and refusing them rules out look-alike letters and exotic separators at once.

Parsing (:func:`parse`)
-----------------------
Only the top level of the default module is read; ``module`` (and ``class``, ``trait``,
``iterator``) declarations are recognised and spanned as one declaration each, but
their insides are not parsed: the screen refuses them. Recognised declaration kinds:
``method``, ``lemma``, ``constructor``, ``colemma``, ``function``, ``function method``,
``predicate``, ``predicate method``, ``copredicate``, ``inductive predicate``,
``inductive lemma``, ``twostate function|predicate|lemma``, ``iterator``, ``datatype``,
``codatatype``, ``newtype``, ``type``, ``const``, ``var``, ``class``, ``trait``,
``module``, ``import``, ``include`` and ``export``, each optionally after the modifiers
``ghost``, ``static``, ``protected`` and ``abstract``.

A callable's header runs from its first modifier (or kind keyword) to the end of its
last clause; its clauses are ``requires``, ``ensures``, ``modifies``, ``reads``,
``decreases`` (each maybe after ``free``). The body is the first ``{`` at the header's
bracket depth that is not part of an expression, up to its matching ``}``. Telling the
two apart needs a little of Dafny's expression grammar (:class:`ExprState`): a brace
where an operand is expected (after ``==``, ``in``, ``(``, ``,`` ...) opens a set
display, a brace after a finished operand (a name, a literal, ``)``, ``]``, ``}``, a
closing ``|``) opens the body, as does a brace right after the ``;`` that may end a
clause (``ensures P;``), and a brace followed by ``case`` belongs to a ``match``.
When in doubt (``s > {1}``: a comparison or the end of ``seq<int>``?) the brace is read
as part of an expression, so a mistake can only make a declaration look *bodiless*
(which the screen refuses), never give a bodiless one a body. In the signature part,
before any clause, every brace at depth 0 opens the body (``function F(): set<int> {``).
A bodiless declaration ends where the next declaration keyword starts, or at the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import UserError
from ..specverify.brackets import CLOSE as _CLOSE
from ..specverify.brackets import OPEN as _OPEN
from ..specverify.brackets import bracket_partners, syntax_error
from ..specverify.clauses import Clause
from ..specverify.lexing import CODE_BLANKS, Segment, blank, comment_at, is_odd, line_of, longest_first

MAX_SOURCE_CHARS = 100_000
"""Longer texts are refused by the callers before they are lexed (model answers are a
few thousand characters; this bounds the work done on hostile input)."""

CLAUSE_WORDS = frozenset({"requires", "ensures", "modifies", "reads", "decreases"})
"""Keywords that open a specification clause of a callable's header."""

MODIFIERS = frozenset({"ghost", "static", "protected", "abstract"})
KIND_WORDS = frozenset(
    {
        "method",
        "lemma",
        "constructor",
        "colemma",
        "function",
        "predicate",
        "copredicate",
        "inductive",
        "twostate",
        "iterator",
        "datatype",
        "codatatype",
        "newtype",
        "type",
        "const",
        "var",
        "class",
        "trait",
        "module",
        "import",
        "include",
        "export",
    }
)
"""Keywords that start a top-level declaration (after any modifiers)."""

# Words that start a declaration and can never occur inside an expression, so one of
# them at depth 0 ends a bodiless declaration ('var' can: let expressions).
_TERMINATORS = (MODIFIERS | KIND_WORDS) - {"var"}

CALLABLE_KINDS = frozenset(
    {
        "method",
        "lemma",
        "constructor",
        "colemma",
        "function",
        "function method",
        "predicate",
        "predicate method",
        "copredicate",
        "inductive predicate",
        "inductive lemma",
        "twostate function",
        "twostate predicate",
        "twostate lemma",
        "iterator",
    }
)
"""Declaration kinds that have a header with clauses and (normally) a body."""

FUNCTION_KINDS = frozenset(
    {
        "function",
        "function method",
        "predicate",
        "predicate method",
        "copredicate",
        "inductive predicate",
        "twostate function",
        "twostate predicate",
    }
)
"""Callable kinds that are functions (their body is an expression)."""

# Words after which an operand is expected: a brace there opens a display or belongs to
# a statement, never to a body. Everything else that looks like a name ends an operand.
WORD_OPERATORS = frozenset(
    {
        "in",
        "as",
        "is",
        "then",
        "else",
        "if",
        "match",
        "case",
        "requires",
        "ensures",
        "reads",
        "modifies",
        "decreases",
        "invariant",
        "free",
        "returns",
        "return",
        "assert",
        "assume",
        "print",
        "var",
        "ghost",
        "set",
        "iset",
        "multiset",
        "seq",
        "map",
        "imap",
        "new",
        "forall",
        "exists",
        "calc",
        "while",
        "modify",
        "reveal",
        "yield",
        "label",
        "break",
        "witness",
        "old",
        "fresh",
        "unchanged",
        "allocated",
        "function",
        "method",
        "lemma",
        "predicate",
        "const",
        "type",
        "newtype",
        "datatype",
        "codatatype",
        "static",
    }
)

_LINE_ENDS = "\n\r\x0b\x0c\x85\u2028\u2029"
_CHAR_LITERAL_RE = re.compile(r"'(?:[^'\\\r\n]|\\(?:u[0-9A-Fa-f]{4}|['\"\\0nrt]))'")
_IDENT_RE = re.compile(r"[A-Za-z0-9_?']+")
_NUMBER_RE = re.compile(r"0x[0-9A-Fa-f_]+|[0-9][0-9_]*(?:\.[0-9][0-9_]*)?")
_OPERATORS = longest_first(
    [
        "<==>",
        "==>",
        "<==",
        "-->",
        "==",
        "!=",
        "<=",
        ">=",
        "&&",
        "||",
        ":=",
        ":|",
        "::",
        "..",
        "=>",
        "->",
        "~>",
        "!!",
    ]
)


class DafnySyntaxError(UserError):
    """The text cannot be read as a Dafny program (one line, with a line number)."""


# --------------------------------------------------------------------------- lexing


@dataclass(frozen=True)
class Token:
    """One code token: ``kind`` is ``ident`` (names and keywords), ``number``, ``string``,
    ``char`` or ``op`` (operators and punctuation, one character or a known group)."""

    kind: str
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Attribute:
    """An attribute ``{:name args}``: its name ('' when none follows the colon), where it
    starts and ends in the text, and the indices of its tokens in :attr:`Lexed.tokens`."""

    name: str
    start: int
    end: int
    first_token: int
    last_token: int


@dataclass(frozen=True)
class Lexed:
    """A text cut into segments that cover it exactly, and its code tokens.

    ``unterminated`` names what was still open at the end: ``block_comment``, ``string``
    (a literal cut off by a line end or by the end of the text) or ``attribute``.
    ``odd_chars`` holds the offsets of code characters that are neither printable ASCII
    nor a blank (space, tab, newline, carriage return).
    """

    text: str
    segments: tuple[Segment, ...]
    tokens: tuple[Token, ...]
    attributes: tuple[Attribute, ...]
    unterminated: str | None = None
    odd_chars: tuple[int, ...] = ()

    def masked(self) -> str:
        """The text with comments and the insides of string and character literals
        replaced by spaces (newlines kept, so offsets and lines stay those of the text)."""
        out: list[str] = []
        for seg in self.segments:
            piece = self.text[seg.start : seg.end]
            if seg.kind == "code":
                out.append(piece)
            elif seg.kind == "comment":
                out.append(blank(piece))
            else:  # keep the delimiters, blank the contents
                head = 2 if piece.startswith('@"') else 1
                closed = len(piece) > head and piece[-1] == piece[head - 1]
                inner = piece[head:-1] if closed else piece[head:]
                out.append(piece[:head] + blank(inner) + (piece[-1] if closed else ""))
        return "".join(out)

    def line_of(self, offset: int) -> int:
        """The 1-based line of a character offset."""
        return line_of(self.text, offset)

    def structure_tokens(self) -> list[Token]:
        """The code tokens without those of attributes (what the parser reads)."""
        skip: set[int] = set()
        for attr in self.attributes:
            skip.update(range(attr.first_token, attr.last_token + 1))
        return [tok for k, tok in enumerate(self.tokens) if k not in skip]


def _string_end(text: str, i: int) -> int | None:
    """Where the ``"`` string opened at ``i`` ends (None: cut off by a line end or the end)."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\":
            if j + 1 < n and text[j + 1] not in "\r\n":
                j += 2
                continue
            return None
        if c in "\r\n":
            return None
        if c == '"':
            return j + 1
        j += 1
    return None


def _verbatim_end(text: str, i: int) -> int | None:
    """Where the ``@"`` verbatim string opened at ``i`` ends (``""`` is an escaped quote)."""
    j = i + 2
    n = len(text)
    while j < n:
        if text[j] == '"':
            if j + 1 < n and text[j + 1] == '"':
                j += 2
                continue
            return j + 1
        j += 1
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

    while i < n:
        c = text[i]
        if c in CODE_BLANKS:
            i += 1
            continue
        comment = comment_at(text, i, _LINE_ENDS)
        if comment is not None:
            end, closed = comment
            if not closed:
                unterminated = "block_comment"
            close_code(i)
            segments.append(Segment("comment", i, end))
            code_start = i = end
            continue
        if c == '"' or text.startswith('@"', i):
            end = _string_end(text, i) if c == '"' else _verbatim_end(text, i)
            if end is None:
                unterminated = unterminated or "string"
                end = i + 1
                while end < n and (c == "@" or text[end] not in "\r\n"):
                    end += 1
            close_code(i)
            segments.append(Segment("string", i, end))
            tokens.append(Token("string", text[i:end], i, end))
            code_start = i = end
            continue
        if c == "'" or c.isascii() and (c.isalnum() or c in "_?"):
            if c.isdigit():
                m = _NUMBER_RE.match(text, i)
                assert m is not None
                tokens.append(Token("number", m.group(), i, m.end()))
                i = m.end()
                continue
            ident = _IDENT_RE.match(text, i)
            ident_end = ident.end() if ident else i + 1
            if c == "'":
                char = _CHAR_LITERAL_RE.match(text, i)
                if char and char.end() >= ident_end:
                    close_code(i)
                    segments.append(Segment("char", i, char.end()))
                    tokens.append(Token("char", char.group(), i, char.end()))
                    code_start = i = char.end()
                    continue
            tokens.append(Token("ident", text[i:ident_end], i, ident_end))
            i = ident_end
            continue
        for op in _OPERATORS:
            if text.startswith(op, i):
                tokens.append(Token("op", op, i, i + len(op)))
                i += len(op)
                break
        else:
            if is_odd(c):
                odd.append(i)
            tokens.append(Token("op", c, i, i + 1))
            i += 1
    close_code(n)
    attributes, attr_open = _find_attributes(text, tokens)
    if attr_open and unterminated is None:
        unterminated = "attribute"
    return Lexed(text, tuple(segments), tuple(tokens), tuple(attributes), unterminated, tuple(odd))


def _find_attributes(text: str, tokens: list[Token]) -> tuple[list[Attribute], bool]:
    """The ``{:...}`` attributes among the tokens (nested ones inside an attribute are part
    of it), and whether the last one is never closed."""
    out: list[Attribute] = []
    k = 0
    n = len(tokens)
    while k < n:
        tok = tokens[k]
        if tok.text == "{" and k + 1 < n and tokens[k + 1].text.startswith(":"):
            name = ""
            if tokens[k + 1].text == ":" and k + 2 < n and tokens[k + 2].kind == "ident":
                name = tokens[k + 2].text
            depth = 0
            j = k
            while j < n:
                if tokens[j].text == "{":
                    depth += 1
                elif tokens[j].text == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                out.append(Attribute(name, tok.start, len(text), k, n - 1))
                return out, True
            out.append(Attribute(name, tok.start, tokens[j].end, k, j))
            k = j + 1
            continue
        k += 1
    return out, False


# --------------------------------------------------------------------------- expressions


class ExprState:
    """Tracks, token by token, whether Dafny's expression grammar expects an operand next.

    That decides what a ``{`` is (see the module docstring) and whether a name after a
    finished operand starts a new statement. ``|`` is a cardinality bar when an operand is
    expected (it opens) or when a bar opened at the same depth is pending (it closes), and
    a separator (``set x | P``, ``forall i | R``) otherwise. ``*`` where an operand is
    expected is the wildcard (``decreases *``, ``r := *``), which is an operand. A brace
    followed by ``case`` belongs to a ``match`` (or an alternative ``if``/``while``) and is
    never a body.
    """

    def __init__(self, expect_operand: bool = True) -> None:
        self.expect_operand = expect_operand
        self._bars: list[int] = []
        self._after_semicolon = False
        self._let = False

    def brace_is_block(self, next_tok: Token | None) -> bool:
        """Would a ``{`` here, followed by ``next_tok``, open a block (a body) rather than
        a part of an expression? After a ``;`` that ends a clause (old style ``ensures P;``)
        a brace opens the body, unless a ``var`` made the ``;`` part of a let expression."""
        if next_tok is not None and next_tok.text == "case":
            return False
        if self._after_semicolon and not self._let:
            return True
        return not self.expect_operand

    def feed(self, tok: Token, depth: int = 0) -> None:
        """Advance past ``tok``, found at bracket ``depth`` (the depth *outside* it for brackets)."""
        text = tok.text
        self._after_semicolon = text == ";"
        if text == "var":
            self._let = True
        if tok.kind in ("number", "string", "char"):
            self.expect_operand = False
        elif tok.kind == "ident":
            self.expect_operand = text in WORD_OPERATORS
        elif text in (")", "]", "}"):
            self.expect_operand = False
        elif text == "|":
            if self.expect_operand:
                self._bars.append(depth)
            elif self._bars and self._bars[-1] == depth:
                self._bars.pop()
                self.expect_operand = False
                return
            self.expect_operand = True
        elif text == "*" and self.expect_operand:
            self.expect_operand = False
        else:
            self.expect_operand = True


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Formal:
    """One parameter: its name, its type text and whether it is declared ``ghost``."""

    name: str
    type: str
    ghost: bool = False


@dataclass(frozen=True)
class Declaration:
    """One top-level declaration.

    kind        canonical kind: ``method``, ``function method``, ``inductive lemma``, ``datatype`` ...
    name        the declared name (for ``include``: the file string; None when there is none)
    modifiers   ``ghost``, ``static``, ``protected``, ``abstract`` as written, in order
    attributes  the attributes written in the header (clauses' attributes included)
    start, end  the whole declaration: first modifier or keyword to the end of the body (or header)
    header_end  the end of the header: the last token before the body (or the declaration's end)
    clauses     the header's specification clauses, in order
    body        ``(start, end)`` of the body braces, both included; None when bodiless
    params, outs  the formal parameters and (methods) the ``returns`` parameters
    text        ``source[start:end]``;  ``header``: ``source[start:header_end]``
    line        1-based line of ``start``
    """

    kind: str
    name: str | None
    modifiers: tuple[str, ...]
    attributes: tuple[Attribute, ...]
    start: int
    end: int
    header_end: int
    clauses: tuple[Clause, ...]
    body: tuple[int, int] | None
    params: tuple[Formal, ...]
    outs: tuple[Formal, ...]
    text: str
    header: str
    line: int

    @property
    def is_callable(self) -> bool:
        return self.kind in CALLABLE_KINDS

    @property
    def is_function(self) -> bool:
        return self.kind in FUNCTION_KINDS

    @property
    def bodiless(self) -> bool:
        return self.body is None

    def clause_texts(self, keyword: str) -> list[str]:
        """The texts of the clauses with this exact keyword."""
        return [c.text for c in self.clauses if c.keyword == keyword]


@dataclass(frozen=True)
class Program:
    """A parsed text: its lexing, its top-level declarations in order, and the code tokens
    with attributes removed together with their matching-bracket table."""

    text: str
    lexed: Lexed
    declarations: tuple[Declaration, ...]
    tokens: tuple[Token, ...] = field(repr=False)
    partner: tuple[int, ...] = field(repr=False)

    def named(self, name: str) -> list[Declaration]:
        """The declarations with this name."""
        return [d for d in self.declarations if d.name == name]


def _fail(text: str, offset: int, message: str) -> DafnySyntaxError:
    return syntax_error(DafnySyntaxError, text, offset, message)


def _bracket_partners(text: str, toks: list[Token]) -> list[int]:
    """For each bracket token the index of its partner (-1 for other tokens); raises on
    an unbalanced or mismatched bracket (every bracket must be closed)."""
    partner, still_open = bracket_partners(text, toks, DafnySyntaxError)
    if still_open:
        tok = toks[still_open[-1]]
        raise _fail(text, tok.start, f"'{tok.text}' is never closed")
    return partner


def parse(text: str) -> Program:
    """Lex and parse ``text`` into its top-level declarations.

    Raises DafnySyntaxError (one line) for text that is too long, an unterminated
    comment, string or attribute, unbalanced brackets, or something at the top level that
    does not start a declaration.
    """
    if len(text) > MAX_SOURCE_CHARS:
        raise DafnySyntaxError(f"the text has {len(text)} characters, more than {MAX_SOURCE_CHARS}")
    lexed = lex(text)
    if lexed.unterminated:
        what = {
            "block_comment": "a /* comment",
            "string": "a string literal",
            "attribute": "an attribute {:",
        }[lexed.unterminated]
        raise DafnySyntaxError(f"{what} is never closed")
    toks = lexed.structure_tokens()
    partner = _bracket_partners(text, toks)
    decls: list[Declaration] = []
    k = 0
    while k < len(toks):
        decl, k = _declaration(text, lexed, toks, partner, k)
        decls.append(decl)
    return Program(text, lexed, tuple(decls), tuple(toks), tuple(partner))


def _declaration(
    text: str, lexed: Lexed, toks: list[Token], partner: list[int], k: int
) -> tuple[Declaration, int]:
    """Read the declaration starting at token ``k``; return it and the next token index."""
    n = len(toks)
    first = toks[k]
    modifiers: list[str] = []
    while k < n and toks[k].text in MODIFIERS:
        modifiers.append(toks[k].text)
        k += 1
    if k >= n:
        raise _fail(text, first.start, "modifiers without a declaration")
    word = toks[k].text
    if toks[k].kind != "ident" or word not in KIND_WORDS:
        raise _fail(text, toks[k].start, f"expected a declaration, found '{toks[k].text[:40]}'")
    kind = word
    k += 1
    nxt = toks[k].text if k < n else ""
    if word in ("function", "predicate") and nxt == "method":
        kind, k = f"{word} method", k + 1
    elif word == "inductive" and nxt in ("predicate", "lemma"):
        kind, k = f"inductive {nxt}", k + 1
    elif word == "twostate" and nxt in ("function", "predicate", "lemma"):
        kind, k = f"twostate {nxt}", k + 1
    elif word in ("inductive", "twostate"):
        raise _fail(text, toks[k - 1].start, f"'{word}' must be followed by a predicate, function or lemma")

    name: str | None = None
    if kind == "include":
        if k >= n or toks[k].kind != "string":
            raise _fail(text, toks[k - 1].start, "include without a file name")
        name = toks[k].text
        k += 1
        end_tok = k - 1
        return _make(text, lexed, kind, name, modifiers, first, toks, end_tok, end_tok, [], None, (), ()), k
    if kind == "import":
        while k < n and toks[k].text == "opened":
            k += 1
    if (
        k < n
        and toks[k].kind == "ident"
        and toks[k].text not in _TERMINATORS
        and toks[k].text not in CLAUSE_WORDS
    ):
        name = toks[k].text
        k += 1
        while (
            kind in ("module", "import") and k + 1 < n and toks[k].text == "." and toks[k + 1].kind == "ident"
        ):
            name += "." + toks[k + 1].text
            k += 2
    elif kind != "constructor":
        raise _fail(text, toks[k - 1].start, f"{kind} without a name")

    if kind in CALLABLE_KINDS:
        return _callable(text, lexed, toks, partner, k, kind, name, modifiers, first)
    # Everything else: up to the next declaration keyword at depth 0; a block that is not
    # part of an expression is its body (class, module, trait; members of a datatype).
    state = ExprState(expect_operand=False)
    body: tuple[int, int] | None = None
    last = k - 1
    while k < n:
        tok = toks[k]
        if tok.kind == "ident" and tok.text in _TERMINATORS:
            break
        after = toks[k + 1] if k + 1 < n else None
        if tok.text == "{" and (kind in ("class", "trait", "module") or state.brace_is_block(after)):
            close = partner[k]
            body = (tok.start, toks[close].end)
            last = close
            k = close + 1
            break
        state.feed(tok)
        if tok.text in _OPEN:
            k = partner[k]
            state.feed(toks[k])
        last = k
        k += 1
    header_last = last if body is None else _index_before(toks, body[0], last)
    return _make(text, lexed, kind, name, modifiers, first, toks, header_last, last, [], body, (), ()), k


def _index_before(toks: list[Token], offset: int, hint: int) -> int:
    """The index of the last token that ends at or before ``offset``."""
    j = hint
    while j > 0 and toks[j].start >= offset:
        j -= 1
    return j


def _callable(
    text: str,
    lexed: Lexed,
    toks: list[Token],
    partner: list[int],
    k: int,
    kind: str,
    name: str | None,
    modifiers: list[str],
    first: Token,
) -> tuple[Declaration, int]:
    """Read a callable's signature, clauses and body, from the token after its name."""
    n = len(toks)
    params: tuple[Formal, ...] = ()
    outs: tuple[Formal, ...] = ()
    clauses: list[tuple[str, int, int, int]] = []  # keyword, first token, keyword's last token, last token
    body: tuple[int, int] | None = None
    state: ExprState | None = None  # None while in the signature
    last = k - 1
    seen_params = False
    while k < n:
        tok = toks[k]
        if tok.kind == "ident" and tok.text in _TERMINATORS:
            break
        clause_word = tok.text in CLAUSE_WORDS or (
            tok.text == "free" and k + 1 < n and toks[k + 1].text in CLAUSE_WORDS
        )
        if tok.kind == "ident" and clause_word:
            keyword = tok.text if tok.text != "free" else f"free {toks[k + 1].text}"
            clauses.append((keyword, k, k + len(keyword.split()) - 1, k + len(keyword.split()) - 1))
            k += len(keyword.split())
            last = k - 1
            state = ExprState()
            continue
        after = toks[k + 1] if k + 1 < n else None
        if tok.text == "{" and (state is None or state.brace_is_block(after)):
            close = partner[k]
            body = (tok.start, toks[close].end)
            k = close + 1
            break
        if state is None:
            if tok.text == "(" and not seen_params:
                params = _formals(text, toks, k, partner[k])
                seen_params = True
            elif tok.text == "returns" and k + 1 < n and toks[k + 1].text == "(":
                outs = _formals(text, toks, k + 1, partner[k + 1])
        else:
            state.feed(tok)
        if tok.text in _OPEN:
            k = partner[k]
            if state is not None:
                state.feed(toks[k])
        if clauses:
            kw, c_first, kw_last, _ = clauses[-1]
            clauses[-1] = (kw, c_first, kw_last, k)
        last = k
        k += 1
    clause_objs = [
        Clause(
            kw,
            text[toks[a].start : toks[b].end],
            toks[a].start,
            toks[b].end,
            text[toks[kw_last].end : toks[b].end].strip().removesuffix(";").rstrip() if b > kw_last else "",
        )
        for kw, a, kw_last, b in clauses
    ]
    end_tok = last
    decl = _make(
        text, lexed, kind, name, modifiers, first, toks, last, end_tok, clause_objs, body, params, outs
    )
    return decl, k


def _formals(text: str, toks: list[Token], open_k: int, close_k: int) -> tuple[Formal, ...]:
    """The formals between the parentheses at ``open_k`` and ``close_k``: ``[ghost] name: type``
    separated by top-level commas (a formal without a colon gets an empty type)."""
    out: list[Formal] = []
    parts: list[list[int]] = [[]]
    j = open_k + 1
    depth = 0
    while j < close_k:
        t = toks[j].text
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth -= 1
        elif t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        if t == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(j)
        j += 1
    for part in parts:
        if not part:
            continue
        ghost = False
        idx = part
        while idx and toks[idx[0]].text in ("ghost", "new", "nameonly", "older"):
            ghost = ghost or toks[idx[0]].text == "ghost"
            idx = idx[1:]
        if not idx or toks[idx[0]].kind != "ident":
            continue
        colon = next((p for p in idx if toks[p].text == ":"), None)
        type_text = (
            text[toks[colon + 1].start : toks[idx[-1]].end] if colon is not None and colon < idx[-1] else ""
        )
        out.append(Formal(toks[idx[0]].text, type_text, ghost))
    return tuple(out)


def _make(
    text: str,
    lexed: Lexed,
    kind: str,
    name: str | None,
    modifiers: list[str],
    first: Token,
    toks: list[Token],
    header_last: int,
    last: int,
    clauses: list[Clause],
    body: tuple[int, int] | None,
    params: tuple[Formal, ...],
    outs: tuple[Formal, ...],
) -> Declaration:
    start = first.start
    header_end = toks[header_last].end
    end = body[1] if body else toks[last].end
    attrs = tuple(a for a in lexed.attributes if start <= a.start < (body[0] if body else end))
    return Declaration(
        kind=kind,
        name=name,
        modifiers=tuple(modifiers),
        attributes=attrs,
        start=start,
        end=end,
        header_end=header_end,
        clauses=tuple(clauses),
        body=body,
        params=params,
        outs=outs,
        text=text[start:end],
        header=text[start:header_end],
        line=line_of(text, start),
    )
