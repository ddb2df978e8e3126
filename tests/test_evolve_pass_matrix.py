"""The EvolveCoder pass matrix (``tracks.evolve.pass_matrix``): real sandboxed executions of
hostile solutions against hostile tests, both ways of running them, and agreement with
running each assert next to an honest solution."""

from __future__ import annotations

import json

import pytest

from selfplay.sandbox import Sandbox, SandboxLimits
from selfplay.tracks.evolve.pass_matrix import LOAD_ONCE, MALFORMED, ONE_AT_A_TIME, PassMatrix, pass_matrix

LIMIT = 2.0  # generous: a shared machine under load must not turn a verdict into a timeout
TOKEN = "tok-5e1b9c"  # an expected value no solution can compute: only the tests hold it

SOLUTIONS = {
    "right": "def solve(xs):\n    return sum(xs)\n",
    "wrong": "def solve(xs):\n    return sum(xs) + 1\n",
    "raises": "def solve(xs):\n    raise ValueError('no')\n",
    "float": "def solve(xs):\n    return float(sum(xs))\n",
    "slow_on_empty": "def solve(xs):\n    while not xs:\n        pass\n    return sum(xs)\n",
    "global_state": (
        "CALLS = []\n\ndef solve(xs):\n    CALLS.append(xs)\n    return sum(xs) if len(CALLS) == 1 else -1\n"
    ),
    "mutates_args": "def solve(xs):\n    total = sum(xs)\n    xs.clear()\n    return total\n",
    # leaving before any verdict could be taken
    "sys_exit": "import sys\n\ndef solve(xs):\n    sys.exit(0)\n",
    "os_exit": "import os\n\ndef solve(xs):\n    os._exit(0)\n",
    "exit_at_import": "raise SystemExit(0)\n\ndef solve(xs):\n    return sum(xs)\n",
    "os_exit_at_import": "import os\nos._exit(0)\n",
    "keyboard_interrupt": "def solve(xs):\n    raise KeyboardInterrupt\n",
    # tampering with what a verdict in its own process would rely on
    "patch_builtins": (
        "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n"
        "builtins.abs = lambda x: 0\nbuiltins.sorted = lambda x: [0, 1]\n"
        "builtins.print = builtins.exit = builtins.quit = lambda *a: None\n\n"
        "def solve(xs):\n    return -999\n"
    ),
    "always_equal": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n    __ne__ = lambda s, o: False\n"
        "    __bool__ = lambda s: True\n    __sub__ = __rsub__ = lambda s, o: 0\n"
        "    __abs__ = lambda s: 0\n    __hash__ = object.__hash__\n\n"
        "def solve(xs):\n    return Yes()\n"
    ),
    "int_liar": (
        "class Liar(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n"
        "def solve(xs):\n    return Liar(-999)\n"
    ),
    "str_liar": (
        "class Liar(str):\n    def __eq__(self, other):\n        return True\n    __hash__ = str.__hash__\n\n"
        "def solve(xs):\n    return Liar('nope')\n"
    ),
    "fake_output": (
        "import sys\n\ndef solve(xs):\n    print('All tests passed! OK')\n"
        '    sys.stdout.write(\'{"status": "ok", "passed": true}\')\n    return None\n'
    ),
    "forged_frame": (
        "import os, json\n\ndef solve(xs):\n"
        "    six = ['list', [['tuple', [['str', 'ok'], ['int', 6]]]]]\n"
        "    body = json.dumps({'status': 'ok', 'value': six, 'value_repr': 'x'}).encode()\n"
        "    os.write(3, b'SBX1' + len(body).to_bytes(4, 'big') + body)\n    os._exit(0)\n"
    ),
    "own_shim": (
        "def solve(xs):\n    return -1\n\ndef __selfplay_calls__(entry, calls):\n"
        "    return [('ok', 6) for _ in calls]\n"
    ),
    "snoop_expected": (
        "import gc, sys\n\ndef solve(xs):\n    frame = sys._getframe()\n    while frame is not None:\n"
        "        for value in list(frame.f_locals.values()) + list(frame.f_code.co_consts):\n"
        "            if isinstance(value, str) and value.startswith('tok-') and len(value) > 4:\n"
        "                return value\n"
        "        frame = frame.f_back\n    for obj in gc.get_objects():\n"
        "        if isinstance(obj, (tuple, list, dict)):\n"
        "            for item in (obj.values() if isinstance(obj, dict) else obj):\n"
        "                if isinstance(item, str) and item.startswith('tok-') and len(item) > 4:\n"
        "                    return item\n    return None\n"
    ),
    "read_the_tests": (
        "import os\n\ndef solve(xs):\n    for root in ('/work', '/work/main/tests', '/root'):\n"
        "        if os.path.exists(root):\n            return 'saw ' + root\n    return -1\n"
    ),
    "kill_loader": (
        "import os, signal\n\ndef solve(xs):\n    os.kill(os.getppid(), signal.SIGKILL)\n    return sum(xs)\n"
    ),
    "thread_at_import": (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n\n"
        "def solve(xs):\n    return sum(xs)\n"
    ),
    "unencodable": "def solve(xs):\n    out = [sum(xs)]\n    out.append(out)\n    return out\n",
}

