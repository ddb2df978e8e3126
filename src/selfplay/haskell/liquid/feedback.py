"""What Alice is shown when a proof fails: the checker's error messages cut down to
size (:func:`extract_error_excerpt`) and the text for the retry prompt
(:func:`retry_feedback`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .output import ANSI_RE, MARKER_RE
from .settings import MAX_FEEDBACK_CHARS

# The first line of a GHC/LH message: "path/File.hs:LINE:COL: error" (or a span).
_ERROR_HEADER_RE = re.compile(
    r"^[ \t]*(?P<path>(?:[^\s:]*/)?(?P<file>[^\s:/]+\.l?hs)):(?P<line>\(?\d+)[^\s:]*(?::[^\s:]*)?:[ \t]*(?P<kind>error|warning)\b",
    re.IGNORECASE,
)
# Banners and progress lines, left out when no error message can be found.
_NOISE_RE = re.compile(
    r"^\s*(\*{4}|LiquidHaskell\s|Copyright|Working\s|\[\d+ of \d+\]|Loaded package|Compiling|"
    r"Checking |Done solving|SAFE|UNSAFE)",
    re.IGNORECASE,
)


def _part_label(line: int, part_lines: Mapping[str, Sequence[int]] | None) -> str:
    """Which part of the file (P, Q or the proof) ``line`` falls in, and where in it."""
    if not part_lines:
        return ""
    names = {"p": "P", "q": "Q", "proof": "your proof"}
    for where, span in part_lines.items():
        first, last = int(span[0]), int(span[1])
        if first <= line <= last:
            return f"  [line {line - first + 1} of {names.get(where, where)}]"
    return ""


def _bounded(text: str, max_chars: int) -> str:
    """``text``, cut to at most ``max_chars`` characters with a trailing ``...``."""
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - 4)].rstrip() + "\n..."


def extract_error_excerpt(
    output: str,
    *,
    max_chars: int = MAX_FEEDBACK_CHARS,
    part_lines: Mapping[str, Sequence[int]] | None = None,
    max_line_chars: int = 240,
) -> str:
    """The checker's error messages, for the retry prompt: each ``File.hs:L:C: error``
    block (warnings dropped, duplicates dropped, paths cut to the file name, each line cut
    to ``max_line_chars``, the part and line noted for lines inside P, Q or the proof),
    in order, until ``max_chars``; when no such block exists, the tail of the output
    without banners and progress lines. The result is at most ``max_chars`` long."""
    text = ANSI_RE.sub("", output or "").replace("\r\n", "\n")
    lines = [ln.rstrip() for ln in text.split("\n")]
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for ln in lines:
        m = _ERROR_HEADER_RE.match(ln[:400])
        if m:
            if current:
                blocks.append(current)
            if m.group("kind").lower() == "warning":
                current = None
                continue
            line_no = int(m.group("line").lstrip("("))
            header = ln.strip().replace(m.group("path"), m.group("file"), 1) + _part_label(
                line_no, part_lines
            )
            current = [header]
            continue
        if current is not None:
            if MARKER_RE.match(ln) or re.match(r"^\s*\*{4}", ln):
                blocks.append(current)
                current = None
                continue
            current.append(ln)
    if current:
        blocks.append(current)
    pieces: list[str] = []
    seen: set[str] = set()
    for b in blocks:
        while b and not b[-1].strip():
            b.pop()
        body = "\n".join((ln if len(ln) <= max_line_chars else ln[:max_line_chars] + "...") for ln in b)
        body = re.sub(r"(?:/[^\s:/]+)+/([^\s:/]+\.l?hs)", r"\1", body)
        if body and body not in seen:
            seen.add(body)
            pieces.append(body)
    if pieces:
        out: list[str] = []
        used = 0
        for k, piece in enumerate(pieces):
            if out and used + len(piece) + 2 > max_chars:
                out.append(f"... ({len(pieces) - k} more error(s) not shown)")
                break
            out.append(piece)
            used += len(piece) + 2
        return _bounded("\n\n".join(out), max_chars)
    rest = [ln for ln in lines if ln.strip() and not _NOISE_RE.match(ln) and not MARKER_RE.match(ln)]
    rest = [(ln if len(ln) <= max_line_chars else ln[:max_line_chars] + "...") for ln in rest]
    tail = re.sub(r"(?:/[^\s:/]+)+/([^\s:/]+\.l?hs)", r"\1", "\n".join(rest))
    if len(tail) > max_chars:
        tail = "...\n" + tail[-(max_chars - 4) :]
    return tail


def retry_feedback(verdict: Mapping[str, Any], *, max_chars: int = MAX_FEEDBACK_CHARS) -> str:
    """The error text to show Alice on a retry (the prompt wording lives elsewhere):
    the problems found before checking, a timeout note, or the checker's error excerpt.
    Empty when the proof was accepted or the checker is missing (nothing for Alice to fix)."""
    if verdict.get("accepted") or verdict.get("status") == "missing":
        return ""
    if verdict.get("status") == "rejected":
        names = {"p": "P", "q": "Q", "proof": "the proof"}
        items = []
        for p in verdict.get("problems") or []:
            where = names.get(p.get("where"), "the answer")
            at = f", line {p['line']} of {where}" if p.get("line") else f", in {where}"
            items.append(f"- {p.get('detail') or p.get('code')} ({p.get('code')}{at})")
        if not items:
            items = [f"- {verdict.get('detail') or verdict.get('code')}"]
        return _bounded("The proof was refused before checking:\n" + "\n".join(items), max_chars)
    if verdict.get("status") == "timeout":
        return _bounded(
            f"Liquid Haskell did not finish within {verdict.get('detail') or 'the time limit'}.", max_chars
        )
    excerpt = verdict.get("error_excerpt") or verdict.get("output_tail") or verdict.get("reason") or ""
    return _bounded(str(excerpt), max_chars)
