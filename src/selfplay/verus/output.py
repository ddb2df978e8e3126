"""Reading one Verus run: its exit code and both output streams, into a status.

What Verus prints (sources read for this, all in the verus-lang/verus repository):

* ``--output-json`` (source/rust_verify/src/main.rs): after the run, one pretty-printed
  JSON object on stdout holding ``"verification-results"`` and Verus's build
  information (``"verus"``; recent versions add ``"func-details"``, and ``"times-ms"``
  with ``--time``). ``verification-results`` holds ``encountered-vir-error`` (bool,
  always), ``encountered-error`` (bool; recent versions), ``success`` (bool; only when
  the whole crate is verified), and, unless a VIR error stopped Verus before verifying,
  ``verified``, ``errors`` (counts) and ``is-verifying-entire-crate`` (bool; recent
  versions). The process then exits 1 when rustc or Verus reported any error, else 0.
* without it (source/rust_verify/src/driver.rs): the line
  ``verification results:: N verified, M errors`` (written this way since Verus PR
  #676, July 2023; earlier ``verification results:: verified: N errors: M``), which
  current versions write to stderr, older ones and some tools to stdout, and which is
  absent when a VIR error (an unsupported construct, a mode error) stopped Verus;
* diagnostics on stderr in rustc's format: ``error: postcondition not satisfied`` then
  `` --> file.rs:L:C`` and the annotated source; rustc's own errors the same way
  (``error[E0308]: mismatched types``), then ``error: aborting due to N previous
  errors``;
* crashes: a panic inside rustc or Verus prints ``thread 'rustc' panicked at ..`` (since
  Rust 1.87 with the thread id: ``thread 'rustc' (55048) panicked at``, as in Verus issue
  #2387), usually ``error: the compiler unexpectedly panicked`` or ``Internal Verus
  Error``, and exits 101 with no summary.

:func:`read_output` combines everything and refuses to guess: the JSON summary and the
summary lines must agree with each other and with the exit code (``errors > 0`` needs
a non-zero exit, a clean summary with exit 0 may not come with error diagnostics, a
non-zero exit needs errors or error diagnostics), otherwise the run is a ``crash`` with
the reasons in ``problems``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_MESSAGES = 50
MAX_MESSAGE_CHARS = 500

_SUMMARY_RE = re.compile(
    r"^\s*verification results::\s*(\d+) verified, (\d+) errors?\b", re.IGNORECASE | re.MULTILINE
)
_OLD_SUMMARY_RE = re.compile(
    r"^\s*verification results::\s*verified:\s*(\d+)\s+errors:\s*(\d+)", re.IGNORECASE | re.MULTILINE
)
_CRASH_RE = re.compile(
    r"thread '[^'\n]*'(?: \(\d+\))? panicked at|thread '[^'\n]*'(?: \(\d+\))? has overflowed its "
    r"stack|internal compiler error|the compiler unexpectedly panicked|Internal Verus Error"
)
_DIAGNOSTIC_RE = re.compile(r"^(error|warning)(\[[A-Z]\d+\])?: (.*)$")
_LOCATION_RE = re.compile(r"^\s*--> (.+?):(\d+):(\d+)\s*$")
_NOT_AN_ERROR = ("aborting due to", "could not compile")


@dataclass
class RunReading:
    """What one run said.

    status    ``verified``, ``failed`` (verification errors), ``compile_error`` (rustc or
              Verus refused the program before or instead of verifying it) or ``crash``
    verified, errors  Verus's counts (None when it gave none)
    source    where the counts came from: ``json``, ``text`` or None
    messages  the error diagnostics, each ``error: text (file:line:col)``
    crash     the panic line, when a known crash marker was seen (worth a retry)
    problems  why the output cannot be trusted (then status is ``crash``)
    """

    status: str
    verified: int | None = None
    errors: int | None = None
    source: str | None = None
    messages: list[str] = field(default_factory=list)
    crash: str | None = None
    problems: list[str] = field(default_factory=list)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def find_json_summary(stdout: str) -> tuple[dict | None, str | None]:
    """(the last JSON object on stdout holding ``verification-results``, a problem)."""
    decoder = json.JSONDecoder()
    found: dict | None = None
    for m in re.finditer(r"(?m)^\{", stdout):
        try:
            value, _ = decoder.raw_decode(stdout, m.start())
        except ValueError:
            continue
        if isinstance(value, dict) and "verification-results" in value:
            found = value
    if found is None and "verification-results" in stdout:
        return None, "stdout mentions verification-results but holds no readable JSON summary"
    return found, None


def text_summaries(*streams: str) -> list[tuple[int, int]]:
    """Every ``verification results::`` line in the streams, as (verified, errors)."""
    out: list[tuple[int, int]] = []
    for stream in streams:
        for rx in (_SUMMARY_RE, _OLD_SUMMARY_RE):
            out += [(int(a), int(b)) for a, b in rx.findall(stream)]
    return out


def diagnostics(stderr: str) -> list[str]:
    """The error diagnostics on stderr (rustc's ``aborting`` lines left out), each with
    the location that follows it."""
    lines = stderr.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        m = _DIAGNOSTIC_RE.match(line.rstrip("\r"))
        if not m or m.group(1) != "error" or any(s in m.group(3) for s in _NOT_AN_ERROR):
            continue
        text = f"error{m.group(2) or ''}: {m.group(3)}"
        for follow in lines[i + 1 : i + 4]:
            loc = _LOCATION_RE.match(follow)
            if loc:
                text += f" ({loc.group(1)}:{loc.group(2)}:{loc.group(3)})"
                break
        out.append(text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "...")
    return out


def read_output(stdout: str, stderr: str, exit_code: int) -> RunReading:
    """Read a run that exited by itself with ``exit_code`` (see the module docstring)."""
    messages = diagnostics(stderr)
    shown = messages[:MAX_MESSAGES] + (
        [f"... {len(messages) - MAX_MESSAGES} more"] if len(messages) > MAX_MESSAGES else []
    )
    for stream in (stderr, stdout):
        m = _CRASH_RE.search(stream)
        if m:
            start = stream.rfind("\n", 0, m.start()) + 1
            end = stream.find("\n", m.end())
            line = stream[start : end if end >= 0 else len(stream)].strip()
            return RunReading(
                "crash", messages=shown, crash=line[:300], problems=[f"Verus crashed: {line[:300]}"]
            )
    problems: list[str] = []
    texts = text_summaries(stdout, stderr)
    if len(set(texts)) > 1:
        problems.append(f"the summary lines disagree: {sorted(set(texts))}")
    summary, bad_json = find_json_summary(stdout)
    if bad_json:
        problems.append(bad_json)
    verified = errors = None
    source = None
    status = "crash"
    if summary is not None:
        source = "json"
        status, verified, errors = _from_json(
            summary["verification-results"], exit_code, bool(messages), problems
        )
        if texts and (verified, errors) not in texts:
            problems.append(
                f"the summary line says {texts[0][0]} verified, {texts[0][1]} errors, the JSON "
                f"{verified}, {errors}"
            )
    elif texts:
        source = "text"
        verified, errors = texts[0]
        if errors > 0:
            status = "failed"
            if exit_code == 0:
                problems.append(f"{errors} errors but exit code 0")
        elif exit_code == 0:
            status = "verified"
            if messages:
                problems.append("error diagnostics but a clean summary and exit code 0")
        elif messages:
            status = "compile_error"
        else:
            problems.append(f"exit code {exit_code} with a clean summary and no error diagnostics")
    elif exit_code != 0 and messages:
        status = "compile_error"  # Verus stopped before verifying (no summary is printed then)
    else:
        problems.append(f"no verification summary (exit code {exit_code})")
    if problems:
        status = "crash"
    return RunReading(status, verified, errors, source, shown, None, problems)


def _from_json(
    results: Any, exit_code: int, has_errors: bool, problems: list[str]
) -> tuple[str, int | None, int | None]:
    if not isinstance(results, dict):
        problems.append("verification-results is not an object")
        return "crash", None, None
    vir = results.get("encountered-vir-error")
    if not isinstance(vir, bool):
        problems.append("verification-results lacks encountered-vir-error")
        return "crash", None, None
    for key in ("encountered-error", "success", "is-verifying-entire-crate"):
        if key in results and not isinstance(results[key], bool):
            problems.append(f"verification-results has a non-boolean {key}")
    if results.get("is-verifying-entire-crate") is False:
        problems.append("Verus verified only part of the file")
    verified, errors = _count(results.get("verified")), _count(results.get("errors"))
    if vir:
        if exit_code == 0:
            problems.append("a VIR error but exit code 0")
        return "compile_error", verified, errors
    if verified is None or errors is None:
        problems.append("verification-results lacks its verified/errors counts")
        return "crash", verified, errors
    if errors > 0:
        if exit_code == 0:
            problems.append(f"{errors} errors but exit code 0")
        if results.get("success") is True:
            problems.append(f"{errors} errors but success true")
        return "failed", verified, errors
    if exit_code == 0:
        if results.get("success") is False or results.get("encountered-error") is True:
            problems.append("exit code 0 but the JSON reports a failure")
        if has_errors:
            problems.append("error diagnostics but a clean summary and exit code 0")
        return "verified", verified, errors
    if not has_errors:
        problems.append(f"exit code {exit_code} with a clean summary and no error diagnostics")
    return "compile_error", verified, errors
