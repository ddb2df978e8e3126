"""LiveCodeBench code generation (Jain et al., 2024), pass@k, as EvolveCoder's Table 3 uses it.

The data: the HF dataset ``livecodebench/code_generation_lite``, one JSON object per
line in ``test.jsonl``, ``test2.jsonl`` ... ``test6.jsonl``; a release is cumulative
(``release_v5`` = test.jsonl .. test5.jsonl, 880 problems; ``v5`` alone = test5.jsonl).
Each row has question_title, question_content, platform (leetcode / atcoder /
codeforces), question_id, contest_id, contest_date (ISO text), starter_code,
difficulty (easy / medium / hard), public_test_cases (JSON text of a list of
``{"input", "output", "testtype"}``), private_test_cases (the same list, compressed:
base64 text of zlib data of a pickle of the JSON text; older rows hold the JSON text
itself) and metadata (JSON text; ``func_name`` for functional problems).

Selection, as LiveCodeBench's runner does it: a release's files, then the evaluation
window ``start_date <= contest_date <= end_date`` (dates as YYYY-MM-DD, both ends
inclusive; the end day counts whole, so a contest at 14:00 on the end day is in, where
the runner's ``contest_date <= end_date`` compares with midnight). ``training_problems``
returns the problems dated before ``train_before`` (the RL training pool must not
overlap the evaluation window).

Which release holds the papers' window. Paper 004 (following Qwen3) evaluates on
"2024.10 - 2025.02, 216 problems" and trains on "before 2024.08, 601 problems"; paper
002 on "LCB v5 (2024.10-2025.02)". Releases are cumulative and end where their last
file ends: release_v5 (test.jsonl .. test5.jsonl, 880 problems) ends in January 2025
and its last file (167 problems) starts in October 2024, so it holds at most 167 of
the window; only release_v6 (test6.jsonl adds February - April 2025) reaches February.
The default is therefore release_v6 with 2024-10-01 .. 2025-02-28. The count is
checked on the data: with ``paper_counts`` set, preparing stops naming both counts when
the window (or the training split) holds another number, unless ``accepted_counts``
names exactly that number (a known difference; the table's caption records it).

Tests, two kinds, told apart as LiveCodeBench's ``run_test`` does: call-based exactly
when the metadata names a ``func_name`` (the tests' ``testtype`` is not consulted):

- functional (LeetCode): ``class Solution`` with the method named by metadata
  ``func_name`` (or a module-level function of that name); each input line is one JSON
  argument; the output is JSON. The returned value comes back encoded from the sandbox
  and the host compares it with ``==`` after turning a returned tuple into a list, as
  LiveCodeBench does.
- stdin (AtCoder, Codeforces): the program runs as ``__main__`` with the test input on
  file descriptor 0 (``input()``, ``sys.stdin``, ``sys.stdin.buffer`` and ``open(0)`` all
  read it) and its standard output captured from file descriptor 1; the host compares
  it with LiveCodeBench's rule: both texts stripped, split on newlines, each line
  stripped; the line counts must agree and each pair of lines must be equal, or else
  both must parse as whitespace-separated decimal numbers with equal values
  (``Decimal``: "2.50" equals "2.5" and "1" equals "1.0"; there is no tolerance, so
  "0.3333" does not equal "0.33333").

Both kinds run LiveCodeBench's import preamble (the star imports of common stdlib
modules and a recursion limit of 50000) before the solution. Public tests come first,
then private ones; each test is its own sandboxed process with the per-test timeout
(LiveCodeBench's default, 6 s); a sample's tests stop at the first failure, as
LiveCodeBench's grader does. The runner's global timeout, ``(timeout + 1) * tests + 5``
seconds, can never be reached here: each test is bounded by its own timeout.

The answer's code, as LiveCodeBench's ``extract_code`` reads it for chat models: the
lines between the last two lines that contain a fence (three backticks anywhere in the
line, whatever the label); with fewer than two such lines there is no code and the
sample fails (a block cut off before its closing fence fails too).

A stdin program that raises SystemExit, with any status, has ended: its output is
judged (LiveCodeBench's stdin runner swallows every SystemExit); in a call-based
solution a SystemExit is a runtime error, as there.

Deliberate differences from LiveCodeBench's grader: a stdin program runs as a real
``__main__`` script instead of being wrapped into a function (so ``global`` and nested
definitions behave as on a judge); every test starts a fresh process (LiveCodeBench
reuses one Solution instance); and a functional answer's return value must be a builtin
value (a numpy scalar, which LiveCodeBench's ``==`` would accept, is reported as an
opaque object and fails).

Verdicts: only the value returned through the sandbox (the encoded return value, or
the captured standard output) is judged, in the host, against expected outputs that
never enter the sandbox. Nothing the program prints about itself counts.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, ClassVar

from ...errors import UserError
from ...sandbox.encoding import decode_value
from ...verifier_canary import checked_sandbox
from ..benchmark import CodegenBenchmark, Sample, fenced, fenced_blocks
from ..files import read_json_lines
from ..modes import EvalMode

DATA = Path(__file__).resolve().parents[2] / "data" / "eval"

HF_REPO = "livecodebench/code_generation_lite"
# A commit of the dataset repository that holds test.jsonl .. test6.jsonl (release_v6).
REVISION = "0fe84c3912ea0c4d4a78037083943e8f0c4dd505"
FILES = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl")

# Which files make a release (the dataset's loading script: releases are cumulative,
# "vN" is one file, "vN_vM" the files from N to M).
RELEASE_FILES: dict[str, list[str]] = {f"release_v{n}": list(FILES[:n]) for n in range(1, len(FILES) + 1)}
RELEASE_FILES["release_latest"] = list(FILES)
for _n in range(1, len(FILES) + 1):
    RELEASE_FILES[f"v{_n}"] = [FILES[_n - 1]]
    for _m in range(_n + 1, len(FILES) + 1):
        RELEASE_FILES[f"v{_n}_v{_m}"] = list(FILES[_n - 1 : _m])

DOWNLOADS = {
    "livecodebench": [
        {
            "url": f"https://huggingface.co/datasets/{HF_REPO}/resolve/{REVISION}/{name}",
            "file": name,
            "sha256": None,
        }
        for name in FILES
    ],
}

DEFAULTS = {
    "release": "release_v6",
    "start_date": "2024-10-01",
    "end_date": "2025-02-28",
    "train_before": "2024-08-01",
    "paper_counts": {},
    "accepted_counts": {},
    "timeout": 6.0,  # seconds per test (LiveCodeBench's default)
    "memory_mb": 2048,
    "max_output_kb": 16384,  # the largest standard output / return value read back
    "max_decompressed_mb": 1024,
}

# LiveCodeBench's preamble: these modules star-imported, then imported by name (all but
# the last two), then a recursion limit of 50000.
PREAMBLE_MODULES = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
    "builtins",
    "typing",
)
PREAMBLE = (
    "".join(f"from {m} import *\n" for m in PREAMBLE_MODULES)
    + "".join(f"import {m}\n" for m in PREAMBLE_MODULES[:-2])
    + "sys.setrecursionlimit(50000)\n"
)

# The trusted runner the sandbox executes; the solution text arrives as an argument and
# is compiled and run inside it. It only hands back what the program produced.
RUNNER = r"""
import builtins as _builtins
import json as _json
import os as _os
import sys as _sys
import threading as _threading


