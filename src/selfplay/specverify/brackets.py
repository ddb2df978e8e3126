"""Matching brackets over code tokens (comments and literals already taken out by the
lexer), the same for both verifier languages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from ..errors import UserError
from .lexing import line_of

OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {v: k for k, v in OPEN.items()}


E = TypeVar("E", bound=UserError)


class _Tok(Protocol):
    text: str
    start: int


def syntax_error(error: type[E], text: str, offset: int, message: str) -> E:
    """``error("line N: message")``, N the line of ``text[offset]``."""
    return error(f"line {line_of(text, offset)}: {message}")


def bracket_partners(text: str, toks: Sequence[_Tok], error: type[UserError]) -> tuple[list[int], list[int]]:
    """For each bracket token the index of its partner (-1 for other tokens and for
    brackets never closed), and the indices of the openers never closed (outermost
    first: what to do with them is the caller's). Raises ``error`` (one line, with the
    line number) on a closing bracket without an opener or one that closes another kind."""
    partner = [-1] * len(toks)
    stack: list[int] = []
    for k, tok in enumerate(toks):
        if tok.text in OPEN:
            stack.append(k)
        elif tok.text in CLOSE:
            if not stack:
                raise syntax_error(error, text, tok.start, f"unmatched '{tok.text}'")
            opener = stack.pop()
            if toks[opener].text != CLOSE[tok.text]:
                raise syntax_error(
                    error,
                    text,
                    tok.start,
                    f"'{tok.text}' closes '{toks[opener].text}' opened on line "
                    f"{line_of(text, toks[opener].start)}",
                )
            partner[opener], partner[k] = k, opener
    return partner, stack
