"""Function-call tests for Python code generation, judged in the host.

A test is one call of the program's entry point on given arguments, with the value
the benchmark's reference solution returns for them. The program runs in the
sandbox; a small trusted shim appended after it makes every call of a batch, turns
each outcome into a plain value (the returned value, or the exception's type name),
and returns the list. The sandbox encodes that list canonically (see
``selfplay.sandbox.encoding``), and the host compares each returned value with the
reference's, so a program never tells anyone whether it passed: it can only return
values, and it cannot read the expected ones (the sandbox shows it none of the
workflow's files).

Arguments travel as the source text of a tuple (``repr`` of the arguments), which the
shim evaluates inside the sandbox with nothing but ``inf``, ``nan``, ``set`` and
``frozenset`` in scope; this keeps dict order, tuples, sets and special floats exact.

Values are compared the way EvalPlus compares them (``values_match``): Python's ``==``
first (so ``2 == 2.0``, as the benchmarks' own assertions do); only when that fails, and
the task sets an ``atol`` or the expected value is a float or a non-empty flat list or
tuple of floats (then ``FLOAT_ATOL``), a second chance within tolerance: the returned
value must have the expected one's type and length, and each number must lie within
``atol + FLOAT_RTOL * |expected|`` of its counterpart (``numpy.allclose``'s test).
Unlike EvalPlus, two integers are never compared within a tolerance (EvalPlus would
pass a large integer off by one on a task with its own ``atol``), and a bool is only
ever close to a bool.

The reply comes from the sandboxed process, so it is read as hostile: a reply that is
not the shim's list of outcomes, or a value node the encoder could not have written,
becomes that call's failure ``malformed_result:<why>``, never an exception in the host.

Calling the reference on the benchmark's own tests (``record_reference``) is how the
expected values are made; it runs in the sandbox too (benchmark code is not ours).
"""

from __future__ import annotations

import ast
import cmath
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..sandbox.encoding import MalformedValue, Opaque, bounded_repr, decode_value

FLOAT_ATOL = 1e-6
FLOAT_RTOL = 1e-7
# Calls per sandbox execution: bounds the size of one reply.
BATCH = 200
ENTRY = "__selfplay_calls__"
# The status of a call whose outcome the host cannot read (see ``batch_outcomes``).
MALFORMED = "malformed_result"
RECORD_ENTRY = "__selfplay_record__"

# Appended after the program: rebuilds each call's arguments from their source text
# (inside the sandbox), makes the calls, reports outcomes.
CALLS_SHIM = """

def __selfplay_calls__(entry, calls):
    names = {"__builtins__": {}, "inf": float("inf"), "nan": float("nan"), "set": set,
             "frozenset": frozenset}
    out = []
    for source in calls:
        target = globals().get(entry)
        if target is None:
            out.append(("missing", entry))
            continue
        try:
            args = eval(source, dict(names))
            out.append(("ok", target(*args)))
        except BaseException as exc:
            out.append(("raised", type(exc).__name__))
    return out
"""

# Wraps the entry point in a recorder while the benchmark's own ``check`` runs the
# reference: each call's arguments as source text (taken before the call, in case it
# mutates them; dicts keep their order) and the reference's result.
_RECORD_SHIM = """

def __selfplay_record__(entry):
    calls = []
    target = globals()[entry]

    def recorder(*args):
        before = repr(args)
        result = target(*args)
        calls.append((before, result))
        return result

    check(recorder)
    return calls
"""


@dataclass(frozen=True)
class CallOutcome:
    status: str  # "ok", "raised", "missing", "timeout", "not_run", or the sandbox's status for the batch
    value: Any = None  # the encoded value ("ok"), the exception type ("raised"), a detail otherwise
    seconds: float | None = None  # how long the call ran (timed calls only)


def args_source(args: Iterable[Any]) -> str:
    """The source text of a tuple of positional arguments (host side, from trusted data)."""
    return repr(tuple(args))


_NAMES = {"inf": math.inf, "nan": math.nan}


def parse_args(source: str) -> tuple:
    """The arguments back from their source text, in the host, without evaluating code:
    literals, ``inf``/``nan`` and ``set(...)``/``frozenset(...)`` calls only."""

    def walk(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else +value
        if isinstance(node, ast.Name) and node.id in _NAMES:
            return _NAMES[node.id]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [walk(e) for e in node.elts]
            return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
        if isinstance(node, ast.Dict):
            return {walk(k): walk(v) for k, v in zip(node.keys, node.values)}
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("set", "frozenset")
            and len(node.args) <= 1
            and not node.keywords
        ):
            items = walk(node.args[0]) if node.args else ()
            return (set if node.func.id == "set" else frozenset)(items)
        raise ValueError(f"not a literal: {ast.dump(node)[:80]}")

    value = walk(ast.parse(source, mode="eval").body)
    if not isinstance(value, tuple):
        raise ValueError("arguments must be a tuple")
    return value