def _load(header, source, name):
    namespace = {"__name__": name, "__builtins__": _builtins}
    exec(compile(header, "<preamble>", "exec"), namespace)
    exec(compile(source, "<solution>", "exec"), namespace)
    return namespace


def run_call(source, header, func_name, lines):
    namespace = _load(header, source, "lcb_solution")
    args = [_json.loads(line) for line in lines.split("\n")]
    target = namespace.get("Solution")
    if isinstance(target, type):
        method = getattr(target(), func_name)
    elif func_name in namespace:
        method = namespace[func_name]
    else:
        raise NameError(f"neither class Solution nor function {func_name} is defined")
    return method(*args)


def run_stdin(source, header, stdin_text):
    with open("stdin.txt", "w", encoding="utf-8") as handle:
        handle.write(stdin_text)
    fd = _os.open("stdin.txt", _os.O_RDONLY)
    _os.dup2(fd, 0)
    _os.close(fd)
    fd = _os.open("stdout.txt", _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o600)
    _os.dup2(fd, 1)
    _os.close(fd)
    out = open(1, "w", encoding="utf-8", closefd=False)
    _sys.stdin = open(0, "r", encoding="utf-8", closefd=False)
    _sys.stdout = out
    status = 0
    try:
        _load(header, source, "__main__")
    except SystemExit as exc:
        code = exc.code
        status = 0 if code is None or code is False or (type(code) is int and code == 0) else 1
    main = _threading.main_thread()
    for thread in _threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()
    for stream in (_sys.stdout, out):
        try:
            stream.flush()
        except BaseException:
            pass
    with open("stdout.txt", "rb") as handle:
        data = handle.read()
    return [data.decode("utf-8", "replace"), status]
