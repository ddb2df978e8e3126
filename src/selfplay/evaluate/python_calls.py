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
``frozenset`` in scope; this keeps dict order, tuples, sets and special floats exact. Values are compared as Python's ``==`` compares them (so ``2 == 2.0``, as
the benchmarks' own assertions do), and when the expected value holds floats, within
an absolute tolerance (the item's ``atol``, else ``FLOAT_ATOL``) and a relative one of
``FLOAT_RTOL``.

Calling the reference on the benchmark's own tests (``record_reference``) is how the
expected values are made; it runs in the sandbox too (benchmark code is not ours).
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Iterable

from ..sandbox.encoding import Opaque, decode_value

FLOAT_ATOL = 1e-6
FLOAT_RTOL = 1e-7
# Calls per sandbox execution: bounds the size of one reply.
BATCH = 200
ENTRY = "__selfplay_calls__"
RECORD_ENTRY = "__selfplay_record__"

# Appended after the program: rebuilds each call's arguments from their source text
# (inside the sandbox), makes the calls, reports outcomes.
CALLS_SHIM = '''

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
'''

# Wraps the entry point in a recorder while the benchmark's own ``check`` runs the
# reference: each call's arguments as source text (taken before the call, in case it
# mutates them; dicts keep their order) and the reference's result.
_RECORD_SHIM = '''

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
'''


@dataclass(frozen=True)
class CallOutcome:
    status: str          # "ok", "raised", "missing", or the sandbox's status for the batch
    value: Any = None    # the encoded value ("ok"), the exception type ("raised"), a detail otherwise


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
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset") \
                and len(node.args) <= 1 and not node.keywords:
            items = walk(node.args[0]) if node.args else ()
            return (set if node.func.id == "set" else frozenset)(items)
        raise ValueError(f"not a literal: {ast.dump(node)[:80]}")

    value = walk(ast.parse(source, mode="eval").body)
    if not isinstance(value, tuple):
        raise ValueError("arguments must be a tuple")
    return value


def run_calls(sandbox, code: str, entry: str, calls: list[Any], timeout: float, cap: float) -> list[CallOutcome]:
    """Run ``code`` and call ``entry`` on each encoded argument list, in batches; one
    outcome per call. A batch may take ``timeout`` seconds per call, at most ``cap``
    seconds in all. A batch that does not finish (timeout, crash, unencodable result)
    gives every call of it the batch's status; later batches still run."""
    program = code + "\n\n" + CALLS_SHIM
    jobs = []
    for start in range(0, len(calls), BATCH):
        batch = calls[start:start + BATCH]
        literal = "{'entry': " + repr(entry) + ", 'calls': " + repr(list(batch)) + "}"
        jobs.append((program, ENTRY, literal, min(timeout * len(batch), cap)))
    outcomes: list[CallOutcome] = []
    sizes = [len(calls[s:s + BATCH]) for s in range(0, len(calls), BATCH)]
    for result, size in zip(sandbox.run_many(jobs), sizes):
        outcomes += batch_outcomes(result, size)
    return outcomes


def batch_outcomes(result, size: int) -> list[CallOutcome]:
    if result.status != "ok":
        detail = result.exc_type if result.status == "exception" else (result.detail or result.status)
        status = "exception" if result.status == "exception" else result.status
        return [CallOutcome(status, detail)] * size
    node = result.value
    # ["list", [["tuple", [["str", "ok"], value]], ...]]
    try:
        items = node[1] if node[0] == "list" else None
        out = []
        for item in items or []:
            kind = item[1][0][1]
            out.append(CallOutcome(kind, item[1][1] if kind == "ok" else decode_value(item[1][1])))
    except (TypeError, IndexError, ValueError):
        return [CallOutcome("error", "the shim's reply was malformed")] * size
    if len(out) != size:
        return [CallOutcome("error", f"{len(out)} outcomes for {size} calls")] * size
    return out


def record_reference(sandbox, program: str, entry: str, timeout: float) -> tuple[list[tuple[Any, Any]] | None, str | None]:
    """The calls the benchmark's ``check(candidate)`` (defined in ``program``, after the
    reference solution) makes, with the reference's results, as encoded (args, result)
    pairs; (None, reason) when it does not run cleanly."""
    result = sandbox.run(program + "\n\n" + _RECORD_SHIM, RECORD_ENTRY, {"entry": entry}, timeout)
    if result.status != "ok":
        return None, f"reference check {result.status}: {result.exc_type or result.detail or ''}".strip()
    pairs = []
    for item in result.value[1]:
        args_node, result_node = item[1]
        pairs.append((decode_value(args_node), result_node))
    return pairs, None


def same_value(got: Any, expected: Any, atol: float | None = None) -> bool:
    """Whether an encoded returned value equals an encoded expected one (host side)."""
    if got == expected:
        return True
    try:
        g, e = decode_value(got), decode_value(expected)
    except (ValueError, TypeError):
        return False
    if isinstance(g, Opaque) or isinstance(e, Opaque):
        return False
    try:
        if g == e:
            return True
    except Exception:  # noqa: BLE001 - e.g. comparing nested sets of unhashables cannot happen, but be safe
        return False
    return _close(g, e, FLOAT_ATOL if not atol else float(atol))


def _close(g: Any, e: Any, atol: float) -> bool:
    if isinstance(e, bool) or isinstance(g, bool):
        return g == e
    if isinstance(e, (int, float)) and isinstance(g, (int, float)):
        if isinstance(e, float) and math.isnan(e):
            return isinstance(g, float) and math.isnan(g)
        return math.isclose(g, e, rel_tol=FLOAT_RTOL, abs_tol=atol)
    if isinstance(e, (list, tuple)) and type(g) is type(e) and len(g) == len(e):
        return all(_close(a, b, atol) for a, b in zip(g, e))
    if isinstance(e, dict) and isinstance(g, dict) and g.keys() == e.keys():
        return all(_close(g[k], e[k], atol) for k in e)
    return False


def judge(outcomes: list[CallOutcome], tests: list[dict], atol: float | None = None,
          oracle=None) -> tuple[bool, str | None, list[dict]]:
    """(passed, reason, per-test rows) for one sample: every call must return (not raise)
    a value equal to the expected one (or accepted by ``oracle(test, value)`` when the
    benchmark's answer is not unique)."""
    rows, reason = [], None
    for test, out in zip(tests, outcomes):
        if out.status != "ok":
            ok = False
            why = {"raised": f"exception:{out.value}", "missing": "missing_entry_point"}.get(
                out.status, f"{out.status}:{out.value}" if out.value else out.status)
        elif oracle is not None:
            ok = oracle(test, out.value)
            why = None if ok else "wrong_output"
        else:
            ok = same_value(out.value, test["expected"], atol)
            why = None if ok else "wrong_output"
        rows.append({"ok": ok, "why": why})
        if not ok and reason is None:
            reason = why
    return reason is None, reason, rows
