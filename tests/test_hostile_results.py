"""A hostile answer never crashes a scoring job (issue 18, section 2), and integers are
compared exactly while floats get EvalPlus's tolerance (section 3, first point).

A sandboxed program can send a well-framed reply whose value the encoder could never have
written (the shim's reply lives in the program's own process, and the result channel is
open to it). Decoding, comparing, judging and the pass matrix must turn any such reply
into that answer's failure with a reason, and go on with the next answer.
"""

from __future__ import annotations

import ast
import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selfplay.evaluate.benchmarks.bigcodebench import judge_test
from selfplay.evaluate.benchmarks.evalplus import check_with_oracle
from selfplay.evaluate.benchmarks.livecodebench import judge_result
from selfplay.evaluate.python_calls import (
    MALFORMED,
    CallOutcome,
    args_source,
    batch_outcomes,
    judge,
    mismatch,
    run_calls,
    same_value,
    timed_job,
    timed_outcomes,
    values_match,
)
from selfplay.sandbox import ExecResult, Sandbox, SandboxLimits
from selfplay.sandbox.encoding import MAX_DECODE_DEPTH, MalformedValue, decode_value, encode_value
from selfplay.tracks.evolve.pass_matrix import ENTRY, LOAD_ONCE, ONE_AT_A_TIME, PREPARE, pass_matrix

QUICK = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def enc(value):
    """The canonical encoding, as the sandboxed child writes it."""
    return encode_value(value, max_nodes=1_000_000, max_depth=200, max_bytes=10**8, max_repr=200)


def nested(depth: int, leaf=None):
    node = leaf if leaf is not None else ["int", 1]
    for _ in range(depth):
        node = ["list", [node]]
    return node


def shim_reply(value_node, kind=("str", "ok"), timed=False):
    """A call shim's reply for one call, as the host reads it (the timed shim adds the
    call's seconds)."""
    fields = [list(kind), value_node] + ([["float", "0.001"]] if timed else [])
    return ["list", [["tuple", fields]]]


# --- strategies ---------------------------------------------------------------------

TAGS = [
    "None",
    "bool",
    "int",
    "float",
    "complex",
    "str",
    "bytes",
    "bytearray",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "object",
    "nope",
    "",
]
# What json.loads can hand the host (NaN and Infinity included: the parser accepts them).
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**320)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(TAGS + ["1e999", "-12", "0x1f", "nan", "ab"])
)
json_values = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=25,
)
# Frames shaped like encoded values, with every payload drawn at random: the inputs most
# likely to reach each branch of the decoder with the wrong thing.
node_like = st.recursive(
    json_leaf,
    lambda inner: (
        st.tuples(st.sampled_from(TAGS), inner).map(list)
        | st.tuples(st.sampled_from(TAGS), st.lists(inner, max_size=3)).map(list)
        | st.tuples(st.sampled_from(TAGS), inner, inner).map(list)
        | st.tuples(st.just("dict"), st.lists(st.lists(inner, max_size=3), max_size=3)).map(list)
        | st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=30,
)
anything = node_like | json_values

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**53, max_value=10**400)
    | st.floats()
    | st.complex_numbers()
    | st.text(max_size=8)
    | st.binary(max_size=6)
)
hashables = st.recursive(
    scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=8
)
py_values = st.recursive(
    hashables | st.binary(max_size=4).map(bytearray),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.sets(hashables, max_size=3)
        | st.dictionaries(hashables, inner, max_size=3)
    ),
    max_leaves=20,
)
tolerances = st.none() | st.just(0.0) | st.floats(min_value=0, max_value=10, allow_nan=False)


# --- decoding -------------------------------------------------------------------------


@QUICK
@given(anything)
def test_decoding_raises_nothing_but_malformed_value(node):
    try:
        decode_value(node)
    except MalformedValue as exc:
        assert str(exc)


@QUICK
@given(py_values)
def test_every_value_the_encoder_writes_decodes_back(value):
    node = enc(value)
    assert enc(decode_value(json.loads(json.dumps(node)))) == node