def run_calls(
    sandbox, code: str, entry: str, calls: list[Any], timeout: float, cap: float
) -> list[CallOutcome]:
    """Run ``code`` and call ``entry`` on each encoded argument list, in batches; one
    outcome per call. A batch may take ``timeout`` seconds per call, at most ``cap``
    seconds in all. A batch that does not finish (timeout, crash, unencodable result)
    gives every call of it the batch's status; later batches still run."""
    program = code + "\n\n" + CALLS_SHIM
    jobs = []
    for start in range(0, len(calls), BATCH):
        batch = calls[start : start + BATCH]
        literal = "{'entry': " + repr(entry) + ", 'calls': " + repr(list(batch)) + "}"
        jobs.append((program, ENTRY, literal, min(timeout * len(batch), cap)))
    outcomes: list[CallOutcome] = []
    sizes = [len(calls[s : s + BATCH]) for s in range(0, len(calls), BATCH)]
    for result, size in zip(sandbox.run_many(jobs), sizes):
        outcomes += batch_outcomes(result, size)
    return outcomes


# Like CALLS_SHIM, but each call has its own time limit (an interval timer interrupts
# it; a call that swallows the interruption and returns late is still over its limit),
# reports the seconds it ran, and the first call that does not return in time stops
# the rest (they cannot change a verdict that is already a failure).
TIMED_ENTRY = "__selfplay_timed_calls__"
TIMED_CALLS_SHIM = """

def __selfplay_timed_calls__(entry, calls, limits, stop_early):
    import signal as _signal
    import time as _time
    clock = _time.perf_counter
    names = {"__builtins__": {}, "inf": float("inf"), "nan": float("nan"), "set": set,
             "frozenset": frozenset}

    class _OverTime(BaseException):
        pass

    def _ring(signum, frame):
        raise _OverTime()

    target = globals().get(entry)
    out = []
    for source, limit in zip(calls, limits):
        if target is None:
            out.append(("missing", entry, 0.0))
            break
        start = clock()
        previous = _signal.signal(_signal.SIGALRM, _ring)
        try:
            args = eval(source, dict(names))
            start = clock()
            _signal.setitimer(_signal.ITIMER_REAL, limit)
            try:
                value = target(*args)
            finally:
                _signal.setitimer(_signal.ITIMER_REAL, 0)
            spent = clock() - start
            out.append(("ok", value, spent) if spent <= limit else ("timeout", None, spent))
        except _OverTime:
            out.append(("timeout", None, clock() - start))
        except BaseException as exc:
            out.append(("raised", type(exc).__name__, clock() - start))
        finally:
            _signal.signal(_signal.SIGALRM, previous)
        if stop_early and out[-1][0] != "ok":
            break
    return out
"""


def timed_job(
    code: str, entry: str, calls: list[str], limits: list[float], total: float, stop_early: bool = True
) -> tuple:
    """A sandbox job (for ``run``/``run_many``) that runs ``code`` once and calls ``entry``
    on each argument source in order, call i limited to ``limits[i]`` seconds and the
    whole run to ``total`` seconds. With ``stop_early`` the first call that raises or
    runs over its limit ends the run; read its result with :func:`timed_outcomes`."""
    if len(limits) != len(calls):
        raise ValueError(f"{len(limits)} time limits for {len(calls)} calls")
    literal = {
        "entry": entry,
        "calls": list(calls),
        "limits": [float(t) for t in limits],
        "stop_early": stop_early,
    }
    return (code + "\n\n" + TIMED_CALLS_SHIM, TIMED_ENTRY, literal, float(total))


def timed_outcomes(result, size: int, stop_early: bool = True) -> list[CallOutcome]:
    """One outcome per call of a :func:`timed_job`, with the seconds it ran; the calls
    after an early stop are ``not_run``."""
    if result.status != "ok":
        return batch_outcomes(result, size)
    items = _reply_items(result.value)
    if items is None:
        return [CallOutcome(MALFORMED, "the reply is not the shim's list of outcomes")] * size
    out = [_call_outcome(item, timed=True) for item in items]
    short = len(out) < size and (not stop_early or not out or out[-1].status == "ok")
    if len(out) > size or short:
        return [CallOutcome(MALFORMED, f"{len(out)} outcomes for {size} calls")] * size
    return out + [CallOutcome("not_run", "an earlier call failed")] * (size - len(out))


