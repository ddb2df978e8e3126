"""The items of a Rust + Verus source text: a reader of top-level declarations.

Not a Rust front end: it reads just enough of a file to answer what the PSV track asks
of a spec or a solution (which items are there, where, with which attributes, clauses
and bodies), and it reads model-written text, so it raises nothing but
:class:`VerusSyntaxError` (a one-line :class:`~selfplay.errors.UserError`).

What is read
------------
Items at the top of the file, and inside every ``verus! { ... }`` block there (its
items have ``scope == "verus"``, the others ``"top"``). An item is any outer
attributes, then qualifiers (``pub``, ``pub(crate)``, ``open``, ``closed``, ``spec``,
``spec(checked)``, ``proof``, ``exec``, ``tracked``, ``broadcast``, ``uninterp``,
``axiom``, ``const``, ``async``, ``unsafe``, ``default``, ``extern "C"``), then one of
``fn``, ``struct``, ``enum``, ``union``, ``trait``, ``impl``, ``mod``, ``use``,
``const``, ``static``, ``type``, ``global``, ``broadcast use``, ``broadcast group``,
``assume_specification``, ``extern crate``, an ``extern`` block, ``macro_rules!``, a
macro invocation (``name! ...``), an inner attribute ``#![...]`` (an item of its own
here) or a stray ``;``. Bodies of impls, traits, modules and functions are spanned,
not read.

Functions
---------
A function's *header* runs from its first attribute (or qualifier, or ``fn``) to the
end of its last clause; its clauses are ``requires``, ``ensures``, ``recommends``,
``decreases``, ``returns``, ``opens_invariants``, ``no_unwind`` and
``default_ensures``. The body is the first ``{`` at the header's bracket depth that
does not belong to an expression: in the signature (before any clause) every such
brace opens the body; in a clause it opens the body right after the clause keyword or
a ``,``, or after a finished operand (a name, a literal, a closing bracket, a postfix
``@``). ``if`` and ``match`` expressions, block expressions, macro calls
(``seq![..]``), closures and quantifier binders (``forall|i: int| ..``) and the type
after ``as`` are stepped over whole, so ``ensures r == if b { x } else { y }, {`` has
its body where rustc sees it. When in doubt a brace is read as part of an expression,
so a mistake can only make the body look part of the header (which the screen then
finds changed, or the function bodiless), never give a bodiless function a body. A
function without a body ends at ``;`` or at the first token that can only start an
item.

Open ends
---------
``parse(text, open_end=True)`` also accepts a text that stops inside braces, as a
proposer's spec does (it ends with the open brace of the function to implement, maybe
inside an unclosed ``verus! {``): a ``{`` that is the last token, and a ``verus! {``,
may be left open. Their spans end at the end of the text and ``open_body`` is set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..errors import UserError
from ..specverify.brackets import CLOSE as _CLOSE
from ..specverify.brackets import OPEN as _OPEN
from ..specverify.brackets import bracket_partners, syntax_error
from ..specverify.clauses import Clause
from .attributes import Attribute, find_attributes
from .lexer import Lexed, Token, lex, line_of

MAX_SOURCE_CHARS = 100_000
"""Longer texts are refused before they are read (answers are a few thousand
characters; this bounds the work done on hostile input)."""

CLAUSE_WORDS = frozenset(
    {
        "requires",
        "ensures",
        "recommends",
        "decreases",
        "returns",
        "opens_invariants",
        "no_unwind",
        "default_ensures",
    }
)
"""Keywords that open a clause of a function's header."""

# Rust keywords that can only start an item (never a name or part of an expression in
# a header), and Verus's contextual words, which start an item only when followed by
# another item word.
_HARD_ITEM_WORDS = frozenset(
    {
        "fn",
        "pub",
        "struct",
        "enum",
        "union",
        "trait",
        "impl",
        "mod",
        "use",
        "static",
        "type",
        "const",
        "extern",
        "macro_rules",
        "unsafe",
    }
)
_SOFT_ITEM_WORDS = frozenset(
    {
        "open",
        "closed",
        "spec",
        "proof",
        "exec",
        "tracked",
        "broadcast",
        "uninterp",
        "axiom",
        "global",
        "async",
        "default",
        "assume_specification",
    }
)