def test_the_decoding_depth_covers_what_the_sandbox_encodes():
    assert MAX_DECODE_DEPTH > SandboxLimits().max_value_depth
    assert decode_value(nested(SandboxLimits().max_value_depth)) is not None


@pytest.mark.parametrize(
    "node, why",
    [
        (["set", [["list", []]]], "unhashable"),  # a set of lists cannot exist
        (["frozenset", [["dict", []]]], "unhashable"),
        (["dict", [[["list", []], ["int", 1]]]], "unhashable"),  # a list as a dict key
        (["dict", [[["tuple", [["set", []]]], ["int", 1]]]], "unhashable"),
        (["float", ["int", 1]], "float node holds a list"),  # no text where text is due
        (["float", "one and a half"], "float node holds"),  # text where a number is due
        (["float", 10**400], "float node holds a int"),
        (["complex", "1+"], "complex node holds"),
        (["bytes", 12], "bytes node holds a int"),
        (["bytes", "zz"], "bytes node holds"),
        (["int", "12abc"], "int node holds"),
        (["int", 1.5], "int node holds"),
        (["int", True], "int node holds"),
        (["bool", "yes"], "bool node holds a str"),  # formerly returned as is
        (["str", ["str", "x"]], "str node holds a list"),
        (["None", 0], "None node holds a int"),
        (["int", 1, 2], "tagged 'int' has 3 fields"),  # wrong arity
        (["object", "T"], "object node"),
        (["object", ["x"], "r"], "object node"),
        (["list", {"a": 1}], "not a list"),
        (["dict", [[["int", 1]]]], "not a [key, value] pair"),
        (["nope", []], "unknown tag"),
        ({"tag": "int"}, "not an encoded value"),
        (nested(MAX_DECODE_DEPTH + 5), "nested too deeply"),  # deep garbage
    ],
)
def test_malformed_nodes_are_reported_not_raised_as_other_errors(node, why):
    with pytest.raises(MalformedValue, match=re.escape(why)):
        decode_value(node)


def test_huge_integers_decode_in_full():
    big = 7**20000  # more digits than int() converts by default
    assert decode_value(enc(big)) == big and decode_value(enc(-big)) == -big


# --- comparison -------------------------------------------------------------------------


@QUICK
@given(anything, anything, tolerances)
def test_comparing_any_two_frames_never_raises(got, expected, atol):
    assert same_value(got, expected, atol) in (True, False)
    assert mismatch(got, expected, atol) is None or isinstance(mismatch(got, expected, atol), str)


@QUICK
@given(py_values, py_values, tolerances)
def test_comparing_any_two_values_never_raises(got, expected, atol):
    assert values_match(got, expected, atol) in (True, False)
    assert same_value(enc(got), enc(expected), atol) in (True, False)


@QUICK
@given(
    st.integers() | st.integers(min_value=2**53 - 5, max_value=2**80),
    st.integers(min_value=-3, max_value=3),
    tolerances,
)
def test_integers_are_compared_exactly_whatever_the_tolerance(n, offset, atol):
    assert same_value(enc(n + offset), enc(n), atol) == (offset == 0)


@pytest.mark.parametrize(
    "got, expected",
    [
        (10**20 + 1, 10**20),
        (2**53 + 1, 2**53),
        (-(10**30) - 1, -(10**30)),
        ([1, 10**12 + 1], [1, 10**12]),
        ((10**9 + 1, 2.0), (10**9, 2.0)),
    ],
)
def test_a_large_integer_off_by_one_fails(got, expected):
    assert not same_value(enc(got), enc(expected))
    assert not values_match(got, expected, atol=1e-6)


@pytest.mark.parametrize(
    "got, expected",
    [
        (1.5, 10**400),
        (10**400, 1.5),
        (10**400 + 1, 10**400),
        ([1.0, 10**400], [1.0, 1.5]),
        ([1.0, 1.5], [1.0, 10**400]),
        (10**400, math.inf),
        (complex(1, 2), 10**400),
        (math.nan, 10**400),
    ],
)
def test_a_huge_integer_against_a_float_is_a_plain_mismatch(got, expected):
    assert mismatch(enc(got), enc(expected)) == "wrong_output"
    assert mismatch(enc(got), enc(expected), atol=0.5) == "wrong_output"