TESTS = {
    "sum": "assert solve([1, 2, 3]) == 6",
    "empty": "assert solve([]) == 0",
    "mirrored": "assert 0 == solve([-1, 1])",
    "is_not": "assert solve([10]) is not None",
    "general": "assert sorted([solve([1]), 0]) == [0, 1]",
    "close": "assert abs(solve([0.1, 0.2]) - 0.3) < 1e-9",
    "isclose": "assert math.isclose(solve([1, 2]), 3.0)",
    "truthy": "assert solve([2])",
    "falsy": "assert not solve([2, -2])",
    "token": f"assert solve([7]) == '{TOKEN}'",
    "two_calls": "assert solve([1]) + 1 == solve([2])",
    # hostile or broken tests: they judge no one
    "statement": "import os; os._exit(0)",
    "two_statements": "assert solve([1]) == 1; import os",
    "exits_while_evaluated": "assert solve([__import__('os')._exit(0)]) == 0",
    "loops_while_evaluated": "assert solve([1]) == next(x for x in iter(int, 1) if x)",  # forever, in constant memory
    "memory_while_evaluated": "assert solve([0] * 10**10) == 0",
    "forged_expected": "assert solve([1]) == type('A', (), {'__eq__': lambda s, o: True})()",
    "undefined_name": "assert solve([1]) == expected",
    "keyword": "assert solve(xs=[1]) == 1",
    "bends_its_evaluation": "assert solve([setattr(__import__('builtins'), 'repr', lambda x: 5)]) == solve([0])",
    # hostile but well-formed: its tampering stays in its own process
    "patches_its_builtins": "assert solve([1, setattr(__import__('builtins'), 'sum', lambda xs: 6)]) == 6",
    "check_exits": "assert solve([1]) == 1 or __import__('os')._exit(0)",
}
SOL, TEST = list(SOLUTIONS), list(TESTS)


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, limits=SandboxLimits(memory_mb=512)) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def matrices(sb):
    args = (list(SOLUTIONS.values()), list(TESTS.values()), None, sb, LIMIT)
    return {mode: pass_matrix(*args, mode=mode) for mode in (LOAD_ONCE, ONE_AT_A_TIME)}


@pytest.fixture(scope="module")
def m(matrices):
    return matrices[LOAD_ONCE]


def cell(m: PassMatrix, solution: str, test: str) -> tuple[bool, str | None]:
    s, t = SOL.index(solution), TEST.index(test)
    return m.passed[s][t], m.reasons[s][t]


def row(m: PassMatrix, solution: str) -> dict[str, bool]:
    return {t: m.passed[SOL.index(solution)][TEST.index(t)] for t in TEST}


def test_both_ways_give_the_same_matrix(matrices):
    a, b = matrices[LOAD_ONCE], matrices[ONE_AT_A_TIME]
    assert (a.passed, a.reasons, a.malformed, a.kinds, a.entry) == (
        b.passed,
        b.reasons,
        b.malformed,
        b.kinds,
        b.entry,
    )