# Words after which an operand is expected (everything else that looks like a name
# finishes one).
WORD_OPERATORS = frozenset(
    {
        "in",
        "if",
        "else",
        "match",
        "let",
        "forall",
        "exists",
        "choose",
        "return",
        "mut",
        "ref",
        "move",
        "box",
        "dyn",
        "impl",
        "where",
        "is",
        "has",
        "matches",
        "via",
        "when",
        "as",
    }
)


class VerusSyntaxError(UserError):
    """The text cannot be read as Rust + Verus items (one line, with a line number)."""


@dataclass(frozen=True)
class Param:
    """A parameter or a named return value: name, type text, and whether the type is a
    mutable reference (``&mut T``, ``&'a mut T``)."""

    name: str
    type: str
    mut_ref: bool = False


@dataclass(frozen=True)
class Declaration:
    """One item.

    kind        ``fn``, ``struct``, ``enum``, ``union``, ``trait``, ``impl``, ``mod``, ``use``,
                ``const``, ``static``, ``type``, ``global``, ``broadcast_use``,
                ``broadcast_group``, ``assume_specification``, ``extern_crate``,
                ``extern_block``, ``macro_rules``, ``macro`` (an invocation), ``verus_block``,
                ``inner_attribute`` or ``empty``
    name        the declared name (a macro's name for ``macro``/``macro_rules``), or None
    mode        for functions ``exec``, ``spec`` or ``proof`` (``axiom fn`` is proof); else None
    qualifiers  the qualifier words as written, in order (``pub``, ``open``, ``spec`` ...)
    attributes  the item's own outer attributes
    start, end  the whole item (first attribute to the end of its body, ``;`` or last token)
    header_end  the end of the header (functions: the last clause, before the body)
    clauses     a function's header clauses, in order
    body        ``(start, end)`` of the body braces (functions, blocks, braced items)
    open_body   the body's brace is never closed (the text ends inside it)
    params, ret a function's parameters and named return value (None when unnamed)
    returns_value  whether a function declares ``-> T``
    scope       ``top`` (outside any verus! block) or ``verus``
    text, header, line  ``source[start:end]``, ``source[start:header_end]``, 1-based line
    """

    kind: str
    name: str | None
    mode: str | None
    qualifiers: tuple[str, ...]
    attributes: tuple[Attribute, ...]
    start: int
    end: int
    header_end: int
    clauses: tuple[Clause, ...]
    body: tuple[int, int] | None
    open_body: bool
    params: tuple[Param, ...]
    ret: Param | None
    returns_value: bool
    scope: str
    text: str
    header: str
    line: int

    @property
    def is_fn(self) -> bool:
        return self.kind == "fn"

    @property
    def bodiless(self) -> bool:
        """A function without a body (its contract would be taken on trust)."""
        return self.kind == "fn" and self.body is None

    def clause_texts(self, keyword: str) -> list[str]:
        return [c.text for c in self.clauses if c.keyword == keyword]


@dataclass(frozen=True)
class Program:
    """A read text: its lexing, code tokens with their bracket partners (-1 for other
    tokens; ``len(tokens)`` for a brace left open), every item in text order, and every
    attribute."""

    text: str
    lexed: Lexed
    items: tuple[Declaration, ...]
    tokens: tuple[Token, ...] = field(repr=False)
    partner: tuple[int, ...] = field(repr=False)
    attributes: tuple[Attribute, ...] = field(repr=False)

    @cached_property
    def _by_name(self) -> dict[str, list[Declaration]]:
        index: dict[str, list[Declaration]] = {}
        for d in self.items:
            if d.name is not None:
                index.setdefault(d.name, []).append(d)
        return index

    def named(self, name: str, scope: str | None = None) -> list[Declaration]:
        """The items with this name (in text order), optionally only those of ``scope``."""
        return [d for d in self._by_name.get(name, []) if scope is None or d.scope == scope]

    @property
    def blocks(self) -> list[Declaration]:
        return [d for d in self.items if d.kind == "verus_block"]