def batch_outcomes(result, size: int) -> list[CallOutcome]:
    """One outcome per call from a batch's ExecResult; a garbled reply (the program may
    have tampered with it) gives ``MALFORMED`` outcomes, never an exception."""
    if result.status != "ok":
        detail = result.exc_type if result.status == "exception" else (result.detail or result.status)
        status = "exception" if result.status == "exception" else result.status
        return [CallOutcome(status, detail)] * size
    items = _reply_items(result.value)
    if items is None:
        return [CallOutcome(MALFORMED, "the reply is not the shim's list of outcomes")] * size
    if len(items) != size:
        return [CallOutcome(MALFORMED, f"{len(items)} outcomes for {size} calls")] * size
    return [_call_outcome(item) for item in items]


def _reply_items(node: Any) -> list | None:
    """The outcome nodes of a shim's reply (an encoded list), or None when it is not one."""
    if type(node) is list and len(node) == 2 and node[0] == "list" and type(node[1]) is list:
        return node[1]
    return None


def _call_outcome(item: Any, timed: bool = False) -> CallOutcome:
    """One call's outcome from its node in a shim's reply, ``(kind, value)`` or, ``timed``,
    ``(kind, value, seconds)``; the value of an ``ok`` one stays encoded, but only once it
    is known to decode. Anything else is a ``MALFORMED`` outcome."""
    fields = 3 if timed else 2
    if not (
        type(item) is list
        and len(item) == 2
        and item[0] == "tuple"
        and type(item[1]) is list
        and len(item[1]) == fields
    ):
        return CallOutcome(MALFORMED, f"an outcome is not a tuple of {fields} fields")
    kind, payload = item[1][:2]
    seconds = None
    try:
        value = decode_value(payload)
        if timed:
            seconds = decode_value(item[1][2])
    except MalformedValue as exc:
        return CallOutcome(MALFORMED, str(exc))
    if timed and not (type(seconds) is float and 0 <= seconds < math.inf):
        return CallOutcome(MALFORMED, "an outcome's time is not a number of seconds")
    if kind == ["str", "ok"]:
        return CallOutcome("ok", payload, seconds)
    if kind in (["str", "raised"], ["str", "missing"]) and type(value) is str:
        return CallOutcome(kind[1], value[:200], seconds)
    if timed and kind == ["str", "timeout"] and value is None:
        return CallOutcome("timeout", None, seconds)
    return CallOutcome(
        MALFORMED, "an outcome is neither a value, an exception, a timeout nor a missing function"
    )


def record_reference(
    sandbox, program: str, entry: str, timeout: float
) -> tuple[list[tuple[Any, Any]] | None, str | None]:
    """The calls the benchmark's ``check(candidate)`` (defined in ``program``, after the
    reference solution) makes, with the reference's results, as encoded (args, result)
    pairs; (None, reason) when it does not run cleanly."""
    result = sandbox.run(program + "\n\n" + _RECORD_SHIM, RECORD_ENTRY, {"entry": entry}, timeout)
    if result.status != "ok":
        return None, f"reference check {result.status}: {result.exc_type or result.detail or ''}".strip()
    pairs = []
    try:  # benchmark code produced this reply: read it as warily as a solution's
        for item in result.value[1]:
            args_node, result_node = item[1]
            decode_value(result_node)
            pairs.append((decode_value(args_node), result_node))
    except (MalformedValue, TypeError, LookupError, ValueError) as exc:
        return None, f"reference check returned a malformed record ({type(exc).__name__})"
    return pairs, None


def same_value(got: Any, expected: Any, atol: float | None = None) -> bool:
    """Whether an encoded returned value equals an encoded expected one (host side, see
    the module docstring); False, never an exception, when either is malformed."""
    return mismatch(got, expected, atol) is None


def mismatch(got: Any, expected: Any, atol: float | None = None) -> str | None:
    """None when the encoded returned value ``got`` matches the encoded ``expected``, else
    why not: ``wrong_output``, ``malformed_result:..`` or ``malformed_expected:..``."""
    try:
        # the same encoding is the same value, unless it holds a nan: nan == nan is False
        # in Python, and in EvalPlus's and LiveCodeBench's comparisons
        if got == expected and not _holds_nan(expected):
            return None
    except RecursionError:
        pass
    try:
        g = decode_value(got)
    except MalformedValue as exc:
        return f"{MALFORMED}:{exc}"
    try:
        e = decode_value(expected)
    except MalformedValue as exc:
        return f"malformed_expected:{exc}"
    if isinstance(g, Opaque) or isinstance(e, Opaque):
        return "wrong_output"
    return None if values_match(g, e, atol) else "wrong_output"


