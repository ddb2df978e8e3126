"""Reading PSV's model output: a solver's program, a proposer's spec. Never raises on
model output; a failure is a reason code (``parse:<code>``) recorded with the output."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A fenced block: the opening fence with an optional tag, the text, a closing fence on
# its own line. An unterminated last block (the model ran out of tokens) is read too.
_BLOCK = re.compile(r"^```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:(?P<close>^```)[ \t]*$|\Z)", re.S | re.M)


@dataclass(frozen=True)
class Parsed:
    text: str | None
    reason: str | None  # None when text was read
    detail: str = ""


def code_blocks(output: str) -> list[tuple[str, str, bool]]:
    """(tag, text, closed) of every fenced block in ``output``."""
    blocks = []
    for m in _BLOCK.finditer(output):
        blocks.append((m.group(1).lower(), m.group(2), m.group("close") is not None))
    return blocks


def _last_block(output: str, fence: str) -> tuple[str | None, str | None]:
    if not output.strip():
        return None, "parse:empty_output"
    blocks = code_blocks(output)
    if not blocks:
        return None, "parse:no_code_block"
    tagged = [b for b in blocks if b[0] == fence] or [b for b in blocks if b[0] == ""]
    if not tagged:
        return None, "parse:wrong_code_language"
    _, text, closed = tagged[-1]
    if not closed:
        return None, "parse:unterminated_code_block"
    return text.rstrip() + "\n", None


def solver_solution(output: str, fence: str) -> Parsed:
    """The program in the solver's last code block in the language's fence (or untagged)."""
    text, reason = _last_block(output, fence)
    if text is None:
        return Parsed(None, reason)
    if not text.strip():
        return Parsed(None, "parse:empty_program")
    return Parsed(text, None)


def proposed_spec(output: str, fence: str) -> Parsed:
    """The spec in the proposer's last code block, without the open brace the prompt asks
    it to end with (Appendix A); detail says whether that brace was there."""
    text, reason = _last_block(output, fence)
    if text is None:
        return Parsed(None, reason)
    body = text.rstrip()
    had_brace = body.endswith("{")
    if had_brace:
        body = body[:-1].rstrip()
    if not body.strip():
        return Parsed(None, "parse:empty_spec")
    return Parsed(body + "\n", None, "ended with {" if had_brace else "no closing open brace")


def clean_spec(text: str) -> str:
    """The spec as de-duplication compares it: comments dropped, whitespace collapsed."""
    no_block = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    no_line = re.sub(r"//[^\n]*", " ", no_block)
    return " ".join(no_line.split())
