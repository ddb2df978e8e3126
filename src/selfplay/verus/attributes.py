"""Rust attributes (``#[...]`` and ``#![...]``) in a token stream, with the keys the
screen judges them by.

Each attribute gets one or more *keys*:

* ``#[verifier::opaque]`` -> ``verifier::opaque``; ``#[verifier::rlimit(20)]`` ->
  ``verifier::rlimit`` (the arguments are not part of the key);
* the older form ``#[verifier(external_body)]``, and a list ``#[verifier(a, b(c))]``,
  -> one key per option: ``verifier::external_body``; ``verifier::a``, ``verifier::b``;
* anything else -> its path: ``#[trigger]`` -> ``trigger``, ``#[allow(unused)]`` ->
  ``allow``, ``#[cfg_attr(x, y)]`` -> ``cfg_attr``.

An attribute runs from ``#`` to the ``]`` matching its ``[``; one whose ``[`` is never
closed runs to the end of the tokens (``closed`` is False).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..specverify.brackets import OPEN as _OPEN
from .lexer import Token


@dataclass(frozen=True)
class Attribute:
    """One attribute: ``inner`` for ``#![...]``; ``path`` the names before any
    arguments (``("verifier", "external_body")``); ``keys`` as described in the module
    docstring; ``words`` every identifier inside the brackets; offsets in the text and
    the indices of its first (``#``) and last (``]``) tokens."""

    inner: bool
    path: tuple[str, ...]
    keys: tuple[str, ...]
    words: tuple[str, ...]
    start: int
    end: int
    first_token: int
    last_token: int
    closed: bool = True


def _partners(tokens: tuple[Token, ...] | list[Token]) -> dict[int, int]:
    """Opening bracket index -> index of the bracket closing it (brackets of any kind
    nest; unclosed ones are absent). One pass, so hostile input stays linear."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for j, tok in enumerate(tokens):
        if tok.text in _OPEN:
            stack.append(j)
        elif tok.text in (")", "]", "}") and stack:
            out[stack.pop()] = j
    return out


def _keys(
    tokens: tuple[Token, ...] | list[Token], lo: int, hi: int, partners: dict[int, int]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(path, keys) of the attribute whose contents are ``tokens[lo:hi]``."""
    path: list[str] = []
    j = lo
    while j < hi and tokens[j].kind == "ident":
        path.append(tokens[j].value)
        j += 1
        if j < hi and tokens[j].text == "::":
            j += 1
            continue
        break
    if not path:
        return (), ("",)
    if path == ["verifier"] and j < hi and tokens[j].text == "(":
        close = partners.get(j)
        close = hi if close is None or close > hi else close
        keys: list[str] = []
        depth = 0
        expect_name = True
        for t in tokens[j + 1 : close]:
            if t.text in _OPEN:
                depth += 1
            elif t.text in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and t.text == ",":
                expect_name = True
            elif depth == 0 and expect_name and t.kind == "ident":
                keys.append(f"verifier::{t.value}")
                expect_name = False
        return tuple(path), tuple(keys) or ("verifier",)
    if path[0] == "verifier" and len(path) >= 2:
        return tuple(path), (f"verifier::{path[1]}",)
    return tuple(path), ("::".join(path),)


def find_attributes(tokens: tuple[Token, ...] | list[Token]) -> list[Attribute]:
    """Every attribute in ``tokens``, in order (attributes nested in another one's
    arguments are part of it, not listed again)."""
    out: list[Attribute] = []
    n = len(tokens)
    partners = _partners(tokens)
    k = 0
    while k < n:
        if tokens[k].text != "#":
            k += 1
            continue
        inner = k + 1 < n and tokens[k + 1].text == "!"
        open_k = k + (2 if inner else 1)
        if open_k >= n or tokens[open_k].text != "[":
            k += 1
            continue
        close = partners.get(open_k)
        closed = close is not None
        last = close if close is not None else n - 1
        path, keys = _keys(tokens, open_k + 1, last if closed else n, partners)
        words = tuple(t.value for t in tokens[open_k + 1 : last + (0 if closed else 1)] if t.kind == "ident")
        out.append(Attribute(inner, path, keys, words, tokens[k].start, tokens[last].end, k, last, closed))
        k = last + 1
    return out