@pytest.mark.parametrize(
    "got, expected, atol, same",
    [
        (0.1 + 0.2, 0.3, None, True),  # floats: EvalPlus's default atol 1e-6
        (0.31, 0.3, None, False),
        ([1.0, 2.0000001], [1.0, 2.0], None, True),  # a flat list of floats
        ((1.0, 2.0000001), (1.0, 2.0), None, True),
        ([1.0, 2.0000001], (1.0, 2.0), None, False),  # another type: no tolerance
        ([1.0000001], [1.0, 2.0], None, False),  # another length
        (2, 2.0, None, True),  # == first: 2 == 2.0
        (2, 2.0000001, None, False),  # an int is not close to a float (type differs)
        (True, 1.0000001, None, False),  # nor is a bool
        ([True, 2.0], [1.0000001, 2.0], None, False),
        ([[1.0000001]], [[1.0]], None, False),  # nested: not a flat list of floats, exact only
        ([[1.0000001]], [[1.0]], 1e-6, True),  # unless the task gives its atol
        ({"a": 1.0000001}, {"a": 1.0}, 1e-3, False),  # dicts get no tolerance (numpy cannot compare them)
        (["a", 1.0000001], ["a", 1.0], 1e-3, False),  # nor do lists holding text
        ([], [], None, True),
        ([1e-7], [], None, False),
        (5.5, 6.0, 1.0, True),  # the task's atol widens floats
        (5, 6, 2.0, False),  # but never integers
        ([5, 6.0], [6, 6.0], 2.0, False),
        ([5.0, 6.0], [6, 6.0], 2.0, True),  # an int inside a list is a number like numpy's
        (math.inf, math.inf, None, True),
        ([math.inf, 1.0], [math.inf, 1.0000001], None, True),
        ([-math.inf, 1.0], [math.inf, 1.0], 1e9, False),
        (100.00001, 100.0, None, True),  # within atol + rtol * |expected| (1e-6 + 1e-5)
        (100.00002, 100.0, None, False),
        (complex(1, 1e-9), complex(1, 0), 1e-6, True),
    ],
)
def test_float_tolerance_follows_evalplus(got, expected, atol, same):
    assert values_match(got, expected, atol) is same
    assert same_value(enc(got), enc(expected), atol) is same


@pytest.mark.parametrize("value", [math.nan, [1.0, math.nan], {"k": (math.nan,)}, complex(math.nan, 1)])
def test_nan_never_equals_nan(value):
    """EvalPlus (== then np.allclose without equal_nan) and LiveCodeBench (==) fail a nan
    against a nan; equal encodings used to pass it."""
    assert not same_value(enc(value), enc(value))
    assert same_value(enc([1.0, 2.5]), enc([1.0, 2.5]))


def test_objects_the_encoding_does_not_rebuild_match_only_their_own_encoding():
    assert mismatch(["object", "T", "T(1)"], ["object", "T", "T(2)"]) == "wrong_output"
    assert mismatch(["object", "T", "T()"], ["int", 1]) == "wrong_output"


# --- the shim's reply and judge ------------------------------------------------------------


@QUICK
@given(anything, st.integers(min_value=1, max_value=3))
def test_any_reply_becomes_one_readable_outcome_per_call(node, size):
    outcomes = batch_outcomes(ExecResult("ok", value=node), size)
    assert len(outcomes) == size
    for out in outcomes:
        assert out.status in ("ok", "raised", "missing", MALFORMED)
        if out.status == "ok":
            decode_value(out.value)
        else:
            assert isinstance(out.value, str)


@QUICK
@given(anything, st.integers(min_value=1, max_value=3), st.booleans())
def test_any_timed_reply_becomes_one_readable_outcome_per_call(node, size, stop_early):
    outcomes = timed_outcomes(ExecResult("ok", value=node), size, stop_early)
    assert len(outcomes) == size
    for out in outcomes:
        assert out.status in ("ok", "raised", "missing", "timeout", "not_run", MALFORMED)
        if out.status == "ok":
            decode_value(out.value)
            assert isinstance(out.seconds, float) and out.seconds >= 0


