"""Haskell literals: seeded random generation, rendering, call expressions, parsing.

Values are held as plain Python data, one representation per Haskell type:

==============================  =============================================
Haskell type                    Python value
==============================  =============================================
``Int``, ``Integer``            ``int``
``Double``, ``Float``           ``float`` (always finite)
``Bool``                        ``bool``
``Char``                        ``str`` of length 1
``String`` / ``[Char]``         ``str``
``()``                          ``()``
``[t]``                         ``list``
``(a, b, ...)``                 ``tuple``
``Maybe t``                     :data:`NOTHING` or :class:`Just`
``Either a b``                  :class:`Left` or :class:`Right`
==============================  =============================================

* :func:`random_value` draws a value of a type from a ``random.Random``, within the
  size bounds of a :class:`LiteralConfig`; :func:`render_literal` writes it as
  Haskell source that is always an *atomic* expression (safe as a function argument:
  negative numbers and constructor applications are parenthesised, ``(-3)``,
  ``(Just 1)``); :func:`generate_literal` and :func:`generate_arguments` combine both
  for a seed.
* :func:`build_call` writes ``f a1 a2 ...``.
* :func:`parse_literal` reads Haskell literal syntax back into a value for an expected
  type (it also reads GHC's ``show`` output of these types), and
  :func:`validate_arguments` checks a model-written argument list: balanced brackets and
  quotes, one top-level atom per argument, and (``strict``) that each argument is a
  literal of its expected type. GHC compiling the call has the final word.

Errors: :class:`LiteralError` (a :class:`selfplay.errors.UserError`) with a one-line
``reason``.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from selfplay.errors import UserError
from selfplay.haskell.signature import is_identifier, is_operator
from selfplay.haskell.types import (
    CHAR,
    FRACTIONAL_NAMES,
    INTEGRAL_NAMES,
    UNIT,
    EitherType,
    HsType,
    ListType,
    MaybeType,
    Prim,
    TupleType,
    UnsupportedType,
    check_supported,
    is_string_type,
    render_type,
)

INT_MIN = -(2**63)
INT_MAX = 2**63 - 1
MAX_INPUT_CHARS = 16 * 1024
"""Longest argument text :func:`validate_arguments` accepts."""


class LiteralError(UserError):
    """A literal or argument list that is not acceptable; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Just:
    """The Haskell value ``Just value``."""

    value: Any


@dataclass(frozen=True)
class NothingValue:
    """The Haskell value ``Nothing`` (all instances are equal; use :data:`NOTHING`)."""


NOTHING = NothingValue()


@dataclass(frozen=True)
class Left:
    """The Haskell value ``Left value``."""

    value: Any


@dataclass(frozen=True)
class Right:
    """The Haskell value ``Right value``."""

    value: Any


# --------------------------------------------------------------------------- generation


@dataclass(frozen=True)
class LiteralConfig:
    """Size bounds and distributions for random literals."""

    max_list_len: int = 5  # longest list (and String, see max_string_len)
    min_list_len: int = 0  # shortest list or String
    max_string_len: int = 8  # longest String
    max_depth: int = 4  # container nesting depth from which lists are shortest and Maybe is Nothing
    max_elements: int = 64  # total list elements/characters in one literal; lists get shorter after
    int_bound: int = 100  # |Int| and ordinary |Integer| values stay within this
    big_integer_prob: float = 0.15  # chance that an Integer is beyond 64 bits
    special_char_prob: float = 0.15  # chance that a Char is a quote, backslash, control or non-ASCII char
    nothing_prob: float = 0.25  # chance of Nothing for a Maybe (below max_depth)

    def __post_init__(self) -> None:
        if not 0 <= self.min_list_len <= self.max_list_len:
            raise ValueError("need 0 <= min_list_len <= max_list_len")
        if self.max_string_len < self.min_list_len:
            raise ValueError("need max_string_len >= min_list_len")
        if self.max_depth < 0 or self.max_elements < 0:
            raise ValueError("max_depth and max_elements must be >= 0")
        if not 0 <= self.int_bound <= INT_MAX:
            raise ValueError("int_bound must lie in 0 .. 2^63-1")
        for name in ("big_integer_prob", "special_char_prob", "nothing_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1]")


