"""GASP proposal validity (selfplay.tracks.gasp.validity): every reason code, the unsafe
screen, the determinism check under two seeds, hostile proposals. Real sandbox runs;
one pool per seed for the whole module."""

from __future__ import annotations

import pytest

from selfplay.errors import UserError
from selfplay.sandbox import Sandbox
from selfplay.tracks.gasp.validity import ValiditySettings, check_proposals, screen, seeded_sandboxes

S = ValiditySettings(timeout_s=1.0)
# The screen off: what the sandbox and the determinism check do on their own.
OPEN = ValiditySettings(
    timeout_s=1.0,
    banned_imports=[],
    banned_names=[],
    allowed_dunders=["__name__", "__init__", "__eq__", "__hash__"],
)
INPUTS = ["(1,)", "(2,)", "(3,)", "(4,)", "(5,)"]  # argument tuples, as parse.py writes them


@pytest.fixture(scope="module")
def pools():
    with seeded_sandboxes(S, workers=2) as sandboxes:
        yield sandboxes


def prop(code: str, inputs=INPUTS, question: str = "What does f do?") -> dict:
    return {"question": question, "code": code, "inputs": list(inputs)}


def one(pools, code: str, settings: ValiditySettings = S, inputs=INPUTS):
    [verdict] = check_proposals([prop(code, inputs)], pools, settings)
    return verdict


# ---------------------------------------------------------------- settings


def test_settings_refuse_unknown_keys_and_bad_values_in_one_line():
    with pytest.raises(UserError, match=r"gasp\.validity\.timeout") as err:
        ValiditySettings.from_dict({"timeout": 3})
    assert "\n" not in str(err.value)
    with pytest.raises(UserError, match=r"gasp\.validity\.determinism_seeds"):
        ValiditySettings.from_dict({"determinism_seeds": [0]})
    with pytest.raises(UserError, match=r"determinism_seeds"):
        ValiditySettings.from_dict({"determinism_seeds": [3, 3]})
    with pytest.raises(UserError, match=r"reject_none_outputs"):
        ValiditySettings.from_dict({"reject_none_outputs": "some"})
    with pytest.raises(UserError, match=r"timeout_s"):
        ValiditySettings.from_dict({"timeout_s": 0})
    assert ValiditySettings.from_dict({"determinism_seeds": [0, 7, 9]}).determinism_seeds == (0, 7, 9)
    assert ValiditySettings.from_dict(None) == ValiditySettings()


def test_pools_must_cover_every_seed(pools):
    with pytest.raises(ValueError, match="determinism seed"):
        check_proposals([prop("def f(a):\n    return a\n")], {0: pools[0]}, S)
    with pytest.raises(ValueError, match="runs with seed"):
        check_proposals([prop("def f(a):\n    return a\n")], {0: pools[0], 1: pools[0]}, S)
    # a list of pools made with seed= works as well as the mapping
    [verdict] = check_proposals([prop("def f(a):\n    return a\n")], list(pools.values()), S)
    assert verdict.valid


# ---------------------------------------------------------------- valid proposals


def test_valid_proposal_gets_its_five_pairs_from_running_f(pools):
    verdict = one(
        pools,
        "def f(xs, k):\n    return sorted(xs)[-k:]\n",
        inputs=["([3, 1, 2], 1)", "([5, 4], 2)", "([1], 1)", "([9, 8, 7], 2)", "([0, 0, 1],3)"],
    )
    assert verdict.valid and verdict.reason is None
    assert [p["input"] for p in verdict.pairs] == [
        "([3, 1, 2], 1)",
        "([5, 4], 2)",
        "([1], 1)",
        "([9, 8, 7], 2)",
        "([0, 0, 1], 3)",
    ]
    assert verdict.pairs[0]["output"] == ["list", [["int", 3]]]
    assert [p["output_repr"] for p in verdict.pairs] == ["[3]", "[4, 5]", "[1]", "[8, 9]", "[0, 0, 1]"]


