"""Reading Liquid Haskell's output: its result lines, its version, and colour codes to
strip."""

from __future__ import annotations

import re
from typing import Any

# A result line: "LIQUID: SAFE" (newer LH) or "**** RESULT: SAFE ****" (older), at the
# start of a line.
MARKER_RE = re.compile(r"^[ \t*]*(?:LIQUID|RESULT)\s*:\s*(SAFE|UNSAFE|ERROR)\b", re.IGNORECASE | re.MULTILINE)
_VERSION_RE = re.compile(r"LiquidHaskell\s+(?:Version\s+|v)([0-9][\w.\-]*)", re.IGNORECASE)
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # terminal colour and cursor codes


def parse_liquid_output(output: str, returncode: int | None) -> dict[str, Any]:
    """Decide LH's outcome from its output and exit status.

    Result lines are ``LIQUID: SAFE|UNSAFE|ERROR`` (newer) or ``**** RESULT: ... ****``
    (older), matched at the start of a line (so quoted source lines, which GHC prefixes
    with a line number, never count). Any ERROR line gives ``error``; else any UNSAFE
    gives ``unsafe``; a SAFE line with exit 0 gives ``safe``; SAFE with a nonzero exit is
    an ``error`` (``liquid_exit_nonzero``); no result line is an ``error``
    (``liquid_no_result`` on exit 0, ``liquid_error`` otherwise). Returns
    ``{"status", "code", "accepted", "markers", "tool_version"}``.
    """
    text = ANSI_RE.sub("", output or "")
    markers = [m.group(1).upper() for m in MARKER_RE.finditer(text)]
    version_m = _VERSION_RE.search(text)
    if "ERROR" in markers:
        status, code = "error", "liquid_error"
    elif "UNSAFE" in markers:
        status, code = "unsafe", "liquid_unsafe"
    elif "SAFE" in markers:
        status, code = ("safe", "liquid_safe") if returncode == 0 else ("error", "liquid_exit_nonzero")
    else:
        status, code = "error", ("liquid_no_result" if returncode == 0 else "liquid_error")
    return {
        "status": status,
        "code": code,
        "accepted": status == "safe",
        "markers": markers,
        "tool_version": version_m.group(1) if version_m else None,
    }
