"""The pass matrix of EvolveCoder (paper 002, Sec. 2.3): every candidate solution against
every assert-based test, in the sandbox, with a reason per cell.

Solutions and tests are both model-written, so neither decides a verdict where the
other could touch it. Each test is first read into a plan (``asserts.plan_assert``),
then three kinds of sandboxed processes do the work:

1. *preparing* (one process per test, no solution in it): the test's argument
   expressions are evaluated and sent back as literal text (``repr`` of the argument
   tuple, accepted only when ``evaluate.python_calls.parse_args`` reads it back as
   plain literals), and its other expressions (expected value, tolerances) as
   canonically encoded values. A test whose expressions raise, time out or yield a
   value that is not plain data is *malformed*: it judges no one;
2. *calling* (the solution's process): the program plus the call shim of
   ``evaluate.python_calls`` computes the entry function on those arguments and
   returns the values, canonically encoded (an object whose ``__eq__`` always says
   yes comes back as an opaque object, never as the value it claims to equal). The
   expected values never enter this process, so nothing in it can know them;
3. *judging*: simple shapes (``==``, ``is``, truthiness, ``abs(..) < eps``,
   ``isclose``) are decided in the host on the decoded values; any other assert
   expression is evaluated on them in a process that never saw the solution.

A call that raises (``SystemExit`` and ``KeyboardInterrupt`` included), exits, crashes,
times out or returns something the host cannot read fails the test; so does a reply the
solution's process tampered with (a value node the encoder could not have written, an
unhashable set member, text where a number belongs): ``malformed_result:<why>``, and the
matrix goes on with the next cell.

Where an honest solution could be judged otherwise than by running the assert beside
it: a returned object of a type the encoding does not rebuild (a dataclass, ``Fraction``,
``deque``) fails whatever its ``__eq__`` would say (``not_plain_value``); a general check
sees dicts and sets rebuilt in a canonical order, not the order the solution built them
in; arguments must come out as plain literals (a ``Counter`` argument makes the test
malformed); test expressions see the builtins and ``asserts.TEST_NAMES``, not the
solution's globals.

Two ways to run step 2, with the same verdicts: ``load_once`` (default) imports each
solution once and forks every test's call from that loaded process
(``Sandbox.run_each``); ``one_at_a_time`` gives every (solution, test) a fresh sandboxed
execution (``Sandbox.run``). Either way a test's time limit covers the solution's import
and the test's calls together, and ``random`` and the hash seed are fixed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ...evaluate.python_calls import CALLS_SHIM, ENTRY, batch_outcomes, judge, parse_args
from ...sandbox.encoding import MalformedValue, Opaque, decode_value
from .asserts import PLACEHOLDER, TEST_BARE, TEST_MODULES, AssertPlan, detect_entry, plan_assert

LOAD_ONCE = "load_once"
ONE_AT_A_TIME = "one_at_a_time"
MODES = (LOAD_ONCE, ONE_AT_A_TIME)
MALFORMED = "malformed_test"
PREPARE = "__evolve_prepare__"
CHECK = "__evolve_check__"

# Trusted code run in the sandbox for steps 1 and 3: it evaluates test expressions,
# never a solution.
_EVALUATOR = f"""
import builtins, sys
import {", ".join(TEST_MODULES)}


def __evolve_names__():
    names = {{"__builtins__": builtins}}
    names.update((name, sys.modules[name]) for name in {TEST_MODULES!r})
    names.update({{{", ".join(f"{name!r}: {value}" for name, value in TEST_BARE.items())}}})
    return names


def {PREPARE}(calls, sides):
    sys.set_int_max_str_digits(0)
    names = __evolve_names__()
    args = [repr(eval(source, names)) for source in calls]
    return args, [eval(source, names) for source in sides]


def {CHECK}(check, values):
    plain = {{"__builtins__": {{}}, "inf": float("inf"), "nan": float("nan"), "set": set, "frozenset": frozenset,
             "bytearray": bytearray}}
    names = __evolve_names__()
    for number, value in enumerate(eval(values, plain)):
        names[{PLACEHOLDER!r}.format(number)] = value
    return bool(eval(check, names))
