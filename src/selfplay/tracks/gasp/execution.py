"""Running model-written functions on literal arguments, for validity and judging.

Every GASP input (a proposal's, a pair's, an abduction answer's) is the source of one
call's argument tuple, as ``parse.py`` writes it and ``evaluate.python_calls.parse_args``
reads it: ``(3, [1, 2])`` is two arguments, ``([1, 2],)`` one list, ``((1, 2),)`` one
tuple, ``()`` none. It is read in the host (literals, ``inf``/``nan`` and
``set(...)``/``frozenset(...)`` only; nothing is evaluated), and what travels to the
sandbox is the ``repr`` of the values read, never the model's own text.

A program runs in the sandbox once per job, with the timed call shim of
``evaluate.python_calls`` appended: each call has its own time limit, the values come
back canonically encoded, and the host decides every verdict by comparing encoded
values (``python_calls.mismatch``). Expected values never enter the sandboxed process.
All jobs of a batch go to the pool in one ``Sandbox.run_many``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...evaluate.python_calls import CallOutcome, args_source, parse_args, timed_job, timed_outcomes
from ...sandbox.encoding import EncodingLimitError, encode_value

ENTRY = "f"
# Host-side bounds of the canonical encoding of a literal (those of the sandbox's defaults).
_HOST_ENCODING = {"max_nodes": 100_000, "max_depth": 200, "max_bytes": 200_000, "max_repr": 1000}


def seconds(name: str, value: Any, most: float) -> float:
    """A settings field's time limit as a float in (0, most]; ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most:
        raise ValueError(f"{name}: must be a number of seconds in (0, {most:g}], not {value!r}")
    return float(value)


class NotALiteral(ValueError):
    """The text is not a call's arguments made of plain literals (or is too large)."""


def read_call_args(text: Any, max_chars: int) -> tuple:
    """The argument values of one call from the source of their tuple, read in the host
    without evaluating code; :class:`NotALiteral` saying why not."""
    if not isinstance(text, str):
        raise NotALiteral(f"arguments must be text, not {type(text).__name__}")
    if len(text) > max_chars:
        raise NotALiteral(f"arguments longer than {max_chars} characters")
    return _read(text.strip())


def read_literal(text: Any, max_chars: int) -> Any:
    """One literal value (a deduction answer), read in the host as ``(<text>,)``."""
    if not isinstance(text, str):
        raise NotALiteral(f"a literal must be text, not {type(text).__name__}")
    if len(text) > max_chars:
        raise NotALiteral(f"literal longer than {max_chars} characters")
    if not text.strip():
        raise NotALiteral("empty literal")
    values = _read("(" + text.strip() + ",)")
    if len(values) != 1:
        raise NotALiteral(f"{len(values)} values where one literal belongs")
    return values[0]


def _read(source: str) -> tuple:
    try:
        return parse_args(source)
    except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError, OverflowError) as exc:
        # TypeError: an unhashable set member or dict key; ValueError: not a literal, or an
        # integer with more digits than Python reads; SyntaxError: not Python at all
        raise NotALiteral(f"not a literal ({type(exc).__name__})") from None


def args_text(args: tuple) -> str:
    """The canonical source of an argument tuple (what a task stores and a student sees);
    ``ValueError`` for an integer too long for ``repr``."""
    return args_source(args)


def host_encoding(value: Any) -> Any:
    """The sandbox's canonical encoding of a plain value made in the host (a literal read
    by :func:`read_literal`); :class:`NotALiteral` when it exceeds the bounds."""
    try:
        return encode_value(value, **_HOST_ENCODING)
    except EncodingLimitError as exc:
        raise NotALiteral(f"value too large ({exc})") from None


def defines_f(code: str) -> str | None:
    """None when ``code`` parses and defines ``f`` at its top level, else why not
    (``syntax_error`` or ``no_f``). Parsing only: nothing is run."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "syntax_error"
    if not any(isinstance(node, ast.FunctionDef) and node.name == ENTRY for node in tree.body):
        return "no_f"
    return None


@dataclass(frozen=True)
class CallJob:
    """``code`` called as ``f(*args)`` for each argument tuple, in order, in one process;
    with ``stop_early`` the first call that does not return ends the run."""

    code: str
    calls: Sequence[tuple]
    stop_early: bool = True


def run_jobs(
    sandbox, jobs: Sequence[CallJob], timeout_s: float, run_timeout_s: float
) -> list[list[CallOutcome]]:
    """One outcome per call of every job (``ok`` with the encoded value, ``raised`` with the
    exception's type name, ``timeout``, ``not_run`` after an early stop, ``missing``, or the
    run's own failure: ``timeout``, ``killed``, ``error``, ``malformed_result``), all jobs
    in one ``run_many``. Each call may take ``timeout_s``; a run as a whole (the program's
    import and all its calls) ``timeout_s`` per call plus one more, and at most
    ``run_timeout_s`` (but never less than ``timeout_s``)."""
    batch = []
    for job in jobs:
        sources = [args_source(args) for args in job.calls]
        total = max(timeout_s, min(timeout_s * (len(sources) + 1), run_timeout_s))
        batch.append(
            timed_job(job.code, ENTRY, sources, [timeout_s] * len(sources), total, stop_early=job.stop_early)
        )
    results = sandbox.run_many(batch) if batch else []
    return [
        timed_outcomes(result, len(job.calls), stop_early=job.stop_early)
        for result, job in zip(results, jobs)
    ]