def test_inputs_are_call_arguments_read_as_literals(pools):
    # the source of the argument tuple: "((1, 2),)" is one tuple argument, "([1],)" one list
    verdict = one(
        pools,
        "def f(x):\n    return len(x)\n",
        inputs=["((1, 2),)", "({'a': 1},)", "({1, 2, 3},)", "([1],)", "('',)"],
    )
    assert verdict.valid, verdict
    assert [p["output"] for p in verdict.pairs] == [
        ["int", 2],
        ["int", 1],
        ["int", 3],
        ["int", 1],
        ["int", 0],
    ]
    assert [p["input"] for p in verdict.pairs] == [
        "((1, 2),)",
        "({'a': 1},)",
        "({1, 2, 3},)",
        "([1],)",
        "('',)",
    ]
    assert (
        one(
            pools,
            "def f(a, b):\n    return a\n",
            inputs=["((1, 2),)", "(2, 3)", "(4, 5)", "(6, 7)", "(8, 9)"],
        ).reason
        == "raises:TypeError"
    ), "a tuple inside the tuple is one argument"
    # canonical text: spacing and a bare tuple without parentheses come back as repr writes them
    verdict = one(
        pools, "def f(a, b):\n    return a + b\n", inputs=["(1,2)", "3, 4", " (5, 6) ", "(7,\n 8)", "(9, 0)"]
    )
    assert verdict.valid and [p["input"] for p in verdict.pairs] == [
        "(1, 2)",
        "(3, 4)",
        "(5, 6)",
        "(7, 8)",
        "(9, 0)",
    ]


def test_names_of_builtins_used_as_variables_are_fine(pools):
    code = "def f(id, input):\n    if __name__ == 'solution':\n        pass\n    return [id, input]\n"
    assert one(pools, code, inputs=["(1, 2)", "(3, 4)", "(5, 6)", "(7, 8)", "(9, 0)"]).valid


def test_printing_does_not_change_a_valid_proposal(pools):
    verdict = one(pools, "def f(a):\n    print('noise', a)\n    return a * 2\n")
    assert verdict.valid and [p["output"][1] for p in verdict.pairs] == [2, 4, 6, 8, 10]


# ---------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    "proposal, reason",
    [
        (prop("def g(a):\n    return a\n"), "malformed:no_f"),
        (prop("def f(a):\n    return a +\n"), "malformed:syntax_error"),
        (prop("def f(a):\n    return a\n", inputs=INPUTS[:4]), "malformed:input_count"),
        (prop("def f(a):\n    return a\n", inputs=INPUTS[:4] + ["(1 + 1,)"]), "malformed:input_not_literal"),
        (
            prop("def f(a):\n    return a\n", inputs=INPUTS[:4] + ["(__import__('os'),)"]),
            "malformed:input_not_literal",
        ),
        (
            prop("def f(a):\n    return a\n", inputs=INPUTS[:4] + ["(5)"]),
            "malformed:input_not_literal",
        ),  # 5, not (5,)
        (prop("def f(a):\n    return a\n", inputs=INPUTS[:4] + ["( 1, )"]), "malformed:duplicate_inputs"),
        (prop("def f(a):\n    return a\n", question="  "), "malformed:no_question"),
        (prop("def f(a):\n    return a\n" + "#" * 30_000), "malformed:code_too_long"),
        (prop(""), "malformed:no_code"),
        ("not a dict", "malformed:not_a_proposal"),
    ],
)
def test_malformed_proposals(pools, proposal, reason):
    [verdict] = check_proposals([proposal], pools, S)
    assert not verdict.valid and verdict.reason == reason


# ---------------------------------------------------------------- the unsafe screen