"""


@dataclass
class PassMatrix:
    """``passed[s][t]``: solution ``s`` passes test ``t``; ``reasons[s][t]`` says why not
    (None when it passes): ``wrong_output``, ``exception:<type>``, ``missing_entry_point``,
    ``timeout:..``, ``killed:..``, ``error:..``, ``malformed_result:..``, ``not_plain_value:<type>``,
    ``check_raised:<type>``, ``check_failed:<status>``. ``kinds[t]`` is how test ``t`` was
    read (``asserts.KINDS``; ``general`` ones are judged in the sandbox). A test with
    ``malformed[t]`` set (the reason) judges no one: its cells are False with reason
    ``malformed_test`` and callers drop the column (``usable``)."""

    entry: str | None
    mode: str
    time_limit: float
    tests: list[str]
    kinds: list[str | None]
    malformed: list[str | None]
    passed: list[list[bool]]
    reasons: list[list[str | None]]

    @property
    def usable(self) -> list[bool]:
        return [why is None for why in self.malformed]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PassMatrix:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PassMatrix:
        return cls.from_dict(json.loads(text))


@dataclass
class _Prepared:
    """A usable test's arguments (literal text per call) and decoded side values."""

    plan: AssertPlan
    calls: list[str]
    sides: list[Any]


def pass_matrix(
    solutions: Sequence[str],
    tests: Sequence[str],
    entry: str | None,
    sandbox,
    time_limit: float,
    mode: str = LOAD_ONCE,
) -> PassMatrix:
    """Judge every solution against every test (see the module docstring); ``entry`` None:
    the function the tests call (``asserts.detect_entry``)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    entry = entry or detect_entry(tests, solutions)
    plans = [
        plan_assert(test, entry) if entry else AssertPlan(str(test), problem="no_entry_function")
        for test in tests
    ]
    prepared, malformed = _prepare(plans, sandbox, time_limit, mode)
    cells = _cells(solutions, entry, prepared, sandbox, time_limit, mode)
    return PassMatrix(
        entry,
        mode,
        float(time_limit),
        [p.text for p in plans],
        [p.kind for p in plans],
        malformed,
        [[ok for ok, _ in row] for row in cells],
        [[why for _, why in row] for row in cells],
    )


def _cells(
    solutions: Sequence[str],
    entry: str | None,
    prepared: list[_Prepared | None],
    sandbox,
    time_limit: float,
    mode: str,
) -> list[list[tuple[bool, str | None]]]:
    """Every cell's (passed, reason): each solution's calls on the usable tests, then the
    general checks, each distinct one once."""
    live = [t for t, ready in enumerate(prepared) if ready is not None]
    jobs = [
        (
            code + "\n\n" + CALLS_SHIM,
            ENTRY,
            [{"entry": entry, "calls": prepared[t].calls} for t in live],
            time_limit,
        )
        for code in solutions
    ]
    results = _execute(sandbox, jobs, mode) if live else [[] for _ in solutions]
    cells = [[(False, MALFORMED)] * len(prepared) for _ in solutions]
    pending: dict[tuple[int, str], list[tuple[int, int]]] = {}
    for s, row in enumerate(results):
        for t, result in zip(live, row):
            verdict = _verdict(prepared[t], batch_outcomes(result, len(prepared[t].calls)))
            if isinstance(verdict, str):
                pending.setdefault((t, verdict), []).append((s, t))
            else:
                cells[s][t] = verdict
    for verdict, places in zip(_checks(pending, prepared, sandbox, time_limit, mode), pending.values()):
        for s, t in places:
            cells[s][t] = verdict
    return cells


def _prepare(
    plans: list[AssertPlan], sandbox, time_limit: float, mode: str
) -> tuple[list[_Prepared | None], list[str | None]]:
    """Evaluate every usable test's expressions in processes without a solution; the
    prepared tests (None where malformed) and each test's problem."""
    problems = [plan.problem for plan in plans]
    todo = [t for t, plan in enumerate(plans) if plan.problem is None]
    inputs = [{"calls": list(plans[t].calls), "sides": list(plans[t].sides)} for t in todo]
    prepared: list[_Prepared | None] = [None] * len(plans)
    for t, result in zip(todo, _spread(sandbox, _EVALUATOR, PREPARE, inputs, time_limit, mode)):
        ready, problems[t] = _read_prepared(plans[t], result)
        prepared[t] = ready
    return prepared, problems


