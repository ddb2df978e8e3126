"""From a model-written ``assert`` to calls of the entry function and a check on their values.

A test such as ``assert f(1, [2]) == 3`` is not run as written next to a candidate
solution: the solution could then decide its own verdict (leave before the assert
runs, replace ``AssertionError``, return an object equal to everything). Instead the
test becomes a *plan*, read from its syntax tree without running anything:

* ``calls``: for every call of the entry function in the test, the source of a tuple of
  its positional arguments (``(1, [2])``); only these values, never the expected one,
  reach the solution's process (see ``pass_matrix``);
* ``kind`` and ``sides``: how the returned values decide the test, and the source of the
  other expressions that decision needs (expected value, tolerances), evaluated apart
  from any solution:

  - ``equals``: ``f(..) == y`` or ``y == f(..)``; sides: y
  - ``not_equals``: ``f(..) != y``; sides: y
  - ``is`` / ``is_not``: ``f(..) is True`` (``False``, ``None``; ``is not``); sides: the constant
  - ``truthy`` / ``falsy``: ``f(..)`` / ``not f(..)``; no sides
  - ``abs_lt`` / ``abs_le``: ``abs(f(..) - y) < eps`` (or ``abs(y - f(..))``, or ``<=``); sides: y, eps
  - ``isclose``: ``math.isclose(f(..), y, rel_tol=.., abs_tol=..)`` (either order, bare
    ``isclose`` too); sides: y, rel_tol, abs_tol
  - ``general``: any other expression that calls ``f``; no sides

  A ``general`` test keeps its expression as ``check``, each entry call replaced by a
  placeholder name (``__r0__``, ``__r1__`` ...); it is evaluated on the returned values
  in a sandboxed process that never saw the solution. Its calls are all made, in
  source order, even those a short-circuit (``and``, ``or``, ``if``) would skip.

A test that cannot become a plan gets a ``problem`` (``code: detail``) and judges no
one: not one assert statement, no call of the entry function, the function used
other than by calling it, keyword arguments (the call shim passes positional ones
only, see ``evaluate.python_calls``), an entry call inside its own arguments or inside
a lambda or comprehension, a method of a fresh instance of a class-like (capitalised)
entry (``Solution().m(..)``), or a name that neither the builtins nor the test namespace
(``TEST_NAMES``) provides.

``detect_entry`` names the function the tests are written against when the caller
does not: the function most tests call that some solution defines.
"""

from __future__ import annotations

import ast
import builtins
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .parse import check_test, guess_entry

# Names a test's expressions may use besides the builtins: the modules tests lean on and
# a few bare names tests write as if the solution had imported them.
TEST_MODULES = (
    "math",
    "cmath",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "re",
    "operator",
    "typing",
)
TEST_BARE = {"inf": "math.inf", "nan": "math.nan", "isclose": "math.isclose"}
TEST_NAMES = frozenset(dir(builtins)) | frozenset(TEST_MODULES) | frozenset(TEST_BARE)
KINDS = ("equals", "not_equals", "is", "is_not", "truthy", "falsy", "abs_lt", "abs_le", "isclose", "general")
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_CONSTANTS = (True, False, None)
PLACEHOLDER = "__r{}__"


@dataclass(frozen=True)
class AssertPlan:
    """One test, read: ``kind`` None and a ``problem`` when it cannot judge anyone."""

    text: str
    kind: str | None = None
    calls: tuple[str, ...] = ()
    sides: tuple[str, ...] = ()
    check: str | None = None
    problem: str | None = None

    def holds(self, returned: list[Any], sides: list[Any]) -> bool:
        """The verdict of a non-general plan on plain returned values and evaluated sides
        (host side; a TypeError or the like propagates, as the assert would raise it)."""
        got = returned[0]
        if self.kind == "equals":
            return bool(got == sides[0])
        if self.kind == "not_equals":
            return bool(got != sides[0])
        if self.kind in ("is", "is_not"):
            return (got is sides[0]) == (self.kind == "is")
        if self.kind in ("truthy", "falsy"):
            return bool(got) == (self.kind == "truthy")
        if self.kind in ("abs_lt", "abs_le"):
            gap = abs(got - sides[0])
            return bool(gap < sides[1] if self.kind == "abs_lt" else gap <= sides[1])
        if self.kind == "isclose":
            return math.isclose(got, sides[0], rel_tol=sides[1], abs_tol=sides[2])
        raise ValueError(f"no host-side verdict for kind {self.kind!r}")


def placeholder(index: int) -> str:
    """The name standing for the value of the test's ``index``-th entry call in a general check."""
    return PLACEHOLDER.format(index)


def plan_assert(text: str, entry: str) -> AssertPlan:
    """Read one test written against function ``entry``."""
    why = check_test(text, entry)
    if why is not None:
        return AssertPlan(text if isinstance(text, str) else repr(text), problem=why)
    test = ast.parse(text.strip()).body[0].test
    calls, why = _entry_calls(test, entry)
    if why is None:
        why = _unknown_name(test, entry)
    if why is not None:
        return AssertPlan(text, problem=why)
    sources = tuple(ast.unparse(ast.Tuple(elts=list(call.args), ctx=ast.Load())) for call in calls)
    shape = _simple_shape(test, calls[0]) if len(calls) == 1 else None
    if shape is not None:
        kind, sides = shape
        return AssertPlan(text, kind, sources, tuple(ast.unparse(side) for side in sides))
    return AssertPlan(text, "general", sources, check=_with_placeholders(test, calls))