@pytest.mark.parametrize(
    "code, reason",
    [
        ("import random\ndef f(a):\n    return a\n", "unsafe:import:random"),
        ("import os.path\ndef f(a):\n    return a\n", "unsafe:import:os"),
        ("from os import path\ndef f(a):\n    return a\n", "unsafe:import:os"),
        ("from concurrent import futures\ndef f(a):\n    return a\n", "unsafe:import:concurrent"),
        ("def f(a):\n    import time\n    return time.time()\n", "unsafe:import:time"),
        ("from datetime import date\ndef f(a):\n    return a\n", "unsafe:import:datetime"),
        ("from . import x\ndef f(a):\n    return a\n", "unsafe:import:relative"),
        ("def f(a):\n    return eval('a')\n", "unsafe:name:eval"),
        ("def f(a):\n    return open('/etc/passwd').read()\n", "unsafe:name:open"),
        ("def f(a):\n    return __import__('os').getpid()\n", "unsafe:dunder:__import__"),
        ("def f(a):\n    return id(a)\n", "unsafe:name:id"),
        ("def f(a):\n    return getattr(a, '__cl' + 'ass__')\n", "unsafe:name:getattr"),
        ("def f(a):\n    return a.__class__\n", "unsafe:dunder:__class__"),
        ("def f(a):\n    return __builtins__\n", "unsafe:dunder:__builtins__"),
    ],
)
def test_unsafe_screen(pools, code, reason):
    assert screen(code, S) == reason
    assert one(pools, code).reason == reason


def test_screen_passes_ordinary_code():
    code = (
        "import math, itertools\nfrom collections import Counter\nimport heapq as hq\n"
        "def f(xs):\n    c = Counter(xs)\n    return sorted(c.items())\n"
    )
    assert screen(code, S) is None


# ---------------------------------------------------------------- running f


def test_raising_timeouts_and_crashes(pools):
    codes = {
        "raises:ZeroDivisionError": "def f(a):\n    return 1 // (a - 3)\n",
        "raises:SystemExit": "def f(a):\n    raise SystemExit(0)\n",
        "raises:Bye": "class Bye(BaseException):\n    pass\ndef f(a):\n    raise Bye()\n",
        "raises:RecursionError": "def f(a):\n    return f(a + 1)\n",
        "raises:MemoryError": "def f(a):\n    return len(bytearray(10 ** 12))\n",
        "timeout": "def f(a):\n    while True:\n        pass\n",
        "raises:ValueError": "raise ValueError('at import')\ndef f(a):\n    return a\n",
    }
    verdicts = check_proposals([prop(code) for code in codes.values()], pools, S)
    assert [v.reason for v in verdicts] == list(codes)
    assert "input 2" in verdicts[0].detail
    assert not any(v.valid for v in verdicts)


def test_infinite_loop_at_import_is_a_timeout(pools):
    quick = ValiditySettings(timeout_s=1.0, run_timeout_s=1.5)
    assert one(pools, "while True:\n    pass\ndef f(a):\n    return a\n", quick).reason == "timeout"


def test_loop_that_swallows_the_per_call_alarm_still_ends(pools):
    code = (
        "def f(a):\n    while True:\n        try:\n            while True:\n                pass\n"
        "        except BaseException:\n            pass\n"
    )
    assert one(pools, code, ValiditySettings(timeout_s=0.3, run_timeout_s=1.0)).reason == "timeout"


def test_exits_and_fork_bombs_with_the_screen_off(pools):
    verdicts = check_proposals(
        [
            prop("import os\ndef f(a):\n    os._exit(0)\n"),
            prop("import os\ndef f(a):\n    while True:\n        os.fork()\n"),
            prop("import os\ndef f(a):\n    os.kill(os.getppid(), 9)\n    return a\n"),
            prop("def f(a):\n    return a + 1\n"),
        ],
        pools,
        OPEN,
    )
    assert [v.valid for v in verdicts] == [False, False, False, True]
    assert verdicts[0].reason.startswith("crashed:")
    assert verdicts[1].reason.split(":")[0] in ("raises", "crashed", "timeout")
    assert verdicts[2].reason.split(":")[0] in ("raises", "crashed", "timeout")  # PermissionError, normally


def test_f_deleted_at_import(pools):
    assert one(pools, "def f(a):\n    return a\ndel f\n").reason == "no_f"


# ---------------------------------------------------------------- determinism


def test_state_kept_between_calls_is_caught_by_the_repeated_call(pools):
    verdict = one(pools, "seen = []\ndef f(a):\n    seen.append(a)\n    return len(seen)\n")
    assert verdict.reason == "non_deterministic" and "repeated call" in verdict.detail