"""

SYSTEM = (
    "You are an expert competitive programmer. Solve the problem with a correct and efficient "
    "Python 3 program. Put the complete program in one ```python code block."
)

COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")


# --- reading the dataset --------------------------------------------------------


class _StrOnlyUnpickler(pickle.Unpickler):
    """Refuses every global: a pickle that needs a class or function to load is not a
    pickled string, and nothing it names is ever imported or called."""

    def find_class(self, module: str, name: str):  # noqa: ARG002
        raise pickle.UnpicklingError(f"refusing a pickle that references {module}.{name}")


def _inflate(data: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, limit + 1)
    if len(out) > limit or inflater.unconsumed_tail:
        raise ValueError(f"decompressed test data exceed {limit // (1024 * 1024)} MiB")
    return out


def decode_test_cases(
    text: Any, max_bytes: int = DEFAULTS["max_decompressed_mb"] * 1024 * 1024
) -> list[dict]:
    """A test-case field as a list of ``{"input", "output", "testtype"}``.

    Either JSON text of the list, or LiveCodeBench's compressed form (base64 of zlib of a
    pickle of that JSON text). The pickle is loaded with an unpickler that refuses any
    global, and must hold a str; anything else raises ValueError.
    """
    if isinstance(text, list):
        cases = text
    elif not isinstance(text, str):
        raise ValueError(f"test cases are {type(text).__name__}, not text")
    else:
        try:
            cases = json.loads(text)
        except json.JSONDecodeError:
            try:
                raw = base64.b64decode(text.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError, ValueError):
                raise ValueError("test cases are neither JSON nor base64") from None
            try:
                blob = _inflate(raw, max_bytes)
            except zlib.error as exc:
                raise ValueError(f"compressed test cases do not inflate ({exc})") from None
            try:
                inner = _StrOnlyUnpickler(io.BytesIO(blob)).load()
            except (
                pickle.UnpicklingError,
                EOFError,
                ValueError,
                TypeError,
                AttributeError,
                IndexError,
                KeyError,
                MemoryError,
                RecursionError,
            ) as exc:
                raise ValueError(f"compressed test cases are not a pickled string ({exc})") from None
            if type(inner) is not str:
                raise ValueError(
                    f"compressed test cases hold a {type(inner).__name__}, not a string"
                ) from None
            try:
                cases = json.loads(inner)
            except json.JSONDecodeError as exc:
                raise ValueError(f"decompressed test cases are not JSON ({exc.msg})") from None
    if not isinstance(cases, list):
        raise ValueError("test cases are not a list")
    out = []
    for case in cases:
        if (
            not isinstance(case, dict)
            or not isinstance(case.get("input"), str)
            or not isinstance(case.get("output"), str)
        ):
            raise ValueError("a test case is not {input: str, output: str, ...}")
        out.append({"input": case["input"], "output": case["output"], "testtype": case.get("testtype")})
    return out


def encode_private_tests(cases: list[dict]) -> str:
    """LiveCodeBench's compressed form of a test list (for fixtures and the smoke set)."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode("ascii")


def _read_jsonl(path: Path) -> list[dict]:
    return read_json_lines(path, "LiveCodeBench")


def load_rows(source: str | Path | None, release: str = DEFAULTS["release"]) -> list[dict]:
    """The raw rows: the smoke set (None), one jsonl file, or a folder holding a release's files."""
    if source is None:
        return _read_jsonl(DATA / LiveCodeBench.smoke)
    path = Path(source)
    if path.is_dir():
        if release not in RELEASE_FILES:
            raise UserError(
                f"livecodebench: unknown release {release!r} (known: {', '.join(sorted(RELEASE_FILES))})"
            )
        missing = [name for name in RELEASE_FILES[release] if not (path / name).is_file()]
        if missing:
            raise UserError(f"{path}: {release} needs {', '.join(missing)} (download them from {HF_REPO})")
        return [row for name in RELEASE_FILES[release] for row in _read_jsonl(path / name)]
    return _read_jsonl(path)