_PLAIN_CHARS = (
    "abcdefghijklmnopqrstuvwxyz" * 3 + "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 " + " .,!?-_+*/=<>()[]{}"
)
_SPECIAL_CHARS = (
    *("'", '"', "\\"),  # quotes and backslash
    *("\n", "\t", "\r", "\0", "\x01", "\x1b", "\x7f"),  # control characters
    *("\xa0", "é", "ß", "λ", "中", "\U0001f600"),  # non-ASCII, up to outside the BMP
)


def _rng(seed: int | random.Random) -> random.Random:
    return seed if isinstance(seed, random.Random) else random.Random(seed)


class _Generator:
    """One literal's worth of random choices (the element budget is per generator)."""

    def __init__(self, rng: random.Random, config: LiteralConfig) -> None:
        self.rng = rng
        self.config = config
        self.budget = config.max_elements

    def length(self, depth: int, longest: int) -> int:
        cfg = self.config
        hi = min(longest, max(self.budget, cfg.min_list_len)) if depth < cfg.max_depth else cfg.min_list_len
        lo = min(cfg.min_list_len, hi)
        n = self.rng.randint(lo, hi)
        self.budget = max(0, self.budget - n)
        return n

    def integer(self, big: bool) -> int:
        rng, bound = self.rng, self.config.int_bound
        if big and rng.random() < self.config.big_integer_prob:
            return rng.choice((-1, 1)) * rng.randint(2**64, 2**100)
        r = rng.random()
        if r < 0.15:
            return rng.choice((0, 1, -1))
        if r < 0.6:
            return rng.randint(-min(10, bound), min(10, bound))
        return rng.randint(-bound, bound)

    def floating(self, single: bool) -> float:
        rng = self.rng
        r = rng.random()
        if r < 0.2:
            return float(rng.randint(-10, 10))
        if r < 0.4:
            return rng.choice((-1, 1)) * rng.randint(1, 64) / 2 ** rng.randint(1, 4)
        if r < 0.8:
            return round(rng.uniform(-100, 100), rng.randint(1, 2 if single else 3))
        mantissa = round(rng.uniform(1, 10), 2) * rng.choice((-1, 1))
        exponent = rng.choice(list(range(-12, -4)) + list(range(16, 30 if single else 40)))
        return float(f"{mantissa}e{exponent}")

    def char(self) -> str:
        if self.rng.random() < self.config.special_char_prob:
            return self.rng.choice(_SPECIAL_CHARS)
        return self.rng.choice(_PLAIN_CHARS)

    def value(self, t: HsType, depth: int) -> Any:
        rng = self.rng
        if isinstance(t, Prim):
            name = t.name
            if name in INTEGRAL_NAMES:
                return self.integer(big=name == "Integer")
            if name in FRACTIONAL_NAMES:
                return self.floating(single=name == "Float")
            if name == "Bool":
                return rng.random() < 0.5
            if name == "Char":
                return self.char()
            if name == "String":
                return "".join(self.char() for _ in range(self.length(depth, self.config.max_string_len)))
            return ()
        if isinstance(t, ListType):
            if t.elem == CHAR:
                return "".join(self.char() for _ in range(self.length(depth, self.config.max_string_len)))
            return [
                self.value(t.elem, depth + 1) for _ in range(self.length(depth, self.config.max_list_len))
            ]
        if isinstance(t, TupleType):
            return tuple(self.value(item, depth + 1) for item in t.items)
        if isinstance(t, MaybeType):
            if depth >= self.config.max_depth or rng.random() < self.config.nothing_prob:
                return NOTHING
            return Just(self.value(t.inner, depth + 1))
        if isinstance(t, EitherType):
            if rng.random() < 0.5:
                return Left(self.value(t.left, depth + 1))
            return Right(self.value(t.right, depth + 1))
        raise UnsupportedType(f"no literals for type '{render_type(t)}'")  # pragma: no cover - checked first