def test_hash_order_is_caught_under_two_seeds(pools):
    verdict = one(pools, "def f(a):\n    return hash('abc') % 1000 + a\n")
    assert verdict.reason == "non_deterministic" and "seed 1" in verdict.detail
    verdict = one(
        pools, "def f(a):\n    return list({'alpha', 'beta', 'gamma', 'delta', 'epsilon', str(a)})\n"
    )
    assert verdict.reason == "non_deterministic"


def test_random_is_caught_under_two_seeds_when_the_screen_lets_it_through(pools):
    # random.seed(0) then random() gives 0.84.. (returns); seed 1 gives 0.13.. (raises)
    code = "import random\nR = random.random()\ndef f(a):\n    if R < 0.5:\n        raise ValueError(R)\n    return a\n"
    verdict = one(pools, code, OPEN)
    assert verdict.reason == "non_deterministic" and "raised ValueError" in verdict.detail
    verdict = one(pools, "import random\ndef f(a):\n    random.seed(a)\n    return random.random()\n", OPEN)
    assert verdict.valid, "seeding random from the input is deterministic"


def test_one_seed_alone_cannot_see_the_difference():
    # the reason two pools are needed: under one seed a hash-order program repeats itself
    with Sandbox(workers=1, seed=0) as a, Sandbox(workers=1, seed=0) as b:
        code = "def f():\n    return hash('abc')\n"
        assert a.run(code, "f", "{}", 2.0).value == b.run(code, "f", "{}", 2.0).value


# ---------------------------------------------------------------- outputs


@pytest.mark.parametrize(
    "code, reason",
    [
        ("def f(a):\n    return 'x' * 10 ** 7\n", "output_too_large"),
        ("def f(a):\n    return 'x' * 2000\n", "output_too_large"),
        ("def f(a):\n    return 10 ** 5000\n", "output_too_large"),
        ("def f(a):\n    x = []\n    x.append(x)\n    return x\n", "unencodable"),
        ("def f(a):\n    return complex(a, 1)\n", "output_not_literal"),
        ("def f(a):\n    return bytearray(b'x')\n", "output_not_literal"),
        ("def f(a):\n    return [float('nan'), a]\n", "nan_output"),
        ("def f(a):\n    return None\n", "none_output"),
        ("def f(a):\n    return (x for x in [a])\n", "not_plain_value:generator"),
        (
            "from collections import deque\ndef f(a):\n    return deque([a])\n",
            "not_plain_value:collections.deque",
        ),
        (
            "class Liar:\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
            "def f(a):\n    return Liar()\n",
            "not_plain_value:solution.Liar",
        ),
    ],
)
def test_outputs_must_be_plain_readable_literals(pools, code, reason):
    settings = OPEN if "__eq__" in code else S
    verdict = one(pools, code, settings)
    assert not verdict.valid and verdict.reason == reason, verdict


def test_plain_outputs_of_every_kind_are_accepted(pools):
    code = "def f(a):\n    return [a, -0.5, float('inf'), 'é', b'x', (a,), {a: {a}}, frozenset([a]), set(), True, None]\n"
    verdict = one(pools, code)
    assert verdict.valid, verdict
    assert (
        verdict.pairs[0]["output_repr"]
        == "[1, -0.5, inf, 'é', b'x', (1,), {1: {1}}, frozenset({1}), set(), True, None]"
    )


def test_none_output_rules(pools):
    code = "def f(a):\n    return None if a == 1 else a\n"
    assert one(pools, code).valid
    assert (
        one(pools, code, ValiditySettings(timeout_s=1.0, reject_none_outputs="any")).reason == "none_output"
    )
    assert one(pools, "def f(a):\n    return None\n", ValiditySettings(reject_none_outputs="never")).valid


def test_many_proposals_in_one_call_keep_their_order(pools):
    good = [prop(f"def f(a):\n    return a * {k}\n") for k in range(12)]
    bad = [prop("import os\ndef f(a):\n    return a\n"), prop("def f(a):\n    return 1 / 0\n")]
    mixed = good[:5] + bad[:1] + good[5:] + bad[1:]
    verdicts = check_proposals(mixed, pools, S)
    assert [v.valid for v in verdicts] == [True] * 5 + [False] + [True] * 7 + [False]
    assert [v.pairs[1]["output"] for v in verdicts if v.valid] == [["int", 2 * k] for k in range(12)]
