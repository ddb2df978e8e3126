"""The verdict of one proof check: a JSON-serialisable dict in which every key below is
always present.

``checked``        bool: LH ran to completion and reported (safe / unsafe / error).
``accepted``       bool: true only for status ``safe``: a SAFE result line, no UNSAFE or
                   ERROR line, and exit code 0. Never true when LH did not run.
``status``         ``safe`` | ``unsafe`` | ``error`` | ``timeout`` | ``missing`` |
                   ``crashed`` (killed by a signal, or could not be started) |
                   ``rejected`` (refused before running LH).
``code``           snake_case reason code: ``liquid_safe``, ``liquid_unsafe``,
                   ``liquid_error``, ``liquid_exit_nonzero`` (SAFE printed, nonzero exit),
                   ``liquid_no_result`` (exit 0, no result line), ``liquid_timeout``,
                   ``liquid_missing``, ``liquid_killed``, ``liquid_launch_failed``, or the
                   first precheck problem's code (see :data:`REASONS`).
``reason``         one human line, starting ``accepted:``, ``rejected:`` or ``not
                   checked:``; for a missing tool exactly :data:`MISSING_REASON`.
``detail``         more human detail (may be empty).
``stage``          ``parse`` | ``precheck`` | ``liquid``: where the verdict was decided.
``problems``       list of ``{"code", "detail", "where", "line"}`` found before running
                   (``where`` is ``p``, ``q``, ``proof``, ``file`` or ``answer``).
``returncode``     LH's exit status (negative: killed by that signal), or None.
``timed_out``      bool.
``seconds``        wall-clock seconds LH ran, or None.
``command``        the argv that was run (without the file name), or None.
``markers``        result words found in LH's output, in order (``SAFE``/``UNSAFE``/``ERROR``).
``tool_version``   LH version when its banner shows one, else None.
``error_excerpt``  the error messages, bounded (``max_feedback_chars``), file paths
                   reduced to the bare file name, lines in the proof annotated.
``output_tail``    the last :data:`OUTPUT_TAIL_CHARS` characters of LH's output.
``file_name``      name of the checked file (e.g. ``Equiv.hs``), or None.
``file_sha256``    SHA-256 of the checked file's text, or None.
``file``           the assembled file's text, or None when parsing failed.
``proof``          the proof text read from the model output, or None.
``lemma_name``     e.g. ``lemma_f_equiv``.
``q_name_in_file`` the name Q's function has in the file (e.g. ``f'``), or None.
``part_lines``     ``{"p"|"q"|"proof": [first, last]}`` 1-based line ranges in ``file``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .feedback import extract_error_excerpt
from .output import parse_liquid_output
from .settings import MISSING_REASON, OUTPUT_TAIL_CHARS


def make_verdict(status: str, code: str, reason: str, **fields: Any) -> dict[str, Any]:
    """A verdict with every key at its default, then ``fields`` on top."""
    out: dict[str, Any] = {
        "checked": status in ("safe", "unsafe", "error"),
        "accepted": status == "safe",
        "status": status,
        "code": code,
        "reason": reason,
        "detail": "",
        "stage": "liquid",
        "problems": [],
        "returncode": None,
        "timed_out": False,
        "seconds": None,
        "command": None,
        "markers": [],
        "tool_version": None,
        "error_excerpt": "",
        "output_tail": "",
        "file_name": None,
        "file_sha256": None,
        "file": None,
        "proof": None,
        "lemma_name": None,
        "q_name_in_file": None,
        "part_lines": {},
    }
    out.update(fields)
    return out


def missing_verdict(**fields: Any) -> dict[str, Any]:
    """The verdict when LH is not available: never checked, never accepted."""
    return make_verdict("missing", "liquid_missing", MISSING_REASON, **fields)


def verdict_of_run(
    output: str,
    rc: int | None,
    timed_out: bool,
    seconds: float,
    argv: list[str],
    base: dict,
    timeout: float,
    max_feedback_chars: int,
    part_lines: Mapping[str, Sequence[int]] | None,
) -> dict:
    """The verdict of one finished (or timed-out) LH run from its output and exit status."""
    tail = output[-OUTPUT_TAIL_CHARS:]
    common = dict(command=argv, returncode=rc, seconds=seconds, output_tail=tail, **base)
    if timed_out:
        return make_verdict(
            "timeout",
            "liquid_timeout",
            f"not checked: Liquid Haskell timed out after {timeout:g} s",
            detail=f"{timeout:g} seconds",
            timed_out=True,
            **common,
        )
    parsed = parse_liquid_output(output, rc)
    common.update(markers=parsed["markers"], tool_version=parsed["tool_version"])
    if rc is not None and rc < 0:
        return make_verdict(
            "crashed",
            "liquid_killed",
            f"not checked: Liquid Haskell was killed by signal {-rc}",
            error_excerpt=extract_error_excerpt(output, max_chars=max_feedback_chars, part_lines=part_lines),
            **common,
        )
    if rc in (126, 127) and not parsed["markers"]:
        return missing_verdict(detail=f"the command exited with {rc} (not found or not executable)", **common)
    status, code = parsed["status"], parsed["code"]
    if status == "safe":
        return make_verdict("safe", code, "accepted: Liquid Haskell says SAFE", **common)
    reason = {
        "liquid_unsafe": "rejected: Liquid Haskell says UNSAFE",
        "liquid_error": "rejected: Liquid Haskell reported an error",
        "liquid_exit_nonzero": f"rejected: Liquid Haskell printed SAFE but exited with status {rc}",
        "liquid_no_result": "rejected: Liquid Haskell printed no result",
    }[code]
    return make_verdict(
        status,
        code,
        reason,
        error_excerpt=extract_error_excerpt(output, max_chars=max_feedback_chars, part_lines=part_lines),
        **common,
    )
