"""Reading Haskell code out of a model's answer: the pieces every layer that asks a
model for Haskell shares (the Haskell track's games and translation stage, the
MultiPL-E Haskell benchmark).

A malformed answer is data, not a crash: readers return a short reason code
(``too_long``, ``no_code_block``, ``several_code_blocks``) instead of raising.
"""

from __future__ import annotations

import re

from ..llm.reasoning import final_answer

MAX_OUTPUT_CHARS = 64 * 1024  # longer answers are refused unread (``too_long``)
FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)
HASKELL_LANGS = {"", "haskell", "hs", "lhaskell"}  # fence labels read as Haskell
MODULE_HEADER = re.compile(r"^\s*module\s+[A-Z][\w.]*\s*(\([^)]*\))?\s*where\s*$", re.M)


def without_module_header(code: str) -> str:
    """``code`` with any ``module M where`` line removed, as one newline-ended block."""
    return MODULE_HEADER.sub("", code).strip("\n") + "\n"


def parse_haskell_answer(text: str) -> tuple[str | None, str | None]:
    """The one Haskell block of an answer, after its reasoning and without a module
    header: (code, None), or (None, reason) with reason too_long, no_code_block or
    several_code_blocks (identical repeated blocks count as one)."""
    if len(text) > MAX_OUTPUT_CHARS:
        return None, "too_long"
    blocks = [m.group(2) for m in FENCE.finditer(final_answer(text)) if m.group(1).lower() in HASKELL_LANGS]
    if not blocks:
        return None, "no_code_block"
    if len(blocks) > 1 and len(set(b.strip() for b in blocks)) > 1:
        return None, "several_code_blocks"
    return without_module_header(blocks[0]), None
