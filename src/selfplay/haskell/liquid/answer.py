"""Reading Alice's proof (the lemma and its helpers) out of raw model output."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from ..lexer import lex
from .declarations import default_lemma_name, top_level_decls
from .problems import REASONS
from .settings import MAX_MODEL_OUTPUT_CHARS

HASKELL_FENCE_LANGUAGES: frozenset[str] = frozenset(
    {"", "haskell", "hs", "liquidhaskell", "liquid-haskell", "liquid", "lh"}
)
"""Info strings of fenced blocks that may hold the proof (an empty one included)."""


@dataclass(frozen=True)
class ProofAnswer:
    """Alice's proof read out of model text.

    ``code`` holds the Haskell text (dedented, tabs expanded) when ``ok``; ``origin`` says
    whether it came from a fenced block or bare text; ``candidates`` is how many code
    blocks mentioned the lemma.
    """

    ok: bool
    reason: str | None
    detail: str
    code: str | None
    origin: str | None
    lemma_name: str
    candidates: int = 0


_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_THINK_END = re.compile(r"</think\s*>", re.IGNORECASE)


def _fenced_blocks(text: str) -> list[tuple[str, str, int, int]]:
    """(language, content, first line index, end line index) of each fenced code block;
    an unclosed block runs to the end."""
    lines = text.split("\n")
    blocks: list[tuple[str, str, int, int]] = []
    k = 0
    while k < len(lines):
        m = _FENCE_OPEN.match(lines[k])
        if not m:
            k += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        opened = k
        lang = info.strip("{}.").lower()
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        body: list[str] = []
        k += 1
        while k < len(lines) and not close.match(lines[k]):
            line = lines[k]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            k += 1
        k += 1
        blocks.append((lang, "\n".join(body), opened, min(k, len(lines))))
    return blocks


def _clean_code(code: str) -> str:
    code = textwrap.dedent(code.expandtabs(8))
    lines = [ln.rstrip() for ln in code.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


_BARE_CODE_START = re.compile(r"^\s*(\{-@|[a-z_][\w']*\s*::)")
_BARE_HASKELLISH = re.compile(r"^(\{-|-}|--|@-}|[a-z_(\[])")


def _bare_region(text: str, lemma_re: re.Pattern[str]) -> str | None:
    """Haskell code given without fences: from the first annotation, signature or lemma
    line to the first unindented line that cannot start Haskell (prose starting with a
    capital letter, a list bullet, a fence, ...)."""
    lines = text.split("\n")
    start = next(
        (k for k, ln in enumerate(lines) if _BARE_CODE_START.match(ln) or lemma_re.match(ln.lstrip())), None
    )
    if start is None:
        return None
    end = len(lines)
    for k in range(start + 1, len(lines)):
        ln = lines[k]
        if not ln.strip() or ln[0].isspace():
            continue
        if not _BARE_HASKELLISH.match(ln):
            end = k
            break
    return "\n".join(lines[start:end])


def parse_proof_answer(text: str | bytes, p_name: str, *, lemma_name: str | None = None) -> ProofAnswer:
    """Read Alice's proof (the lemma and any helpers) out of raw model output.

    Policy: text after the last ``</think>`` is used when there is one. Fenced blocks
    (``` or ~~~) in a Haskell-ish language (:data:`HASKELL_FENCE_LANGUAGES`) that mention
    the lemma are the candidates; several that differ (after trimming whitespace) are
    ``ambiguous``, identical repeats are fine. Without any fenced block the code is read
    bare (see :func:`_bare_region`). The candidate must type the lemma somewhere
    (``no_signature``) and define it (``no_definition``). Never raises.
    """
    lemma = lemma_name or default_lemma_name(p_name)

    def fail(reason: str, detail: str, candidates: int = 0) -> ProofAnswer:
        return ProofAnswer(False, reason, detail, None, None, lemma, candidates)

    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return fail("not_utf8", REASONS["not_utf8"])
    if not isinstance(text, str):
        return fail("empty_output", "the model output is not text")
    if len(text) > MAX_MODEL_OUTPUT_CHARS:
        return fail("output_too_large", f"{len(text)} characters (limit {MAX_MODEL_OUTPUT_CHARS})")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return fail("empty_output", REASONS["empty_output"])
    ends = list(_THINK_END.finditer(text))
    if ends:
        text = text[ends[-1].end() :]

    lemma_re = re.compile(r"(?<![\w'])" + re.escape(lemma) + r"(?![\w'])")
    fenced = _fenced_blocks(text)
    candidates = [
        _clean_code(body)
        for lang, body, _, _ in fenced
        if lang in HASKELL_FENCE_LANGUAGES and lemma_re.search(body)
    ]
    origin = "fenced"
    if not candidates:
        inside = {k for _, _, a, b in fenced for k in range(a, b)}
        outside = "\n".join(ln for k, ln in enumerate(text.split("\n")) if k not in inside)
        region = _bare_region(outside, lemma_re)
        if region is None or not lemma_re.search(region):
            where = "no Haskell code block" if fenced else "no Haskell code in the answer"
            return fail("no_lemma", f"{where} mentions {lemma}")
        candidates = [_clean_code(region)]
        origin = "bare"
    distinct = list(dict.fromkeys(candidates))
    if len(distinct) > 1:
        return fail(
            "ambiguous", f"{len(candidates)} code blocks mention {lemma} and they differ", len(candidates)
        )
    code = distinct[0]
    lexed = lex(code, guarded=True)
    view = lexed.view(frozenset({"code", "annotation"}))
    if not re.search(r"(?<![\w'])" + re.escape(lemma) + r"\s*::", view):
        return fail("no_signature", f"{lemma} is never given a type ('{lemma} :: ...')", len(candidates))
    decls, _ = top_level_decls(lexed.view())
    if not any(d.kind == "equation" and d.names == (lemma,) for d in decls):
        return fail("no_definition", f"{lemma} has no defining equation", len(candidates))
    return ProofAnswer(True, None, f"read from {origin} code", code, origin, lemma, len(candidates))