def _as_datetime(value: Any, what: str) -> datetime:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip().replace("Z", "")).replace(tzinfo=None)
        except ValueError:
            pass
    raise UserError(f"livecodebench: {what} must be a date (YYYY-MM-DD), got {value!r}")


def _contest_date(row: dict) -> datetime | None:
    try:
        return _as_datetime(row.get("contest_date"), "contest_date")
    except UserError:
        return None


def settings_of(settings: dict | None) -> dict:
    return {**DEFAULTS, **(settings or {})}


def item_from_row(row: dict, max_bytes: int) -> tuple[dict | None, str | None]:
    """A prepared item (tests checked, private tests kept in their stored form) or a reason."""
    qid = row.get("question_id")
    if not isinstance(qid, str) or not qid:
        return None, "malformed row: no question_id"
    when = _contest_date(row)
    if when is None:
        return None, f"malformed row: contest_date {row.get('contest_date')!r}"
    difficulty = row.get("difficulty")
    if difficulty not in ("easy", "medium", "hard"):
        return None, f"malformed row: difficulty {difficulty!r}"
    if not isinstance(row.get("question_content"), str):
        return None, "malformed row: no question_content"
    try:
        metadata = (
            json.loads(row.get("metadata") or "{}")
            if isinstance(row.get("metadata"), (str, type(None)))
            else dict(row["metadata"])
        )
        public = decode_test_cases(row.get("public_test_cases", "[]"), max_bytes)
        private = decode_test_cases(row.get("private_test_cases", "[]"), max_bytes)
    except (ValueError, TypeError, json.JSONDecodeError) as exc:
        return None, f"unreadable tests or metadata: {exc}"
    cases = public + private
    if not cases:
        return None, "no tests"
    # LiveCodeBench's run_test: call-based exactly when the metadata has a func_name
    func_name = metadata.get("func_name") if isinstance(metadata, dict) else None
    if func_name is None:
        kind = "stdin"
    elif isinstance(func_name, str) and func_name:
        kind = "functional"
    else:
        return None, f"malformed metadata: func_name {func_name!r}"
    return {
        "id": qid,
        "group": difficulty,
        "title": row.get("question_title"),
        "platform": row.get("platform"),
        "contest_id": row.get("contest_id"),
        "contest_date": when.isoformat(),
        "question": row["question_content"],
        "starter_code": row.get("starter_code") or "",
        "kind": kind,
        "func_name": func_name,
        "n_tests": len(cases),
        "public_tests": public,
        "private_tests": row.get("private_test_cases", "[]"),
    }, None


def check_count(which: str, found: int, settings: dict, where: str) -> str | None:
    """Stop when ``found`` problems differ from the paper's count (``paper_counts``),
    unless ``accepted_counts`` names exactly ``found``; returns the caption note of an
    accepted difference (None when the counts agree or none is configured)."""
    paper = (settings.get("paper_counts") or {}).get(which)
    if paper is None or found == paper:
        return None
    accepted = settings.get("accepted_counts") or {}
    if accepted.get(which) == found:
        reason = accepted.get("reason") or "no reason given"
        return f"LiveCodeBench {which}: {found} problems where the paper had {paper} (accepted: {reason})"
    raise UserError(
        f"livecodebench: {where} holds {found} problems, the paper had {paper}; if the difference is "
        f"known, set evaluation.benchmarks.livecodebench.accepted_counts.{which}: {found} (and a reason)"
    )


def count_note(settings: dict | None) -> list[str]:
    """Caption lines for the accepted count differences of these settings."""
    s = settings_of(settings)
    accepted, paper = s.get("accepted_counts") or {}, s.get("paper_counts") or {}
    return [
        f"LiveCodeBench {which}: {accepted[which]} problems where the paper had {paper[which]} "
        f"(accepted: {accepted.get('reason') or 'no reason given'})"
        for which in ("eval", "train")
        if accepted.get(which) is not None
        and paper.get(which) is not None
        and accepted[which] != paper[which]
    ]


