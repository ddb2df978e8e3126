"""Reading model-written asserts into plans (``tracks.evolve.asserts``); nothing runs here."""

from __future__ import annotations

import math

import pytest

from selfplay.tracks.evolve.asserts import KINDS, AssertPlan, detect_entry, plan_assert

SHAPES = [
    ("assert f(1, [2]) == 3", "equals", ("(1, [2])",), ("3",), None),
    ("assert [1, 2] == f()", "equals", ("()",), ("[1, 2]",), None),
    ("assert f(x := 5) == x + 1", "equals", ("((x := 5),)",), ("x + 1",), None),
    ("assert f(*[1, 2], 3) == 6, 'message'", "equals", ("(*[1, 2], 3)",), ("6",), None),
    ("assert f('a') != 'b'", "not_equals", ("('a',)",), ("'b'",), None),
    ("assert f(0) is True", "is", ("(0,)",), ("True",), None),
    ("assert f(0) is None", "is", ("(0,)",), ("None",), None),
    ("assert f(0) is not False", "is_not", ("(0,)",), ("False",), None),
    ("assert f(2)", "truthy", ("(2,)",), (), None),
    ("assert not f(2)", "falsy", ("(2,)",), (), None),
    ("assert abs(f(1.0) - 0.5) < 1e-6", "abs_lt", ("(1.0,)",), ("0.5", "1e-06"), None),
    ("assert abs(0.5 - f(1.0)) <= 1e-6", "abs_le", ("(1.0,)",), ("0.5", "1e-06"), None),
    ("assert math.isclose(f(1), 1 / 3, rel_tol=1e-3)", "isclose", ("(1,)",), ("1 / 3", "0.001", "0.0"), None),
    ("assert isclose(0.3, f(1), abs_tol=1e-9)", "isclose", ("(1,)",), ("0.3", "1e-09", "1e-09"), None),
    ("assert sorted(f([3, 1])) == [1, 3]", "general", ("([3, 1],)",), (), "sorted(__r0__) == [1, 3]"),
    ("assert f(1) == f(2) - 1", "general", ("(1,)", "(2,)"), (), "__r0__ == __r1__ - 1"),
    ("assert f(1) in (2, 3)", "general", ("(1,)",), (), "__r0__ in (2, 3)"),
    ("assert f(1) is 5", "general", ("(1,)",), (), "__r0__ is 5"),
    ("assert 0 < f(1) < 3", "general", ("(1,)",), (), "0 < __r0__ < 3"),
    ("assert abs(f(1) - 2) > 0", "general", ("(1,)",), (), "abs(__r0__ - 2) > 0"),
    (
        "assert len(f(collections.Counter('ab'))) == 2",
        "general",
        ("(collections.Counter('ab'),)",),
        (),
        "len(__r0__) == 2",
    ),
]


@pytest.mark.parametrize("text, kind, calls, sides, check", SHAPES)
def test_shapes(text, kind, calls, sides, check):
    plan = plan_assert(text, "f")
    assert plan.problem is None, plan
    assert (plan.kind, plan.calls, plan.sides, plan.check) == (kind, calls, sides, check)
    assert plan.kind in KINDS


PROBLEMS = [
    ("x = f(1)", "not_one_assert"),
    ("assert f(1) == 1\nassert f(2) == 2", "not_one_assert"),
    ("assert f(1 == 1", "syntax_error"),
    ("assert g(1) == 1", "does_not_call_entry"),
    ("assert list(map(f, [1])) == [2]", "does_not_call_entry"),
    ("assert f(1) == 2 and f == f", "entry_not_called"),
    ("assert f(n=1) == 2", "keyword_arguments"),
    ("assert f(**{'n': 1}) == 2", "keyword_arguments"),
    ("assert f(f(1)) == 2", "nested_entry_call"),
    ("assert all(f(x) for x in range(3))", "call_in_local_scope"),
    ("assert (lambda: f(1))() == 2", "call_in_local_scope"),
    ("assert f(ListNode(1)) == 2", "unknown_name"),
    ("assert f(1) == expected", "unknown_name"),
    (12, "not_a_string"),
]