def _fail(text: str, offset: int, message: str) -> VerusSyntaxError:
    return syntax_error(VerusSyntaxError, text, offset, message)


def _partners(text: str, toks: tuple[Token, ...], open_end: bool) -> list[int]:
    """Matching brackets; with ``open_end`` a last ``{`` or a ``verus! {`` may stay open
    (its partner is then one past the last token)."""
    partner, stack = bracket_partners(text, toks, VerusSyntaxError)
    for opener in stack:
        tok = toks[opener]
        last = opener == len(toks) - 1
        block = opener >= 2 and toks[opener - 1].text == "!" and toks[opener - 2].word == "verus"
        if not (open_end and tok.text == "{" and (last or block)):
            raise _fail(text, tok.start, f"'{tok.text}' is never closed")
        partner[opener] = len(toks)
    return partner


def parse(text: str, *, open_end: bool = False) -> Program:
    """Read ``text`` into its items (see the module docstring); raises
    VerusSyntaxError for text that is too long, an unterminated comment or literal,
    unbalanced brackets, or something that does not start an item."""
    if len(text) > MAX_SOURCE_CHARS:
        raise VerusSyntaxError(f"the text has {len(text)} characters, more than {MAX_SOURCE_CHARS}")
    lexed = lex(text)
    if lexed.unterminated:
        what = {"block_comment": "a /* comment", "string": "a string literal", "char": "a character literal"}
        raise VerusSyntaxError(f"{what[lexed.unterminated]} is never closed")
    toks = lexed.tokens
    partner = _partners(text, toks, open_end)
    reader = _Reader(text, toks, partner)
    items: list[Declaration] = []
    reader.items(0, len(toks), "top", items)
    return Program(text, lexed, tuple(items), toks, tuple(partner), tuple(find_attributes(toks)))