def _select(
    rows: Iterable[dict],
    keep,
    why_not: str,
    max_bytes: int,
    limit: int | None,
    count: tuple[str, dict, str] | None = None,
):
    rows = list(rows)
    if count is not None:
        which, settings, where = count
        in_window = {
            row.get("question_id") for row in rows if (when := _contest_date(row)) is None or keep(when)
        }
        check_count(which, len(in_window), settings, where)
    items, skipped, seen = [], [], set()
    for row in rows:
        qid = row.get("question_id")
        when = _contest_date(row)
        if when is not None and not keep(when):
            skipped.append({"id": qid, "reason": f"{why_not} (contest_date {when.date().isoformat()})"})
            continue
        item, why = item_from_row(row, max_bytes)
        if item is None:
            skipped.append({"id": qid, "reason": why})
            continue
        if item["id"] in seen:
            skipped.append({"id": qid, "reason": "duplicate question_id"})
            continue
        seen.add(item["id"])
        items.append(item)
    if limit:
        for item in items[int(limit) :]:
            skipped.append({"id": item["id"], "reason": f"beyond limit {int(limit)}"})
        items = items[: int(limit)]
    return items, skipped


def training_problems(
    source: str | Path | None, settings: dict | None = None
) -> tuple[list[dict], list[dict]]:
    """(items, skipped): the problems dated strictly before ``train_before`` (for RL training),
    in the same prepared form as the evaluation items."""
    s = settings_of(settings)
    before = _as_datetime(s["train_before"], "train_before")
    start = _as_datetime(s["start_date"], "start_date")
    if before > start:
        raise UserError(
            f"livecodebench: train_before {before.date()} is after the evaluation window's start "
            f"{start.date()}: the training problems would overlap the evaluation"
        )
    return _select(
        load_rows(source, s["release"]),
        lambda when: when < before,
        f"not before train_before {before.date()}",
        int(s["max_decompressed_mb"]) * 1024 * 1024,
        s.get("train_limit"),
        ("train", s, f"{s['release']} before {before.date()}") if source is not None else None,
    )


def all_tests(item: dict, max_bytes: int = DEFAULTS["max_decompressed_mb"] * 1024 * 1024) -> list[dict]:
    return list(item["public_tests"]) + decode_test_cases(item["private_tests"], max_bytes)


# --- answers and comparison ---------------------------------------------------


def extract_code(text: str) -> str | None:
    """LiveCodeBench's reading of a chat model's answer (``extract_code``): the lines
    between the last two lines that contain a fence; None with fewer than two."""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return None
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def last_python_block(text: str) -> str | None:
    """The body of the last closed fenced code block labelled python (or py, python3)
    or unlabelled; without a closed one, an unclosed ```python block at the end."""
    blocks, still_open = fenced_blocks(text, ("python", "py", "python3"))
    if blocks:
        return blocks[-1]
    if still_open is not None and still_open[0] in ("python", "py", "python3"):
        return still_open[1] if still_open[1].strip() else None
    return None


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdout_matches(got: str, expected: str) -> bool:
    """LiveCodeBench's stdin/stdout comparison (see the module docstring)."""
    got_lines, want_lines = _stripped_lines(got), _stripped_lines(expected)
    if len(got_lines) != len(want_lines):
        return False
    for mine, theirs in zip(got_lines, want_lines):
        if mine == theirs:
            continue
        a, b = _decimals(mine), _decimals(theirs)
        if a is None or b is None or a != b:
            return False
    return True


def value_matches(encoded: Any, expected_json: str) -> bool:
    """A functional test: the returned value (encoded by the sandbox) against the JSON output."""
    try:
        got = decode_value(encoded)
        expected = json.loads(expected_json)
    except (ValueError, TypeError, RecursionError):
        return False
    if isinstance(got, tuple):
        got = list(got)
    try:
        return bool(got == expected)
    except RecursionError:
        return False


def judge_result(item: dict, test: dict, result) -> tuple[bool, str | None]:
    """(passed, reason) for one test's ExecResult; decided here, from the returned value."""
    if result.status == "timeout":
        return False, "timeout"
    if result.status == "killed":
        return False, "killed"
    if result.status == "error":
        return False, "error"
    if result.status == "exception":
        return False, f"exception:{result.exc_type}"
    if item["kind"] == "functional":
        return (True, None) if value_matches(result.value, test["output"]) else (False, "wrong_output")
    try:
        out = decode_value(result.value)
    except ValueError:
        return False, "error"
    if not (isinstance(out, list) and len(out) == 2 and isinstance(out[0], str) and type(out[1]) is int):
        return False, "error"
    # out[1] is the SystemExit status; LiveCodeBench's stdin runner swallows every
    # SystemExit and judges what was printed, so the status is not part of the verdict
    return (True, None) if stdout_matches(out[0], test["output"]) else (False, "wrong_output")