def random_value(t: HsType, rng: int | random.Random = 0, config: LiteralConfig | None = None) -> Any:
    """A random value of type ``t`` (Python representation, see the module docstring).

    ``rng`` is a ``random.Random`` (advanced by the draw) or an int seed. Raises
    :class:`UnsupportedType` for a type without literals.
    """
    check_supported(t)
    return _Generator(_rng(rng), config or LiteralConfig()).value(t, 0)


def generate_literal(t: HsType, seed: int | random.Random = 0, config: LiteralConfig | None = None) -> str:
    """Haskell source of a random literal of type ``t``; the same seed gives the same text."""
    return render_literal(random_value(t, _rng(seed), config), t)


def random_arguments(
    arg_types: Sequence[HsType], seed: int | random.Random = 0, config: LiteralConfig | None = None
) -> list[Any]:
    """One random value per argument type, all drawn from one generator seeded by ``seed``."""
    rng = _rng(seed)
    for index, t in enumerate(arg_types, start=1):
        check_supported(t, f"argument {index}")
    return [random_value(t, rng, config) for t in arg_types]


def generate_arguments(
    arg_types: Sequence[HsType], seed: int | random.Random = 0, config: LiteralConfig | None = None
) -> list[str]:
    """One literal (Haskell source, atomic) per argument type, for a multi-argument call."""
    values = random_arguments(arg_types, seed, config)
    return [render_literal(v, t) for v, t in zip(values, arg_types)]


# --------------------------------------------------------------------------- rendering

_SIMPLE_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape_chars(text: str, quote: str) -> str:
    """Escape ``text`` for a Haskell string (``quote='"'``) or char (``quote="'"``) literal."""
    out: list[str] = []
    numeric_before = False
    for c in text:
        if numeric_before and c.isdigit() and c.isascii():
            out.append("\\&")  # keeps "\1" followed by "2" from reading as "\12"
        numeric_before = False
        if c in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[c])
        elif c == quote:
            out.append("\\" + c)
        elif " " <= c <= "~":
            out.append(c)
        else:
            out.append(f"\\{ord(c)}")
            numeric_before = True
    return "".join(out)


def render_string(text: str) -> str:
    """``text`` as a Haskell string literal (ASCII only; other characters become escapes)."""
    return '"' + _escape_chars(text, '"') + '"'


def render_char(c: str) -> str:
    """``c`` (one character) as a Haskell character literal."""
    if len(c) != 1:
        raise LiteralError(f"a Char must be exactly one character, got {c!r}")
    return "'" + _escape_chars(c, "'") + "'"


def render_float(x: float) -> str:
    """A finite float as a Haskell literal that reads back as the same Double (negatives parenthesised)."""
    if not math.isfinite(x):
        raise LiteralError(f"{x!r} has no Haskell literal (only finite numbers do)")
    text = repr(float(x))
    return f"({text})" if text.startswith("-") else text