def test_a_timed_reply_with_a_huge_or_missing_time_is_malformed():
    for seconds in (["int", str(10**400)], ["float", "nan"], ["float", "-1.0"], ["str", "1"]):
        reply = ["list", [["tuple", [["str", "ok"], ["int", 1], seconds]]]]
        [out] = timed_outcomes(ExecResult("ok", value=reply), 1)
        assert out.status == MALFORMED, seconds


outcomes = st.builds(
    CallOutcome, st.sampled_from(["ok", "raised", "missing", "timeout", MALFORMED]) | json_values, anything
)


@QUICK
@given(st.lists(outcomes, min_size=1, max_size=4), tolerances)
def test_judge_gives_every_unreadable_outcome_a_reason(outs, atol):
    tests = [{"expected": ["int", 1]}] * len(outs)
    passed, reason, rows = judge(outs, tests, atol)
    assert len(rows) == len(outs) and passed == all(row["ok"] for row in rows)
    for out, row in zip(outs, rows):
        assert row["ok"] == (row["why"] is None)
        if not row["ok"]:
            assert isinstance(row["why"], str) and row["why"]
        if out.status != "ok":
            assert not row["ok"]
    _, _, rows = judge(outs, tests, atol, oracle=lambda test, value: True)
    for out, row in zip(outs, rows):
        readable = out.status == "ok"
        if readable:
            try:
                decode_value(out.value)
            except MalformedValue:
                readable = False
        assert row["ok"] == readable
        if out.status == "ok" and not readable:
            assert row["why"].startswith(f"{MALFORMED}:")


def test_judge_names_the_malformed_value():
    outs = [
        CallOutcome("ok", ["set", [["list", []]]]),
        CallOutcome("ok", ["int", "twelve"]),
        CallOutcome("ok", ["int", 1]),
    ]
    passed, reason, rows = judge(outs, [{"expected": ["int", 1]}] * 3)
    assert not passed and reason == f"{MALFORMED}:a set member is an unhashable list"
    assert [row["ok"] for row in rows] == [False, False, True]
    assert rows[1]["why"].startswith(f"{MALFORMED}:an int node holds")


def test_an_outcome_kind_that_is_not_text_is_a_failure_not_a_crash():
    # the kind of the first call is an (unhashable) list: formerly a TypeError in judge
    reply = ["list", [["tuple", [["str", ["x"]], ["int", 1]]], ["tuple", [["str", "ok"], ["int", 1]]]]]
    outs = batch_outcomes(ExecResult("ok", value=reply), 2)
    passed, reason, rows = judge(outs, [{"expected": ["int", 1]}] * 2)
    assert not passed and reason.startswith(f"{MALFORMED}:") and rows[1]["ok"]


def test_an_oracle_that_raises_on_a_value_fails_that_call():
    def picky(test, value):
        return {"a": 1}[decode_value(value)]

    passed, reason, _ = judge([CallOutcome("ok", ["str", "b"])], [{}], oracle=picky)
    assert (passed, reason) == (False, "oracle_raised:KeyError")


@QUICK
@given(anything, st.sampled_from(["not_none", "set_equal", "poly_root"]))
def test_evalplus_oracles_never_raise_on_a_readable_or_unreadable_value(node, name):
    test = {"args": args_source([[1.0, -2.0]]), "expected": enc([1, 2])}
    passed, reason, _ = judge(
        [CallOutcome("ok", node)], [test], 1e-6, oracle=lambda t, v: check_with_oracle(name, t, v, 1e-6)
    )
    assert passed or reason


@QUICK
@given(anything)
def test_livecodebench_and_bigcodebench_judges_never_raise(node):
    result = ExecResult("ok", value=node)
    for kind in ("functional", "stdin"):
        passed, reason = judge_result({"kind": kind}, {"output": "[1, 2]"}, result)
        assert passed or reason
    passed, reason, _ = judge_test(result, "test_a", "n0nce", [])
    assert not passed and reason