def sandbox_limits(settings: dict | None):
    """The sandbox limits a sample's tests run under (memory, and room for the largest
    standard output or return value read back)."""
    from ...sandbox import SandboxLimits

    s = settings_of(settings)
    return SandboxLimits(
        memory_mb=int(s["memory_mb"]),
        max_result_kb=int(s["max_output_kb"]) + 64,
        max_file_mb=max(16, int(s["max_output_kb"]) // 1024 + 1),
    )


# --- the benchmark ----------------------------------------------------------------


class LiveCodeBench(CodegenBenchmark):
    name = "livecodebench"
    title = "LiveCodeBench"
    smoke: ClassVar[str] = "livecodebench.smoke.jsonl"
    # all six files (release_latest); ``release`` picks which of them are read
    downloads: ClassVar[tuple[dict, ...]] = tuple(DOWNLOADS["livecodebench"])
    source_note = (
        f"HF dataset {HF_REPO} at {REVISION} (test.jsonl .. test6.jsonl; release_v6 = all six, "
        "release_v5 = the first five, 880 problems); evaluated on the contest-date window of config "
        "evaluation.benchmarks.livecodebench (start_date .. end_date)"
    )

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        s = settings_of(settings)
        start = _as_datetime(s["start_date"], "start_date")
        end = _as_datetime(s["end_date"], "end_date")
        if end < start:
            raise UserError(f"livecodebench: end_date {end.date()} is before start_date {start.date()}")
        after_end = end + timedelta(days=1)  # the end day counts whole
        return _select(
            load_rows(source, s["release"]),
            lambda when: start <= when < after_end,
            f"outside the evaluation window {start.date()} .. {end.date()}",
            int(s["max_decompressed_mb"]) * 1024 * 1024,
            s.get("limit"),
            ("eval", s, f"the window {start.date()} .. {end.date()} of {s['release']}")
            if source is not None
            else None,
        )

    def messages(self, item: dict, cot: bool) -> list[dict]:
        parts = [f"Problem:\n\n{item['question'].strip()}\n"]
        if item.get("starter_code", "").strip():
            parts.append(
                "Write your solution by completing this starter code; keep its class and method "
                f"signature:\n\n```python\n{item['starter_code'].rstrip()}\n```\n"
            )
        else:
            parts.append(
                "Your program must read the input from standard input and print the answer to "
                "standard output. Solve the general problem; do not hard-code the examples.\n"
            )
        if cot:
            parts.append(
                "Think the problem through step by step first, then give the final program in one "
                "```python code block."
            )
        else:
            parts.append("Reply with the complete program in one ```python code block.")
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]

    # the answer format: one ```python block (CodegenBenchmark.answer_format)
    reasoning_chars = 3000
    code_chars = 6000

    def training_items(self, source: str | None, settings: dict) -> tuple[list[dict], list[dict]]:
        """The problems before ``train_before`` (the training split of rule eval_training_split)."""
        return training_problems(source, settings)

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        """LiveCodeBench ships no solutions; our smoke problems have ours
        (``livecodebench.smoke.references.json``). Items without one are left out."""
        path = DATA / "livecodebench.smoke.references.json"
        known = json.loads(path.read_text()) if path.is_file() else {}
        answers = [Sample(i["id"], 0, fenced(known[i["id"]])) for i in items if i["id"] in known]
        return answers or None

    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
        from ...sandbox import Sandbox

        s = settings_of(((cfg or {}).get("evaluation") or {}).get("benchmarks", {}).get(self.name))
        timeout = float(s["timeout"])
        max_bytes = int(s["max_decompressed_mb"]) * 1024 * 1024
        limits = sandbox_limits(s)
        by_item: dict[str, list[Sample]] = {}
        for sample in samples:
            by_item.setdefault(sample.item_id, []).append(sample)

        def score_item(item_id: str) -> list[dict]:
            item = items[item_id]
            try:
                tests = all_tests(item, max_bytes)
            except ValueError as exc:
                raise UserError(f"livecodebench {item_id}: stored tests unreadable: {exc}") from None
            return [self._score_sample(sandbox, item, tests, sample, timeout) for sample in by_item[item_id]]

        with checked_sandbox(Sandbox(workers=max(1, int(workers)), limits=limits)) as sandbox:
            with ThreadPoolExecutor(max(1, int(workers))) as pool:
                done = list(pool.map(score_item, list(by_item)))
        rows = [row for group in done for row in group]
        order = {(s.item_id, s.index): n for n, s in enumerate(samples)}
        return sorted(rows, key=lambda r: order[(r["id"], r["sample"])])

    def _score_sample(self, sandbox, item: dict, tests: list[dict], sample: Sample, timeout: float) -> dict:
        row = {
            "id": sample.item_id,
            "sample": sample.index,
            "tests_total": len(tests),
            "compile_error": False,
        }
        code = extract_code(sample.text)
        if code is None or not code.strip():
            return {**row, "passed": False, "reason": "parse:no_code", "tests": []}
        results = []
        for n, test in enumerate(tests):
            if item["kind"] == "functional":
                args = {
                    "source": code,
                    "header": PREAMBLE,
                    "func_name": item["func_name"],
                    "lines": test["input"],
                }
                result = sandbox.run(RUNNER, "run_call", args, timeout)
            else:
                args = {"source": code, "header": PREAMBLE, "stdin_text": test["input"]}
                result = sandbox.run(RUNNER, "run_stdin", args, timeout)
            ok, reason = judge_result(item, test, result)
            entry = {"test": n, "passed": ok, "reason": reason, "seconds": round(result.seconds, 4)}
            if result.detail:
                entry["detail"] = str(result.detail)[:200]
            results.append(entry)
            if not ok:
                compile_error = n == 0 and result.status == "exception" and result.exc_type in COMPILE_ERRORS
                return {
                    **row,
                    "passed": False,
                    "reason": reason,
                    "compile_error": compile_error,
                    "tests": results,
                }
        return {**row, "passed": True, "reason": None, "tests": results}