class _Reader:
    def __init__(self, text: str, toks: tuple[Token, ...], partner: list[int]):
        self.text = text
        self.toks = toks
        self.partner = partner
        self.n = len(toks)

    # ------------------------------------------------------------------ helpers

    def word(self, k: int) -> str | None:
        return self.toks[k].word if 0 <= k < self.n else None

    def tok_text(self, k: int) -> str:
        return self.toks[k].text if 0 <= k < self.n else ""

    def fail(self, k: int, message: str) -> VerusSyntaxError:
        offset = self.toks[k].start if k < self.n else len(self.text)
        return _fail(self.text, offset, message)

    def end_of(self, k: int) -> int:
        """Text offset just after token ``k`` (or after a virtually closed brace)."""
        return len(self.text) if k >= self.n else self.toks[k].end

    def starts_item(self, k: int) -> bool:
        """Can only token ``k`` start an item (ending a bodiless function before it)?"""
        w = self.word(k)
        if w in _HARD_ITEM_WORDS:
            return True
        if w in _SOFT_ITEM_WORDS:
            nxt = self.word(k + 1)
            return nxt is not None and (nxt in _HARD_ITEM_WORDS or nxt in _SOFT_ITEM_WORDS or nxt == "group")
        return False

    def skip_attributes(self, k: int, stop: int) -> int:
        """The index after any attributes starting at ``k``."""
        while k < stop and self.tok_text(k) == "#":
            j = k + 1 + (self.tok_text(k + 1) == "!")
            if self.tok_text(j) != "[":
                break
            k = self.partner[j] + 1
        return k

    # ------------------------------------------------------------------ items

    def items(self, k: int, stop: int, scope: str, out: list[Declaration]) -> None:
        while k < stop:
            k = self.item(k, stop, scope, out)

    def item(self, k: int, stop: int, scope: str, out: list[Declaration]) -> int:
        first = k
        toks = self.toks
        attrs_end = k
        while k < stop and toks[k].text == "#":
            inner = self.tok_text(k + 1) == "!"
            j = k + 1 + inner
            if self.tok_text(j) != "[":
                raise self.fail(k, "'#' that does not start an attribute")
            if inner:
                if k > first:
                    raise self.fail(k, "an inner attribute #![...] after outer attributes")
                end = self.partner[j]
                out.append(self.make("inner_attribute", None, None, (), first, end, end, scope))
                return end + 1
            k = self.partner[j] + 1
            attrs_end = k
        if k >= stop:
            raise self.fail(first, "attributes without an item")
        quals: list[str] = []
        while k < stop:
            w = self.word(k)
            if w == "pub" or w in ("open", "closed", "spec"):
                quals.append(w)
                k += 1
                if self.tok_text(k) == "(" and (w != "spec" or self.word(k + 1) == "checked"):
                    k = self.partner[k] + 1
                continue
            if w in ("proof", "exec", "tracked", "uninterp", "axiom", "async", "default"):
                quals.append(w)
                k += 1
                continue
            if w == "unsafe" and self.word(k + 1) in ("fn", "impl", "trait", "extern"):
                quals.append(w)
                k += 1
                continue
            if w == "broadcast" and self.word(k + 1) not in ("use", "group"):
                quals.append(w)
                k += 1
                continue
            if w == "const" and self.word(k + 1) in ("fn", "unsafe", "async", "extern"):
                quals.append(w)
                k += 1
                continue
            if w == "extern" and self.word(k + 1) != "crate":
                quals.append(w)
                k += 1
                if k < stop and self.toks[k].kind == "string":
                    k += 1
                if self.tok_text(k) == "{":
                    end = self.partner[k]
                    out.append(
                        self.make(
                            "extern_block",
                            None,
                            None,
                            tuple(quals),
                            first,
                            end,
                            end,
                            scope,
                            attrs=(first, attrs_end),
                            body=k,
                        )
                    )
                    return end + 1
                continue
            break
        if k >= stop:
            raise self.fail(first, "qualifiers without an item")
        w = self.word(k)
        tok = toks[k]
        extra = dict(attrs=(first, attrs_end))
        if w == "fn":
            return self.function(first, k + 1, stop, tuple(quals), scope, out, (first, attrs_end))
        if w in ("struct", "enum", "union", "trait", "impl", "mod"):
            name = self.word(k + 1) if w != "impl" else None
            end, body = self.braced_or_semicolon(k + 1, stop)
            out.append(self.make(w, name, None, tuple(quals), first, end, end, scope, body=body, **extra))
            return end + 1
        if w in ("use", "const", "static", "type", "global", "assume_specification"):
            name = None if w in ("use", "global", "assume_specification") else self.word(k + 1)
            end = self.until_semicolon(k + 1, stop)
            out.append(self.make(w, name, None, tuple(quals), first, end, end, scope, **extra))
            return end + 1
        if w == "broadcast" and self.word(k + 1) == "use":
            end = self.until_semicolon(k + 2, stop)
            out.append(self.make("broadcast_use", None, None, tuple(quals), first, end, end, scope, **extra))
            return end + 1
        if w == "broadcast" and self.word(k + 1) == "group":
            end, body = self.braced_or_semicolon(k + 2, stop)
            out.append(
                self.make(
                    "broadcast_group",
                    self.word(k + 2),
                    None,
                    tuple(quals),
                    first,
                    end,
                    end,
                    scope,
                    body=body,
                    **extra,
                )
            )
            return end + 1
        if w == "extern" and self.word(k + 1) == "crate":
            end = self.until_semicolon(k + 2, stop)
            out.append(
                self.make(
                    "extern_crate", self.word(k + 2), None, tuple(quals), first, end, end, scope, **extra
                )
            )
            return end + 1
        if tok.kind == "ident" and self.tok_text(k + 1) == "!":
            return self.macro(first, k, stop, tuple(quals), scope, out, extra)
        if tok.text == ";" and not quals and k == first:
            out.append(self.make("empty", None, None, (), first, k, k, scope))
            return k + 1
        raise self.fail(k, f"expected an item, found '{tok.text[:40]}'")

    def macro(
        self,
        first: int,
        k: int,
        stop: int,
        quals: tuple[str, ...],
        scope: str,
        out: list[Declaration],
        extra: dict,
    ) -> int:
        name = self.toks[k].value
        j = k + 2
        if name == "macro_rules":
            j += 1  # the macro's name
        if self.tok_text(j) not in _OPEN:
            raise self.fail(k, f"'{name}!' without a bracketed argument")
        close = self.partner[j]
        end = close + 1 if self.tok_text(close + 1) == ";" else close
        if name == "verus" and scope == "top" and self.tok_text(j) == "{" and not quals:
            block = self.make("verus_block", None, None, quals, first, end, j, scope, body=j, **extra)
            out.append(block)
            self.items(j + 1, close, "verus", out)
            return end + 1
        kind = "macro_rules" if name == "macro_rules" else "macro"
        shown = self.word(k + 2) if name == "macro_rules" else name
        out.append(self.make(kind, shown, None, quals, first, end, end, scope, body=j, **extra))
        return end + 1

    def braced_or_semicolon(self, k: int, stop: int) -> tuple[int, int | None]:
        """(last token, opening brace or None) of an item ending with a braced body or ``;``."""
        while k < stop:
            t = self.toks[k].text
            if t == "{":
                return self.partner[k], k
            if t == ";":
                return k, None
            if t in ("(", "["):
                k = self.partner[k]
            k += 1
        return stop - 1, None

    def until_semicolon(self, k: int, stop: int) -> int:
        while k < stop:
            t = self.toks[k].text
            if t == ";":
                return k
            if t in _OPEN:
                k = self.partner[k]
            k += 1
        raise self.fail(stop - 1 if stop > 0 else 0, "an item that never ends with ';'")

    # ------------------------------------------------------------------ functions

    def function(
        self,
        first: int,
        k: int,
        stop: int,
        quals: tuple[str, ...],
        scope: str,
        out: list[Declaration],
        attrs: tuple[int, int],
    ) -> int:
        toks = self.toks
        if k >= stop or toks[k].kind != "ident":
            raise self.fail(k - 1, "fn without a name")
        name = toks[k].value
        k += 1
        params: tuple[Param, ...] = ()
        ret: Param | None = None
        returns_value = False
        clauses: list[list] = []  # [keyword, first token, last token]
        body: int | None = None
        last = k - 1
        seen_params = False
        expr: _Expr | None = None  # None while in the signature
        after_separator = False
        end_tok: int | None = None
        while k < stop:
            tok = toks[k]
            if self.starts_item(k):
                break
            if tok.text == "#" and self.tok_text(k + 1) == "[":
                after = self.skip_attributes(k, stop)
                if after >= stop or self.starts_item(after) or expr is None:
                    break
            if tok.kind == "ident" and tok.value in CLAUSE_WORDS and self.tok_text(k - 1) not in (".", "::"):
                clauses.append([tok.value, k, k])
                expr = _Expr(self)
                after_separator = True
                last = k
                k += 1
                continue
            if tok.text == "{" and (expr is None or after_separator or expr.finished):
                body = k
                end_tok = self.partner[k]
                break
            if tok.text == ";":
                end_tok = k
                break
            if expr is None:
                if tok.text == "(" and not seen_params:
                    params = self.params(k, self.partner[k])
                    seen_params = True
                elif tok.text == "->":
                    returns_value = True
                    ret = self.named_return(k + 1)
                if tok.text in ("(", "["):
                    k = self.partner[k]
            else:
                k = expr.step(k, stop)
                after_separator = self.tok_text(k) == ","
                clauses[-1][2] = k
            last = k
            k += 1
        clause_objs = []
        for keyword, a, b in clauses:
            expression = self.text[toks[a].end : toks[b].end].strip() if b > a else ""
            clause_objs.append(
                Clause(
                    keyword,
                    self.text[toks[a].start : toks[b].end],
                    toks[a].start,
                    toks[b].end,
                    expression.removesuffix(",").rstrip(),
                )
            )
        mode = "spec" if "spec" in quals else "proof" if ("proof" in quals or "axiom" in quals) else "exec"
        final = end_tok if end_tok is not None else last
        decl = self.make(
            "fn",
            name,
            mode,
            quals,
            first,
            final,
            last,
            scope,
            attrs=attrs,
            body=body,
            clauses=tuple(clause_objs),
            params=params,
            ret=ret,
            returns_value=returns_value,
        )
        out.append(decl)
        return (end_tok + 1) if end_tok is not None else k

    def params(self, open_k: int, close_k: int) -> tuple[Param, ...]:
        parts: list[list[int]] = [[]]
        depth = 0
        for j in range(open_k + 1, close_k):
            t = self.toks[j].text
            if t in _OPEN or t == "<":
                depth += 1
            elif t in _CLOSE or t == ">":
                depth -= 1
            elif t == ">>":
                depth -= 2
            if t == "," and depth == 0:
                parts.append([])
            else:
                parts[-1].append(j)
        return tuple(p for p in (self.param(part) for part in parts if part) if p is not None)

    def param(self, part: list[int]) -> Param | None:
        toks = self.toks
        idx = list(part)
        while idx and toks[idx[0]].word in ("mut", "tracked", "ghost", "ref"):
            idx = idx[1:]
        if not idx:
            return None
        colon = next((p for p in idx if toks[p].text == ":"), None)
        if colon is None:  # self, &self, &mut self
            words = [toks[p].text for p in idx]
            return Param("self", "", mut_ref=words[:2] == ["&", "mut"]) if "self" in words else None
        name = next((toks[p].value for p in idx if p < colon and toks[p].kind == "ident"), "_")
        after = [p for p in idx if p > colon]
        type_text = self.text[toks[after[0]].start : toks[after[-1]].end] if after else ""
        type_words = [toks[p].text for p in after[:3]]
        mut_ref = (
            bool(type_words)
            and type_words[0] == "&"
            and (
                type_words[1:2] == ["mut"]
                or (len(type_words) > 2 and toks[after[1]].kind == "lifetime" and type_words[2] == "mut")
            )
        )
        return Param(name, type_text, mut_ref)

    def named_return(self, k: int) -> Param | None:
        if self.tok_text(k) != "(":
            return None
        close = self.partner[k]
        inner = list(range(k + 1, close))
        if not any(self.toks[j].text == ":" for j in inner):
            return None
        return self.param(inner)

    # ------------------------------------------------------------------ building

    def make(
        self,
        kind: str,
        name: str | None,
        mode: str | None,
        quals: tuple[str, ...],
        first: int,
        end_tok: int,
        header_tok: int,
        scope: str,
        *,
        attrs: tuple[int, int] | None = None,
        body: int | None = None,
        clauses: tuple[Clause, ...] = (),
        params: tuple[Param, ...] = (),
        ret: Param | None = None,
        returns_value: bool = False,
    ) -> Declaration:
        start = self.toks[first].start
        end = self.end_of(end_tok)
        body_span: tuple[int, int] | None = None
        open_body = False
        if body is not None:
            close = self.partner[body]
            open_body = close >= self.n
            body_span = (self.toks[body].start, self.end_of(close))
            end = max(end, body_span[1])
        header_end = self.end_of(header_tok)
        attributes: tuple[Attribute, ...] = ()
        if attrs is not None and attrs[1] > attrs[0]:
            attributes = tuple(find_attributes(self.toks[attrs[0] : attrs[1]]))
        return Declaration(
            kind=kind,
            name=name,
            mode=mode,
            qualifiers=quals,
            attributes=attributes,
            start=start,
            end=end,
            header_end=header_end,
            clauses=clauses,
            body=body_span,
            open_body=open_body,
            params=params,
            ret=ret,
            returns_value=returns_value,
            scope=scope,
            text=self.text[start:end],
            header=self.text[start:header_end],
            line=line_of(self.text, start),
        )