@pytest.mark.parametrize("text, code", PROBLEMS)
def test_problems_name_their_reason(text, code):
    plan = plan_assert(text, "f")
    assert plan.kind is None and plan.calls == ()
    assert plan.problem.split(":")[0] == code


def test_a_method_of_a_fresh_instance_is_not_a_function_call():
    assert plan_assert("assert Solution().solve([1]) == 1", "Solution").problem.startswith(
        "method_of_instance"
    )
    assert plan_assert("assert f().count(1) == 1", "f").kind == "general"


def test_comprehension_and_lambda_names_are_bound():
    plan = plan_assert("assert f([x * x for x in range(3)]) == sum(map(lambda y: y, [0, 1, 4]))", "f")
    assert plan.kind == "equals" and plan.problem is None


def run_plan(text: str, returned, sides):
    return plan_assert(text, "f").holds(returned, sides)


def test_holds_follows_python_comparisons():
    assert run_plan("assert f() == 2", [2.0], [2])
    assert run_plan("assert f() == 1", [True], [1])
    assert not run_plan("assert f() == [1]", [(1,)], [[1]])
    assert run_plan("assert f() == {1, 2}", [frozenset({1, 2})], [{1, 2}])
    assert not run_plan("assert f() == 0.3", [0.1 + 0.2], [0.3])
    assert not run_plan("assert f() == nan", [math.nan], [math.nan])
    assert run_plan("assert f() != 3", [4], [3])
    assert run_plan("assert f() is True", [True], [True]) and not run_plan("assert f() is True", [1], [True])
    assert run_plan("assert f() is not None", [0], [None])
    assert run_plan("assert f()", [[0]], []) and not run_plan("assert f()", [[]], [])
    assert run_plan("assert not f()", [""], [])
    assert run_plan("assert abs(f() - 1) < 0.5", [1.4], [1, 0.5])
    assert not run_plan("assert abs(f() - 1) < 0.5", [1.5], [1, 0.5])
    assert run_plan("assert abs(f() - 1) <= 0.5", [1.5], [1, 0.5])
    assert run_plan("assert math.isclose(f(), 1.0)", [1.0 + 1e-12], [1.0, 1e-9, 0.0])
    with pytest.raises(TypeError):
        run_plan("assert abs(f() - 1) < 0.5", ["1"], [1, 0.5])


def test_general_plans_have_no_host_verdict():
    with pytest.raises(ValueError):
        plan_assert("assert sorted(f()) == []", "f").holds([[]], [])
    assert AssertPlan("x", problem="p").kind is None


def test_calls_come_in_source_order():
    plan = plan_assert("assert f(2) + f(3) * f(4) == 14", "f")
    assert plan.calls == ("(2,)", "(3,)", "(4,)") and plan.check == "__r0__ + __r1__ * __r2__ == 14"


def test_detect_entry_prefers_a_function_the_solutions_define():
    tests = [
        "assert helper(1) == 1",
        "assert solve([1]) == 2",
        "assert sorted(solve([2])) == [2]",
        "assert helper(2) == 2",
        "assert helper(3) == 3",
    ]
    assert detect_entry(tests, ["def solve(xs):\n    return xs\n"]) == "solve"
    assert detect_entry(tests, ["def solve(xs):\n    pass\n", "helper = lambda n: n\n"]) == "helper"
    assert detect_entry(tests, ["class helper:\n    pass\n", "def solve(x): pass"]) == "solve"
    assert detect_entry(tests, ["def other():\n    pass\n", "this is not python"]) == "helper"
    assert detect_entry(["assert sorted([1]) == [1]"], []) is None
    assert detect_entry(["assert f(1) == 1", "not python ("], ["def f(x):\n    return x\n"]) == "f"