# GASP's goalposts (paper 004, Sec. 3.2) are LiveCodeBench training-split rows; at tiny
# scale, the rows this project ships (selfplay/data/gasp_goalposts, see its README).
GOALPOST_ROWS = Path(__file__).resolve().parents[2] / "data" / "gasp_goalposts" / "rows.jsonl"


class GaspGoalposts(LiveCodeBench):
    """GASP's hard set H as a benchmark (Table 4, Figures 5 and 14: pass@100 > 0 counts a
    goalpost solved): LiveCodeBench's rows, prompt and judge, on every row of the file
    given as ``source: path`` (the goalpost filter's output), or of the shipped rows,
    dated before ``train_before`` (a row on or after it is skipped with the reason)."""

    name = "gasp_goalposts"
    title = "GASP goalposts"
    smoke: ClassVar[str] = "gasp_goalposts/rows.jsonl"  # under selfplay/data, not data/eval
    downloads: ClassVar[tuple[dict, ...]] = ()
    source_note = (
        "LiveCodeBench rows of GASP's goalposts: at paper scale the goalpost filter's output over the "
        "training split (a file, source: path); the embedded default ships eight problems written for "
        "this project (src/selfplay/data/gasp_goalposts)"
    )

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        s = {**settings_of(settings), "train_limit": (settings or {}).get("limit"), "paper_counts": {}}
        return training_problems(GOALPOST_ROWS if source is None else source, s)

    def training_items(self, source: str | None, settings: dict) -> tuple[list[dict], list[dict]]:
        """The goalposts are training-split problems: the same items."""
        return self.prepare(source, settings, {})


class GaspTrainSplit(GaspGoalposts):
    """GASP's goalpost filter (paper 004, Sec. 3.2) scores every filter model on the
    training split: the same rows, prompt and judge, from the file of training rows the
    GASP rules write (``source: path``), or the shipped goalposts (the embedded default,
    whose real problems they are)."""

    name = "gasp_train"
    title = "GASP training split"
    source_note = (
        "LiveCodeBench rows of the training split GASP's goalpost filter scores (paper 004 Sec. 3.2: "
        "before 2024.08, 601 problems), written by rule gasp_real_rows (source: path); the embedded "
        "default's are the shipped goalposts"
    )