def render_literal(value: Any, t: HsType) -> str:
    """Haskell source for ``value`` of type ``t``, as an atomic expression.

    Raises :class:`LiteralError` when ``value`` does not fit ``t``.
    """
    if is_string_type(t):
        if not isinstance(value, str):
            raise LiteralError(f"expected a str for {render_type(t)}, got {type(value).__name__}")
        return render_string(value)
    if isinstance(t, Prim):
        name = t.name
        if name in INTEGRAL_NAMES:
            if not isinstance(value, int) or isinstance(value, bool):
                raise LiteralError(f"expected an int for {name}, got {value!r}")
            if name == "Int" and not INT_MIN <= value <= INT_MAX:
                raise LiteralError(f"{value} is out of range for Int")
            return f"({value})" if value < 0 else str(value)
        if name in FRACTIONAL_NAMES:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise LiteralError(f"expected a float for {name}, got {value!r}")
            return render_float(float(value))
        if name == "Bool":
            if not isinstance(value, bool):
                raise LiteralError(f"expected a bool for Bool, got {value!r}")
            return "True" if value else "False"
        if name == "Char":
            if not isinstance(value, str):
                raise LiteralError(f"expected a str for Char, got {value!r}")
            return render_char(value)
        if value != ():
            raise LiteralError(f"expected () for (), got {value!r}")
        return "()"
    if isinstance(t, ListType):
        if not isinstance(value, (list, tuple)):
            raise LiteralError(f"expected a list for {render_type(t)}, got {type(value).__name__}")
        return "[" + ", ".join(render_literal(v, t.elem) for v in value) + "]"
    if isinstance(t, TupleType):
        if not isinstance(value, tuple) or len(value) != len(t.items):
            raise LiteralError(f"expected a {len(t.items)}-tuple for {render_type(t)}, got {value!r}")
        return "(" + ", ".join(render_literal(v, i) for v, i in zip(value, t.items)) + ")"
    if isinstance(t, MaybeType):
        if isinstance(value, NothingValue):
            return "Nothing"
        if isinstance(value, Just):
            return f"(Just {render_literal(value.value, t.inner)})"
        raise LiteralError(f"expected NOTHING or Just(...) for {render_type(t)}, got {value!r}")
    if isinstance(t, EitherType):
        if isinstance(value, Left):
            return f"(Left {render_literal(value.value, t.left)})"
        if isinstance(value, Right):
            return f"(Right {render_literal(value.value, t.right)})"
        raise LiteralError(f"expected Left(...) or Right(...) for {render_type(t)}, got {value!r}")
    check_supported(t)
    raise LiteralError(f"no literals for type '{render_type(t)}'")  # pragma: no cover


def build_call(function: str, args: Sequence[str]) -> str:
    """The Haskell call ``function a1 a2 ...``; operators are written prefix, ``(<+>) a b``.

    Arguments that are not a single atomic expression (e.g. ``Just 3``, ``-1``) are
    wrapped in parentheses.
    """
    if is_operator(function):
        head = f"({function})"
    elif is_identifier(function):
        head = function
    else:
        raise LiteralError(f"'{function}' is not a Haskell function or operator name")
    parts = [head]
    for arg in args:
        text = arg.strip()
        if not text:
            raise LiteralError("an argument is empty")
        parts.append(text if _is_atomic(text) else f"({text})")
    return " ".join(parts)


def _is_atomic(text: str) -> bool:
    try:
        groups = split_arguments(text)
    except LiteralError:
        return False
    return len(groups) == 1


# --------------------------------------------------------------------------- lexing

_ASCII_ESCAPE_NAMES = {
    "NUL": 0, "SOH": 1, "STX": 2, "ETX": 3, "EOT": 4, "ENQ": 5, "ACK": 6, "BEL": 7, "BS": 8, "HT": 9,
    "LF": 10, "VT": 11, "FF": 12, "CR": 13, "SO": 14, "SI": 15, "DLE": 16, "DC1": 17, "DC2": 18,
    "DC3": 19, "DC4": 20, "NAK": 21, "SYN": 22, "ETB": 23, "CAN": 24, "EM": 25, "SUB": 26, "ESC": 27,
    "FS": 28, "GS": 29, "RS": 30, "US": 31, "SP": 32, "DEL": 127,
}  # fmt: skip
_CHAR_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34, "'": 39}