# --- the pass matrix, with a scripted sandbox ------------------------------------------


class ScriptedSandbox:
    """Answers the pass matrix's evaluator honestly and every solution call with ``reply``
    (or, for a test, answers the evaluator with ``prepared``)."""

    workers = 1

    def __init__(self, reply=None, prepared=None):
        self.reply, self.prepared = reply, prepared

    def _prepare(self, literal):
        if self.prepared is not None:
            return ExecResult("ok", value=self.prepared)
        calls = [repr(ast.literal_eval(source)) for source in literal["calls"]]
        return ExecResult("ok", value=enc((calls, [ast.literal_eval(side) for side in literal["sides"]])))

    def run_each_many(self, jobs):
        out = []
        for _code, entry, inputs, _timeout in jobs:
            assert entry in (PREPARE, ENTRY), entry
            out.append(
                [
                    self._prepare(literal) if entry == PREPARE else ExecResult("ok", value=self.reply)
                    for literal in inputs
                ]
            )
        return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anything)
def test_the_pass_matrix_fails_a_garbled_reply_with_a_reason(reply):
    m = pass_matrix(
        ["def solve(x):\n    return 2\n"], ["assert solve(1) == 2"], "solve", ScriptedSandbox(reply), 1.0
    )
    try:
        honest = decode_value(reply) == [("ok", 2)]
    except MalformedValue:
        honest = False
    assert m.passed == [[honest]]
    assert (m.reasons[0][0] is None) == honest
    if not honest:
        assert isinstance(m.reasons[0][0], str) and m.reasons[0][0]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anything)
def test_the_pass_matrix_drops_a_test_whose_evaluation_is_garbled(prepared):
    sb = ScriptedSandbox(shim_reply(["int", 2]), prepared)
    m = pass_matrix(["def solve(x):\n    return 2\n"], ["assert solve(1) == 2"], "solve", sb, 1.0)
    assert m.malformed[0] is None or (isinstance(m.malformed[0], str) and not m.passed[0][0])


def test_a_garbled_test_evaluation_is_malformed_not_a_crash():
    for prepared in (
        {"a": 1},
        ["tuple", {"x": 1, "y": 2}],
        ["tuple", [["list", [["int", 1]]], ["list", []]]],
    ):
        m = pass_matrix(
            ["def solve(x):\n    return 2\n"],
            ["assert solve(1) == 2"],
            "solve",
            ScriptedSandbox(shim_reply(["int", 2]), prepared),
            1.0,
        )
        assert m.malformed[0].startswith("test_garbled") and m.passed == [[False]]


# --- end to end, through the real sandbox -------------------------------------------------


def forging(value_node, kind=("str", "ok")) -> str:
    """A solution that writes its own well-framed reply on the result channel and leaves
    (shaped like the reply of whichever shim it runs under)."""
    replies = [json.dumps(shim_reply(value_node, kind, timed)) for timed in (False, True)]
    return (
        "import os, json\n\ndef solve(*args):\n"
        f"    reply = json.loads({replies[1]!r} if '__selfplay_timed_calls__' in globals() else {replies[0]!r})\n"
        "    body = json.dumps({'status': 'ok', 'value': reply, 'value_repr': 'x'}).encode()\n"
        "    os.write(3, b'SBX1' + len(body).to_bytes(4, 'big') + body)\n    os._exit(0)\n"
    )