def _entry_calls(test: ast.expr, entry: str) -> tuple[list[ast.Call], str | None]:
    """The calls of ``entry`` in source order, or why they cannot be taken out of the test."""
    calls: list[ast.Call] = []
    parents = {child: node for node in ast.walk(test) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(test):
        if not (isinstance(node, ast.Name) and node.id == entry):
            continue
        call = parents.get(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            return [], f"entry_not_called: {entry} is used other than by calling it"
        shown = ast.unparse(call)[:120]
        if call.keywords:
            return [], f"keyword_arguments: {shown}"
        if any(isinstance(n, ast.Name) and n.id == entry for arg in call.args for n in ast.walk(arg)):
            return [], f"nested_entry_call: {shown}"
        if _inside(call, parents, _SCOPES):
            return [], f"call_in_local_scope: {shown} is inside a lambda or comprehension"
        if entry[:1].isupper() and not call.args and isinstance(parents.get(call), ast.Attribute):
            return [], f"method_of_instance: {ast.unparse(parents[call])[:120]}"
        calls.append(call)
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    return calls, None


def _inside(node: ast.AST, parents: dict[ast.AST, ast.AST], kinds: tuple[type, ...]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, kinds):
            return True
    return False


def _unknown_name(test: ast.expr, entry: str) -> str | None:
    """The first name the test reads that nothing defines, as a problem."""
    bound = {n.id for n in ast.walk(test) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {
        a.arg
        for n in ast.walk(test)
        if isinstance(n, ast.Lambda)
        for a in ast.walk(n.args)
        if isinstance(a, ast.arg)
    }
    for node in ast.walk(test):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id != entry
            and node.id not in bound
            and node.id not in TEST_NAMES
        ):
            return f"unknown_name: {node.id}"
    return None


def _simple_shape(test: ast.expr, call: ast.Call) -> tuple[str, list[ast.expr]] | None:
    """(kind, side expressions) when the single call sits where a simple kind expects it."""
    if test is call:
        return "truthy", []
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is call:
        return "falsy", []
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare_shape(test.left, test.ops[0], test.comparators[0], call)
    if _is_isclose(test):
        return _isclose_shape(test, call)
    return None


def _compare_shape(left: ast.expr, op: ast.cmpop, right: ast.expr, call: ast.Call):
    if call in (left, right):
        other = right if left is call else left
        if isinstance(op, ast.Eq):
            return "equals", [other]
        if isinstance(op, ast.NotEq):
            return "not_equals", [other]
        if (
            isinstance(op, (ast.Is, ast.IsNot))
            and isinstance(other, ast.Constant)
            and any(other.value is c for c in _CONSTANTS)
        ):
            return ("is" if isinstance(op, ast.Is) else "is_not"), [other]
        return None
    if isinstance(op, (ast.Lt, ast.LtE)) and _is_call_of(left, "abs") and len(left.args) == 1:
        gap = left.args[0]
        if isinstance(gap, ast.BinOp) and isinstance(gap.op, ast.Sub) and call in (gap.left, gap.right):
            expected = gap.right if gap.left is call else gap.left
            return ("abs_lt" if isinstance(op, ast.Lt) else "abs_le"), [expected, right]
    return None


def _is_call_of(node: ast.expr, name: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == name
        and not node.keywords
    )


def _is_isclose(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "isclose"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "isclose"
        and isinstance(func.value, ast.Name)
        and func.value.id == "math"
    )


def _isclose_shape(test: ast.Call, call: ast.Call):
    keywords = {k.arg: k.value for k in test.keywords}
    if len(test.args) != 2 or call not in test.args or not set(keywords) <= {"rel_tol", "abs_tol"}:
        return None
    expected = test.args[1] if test.args[0] is call else test.args[0]
    rel = keywords.get("rel_tol", ast.Constant(1e-09))
    tol = keywords.get("abs_tol", ast.Constant(0.0))
    return "isclose", [expected, rel, tol]


def _with_placeholders(test: ast.expr, calls: list[ast.Call]) -> str:
    """The test's expression with each entry call replaced by its placeholder name
    (rewrites ``test`` in place: the caller is done with it)."""
    index = {id(call): number for number, call in enumerate(calls)}

    class Swap(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            if id(node) in index:
                return ast.Name(id=placeholder(index[id(node)]), ctx=ast.Load())
            return self.generic_visit(node)

    return ast.unparse(Swap().visit(test))


def detect_entry(tests: Iterable[str], solutions: Iterable[str]) -> str | None:
    """The function most tests call among those some solution defines at top level (more
    tests first, then more solutions, then the name); without one, the name most tests
    call (``parse.guess_entry``)."""
    tests = [t for t in tests if isinstance(t, str)]
    called: Counter[str] = Counter()
    for test in tests:
        try:
            tree = ast.parse(test.strip())
        except (SyntaxError, ValueError):
            continue
        called.update(
            {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        )
    defined: Counter[str] = Counter()
    for code in solutions:
        defined.update(_functions_defined(code))
    known = [name for name in called if defined[name]]
    if known:
        return min(known, key=lambda name: (-called[name], -defined[name], name))
    return guess_entry(tests)


def _functions_defined(code: str) -> set[str]:
    """Names a program binds at top level to a function (def, async def, name = lambda)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names