def _holds_nan(node: Any) -> bool:
    """Whether an encoded value holds a float nan (or a complex with a nan part)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            if (
                len(item) == 2
                and item[0] in ("float", "complex")
                and isinstance(item[1], str)
                and "nan" in item[1].lower()
            ):
                return True
            stack.extend(item)
    return False


def values_match(got: Any, expected: Any, atol: float | None = None) -> bool:
    """EvalPlus's verdict on decoded values (see the module docstring): ``==``, then, where
    a tolerance applies, the same type and length and every number within it."""
    try:
        if got == expected:
            return True
    except Exception:  # noqa: BLE001 - e.g. RecursionError on a deeply nested value
        return False
    tol = float(atol) if atol else 0.0
    if tol == 0.0 and floats_only(expected):
        tol = FLOAT_ATOL
    if tol == 0.0 or type(got) is not type(expected):
        return False
    try:
        return _near(got, expected, tol)
    except RecursionError:
        return False


def floats_only(value: Any) -> bool:
    """A float, or a non-empty list or tuple of nothing but floats (EvalPlus's test for
    applying its default tolerance)."""
    if type(value) is float:
        return True
    return type(value) in (list, tuple) and len(value) > 0 and all(type(v) is float for v in value)


def _near(got: Any, expected: Any, tol: float) -> bool:
    """Element by element, what ``numpy.allclose(got, expected, FLOAT_RTOL, tol)`` accepts,
    except that int against int and bool against anything must be equal."""
    if type(got) is bool or type(expected) is bool:
        return type(got) is type(expected) and got == expected
    numbers = (int, float, complex)
    if type(got) in numbers and type(expected) in numbers:
        if type(got) is int and type(expected) is int:
            return got == expected
        try:
            if not (cmath.isfinite(got) and cmath.isfinite(expected)):
                return got == expected  # inf matches only itself; nan nothing
            return abs(got - expected) <= tol + FLOAT_RTOL * abs(expected)
        except OverflowError:  # an int beyond the float range is close to no float
            return False
    if type(got) in (list, tuple) and type(expected) in (list, tuple):
        return len(got) == len(expected) and all(_near(g, e, tol) for g, e in zip(got, expected))
    return False  # text, None, dicts, sets and opaque objects have no tolerance


def judge(
    outcomes: list[CallOutcome], tests: list[dict], atol: float | None = None, oracle=None
) -> tuple[bool, str | None, list[dict]]:
    """(passed, reason, per-test rows) for one sample: every call must return (not raise)
    a value equal to the expected one (or accepted by ``oracle(test, value)`` when the
    benchmark's answer is not unique)."""
    rows, reason = [], None
    for test, out in zip(tests, outcomes):
        if out.status != "ok":
            why = _failure_reason(out)
        elif oracle is not None:
            why = _oracle_says(oracle, test, out.value)
        else:
            why = mismatch(out.value, test["expected"], atol)
        ok = why is None
        rows.append({"ok": ok, "why": why})
        if not ok and reason is None:
            reason = why
    return reason is None, reason, rows


def _failure_reason(out: CallOutcome) -> str:
    """The reason of an outcome that is not a returned value, in one bounded line."""
    if type(out.status) is not str:
        return f"{MALFORMED}:an outcome's status is a {type(out.status).__name__}"
    detail = out.value if out.value is None or type(out.value) is str else bounded_repr(out.value, 120)
    if out.status == "raised":
        return f"exception:{detail}"
    if out.status == "missing":
        return "missing_entry_point"
    if not out.status.strip():
        return f"{MALFORMED}:an outcome without a status"
    return f"{out.status}:{detail}" if detail else out.status


def _oracle_says(oracle, test: dict, value: Any) -> str | None:
    """An oracle's verdict on an encoded value as a reason; a value it cannot read (it
    raises on it) fails the call instead of the job."""
    try:
        decode_value(value)  # the oracle may trust what it is given: make sure it is readable
    except MalformedValue as exc:
        return f"{MALFORMED}:{exc}"
    try:
        return None if oracle(test, value) else "wrong_output"
    except (ArithmeticError, LookupError, TypeError, ValueError, RecursionError) as exc:
        return f"oracle_raised:{type(exc).__name__}"