FORGED = {
    "set_of_lists": (forging(["set", [["list", []]]]), f"{MALFORMED}:a set member is an unhashable list"),
    "list_as_key": (
        forging(["dict", [[["list", []], ["int", 1]]]]),
        f"{MALFORMED}:a dict key is an unhashable list",
    ),
    "text_for_int": (forging(["int", "twelve"]), f"{MALFORMED}:an int node holds 'twelve'"),
    "text_for_float": (forging(["float", ["x"]]), f"{MALFORMED}:a float node holds a list, not text"),
    "unknown_tag": (forging(["pickle", "gASV"]), f"{MALFORMED}:unknown tag 'pickle'"),
    "wrong_arity": (forging(["int", 1, 2]), f"{MALFORMED}:a node tagged 'int' has 3 fields instead of 2"),
    "deep_garbage": (forging(nested(400)), f"{MALFORMED}:nested too deeply to decode"),
    "kind_not_text": (forging(["int", 1], ("str", ["ok"])), f"{MALFORMED}:an outcome is neither"),
}
HOSTILE_VALUES = {
    # built by the real encoder from values a solution may return
    "int_liar": (
        "class Liar(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n"
        "def solve(*args):\n    return Liar(10**400)\n",
        "wrong_output",
    ),
    "bad_repr": (
        "class Bad:\n    def __repr__(self):\n        raise RuntimeError('no')\n\n"
        "def solve(*args):\n    return Bad()\n",
        "error:return value not encodable",
    ),
    "weird_frozenset": (
        "class W:\n    __hash__ = lambda s: 1\n    __eq__ = lambda s, o: True\n\n"
        "def solve(*args):\n    return frozenset([W(), 1.5, (None, b'x')])\n",
        "wrong_output",
    ),
    "float_for_huge": ("def solve(*args):\n    return 1.5\n", "wrong_output"),
}


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=1, limits=SandboxLimits(memory_mb=512)) as sandbox:
        yield sandbox


def test_hostile_replies_through_the_sandbox_fail_only_their_answer(sb):
    """Each hostile answer is judged against a huge integer, then an honest one still passes,
    under both call shims (``run_calls`` and the timed one EvalPlus scoring uses)."""
    expected = 10**400 + 1
    tests = [{"args": args_source([1]), "expected": enc(expected)}]
    calls = [t["args"] for t in tests]
    honest = "def solve(*args):\n    return 10**400 + 1\n"
    off_by_one = "def solve(*args):\n    return 10**400\n"
    cases = {**FORGED, **HOSTILE_VALUES, "off_by_one": (off_by_one, "wrong_output"), "honest": (honest, None)}
    timed = sb.run_many([timed_job(code, "solve", calls, [5.0], 10.0) for code, _ in cases.values()])
    for (name, (code, reason)), timed_result in zip(cases.items(), timed):
        for outcomes in (run_calls(sb, code, "solve", calls, 5.0, 10.0), timed_outcomes(timed_result, 1)):
            passed, why, _ = judge(outcomes, tests, 1e-6)
            assert passed == (reason is None), name
            assert (why or "").startswith(reason or ""), (name, why)


def test_hostile_replies_in_the_pass_matrix_fail_their_cells_and_the_matrix_goes_on(sb):
    names = list(FORGED) + ["int_liar", "weird_frozenset", "right"]
    codes = [FORGED[n][0] for n in FORGED] + [
        HOSTILE_VALUES["int_liar"][0],
        HOSTILE_VALUES["weird_frozenset"][0],
        "def solve(x):\n    return 10**400 + x\n",
    ]
    tests = ["assert solve(1) == 10**400 + 1", "assert abs(solve(1) - 1.5) < 1e-3", "assert solve(1) != 2"]
    for mode in (LOAD_ONCE, ONE_AT_A_TIME):
        m = pass_matrix(codes, tests, "solve", sb, 5.0, mode=mode)
        assert m.malformed == [None, None, None]
        for s, name in enumerate(names[: len(FORGED)]):
            assert m.passed[s] == [False, False, False], (mode, name)
            assert all(why.startswith(FORGED[name][1]) for why in m.reasons[s]), (mode, name, m.reasons[s])
        liar, weird, right = len(FORGED), len(FORGED) + 1, len(FORGED) + 2
        assert m.passed[liar] == [False, False, True] and m.reasons[liar][:2] == [
            "wrong_output",
            "check_raised:OverflowError",
        ]
        assert (
            m.passed[weird] == [False, False, False] and m.reasons[weird][0] == "not_plain_value:solution.W"
        )
        assert m.passed[right] == [True, False, True] and m.reasons[right][1] == "check_raised:OverflowError"