_TOKEN_RE = re.compile(
    r"""
     (?P<ws>\s+)
    |(?P<float>\d+(?:\.\d+(?:[eE][+-]?\d+)?|[eE][+-]?\d+))
    |(?P<int>0[xX][0-9a-fA-F]+|0[oO][0-7]+|\d+)
    |(?P<con>[A-Z][\w']*(?:\.[A-Z][\w']*)*)
    |(?P<var>[a-z_][\w']*)
    |(?P<punct>[()\[\],])
    |(?P<op>[!#$%&*+./<=>?@\\^|~:-]+)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # ws-less: float int con var punct op minus dotdot string char other
    text: str
    pos: int
    value: Any = None  # decoded value for string/char/number tokens


def _decode_escape(text: str, i: int, in_string: bool) -> tuple[str, int]:
    """Decode the escape whose backslash is at ``i``; returns (characters, next offset)."""
    n = len(text)
    j = i + 1
    if j >= n:
        raise LiteralError(f"unfinished escape at column {i + 1}")
    c = text[j]
    if c in _CHAR_ESCAPES:
        return chr(_CHAR_ESCAPES[c]), j + 1
    if in_string and c == "&":
        return "", j + 1
    if in_string and c.isspace():  # a string gap: backslash, whitespace, backslash
        k = j
        while k < n and text[k].isspace():
            k += 1
        if k >= n or text[k] != "\\":
            raise LiteralError(f"unfinished string gap at column {i + 1}")
        return "", k + 1
    if c == "^" and j + 1 < n and "@" <= text[j + 1] <= "_":
        return chr(ord(text[j + 1]) - 64), j + 2
    m = re.compile(r"\d+|x[0-9a-fA-F]+|o[0-7]+").match(text, j)
    if m:
        digits = m.group()
        code = (
            int(digits[1:], 16)
            if digits[0] == "x"
            else int(digits[1:], 8)
            if digits[0] == "o"
            else int(digits)
        )
        if code > 0x10FFFF:
            raise LiteralError(f"character code {code} is out of range at column {i + 1}")
        return chr(code), m.end()
    for size in (3, 2):
        name = text[j : j + size]
        if name in _ASCII_ESCAPE_NAMES:
            return chr(_ASCII_ESCAPE_NAMES[name]), j + size
    raise LiteralError(f"unknown escape '\\{c}' at column {i + 1}")


def _lex_string(text: str, i: int) -> tuple[str, int]:
    out: list[str] = []
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == '"':
            return "".join(out), j + 1
        if c == "\n":
            break
        if c == "\\":
            piece, j = _decode_escape(text, j, in_string=True)
            out.append(piece)
        else:
            out.append(c)
            j += 1
    raise LiteralError(f"unterminated string literal starting at column {i + 1}")


def _lex_char(text: str, i: int) -> tuple[str, int]:
    j = i + 1
    if j >= len(text) or text[j] == "\n":
        raise LiteralError(f"unterminated character literal at column {i + 1}")
    if text[j] == "'":
        raise LiteralError(f"empty character literal at column {i + 1}")
    if text[j] == "\\":
        c, j = _decode_escape(text, j, in_string=False)
    else:
        c, j = text[j], j + 1
    if j >= len(text) or text[j] != "'":
        raise LiteralError(f"unterminated character literal at column {i + 1}")
    return c, j + 1


def _lex(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            value, end = _lex_string(text, i)
            tokens.append(_Tok("string", text[i:end], i, value))
            i = end
            continue
        if c == "'":
            value, end = _lex_char(text, i)
            tokens.append(_Tok("char", text[i:end], i, value))
            i = end
            continue
        m = _TOKEN_RE.match(text, i)
        if not m:
            tokens.append(_Tok("other", c, i))
            i += 1
            continue
        kind = m.lastgroup or "other"
        word = m.group()
        i = m.end()
        if kind == "ws":
            continue
        if kind == "op" and word == "-":
            kind = "minus"
        elif kind == "op" and word == "..":
            kind = "dotdot"
        elif kind == "op" and word.startswith("--"):
            raise LiteralError(f"comments are not allowed in an input (column {m.start() + 1})")
        value: Any = None
        if kind == "int":
            base = {"x": 16, "o": 8}.get(word[1:2].lower(), 10) if len(word) > 1 and word[0] == "0" else 10
            value = int(word[2:], base) if base != 10 else int(word)
        elif kind == "float":
            value = float(word)
        tokens.append(_Tok(kind, word, m.start(), value))
    return tokens


_OPEN = {"(": ")", "[": "]"}
_CLOSE = {")": "(", "]": "["}


def split_arguments(text: str) -> list[str]:
    """Split a space-separated argument list into its top-level atoms (Haskell source each).

    Each argument must be one atom: a literal, a name, or a bracketed group. Raises
    :class:`LiteralError` for unbalanced brackets, unterminated quotes, or things that
    cannot stand between arguments (a bare ``-3``, an operator, a comma).
    """
    return [text[start:end] for start, end in _split_spans(text)]


def _split_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the top-level arguments of ``text`` (see :func:`split_arguments`)."""
    tokens = _lex(text)
    groups: list[tuple[int, int]] = []
    stack: list[_Tok] = []
    for tok in tokens:
        end = tok.pos + len(tok.text)
        if tok.text in _OPEN and tok.kind == "punct":
            if not stack:
                groups.append((tok.pos, end))
            stack.append(tok)
            continue
        if tok.text in _CLOSE and tok.kind == "punct":
            if not stack:
                raise LiteralError(f"unbalanced '{tok.text}' at column {tok.pos + 1}")
            opener = stack.pop()
            if opener.text != _CLOSE[tok.text]:
                raise LiteralError(
                    f"'{opener.text}' at column {opener.pos + 1} is closed by '{tok.text}' at column {tok.pos + 1}"
                )
            if not stack:
                groups[-1] = (groups[-1][0], end)
            continue
        if stack:
            continue
        if tok.kind == "minus":
            raise LiteralError(f"a negative number must be parenthesised, e.g. (-3) (column {tok.pos + 1})")
        if tok.kind in ("op", "dotdot", "other") or tok.text == ",":
            raise LiteralError(f"unexpected '{tok.text}' between arguments at column {tok.pos + 1}")
        groups.append((tok.pos, end))
    if stack:
        opener = stack[-1]
        raise LiteralError(f"'{opener.text}' at column {opener.pos + 1} is never closed")
    return groups


# --------------------------------------------------------------------------- typed parsing


class _Parser:
    """Recursive-descent reader of one literal of an expected type."""

    def __init__(self, text: str, offset: int = 0) -> None:
        self.text = text
        self.tokens = [_Tok(t.kind, t.text, t.pos + offset, t.value) for t in _lex(text)]
        self.i = 0

    def peek(self) -> _Tok | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, what: str) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise LiteralError(f"expected {what} but the input ended")
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.take(f"'{text}'")
        if tok.text != text:
            raise LiteralError(f"expected '{text}', found '{tok.text}' at column {tok.pos + 1}")

    def mismatch(self, t: HsType, tok: _Tok) -> LiteralError:
        return LiteralError(f"expected {_describe(t)}, found '{_short(tok.text)}' at column {tok.pos + 1}")

    def end(self) -> None:
        tok = self.peek()
        if tok is not None:
            raise LiteralError(f"unexpected '{_short(tok.text)}' at column {tok.pos + 1} after the literal")

    def expr(self, t: HsType) -> Any:
        """A literal where an application or a negation may stand (top of a literal, list element, ...)."""
        tok = self.peek()
        if tok is None:
            raise LiteralError(f"expected {_describe(t)} but the input ended")
        if tok.kind == "minus":
            if not (isinstance(t, Prim) and (t.name in INTEGRAL_NAMES or t.name in FRACTIONAL_NAMES)):
                raise self.mismatch(t, tok)
            self.i += 1
            num = self.take("a number")
            if num.kind not in ("int", "float"):
                raise LiteralError(
                    f"expected a number after '-', found '{_short(num.text)}' at column {num.pos + 1}"
                )
            return self.number(t, num, negative=True)
        if tok.kind == "con" and tok.text in ("Just", "Left", "Right"):
            self.i += 1
            if tok.text == "Just" and isinstance(t, MaybeType):
                return Just(self.atom(t.inner))
            if tok.text == "Left" and isinstance(t, EitherType):
                return Left(self.atom(t.left))
            if tok.text == "Right" and isinstance(t, EitherType):
                return Right(self.atom(t.right))
            raise self.mismatch(t, tok)
        return self.atom(t)

    def atom(self, t: HsType) -> Any:
        """An atomic literal (no bare application or negation)."""
        tok = self.take(_describe(t))
        if tok.text == "(" and tok.kind == "punct":
            return self.paren(t, tok)
        if tok.text == "[" and tok.kind == "punct":
            return self.list(t, tok)
        if tok.kind == "string":
            if not is_string_type(t):
                raise self.mismatch(t, tok)
            return tok.value
        if tok.kind == "char":
            if t != CHAR:
                raise self.mismatch(t, tok)
            return tok.value
        if tok.kind in ("int", "float"):
            return self.number(t, tok, negative=False)
        if tok.kind == "con":
            if tok.text in ("True", "False") and t == Prim("Bool"):
                return tok.text == "True"
            if tok.text == "Nothing" and isinstance(t, MaybeType):
                return NOTHING
            if tok.text in ("Just", "Left", "Right") and (isinstance(t, (MaybeType, EitherType))):
                raise LiteralError(
                    f"'{tok.text} ...' must be parenthesised here, e.g. ({tok.text} x) (column {tok.pos + 1})"
                )
            raise self.mismatch(t, tok)
        if tok.kind == "var":
            raise LiteralError(
                f"'{_short(tok.text)}' at column {tok.pos + 1} is a variable or function, not {_describe(t)}"
            )
        if tok.kind == "minus":
            raise LiteralError(
                f"a negative number must be parenthesised here, e.g. (-3) (column {tok.pos + 1})"
            )
        raise self.mismatch(t, tok)

    def paren(self, t: HsType, open_tok: _Tok) -> Any:
        nxt = self.peek()
        if nxt is not None and nxt.text == ")":
            self.i += 1
            if t != UNIT:
                raise LiteralError(f"expected {_describe(t)}, found '()' at column {open_tok.pos + 1}")
            return ()
        if isinstance(t, TupleType):
            start = self.i
            try:
                items = [self.expr(t.items[0])]
                for item_type in t.items[1:]:
                    self.expect(",")
                    items.append(self.expr(item_type))
                tok = self.take("')'")
                if tok.text == ",":
                    raise LiteralError(
                        f"tuple has more than {len(t.items)} components, expected {_describe(t)} (column {tok.pos + 1})"
                    )
                if tok.text != ")":
                    raise LiteralError(f"expected ')', found '{_short(tok.text)}' at column {tok.pos + 1}")
                return tuple(items)
            except LiteralError as tuple_error:
                self.i = start  # maybe redundant parentheses around a whole tuple: ((1, 2))
                try:
                    value = self.expr(t)
                    self.expect(")")
                    return value
                except LiteralError:
                    raise tuple_error from None
        value = self.expr(t)
        tok = self.take("')'")
        if tok.text == ",":
            raise LiteralError(f"expected {_describe(t)}, found a tuple at column {open_tok.pos + 1}")
        if tok.text != ")":
            raise LiteralError(f"expected ')', found '{_short(tok.text)}' at column {tok.pos + 1}")
        return value

    def list(self, t: HsType, open_tok: _Tok) -> Any:
        if isinstance(t, ListType):
            elem = t.elem
        elif is_string_type(t):
            elem = CHAR
        else:
            raise LiteralError(f"expected {_describe(t)}, found a list at column {open_tok.pos + 1}")
        items: list[Any] = []
        tok = self.peek()
        if tok is not None and tok.text == "]":
            self.i += 1
        else:
            while True:
                items.append(self.expr(elem))
                tok = self.take("',' or ']'")
                if tok.text == "]":
                    break
                if tok.kind == "dotdot":
                    raise LiteralError(
                        f"ranges like [a..b] are not literals; list the elements (column {tok.pos + 1})"
                    )
                if tok.text != ",":
                    raise LiteralError(
                        f"expected ',' or ']', found '{_short(tok.text)}' at column {tok.pos + 1}"
                    )
        return "".join(items) if elem == CHAR else items

    def number(self, t: HsType, tok: _Tok, negative: bool) -> Any:
        if not isinstance(t, Prim) or not (t.name in INTEGRAL_NAMES or t.name in FRACTIONAL_NAMES):
            raise self.mismatch(t, tok)
        value = tok.value
        if t.name in INTEGRAL_NAMES:
            if tok.kind == "float":
                raise LiteralError(
                    f"expected {t.name}, found fractional literal '{tok.text}' at column {tok.pos + 1}"
                )
            value = -value if negative else value
            if t.name == "Int" and not INT_MIN <= value <= INT_MAX:
                raise LiteralError(f"{value} is out of range for Int (column {tok.pos + 1})")
            return value
        value = float(value)
        if not math.isfinite(value):
            raise LiteralError(f"'{_short(tok.text)}' is out of range for {t.name} (column {tok.pos + 1})")
        return -value if negative else value