def _read_prepared(plan: AssertPlan, result) -> tuple[_Prepared | None, str | None]:
    """The prepared test, or why it is malformed, from the evaluator's result."""
    if result.status != "ok":
        what = f"{result.exc_type}: {result.exc_message}" if result.status == "exception" else result.detail
        return None, f"test_{result.status}: {what}"
    try:  # the test's own code ran in that process and may have bent what it returns
        reply = decode_value(result.value)
    except MalformedValue as exc:
        return None, f"test_garbled: {exc}"
    if not (
        type(reply) is tuple
        and len(reply) == 2
        and type(reply[0]) is list
        and type(reply[1]) is list
        and all(type(text) is str for text in reply[0])
    ):
        return None, "test_garbled: its evaluation did not return arguments and values"
    calls, values = reply
    if len(calls) != len(plan.calls) or len(values) != len(plan.sides):
        return None, "test_garbled: its evaluation did not return arguments and values"
    for text in calls:
        try:
            parse_args(text)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            return None, f"arguments_not_literal: {text[:120]}"
    odd = _opaque_in(values)
    if odd is not None:
        return None, f"expected_not_plain: a {odd.type_name} cannot be compared outside the solution"
    return _Prepared(plan, calls, values), None


def _verdict(ready: _Prepared, outcomes) -> tuple[bool, str | None] | str:
    """The cell's (passed, reason), or the literal text of the returned values when a
    general check must decide in the sandbox."""
    # judge turns a value the host cannot read into a failure (malformed_result:..), so
    # the values decoded below are known to decode
    returned, why, _ = judge(outcomes, [{}] * len(outcomes), oracle=lambda test, value: True)
    if not returned:
        return False, why
    values = [decode_value(outcome.value) for outcome in outcomes]
    odd = _opaque_in(values)
    if odd is not None:
        return False, f"not_plain_value:{odd.type_name}"
    if ready.plan.kind == "general":
        try:
            return repr(tuple(values))
        except ValueError:  # an int with more digits than repr writes
            return False, "check_failed:value too large to pass on"
    try:
        return (True, None) if ready.plan.holds(values, ready.sides) else (False, "wrong_output")
    except Exception as exc:  # noqa: BLE001 - e.g. abs() of a str: the assert would raise it
        return False, f"check_raised:{type(exc).__name__}"


def _checks(
    pending: dict[tuple[int, str], list],
    prepared: list[_Prepared | None],
    sandbox,
    time_limit: float,
    mode: str,
) -> list[tuple[bool, str | None]]:
    """Evaluate each distinct (general test, returned values) in a process without a solution."""
    inputs = [{"check": prepared[t].plan.check, "values": values} for t, values in pending]
    verdicts = []
    for result in _spread(sandbox, _EVALUATOR, CHECK, inputs, time_limit, mode):
        if result.status == "ok":
            verdicts.append((True, None) if result.value == ["bool", True] else (False, "wrong_output"))
        elif result.status == "exception":
            verdicts.append((False, f"check_raised:{result.exc_type}"))
        else:
            verdicts.append((False, f"check_failed:{result.status}"))
    return verdicts


def _opaque_in(value: Any) -> Opaque | None:
    """The first value of a type the encoding does not rebuild, anywhere inside ``value``."""
    if isinstance(value, Opaque):
        return value
    if isinstance(value, dict):
        value = [item for pair in value.items() for item in pair]
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            found = _opaque_in(item)
            if found is not None:
                return found
    return None


def _spread(sandbox, code: str, entry: str, inputs: list[dict], time_limit: float, mode: str) -> list:
    """One result per input of a trusted program, the inputs shared out over the workers."""
    parts = max(1, min(sandbox.workers, len(inputs)))
    size = -(-len(inputs) // parts) if inputs else 0
    jobs = [(code, entry, inputs[i : i + size], time_limit) for i in range(0, len(inputs), size or 1)]
    return [result for row in _execute(sandbox, jobs, mode) for result in row]


def _execute(sandbox, jobs: list[tuple[str, str, list, float]], mode: str) -> list[list]:
    """Results per job and input: ``run_each`` per job, or one ``run`` per input."""
    if mode == LOAD_ONCE:
        return sandbox.run_each_many(jobs)
    flat = sandbox.run_many(
        [(code, entry, literal, timeout) for code, entry, inputs, timeout in jobs for literal in inputs]
    )
    out, at = [], 0
    for _, _, inputs, _ in jobs:
        out.append(flat[at : at + len(inputs)])
        at += len(inputs)
    return out
