"""Comparing Haskell types by their written shape.

The statement check compares the lemma's binder types and Haskell signature with P's
signature as text, after a light normalisation: tokens joined by single spaces, and
parentheses dropped where they wrap a whole type or a single atom (``Maybe (Int)`` is
``Maybe Int``). Type synonyms are not expanded (``String`` is not ``[Char]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lexer import CLOSING, OPENING, matching, split_top, strip_parens, tokens
from .settings import MAX_SPEC_TOKENS


@dataclass(frozen=True)
class SignatureShape:
    """A parsed Haskell type: sorted normalised class constraints, argument types and
    result type (all normalised: single spaces between tokens, no wrapping parens)."""

    context: tuple[str, ...]
    args: tuple[str, ...]
    result: str


def normalised_type_tokens(toks: list[str], depth: int = 0) -> list[str]:
    """Drop parentheses that wrap the whole type or a single atom (``Maybe (Int)`` is
    ``Maybe Int``), also inside tuples and lists; applications keep theirs."""
    toks = strip_parens(list(toks))
    if depth > 64:
        return toks
    out: list[str] = []
    k = 0
    while k < len(toks):
        t = toks[k]
        if t not in OPENING:
            out.append(t)
            k += 1
            continue
        close = matching(toks, k)
        if close < 0:
            out.extend(toks[k:])
            break
        parts = [normalised_type_tokens(p, depth + 1) for p in split_top(toks[k + 1 : close], {","})]
        if t == "(" and len(parts) == 1 and len(parts[0]) == 1:
            out.extend(parts[0])
        else:
            out.append(t)
            for j, part in enumerate(parts):
                if j:
                    out.append(",")
                out.extend(part)
            out.append(toks[close])
        k = close + 1
    return out


def normalised_type(toks: list[str]) -> str:
    """A type's tokens as one normalised string (see :func:`normalised_type_tokens`)."""
    return " ".join(normalised_type_tokens(list(toks)))


def split_prefix(toks: list[str]) -> tuple[bool, tuple[str, ...], list[str], str | None]:
    """Split ``forall .. .`` and class contexts off a type.

    Returns (had_forall, sorted normalised constraints, body tokens, problem or None).
    """
    had_forall = False
    problem = None
    if toks and toks[0] == "forall":
        had_forall = True
        dot = next((k for k, t in enumerate(toks) if t == "."), -1)
        if dot < 0:
            return True, (), toks, "forall without '.'"
        if any(t in ("<", ">") or t.startswith("<") for t in toks[1:dot]):
            problem = "abstract refinements in forall"
        toks = toks[dot + 1 :]
    parts = split_top(toks, {"=>"})
    constraints: list[str] = []
    for ctx in parts[:-1]:
        ctx = strip_parens(ctx)
        if len(ctx) >= 2 and ctx[0] == "(" and matching(ctx, 0) == len(ctx) - 1:
            ctx = ctx[1:-1]  # a tuple of constraints
        for c in split_top(ctx, {","}):
            if c:
                constraints.append(normalised_type(c))
    return had_forall, tuple(sorted(constraints)), parts[-1], problem


def curried(body: list[str]) -> tuple[list[list[str]], list[str]]:
    """Argument token lists and result tokens of a type body, flattening a parenthesised
    function result (``A -> (B -> C)`` has two arguments)."""
    segs = split_top(body, {"->"})
    args = segs[:-1]
    result = segs[-1]
    while True:
        inner = strip_parens(result)
        more = split_top(inner, {"->"})
        if len(more) == 1:
            break
        args += more[:-1]
        result = more[-1]
    return args, result


def parse_type_signature(type_text: str) -> SignatureShape:
    """Parse the type of a Haskell signature (the text after ``::``).

    Raises ValueError on an empty or unbalanced type.
    """
    toks = tokens(type_text)
    if not toks:
        raise ValueError("empty type")
    if len(toks) > MAX_SPEC_TOKENS:
        raise ValueError(f"type longer than {MAX_SPEC_TOKENS} tokens")
    depth = 0
    for t in toks:
        if t in OPENING:
            depth += 1
        elif t in CLOSING:
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced brackets in type")
    if depth:
        raise ValueError("unbalanced brackets in type")
    _, context, body, problem = split_prefix(toks)
    if problem:
        raise ValueError(problem)
    args, result = curried(body)
    if any(not a for a in args) or not result:
        raise ValueError("empty argument or result type")
    return SignatureShape(context, tuple(normalised_type(a) for a in args), normalised_type(result))