def _describe(t: HsType) -> str:
    return f"a literal of type {render_type(t)}"


def _short(text: str, limit: int = 30) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_literal(text: str, t: HsType, *, atomic: bool = False) -> Any:
    """Read the Haskell literal ``text`` of type ``t`` into its Python value.

    Accepts what a person or GHC's ``show`` writes for these types: optional
    parentheses, ``-3`` where a negation may stand, ``Just x``/``Left x``, hex and octal
    integers, all Haskell character escapes and string gaps, and ``['a', 'b']`` for a
    String. With ``atomic`` the literal must be usable as a function argument as is
    (``Just 3`` and ``-3`` then need parentheses). Raises :class:`LiteralError` with the
    reason and column, or :class:`UnsupportedType` when ``t`` has no literals.
    """
    check_supported(t)
    return _parse_at(text, t, atomic, 0)


def _parse_at(text: str, t: HsType, atomic: bool, offset: int) -> Any:
    """:func:`parse_literal` for a piece that starts at ``offset`` of a longer input (for columns)."""
    parser = _Parser(text, offset)
    if parser.peek() is None:
        raise LiteralError(f"expected {_describe(t)} but the input is empty")
    value = parser.atom(t) if atomic else parser.expr(t)
    parser.end()
    return value


@dataclass(frozen=True)
class ArgumentCheck:
    """Outcome of :func:`validate_arguments`."""

    ok: bool
    reason: str = ""  # why not ok ("" when ok)
    arguments: tuple[str, ...] = ()  # the top-level arguments' source text (when they could be split)
    values: tuple[Any, ...] | None = None  # parsed values (strict mode, when ok)


