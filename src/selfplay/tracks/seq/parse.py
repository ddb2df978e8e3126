"""Reading the Haskell track's model answers: Alice's Q (and diverging input), and
Bob's Yes/No. Every failure is a short reason code plus a detail, never an exception:
a malformed answer is data (it counts in the yield tables), not a crash.

Reason codes: ``too_long``, ``no_program_section``, ``no_code_block``,
``several_code_blocks``, ``no_signature``, ``signature_mismatch``, ``same_program``,
``defines_main``, ``no_diverging_input``, ``bad_input`` (Alice); ``no_verdict`` (Bob).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import UserError
from ...haskell.answers import FENCE, HASKELL_LANGS, MAX_OUTPUT_CHARS, MODULE_HEADER
from ...haskell.literals import validate_arguments
from ...haskell.signature import defines_top_level, find_signature, rename_function
from ...haskell.types import parse_type, render_type
from ...llm.reasoning import final_answer

PROGRAM_MARKER = re.compile(r"Generated\s+Program\s*`?Q`?\s*:?", re.I)
INPUT_MARKER = re.compile(r"Diverging\s+Input\s*`?x`?\s*:?", re.I)
VERDICT = re.compile(r"#+\s*Equivalent\s*\??\s*\n+\s*[*_]*\s*(yes|no)\b", re.I)


@dataclass
class AliceAnswer:
    """What Alice's output says. ``ok`` False means rejected with ``reason``/``detail``."""

    ok: bool
    reason: str | None = None
    detail: str | None = None
    program: str | None = None  # Q, renamed to name_q when Alice reused P's name
    name_q: str | None = None
    input_args: list[str] = field(default_factory=list)  # SINQ: one Haskell expression per argument
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "reason": self.reason, "detail": self.detail, "notes": self.notes}


def _reject(reason: str, detail: str) -> AliceAnswer:
    return AliceAnswer(False, reason, detail)


def _blocks(text: str) -> list[tuple[int, str, str]]:
    return [(m.start(), m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text)]


def _program_block(answer: str) -> tuple[str | None, int, str | None]:
    """(code, end offset, reason) of the block after the program marker."""
    marker = None
    for m in PROGRAM_MARKER.finditer(answer):
        marker = m  # the last marker wins: models sometimes restate the format first
    if marker is None:
        return None, 0, "no_program_section"
    rest = answer[marker.end() :]
    stop = INPUT_MARKER.search(rest)
    region = rest[: stop.start()] if stop else rest
    blocks = [b for b in _blocks(region) if b[1] in HASKELL_LANGS]
    if not blocks:
        return None, 0, "no_code_block"
    if len(blocks) > 1:
        return None, 0, "several_code_blocks"
    code = blocks[0][2]
    end = marker.end() + (stop.start() if stop else len(rest))
    return code, end, None


def _diverging_input(answer: str, start: int, names: tuple[str, ...]) -> str | None:
    m = INPUT_MARKER.search(answer, start)
    if m is None:
        return None
    rest = answer[m.end() :].strip("\n")
    block = FENCE.match(rest.lstrip())
    if block:
        text = block.group(2)
    else:
        lines = []
        for line in rest.splitlines():
            if not line.strip():
                if lines:
                    break
                continue
            lines.append(line)
        text = "\n".join(lines)
    text = " ".join(
        line.split("--", 1)[0].strip() for line in text.splitlines() if line.split("--", 1)[0].strip()
    )
    text = re.sub(r"^\s*x(_a)?\s*=\s*", "", text)
    first = text.split(None, 1)
    if first and first[0] in names:  # "f 3 [1]" written as a whole call
        text = first[1] if len(first) > 1 else ""
    return text.strip() or None


def parse_alice(text: str, game: str, name_p: str, arg_types: list[str]) -> AliceAnswer:
    """Alice's SEQ or SINQ answer for P named ``name_p`` with argument types ``arg_types``."""
    if len(text) > MAX_OUTPUT_CHARS:
        return _reject("too_long", f"{len(text)} characters (at most {MAX_OUTPUT_CHARS})")
    answer = final_answer(text)
    code, end, reason = _program_block(answer)
    if reason:
        return _reject(reason, "expected 'Generated Program `Q`:' and one ```haskell block")
    notes = []
    code = MODULE_HEADER.sub("", code).strip("\n") + "\n"
    try:
        sig = find_signature(code, require_arguments=True)
    except UserError as exc:
        return _reject("no_signature", str(exc))
    if defines_top_level(code, "main"):
        return _reject("defines_main", "Q must be a function, not a program with main")
    expected = [render_type(parse_type(t)) for t in arg_types]
    got = [render_type(t) for t in sig.arg_types]
    if got != expected:
        return _reject("signature_mismatch", f"Q takes ({', '.join(got)}), P takes ({', '.join(expected)})")
    name_q = sig.name
    if name_q == name_p:
        name_q = name_p + "_alt"
        try:
            code = rename_function(code, name_p, name_q, include_annotations=True)
        except UserError as exc:
            return _reject("no_signature", f"cannot rename Q from {name_p} to {name_q}: {exc}")
        notes.append(f"renamed Q from {name_p} to {name_q}")
    out = AliceAnswer(True, program=code, name_q=name_q, notes=notes)
    if game == "sinq":
        raw = _diverging_input(answer, end, (name_p, sig.name, name_q))
        if raw is None:
            return _reject("no_diverging_input", "expected 'Diverging Input `x`:' followed by the arguments")
        check = validate_arguments(raw, [parse_type(t) for t in arg_types], strict=False)
        if not check.ok:
            return _reject("bad_input", check.reason)
        out.input_args = list(check.arguments)
    return out


def parse_bob(text: str) -> tuple[str | None, str | None]:
    """("yes" | "no", None), or (None, reason) when there is no verdict."""
    if len(text) > MAX_OUTPUT_CHARS:
        return None, "too_long"
    found = VERDICT.findall(final_answer(text))
    if not found:
        return None, "no_verdict"
    return found[-1].lower(), None