class _Expr:
    """Where a clause expression stands: ``finished`` when the tokens read so far end an
    operand (so a ``{`` now opens the function's body)."""

    def __init__(self, reader: _Reader):
        self.r = reader
        self.finished = False

    def step(self, k: int, stop: int) -> int:
        """Read the construct starting at token ``k``; return the index of its last token."""
        r = self.r
        toks = r.toks
        tok = toks[k]
        t = tok.text
        w = tok.word
        if t == "#" and r.tok_text(k + 1) == "[":
            return r.partner[k + 1]  # #[trigger] and friends: no effect on the expression
        if w == "if":
            self.finished = True
            return self._after_if(k, stop) - 1
        if w == "match":
            brace = self._next_brace(k + 1, stop)
            self.finished = True
            return stop - 1 if brace is None else min(r.partner[brace], stop - 1)
        if w == "as":
            self.finished = True
            return self._after_type(k + 1, stop) - 1
        if tok.kind == "ident" and r.tok_text(k + 1) == "!" and r.tok_text(k + 2) in _OPEN:
            self.finished = True
            return r.partner[k + 2]
        if t in _OPEN:
            self.finished = True
            return min(r.partner[k], stop - 1)
        if t == "|" and not self.finished:
            j = k + 1
            while j < stop and r.tok_text(j) != "|":
                if r.tok_text(j) in _OPEN:
                    j = r.partner[j]
                j += 1
            self.finished = False
            return min(j, stop - 1)
        if tok.kind in ("number", "string", "char", "lifetime"):
            self.finished = True
        elif tok.kind == "ident":
            self.finished = tok.value not in WORD_OPERATORS
        elif t in ("@", "?"):
            self.finished = True
        else:
            self.finished = False
        return k

    def _next_brace(self, k: int, stop: int) -> int | None:
        r = self.r
        while k < stop:
            t = r.tok_text(k)
            if t == "{":
                return k
            if t in ("(", "["):
                k = r.partner[k]
            k += 1
        return None

    def _after_if(self, k: int, stop: int) -> int:
        r = self.r
        while True:
            brace = self._next_brace(k + 1, stop)
            if brace is None or r.partner[brace] >= stop:
                return stop
            j = r.partner[brace] + 1
            if r.word(j) != "else":
                return j
            if r.word(j + 1) == "if":
                k = j + 1
                continue
            if r.tok_text(j + 1) == "{":
                return min(r.partner[j + 1] + 1, stop)
            return j + 1

    def _after_type(self, k: int, stop: int) -> int:
        r = self.r
        while k < stop and r.tok_text(k) in ("&", "mut") or (k < stop and r.toks[k].kind == "lifetime"):
            k += 1
        if k < stop and r.tok_text(k) in ("(", "["):
            return r.partner[k] + 1
        while k < stop and r.toks[k].kind == "ident":
            k += 1
            if r.tok_text(k) == "::":
                k += 1
                continue
            break
        if k < stop and r.tok_text(k) == "<":
            depth = 0
            while k < stop:
                t = r.tok_text(k)
                depth += {"<": 1, ">": -1, ">>": -2}.get(t, 0)
                if t in ("(", "["):
                    k = r.partner[k]
                k += 1
                if depth <= 0:
                    break
        return k
