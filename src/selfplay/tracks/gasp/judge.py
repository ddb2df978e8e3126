"""GASP tasks and the judging of student answers (paper 004, Sec. 3.3.2 and App. D).

A task is a valid proposal with its five I/O pairs (``validity``), two shown and three
private. The student sees it in one of three forms, and every answer is judged without
evaluating model text in the host:

* induction (question + shown pairs -> a program defining ``f``): the student's program
  runs in the sandbox on the private inputs; the host compares each encoded value with
  the stored output (``python_calls.judge``: ``==`` on decoded plain values, floats
  within EvalPlus's tolerance). Pass rule ``all_private`` (default, the paper's private
  tests) or ``any``. The expected outputs never enter the sandboxed process, so a
  program cannot learn or fake them: an object whose ``__eq__`` lies comes back as an
  opaque object and matches nothing.
* deduction (f + one input -> the output): the answer literal is read in the host by
  the literal reader (``execution.read_literal``: ``python_calls.parse_args`` on
  ``(<answer>,)``), encoded like a sandbox value and compared with the stored output.
  No sandbox, no ``eval``.
* abduction (f + one output -> arguments): the answer, the source of an argument tuple
  (``(6, 8)``, as ``parse.py`` writes it), is read the same way; the TASK's ``f`` (never anything the student wrote) runs on them in the
  sandbox, and its value is compared with the target output. Any arguments giving the
  output are right.

Answers arrive parsed (``parse.py``) as ``(answer_text | None, parse_reason | None)``;
each verdict is ``{"format_ok", "correct", "reason"}``. A format error (``format_ok``
False) is: no answer (the parser's reason, or ``no_answer``), an answer longer than
``max_answer_chars``, a program that does not parse or defines no top-level ``f``
(``syntax_error`` / ``no_f``), or a deduction/abduction answer that is not plain
literals (``not_literal``). A well-formed wrong answer's reason is that of the first
failing call: ``wrong_output``, ``exception:<type>``, ``timeout[:..]``,
``missing_entry_point``, ``killed:..``, ``error:..``, ``malformed_result:..``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...evaluate.python_calls import judge as judge_calls
from ...evaluate.python_calls import mismatch
from .execution import (
    CallJob,
    NotALiteral,
    args_text,
    defines_f,
    host_encoding,
    read_call_args,
    read_literal,
    run_jobs,
    seconds,
)
from .methods import TEACHER_PHASES
from .sections import from_section

PASS_RULES = ("all_private", "any")
KINDS = TEACHER_PHASES  # a task's kind: the teacher phase that accepted it
AXES = ("io", "f")
# Longest stored input text a task may hold (tasks are re-read from files).
_MAX_TASK_INPUT = 100_000


@dataclass(frozen=True)
class JudgeSettings:
    """How answers are judged (config ``gasp.judge``).

    timeout_s         seconds each call of a student's program (or of the task's ``f`` on
                      an abduction answer) may take
    run_timeout_s     seconds one program's run (import and all its calls) may take at most
    pass_rule         ``all_private``: an induction answer passes when every private pair
                      matches (default; PASSRATE's k counts those); ``any``: one is enough
    max_answer_chars  longest answer judged (longer: a format error)
    dedupe            run a program written twice for one task once (same text, same
                      inputs, same seeds: the same verdict)
    workers           sandbox workers for the judging pool
    """

    timeout_s: float = 10.0
    run_timeout_s: float = 20.0
    pass_rule: str = "all_private"
    max_answer_chars: int = 20_000
    dedupe: bool = True
    workers: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "timeout_s", seconds("timeout_s", self.timeout_s, 600))
        object.__setattr__(self, "run_timeout_s", seconds("run_timeout_s", self.run_timeout_s, 3600))
        if self.pass_rule not in PASS_RULES:
            raise ValueError(f"pass_rule: one of {', '.join(PASS_RULES)}, not {self.pass_rule!r}")
        for name in ("max_answer_chars", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: must be an integer >= 1, not {value!r}")
        if not isinstance(self.dedupe, bool):
            raise ValueError(f"dedupe: must be true or false, not {self.dedupe!r}")

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None, prefix: str = "gasp.judge") -> JudgeSettings:
        """Config ``section`` over the defaults; an unknown key or bad value is a one-line UserError."""
        return from_section(cls, section, prefix)


# ---------------------------------------------------------------- tasks


def make_task(
    proposal: Mapping[str, Any],
    verdict: Any,
    id: str,
    kind: str,
    axis: str,
    parent: str,
    iteration: int,
    shown: int = 2,
) -> dict[str, Any]:
    """The task of a valid proposal: its question and code, the verdict's pairs, the
    first ``shown`` pairs shown and the rest private."""
    if not getattr(verdict, "valid", False) or not verdict.pairs:
        raise ValueError(f"task {id}: only a valid proposal with pairs becomes a task")
    if kind not in KINDS:
        raise ValueError(f"task {id}: kind must be one of {KINDS}, not {kind!r}")
    if axis not in AXES:
        raise ValueError(f"task {id}: axis must be one of {AXES}, not {axis!r}")
    pairs = [dict(pair) for pair in verdict.pairs]
    if not 0 < shown < len(pairs):
        raise ValueError(
            f"task {id}: shown must leave at least one of {len(pairs)} pairs private, not {shown}"
        )
    return {
        "id": str(id),
        "kind": kind,
        "axis": axis,
        "parent": str(parent),
        "iteration": int(iteration),
        "question": proposal["question"],
        "code": proposal["code"],
        "pairs": pairs,
        "shown": list(range(shown)),
        "private": list(range(shown, len(pairs))),
    }


def _args(task: Mapping[str, Any], index: int) -> tuple:
    """The argument values of a task's pair, re-read from its stored text."""
    return read_call_args(task["pairs"][index]["input"], _MAX_TASK_INPUT)


# ---------------------------------------------------------------- answers


def _verdict(format_ok: bool, correct: bool, reason: str | None) -> dict[str, Any]:
    return {"format_ok": format_ok, "correct": correct, "reason": reason}


def _text(answer: Any, settings: JudgeSettings) -> tuple[str | None, dict[str, Any] | None]:
    """(answer text, None), or (None, the format-error verdict) for a missing or overlong one.
    An answer is ``(text | None, parse_reason | None)``; a bare string or None is accepted."""
    if isinstance(answer, (tuple, list)) and len(answer) == 2:
        text, why = answer
    else:
        text, why = answer, None
    if text is None:
        return None, _verdict(False, False, str(why) if why else "no_answer")
    if not isinstance(text, str):
        return None, _verdict(False, False, "no_answer")
    if len(text) > settings.max_answer_chars:
        return None, _verdict(False, False, "too_long")
    return text, None


def judge_deduction(
    task: Mapping[str, Any],
    pair_index: int,
    literals: Sequence[Any],
    settings: JudgeSettings = JudgeSettings(),
) -> list[dict[str, Any]]:
    """One verdict per answer: is the literal the output of pair ``pair_index``?"""
    expected = task["pairs"][pair_index]["output"]
    out = []
    for answer in literals:
        text, refused = _text(answer, settings)
        if refused:
            out.append(refused)
            continue
        try:
            encoded = host_encoding(read_literal(text, settings.max_answer_chars))
        except NotALiteral:
            out.append(_verdict(False, False, "not_literal"))
            continue
        why = mismatch(encoded, expected)
        out.append(_verdict(True, why is None, why))
    return out


def judge_abduction(
    task: Mapping[str, Any],
    pair_index: int,
    arg_sources: Sequence[Any],
    sandbox,
    settings: JudgeSettings = JudgeSettings(),
) -> list[dict[str, Any]]:
    """One verdict per answer: does the task's ``f`` on these arguments give the output of
    pair ``pair_index``? The task's own code runs, in the sandbox; each distinct argument
    list once, all of them in one ``run_many``."""
    expected = task["pairs"][pair_index]["output"]
    out: list[Any] = []
    distinct: dict[str, int] = {}
    calls: list[tuple] = []
    for answer in arg_sources:
        text, refused = _text(answer, settings)
        if refused:
            out.append(refused)
            continue
        try:
            args = read_call_args(text, settings.max_answer_chars)
            key = args_text(args)  # also refuses an integer too long to write back
        except (NotALiteral, ValueError):
            out.append(_verdict(False, False, "not_literal"))
            continue
        if key not in distinct:
            distinct[key] = len(calls)
            calls.append(args)
        out.append(distinct[key])
    jobs = [CallJob(task["code"], [args]) for args in calls]
    results = run_jobs(sandbox, jobs, settings.timeout_s, settings.run_timeout_s)
    verdicts = []
    for answer in out:
        if isinstance(answer, dict):
            verdicts.append(answer)
            continue
        passed, reason, _ = judge_calls(results[answer], [{"expected": expected}])
        verdicts.append(_verdict(True, passed, reason))
    return verdicts


def judge_induction(
    task: Mapping[str, Any], codes: Sequence[Any], sandbox, settings: JudgeSettings = JudgeSettings()
) -> list[dict[str, Any]]:
    """One verdict per program: does it pass the task's private pairs (``pass_rule``)?"""
    return pass_counts([(task, codes)], sandbox, settings)[0][2]


def pass_count(
    task: Mapping[str, Any], codes: Sequence[Any], sandbox, settings: JudgeSettings = JudgeSettings()
) -> tuple[int, int, list[dict[str, Any]]]:
    """PASSRATE's count for one task: (programs passing, programs, their verdicts)."""
    return pass_counts([(task, codes)], sandbox, settings)[0]


def pass_counts(
    tasks_and_codes: Sequence[tuple[Mapping[str, Any], Sequence[Any]]],
    sandbox,
    settings: JudgeSettings = JudgeSettings(),
) -> list[tuple[int, int, list[dict[str, Any]]]]:
    """:func:`pass_count` for many tasks: every (task, program) that parses goes to the
    sandbox in one ``run_many`` (one process per program, calling it on the task's
    private inputs; with ``pass_rule`` ``all_private`` the first failing call ends it)."""
    stop_early = settings.pass_rule == "all_private"
    jobs: list[CallJob] = []
    tests: list[list[dict[str, Any]]] = []
    places: list[list[Any]] = []
    for task, codes in tasks_and_codes:
        private = list(task["private"])
        calls = [_args(task, index) for index in private]
        expected = [{"expected": task["pairs"][index]["output"]} for index in private]
        seen: dict[str, int] = {}
        row: list[Any] = []
        for answer in codes:
            text, refused = _text(answer, settings)
            if refused is None:
                why = defines_f(text)
                refused = _verdict(False, False, why) if why else None
            if refused is not None:
                row.append(refused)
                continue
            if settings.dedupe and text in seen:
                row.append(seen[text])
                continue
            seen[text] = len(jobs)
            row.append(len(jobs))
            jobs.append(CallJob(text, calls, stop_early=stop_early))
            tests.append(expected)
        places.append(row)
    outcomes = run_jobs(sandbox, jobs, settings.timeout_s, settings.run_timeout_s)
    judged = []
    for job_outcomes, job_tests in zip(outcomes, tests):
        passed, reason, rows = judge_calls(job_outcomes, job_tests)
        if settings.pass_rule == "any":
            passed = any(r["ok"] for r in rows)
            reason = None if passed else reason
        judged.append(_verdict(True, passed, reason))
    results = []
    for row in places:
        verdicts = [dict(judged[item]) if isinstance(item, int) else item for item in row]
        results.append((sum(v["correct"] for v in verdicts), len(verdicts), verdicts))
    return results