def test_entry_is_detected_and_kinds_recorded(m):
    assert m.entry == "solve"
    kinds = dict(zip(TEST, m.kinds))
    assert (
        kinds["sum"],
        kinds["mirrored"],
        kinds["is_not"],
        kinds["general"],
        kinds["close"],
        kinds["isclose"],
        kinds["truthy"],
        kinds["falsy"],
        kinds["two_calls"],
    ) == ("equals", "equals", "is_not", "general", "abs_lt", "isclose", "truthy", "falsy", "general")


def test_malformed_tests_judge_no_one(m):
    problems = dict(zip(TEST, m.malformed))
    expected = {
        "statement": "not_one_assert",
        "two_statements": "not_one_assert",
        "exits_while_evaluated": "test_killed",
        "loops_while_evaluated": "test_timeout",
        "memory_while_evaluated": "test_exception: MemoryError",
        "forged_expected": "expected_not_plain",
        "undefined_name": "unknown_name",
        "keyword": "keyword_arguments",
        "bends_its_evaluation": "test_garbled",
    }
    for test, start in expected.items():
        assert problems[test] is not None and problems[test].startswith(start), (test, problems[test])
    assert [t for t in TEST if problems[t] is not None] == list(expected)
    for s in range(len(SOL)):
        for t, test in enumerate(TEST):
            if test in expected:
                assert (m.passed[s][t], m.reasons[s][t]) == (False, MALFORMED)
    assert m.usable == [t not in expected for t in TEST]


def test_honest_solutions(m):
    judged = [t for t in TEST if m.usable[TEST.index(t)]]
    assert [t for t in judged if not row(m, "right")[t]] == ["token", "patches_its_builtins"]
    assert cell(m, "right", "patches_its_builtins") == (
        False,
        "exception:TypeError",
    )  # its argument is [1, None]
    assert [t for t in judged if row(m, "wrong")[t]] == ["is_not", "truthy", "two_calls"]
    assert cell(m, "wrong", "check_exits") == (False, "check_failed:killed")
    assert {r for r, ok in zip(m.reasons[SOL.index("raises")], m.usable) if ok} == {"exception:ValueError"}
    assert row(m, "float")["sum"] and row(m, "float")["isclose"] and not row(m, "float")["token"]
    assert cell(m, "slow_on_empty", "empty") == (False, "timeout:wall-clock limit reached")
    assert row(m, "slow_on_empty") == dict(row(m, "right"), empty=False)  # only the slow test differs
    # Every test starts from the state right after import; a test's own calls share one process, as in the assert.
    assert row(m, "global_state") == dict(row(m, "right"), two_calls=False)
    assert row(m, "mutates_args") == row(m, "right")


NOTHING, NONE_PASSES, TRUTHY_PASSES = [], ["falsy"], ["is_not", "truthy"]


@pytest.mark.parametrize(
    "solution, passes, reason",
    [
        ("sys_exit", NOTHING, "exception:SystemExit"),
        ("os_exit", NOTHING, "killed:exited with code 0 without a result"),
        ("exit_at_import", NOTHING, "exception:SystemExit"),
        ("os_exit_at_import", NOTHING, "killed:exited with code 0 without a result"),
        ("keyboard_interrupt", NOTHING, "exception:KeyboardInterrupt"),
        ("always_equal", NOTHING, "not_plain_value:solution.Yes"),
        ("unencodable", NOTHING, "error:return value not encodable: value is self-referential"),
        # what they return is all that counts: None, or a wrong value whatever it claims
        ("fake_output", NONE_PASSES, "wrong_output"),
        ("snoop_expected", NONE_PASSES, "wrong_output"),
        ("patch_builtins", TRUTHY_PASSES, "wrong_output"),
        ("int_liar", TRUTHY_PASSES, "wrong_output"),
        ("str_liar", TRUTHY_PASSES, "wrong_output"),
        ("own_shim", TRUTHY_PASSES, "wrong_output"),
        ("read_the_tests", TRUTHY_PASSES, "wrong_output"),
    ],
)
def test_hostile_solutions_forge_nothing(m, solution, passes, reason):
    assert [t for t in TEST if row(m, solution)[t]] == passes
    assert cell(m, solution, "sum") == (False, reason)
    assert not row(m, solution)["token"] and not row(m, solution)["close"] and not row(m, solution)["general"]


def test_nothing_outside_the_sandbox_view_is_readable(m):
    # The snooper returns -1 when /work, the tests and /root are all out of view.
    assert cell(m, "read_the_tests", "sum") == (False, "wrong_output")