def validate_arguments(text: str, arg_types: Sequence[HsType], *, strict: bool = True) -> ArgumentCheck:
    """Check a space-separated argument list written for a function taking ``arg_types``.

    Always checked: size, balanced brackets and quotes, and one top-level atom per
    argument. With ``strict`` each argument must also be a literal of its type (see
    :func:`parse_literal`); without it any atom (e.g. ``(replicate 3 'a')``) passes.
    Never raises on bad input: the result says ``ok`` and why not.
    """
    if len(text) > MAX_INPUT_CHARS:
        return ArgumentCheck(
            False, f"input is {len(text)} characters long; at most {MAX_INPUT_CHARS} are allowed"
        )
    for index, t in enumerate(arg_types, start=1):
        try:
            check_supported(t, f"argument {index}")
        except UnsupportedType as exc:
            return ArgumentCheck(False, str(exc))
    try:
        spans = _split_spans(text)
    except LiteralError as exc:
        return ArgumentCheck(False, exc.reason)
    args = [text[start:end] for start, end in spans]
    if len(args) != len(arg_types):
        types = " ".join(render_type(t, 2) for t in arg_types) or "(none)"
        hint = ""
        if len(args) > len(arg_types) and any(a in ("Just", "Left", "Right") for a in args):
            hint = "; constructor applications must be parenthesised, e.g. (Just 3)"
        return ArgumentCheck(
            False,
            f"expected {len(arg_types)} argument(s) of types {types}, found {len(args)}{hint}",
            tuple(args),
        )
    if not strict:
        return ArgumentCheck(True, "", tuple(args))
    values: list[Any] = []
    for index, (arg, (start, _), t) in enumerate(zip(args, spans, arg_types), start=1):
        try:
            values.append(_parse_at(arg, t, True, start))
        except LiteralError as exc:
            return ArgumentCheck(False, f"argument {index} ({render_type(t)}): {exc.reason}", tuple(args))
    return ArgumentCheck(True, "", tuple(args), tuple(values))


__all__ = [
    "NOTHING",
    "ArgumentCheck",
    "Just",
    "Left",
    "LiteralConfig",
    "LiteralError",
    "NothingValue",
    "Right",
    "build_call",
    "generate_arguments",
    "generate_literal",
    "parse_literal",
    "random_arguments",
    "random_value",
    "render_char",
    "render_float",
    "render_literal",
    "render_string",
    "split_arguments",
    "validate_arguments",
]