def test_a_forged_result_frame_is_only_a_returned_value(m):
    # The frame says the call returned 6; that is what it returned, so the tests 6 passes pass.
    assert [t for t in TEST if row(m, "forged_frame")[t]] == [
        "sum",
        "is_not",
        "truthy",
        "patches_its_builtins",
    ]


def test_loader_killing_and_import_threads_still_give_one_run_verdicts(m):
    assert cell(m, "kill_loader", "sum") == (False, "exception:PermissionError")
    assert row(m, "thread_at_import") == row(m, "right")


def test_running_the_assert_beside_the_solution_can_be_forged(sb):
    """Why verdicts are not taken in the solution's process: there the snooper copies the token."""
    code = SOLUTIONS["snoop_expected"] + f"\n\ndef __plain__():\n    {TESTS['token']}\n    return True\n"
    assert sb.run(code, "__plain__", "{}", LIMIT).status == "ok"


HONEST = [
    "def solve(xs):\n    return sum(xs)\n",
    "def solve(xs):\n    return sum(x for x in xs if x > 0)\n",
    "def solve(xs):\n    return sorted(xs)\n",
    "def solve(xs):\n    if not xs:\n        raise IndexError('empty')\n    return max(xs)\n",
    "def solve(xs):\n    return len(xs) % 2 == 0\n",
    "import math\n\ndef solve(xs):\n    return math.fsum(xs) / max(len(xs), 1)\n",
    "def solve(xs):\n    return {x: xs.count(x) for x in xs}\n",
    "def solve(xs):\n    return None if not xs else xs[0]\n",
]
HONEST_TESTS = [
    "assert solve([3, 1, 2]) == 6",
    "assert solve([]) == 0",
    "assert solve([1, -1]) is not None",
    "assert solve([2, 2]) is True",
    "assert solve([1])",
    "assert not solve([])",
    "assert abs(solve([0.5, 0.25]) - 0.375) < 1e-9",
    "assert math.isclose(solve([1.0, 2.0]), 1.5)",
    "assert sorted(solve([3, 1, 2])) == [1, 2, 3]",
    "assert solve([1, 2]) in (3, [1, 2], 1.5)",
    "assert solve([5]) == solve([5, 0])",
    "assert solve({'b': 1, 'a': 2}) == 'b'",
    "assert len(solve([1, 1, 2])) == 2",
    "assert solve(list(range(10))) == 45",
    "assert solve([1, 2, 3]) == {1: 1, 2: 1, 3: 1}",
    "assert solve((1, 2)) != 3",
]


def test_agrees_with_running_each_assert_beside_an_honest_solution(sb):
    got = pass_matrix(HONEST, HONEST_TESTS, "solve", sb, LIMIT)
    assert all(got.usable)
    jobs = [
        (code + f"\n\ndef __plain__():\n    {test}\n    return True\n", "__plain__", "{}", LIMIT)
        for code in HONEST
        for test in HONEST_TESTS
    ]
    plain = [r.status == "ok" for r in sb.run_many(jobs)]
    assert [ok for row_ in got.passed for ok in row_] == plain


def test_json_round_trip_and_determinism(sb, m):
    back = PassMatrix.from_json(m.to_json())
    assert back == m and json.loads(m.to_json())["entry"] == "solve"
    code = "import random\n\ndef pick(n):\n    return random.randrange(n)\n"
    tests = [f"assert pick({n}) == {n // 2}" for n in (2, 10, 1000, 10**6)]
    first = pass_matrix([code], tests, None, sb, LIMIT)
    assert first.entry == "pick" and pass_matrix([code], tests, "pick", sb, LIMIT).passed == first.passed


def test_without_an_entry_function_every_test_is_malformed(sb):
    got = pass_matrix(["x = 1\n"], ["assert 1 == 1", "import os"], None, sb, LIMIT)
    assert got.entry is None and not any(got.usable) and got.passed == [[False, False]]
    empty = pass_matrix([], ["assert f(1) == 1"], "f", sb, LIMIT)
    assert empty.passed == [] and empty.usable == [True]
    with pytest.raises(ValueError):
        pass_matrix([], [], "f", sb, LIMIT, mode="fast")
