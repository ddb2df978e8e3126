"""Parsing Alice's and Bob's outputs: well-formed answers, every rejection reason,
normalisation, and property tests that the parser never raises."""

from __future__ import annotations

import ast
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selfplay.tracks.sinq import parse as parse_mod
from selfplay.tracks.sinq.parse import (
    MAX_OUTPUT_BYTES,
    REASONS,
    AliceParse,
    BobParse,
    ParseFailure,
    normalise_program,
    parse_alice,
    parse_bob,
    parse_input_literal,
)

FENCE = "```"


def alice_text(
    program: str, literal: str, analysis: str = "Looking at the loop bounds.", lang: str = "python"
) -> str:
    return (
        f"# Analysis\n{analysis}\n\n"
        f"# Generated program\n{FENCE}{lang}\n{program}\n{FENCE}\n\n"
        f"# Diverging input example\n{FENCE}{lang}\n{literal}\n{FENCE}\n"
    )


def bob_text(answer: str, literal: str | None, analysis: str = "Both loop over xs.") -> str:
    text = f"# Analysis\n{analysis}\n\n# Equivalent?\n{answer}\n\n# Diverging input example\n"
    if literal is not None:
        text += f"{FENCE}python\n{literal}\n{FENCE}\n"
    return text


MAX_SUB = """\
def max_sub_array_sum(a, size):
    max_so_far = 0
    max_ending_here = 0
    for i in range(0, size):
        max_ending_here = max_ending_here + a[i]
        if max_ending_here < 0:
            pass  # the reset is gone
        elif max_so_far < max_ending_here:
            max_so_far = max_ending_here
    return max_so_far"""

REALISTIC_ALICE = f"""\
# Analysis

The original resets the running sum when it drops below zero.

## Where inputs flow

Consider a negative prefix:

```python
a = [-5, 3]
```

### Plan
Drop the reset so that a negative prefix drags later sums down.

# Generated program

```py
{MAX_SUB}
```


# Diverging input example

```python
{{
    "a": [-5, 3],
    "size": 2,
}}
```
"""


# ------------------------------------------------------------------ well formed


def test_realistic_alice_output():
    r = parse_alice(REALISTIC_ALICE, "max_sub_array_sum")
    assert r.ok and r.reason is None
    assert r.diverging_input == {"a": [-5, 3], "size": 2}
    assert r.input_literal == "{'a': [-5, 3], 'size': 2}"
    assert "# the reset is gone" not in r.program  # comments vanish
    assert r.program == ast.unparse(ast.parse(MAX_SUB))
    assert "## Where inputs flow" in r.analysis and "a = [-5, 3]" in r.analysis


def test_alice_bytes_input_and_crlf():
    raw = REALISTIC_ALICE.replace("\n", "\r\n").encode("utf-8")
    r = parse_alice(raw, "max_sub_array_sum")
    assert r.ok, r


def test_alice_tolerant_headings_and_unlabelled_fences():
    text = (
        "Sure, here it is.\n\n# ANALYSIS:\nshort\n\n#  Generated  Program\n\n\n```\ndef f(x):\n    return x\n```\n"
        "# **Diverging input example**\n~~~python\n{'x': 1}\n~~~\n"
    )
    r = parse_alice(text, "f")
    assert r.ok, r
    assert r.diverging_input == {"x": 1}


def test_alice_setext_headings():
    text = "Analysis\n========\nx\n\nGenerated program\n=================\n```python\ndef f(): pass\n```\n\nDiverging input example\n=======================\n```python\n{}\n```\n"
    r = parse_alice(text, "f")
    assert r.ok, r
    assert r.diverging_input == {}


def test_unknown_level1_heading_inside_analysis_stays_in_analysis():
    text = alice_text(
        "def f(x):\n    return -x", "{'x': 2}", analysis="step one\n\n# Step 2\n```python\nf(1)\n```\nmore"
    )
    r = parse_alice(text, "f")
    assert r.ok, r
    assert "# Step 2" in r.analysis and "f(1)" in r.analysis


def test_unknown_section_after_program_is_ignored():
    text = (
        alice_text("def f(x):\n    return -x", "{'x': 2}") + "\n# Notes\n```python\nprint('ignored')\n```\n"
    )
    assert parse_alice(text, "f").ok


def test_other_language_blocks_are_ignored_beside_a_python_block():
    text = (
        "# Analysis\nx\n# Generated program\n```python\ndef f(x):\n    return x\n```\n"
        "```text\nsample output\n```\n# Diverging input example\n```json\n{\"x\": 1}\n```\n```python\n{'x': 1}\n```\n"
    )
    r = parse_alice(text, "f")
    assert r.ok, r


@pytest.mark.parametrize(
    "answer", ["No", "No.", "no", "**No**", "NO", "No, they differ for empty lists.", "*no*"]
)
def test_bob_says_no(answer):
    r = parse_bob(bob_text(answer, '{"xs": [], "k": -1}'))
    assert r.ok, r
    assert r.equivalent == "no"
    assert r.diverging_input == {"xs": [], "k": -1}
    assert r.input_literal == "{'xs': [], 'k': -1}"


@pytest.mark.parametrize("answer", ["Yes", "yes.", "**Yes**"])
def test_bob_says_yes_without_input(answer):
    r = parse_bob(bob_text(answer, None))
    assert r == BobParse(ok=True, analysis="Both loop over xs.", equivalent="yes")


def test_bob_yes_ignores_an_unusable_input_section():
    r = parse_bob(bob_text("Yes", "not even a literal"))
    assert r.ok and r.equivalent == "yes" and r.diverging_input is None


def test_bob_yes_keeps_a_usable_input():
    # Correctness is decided by running his input, whatever he answered.
    r = parse_bob(bob_text("Yes", "{'k': 2}"))
    assert r.ok and r.equivalent == "yes" and r.diverging_input == {"k": 2}


def test_bob_yes_without_input_heading():
    r = parse_bob("# Analysis\nsame\n# Equivalent?\nYes\n")
    assert r.ok and r.equivalent == "yes"


def test_bob_realistic_with_subheadings():
    text = """# Analysis
## Program 1
Loops over `range(n)`.
```python
for i in range(n): ...
```
## Program 2
Loops over `range(1, n)`.

# Equivalent?

No

# Diverging input example

```python
{"n": 1}
```
"""
    r = parse_bob(text)
    assert r.ok and r.equivalent == "no" and r.diverging_input == {"n": 1}


# ------------------------------------------------------------ input literals


def test_input_literal_types():
    value, src = parse_input_literal(
        "{'t': (1, 2), 's': {3, 1}, 'b': b'\\x00a', 'n': -7, 'f': -2.5, 'e': set(), 'one': (1,), 'c': 1-2j, 'z': None}"
    )
    assert value == {
        "t": (1, 2),
        "s": {1, 3},
        "b": b"\x00a",
        "n": -7,
        "f": -2.5,
        "e": set(),
        "one": (1,),
        "c": 1 - 2j,
        "z": None,
    }
    assert (
        src
        == "{'t': (1, 2), 's': {1, 3}, 'b': b'\\x00a', 'n': -7, 'f': -2.5, 'e': set(), 'one': (1,), 'c': (1-2j), 'z': None}"
    )
    assert ast.literal_eval(src) == value


def test_input_literal_sets_are_written_in_a_stable_order():
    _, src = parse_input_literal("{'s': {'pear', 'apple', 'fig', (2, 'b')}}")
    assert src == "{'s': {'apple', 'fig', 'pear', (2, 'b')}}"


def test_input_literal_infinity_round_trips():
    value, src = parse_input_literal("{'x': 1e999, 'y': -1e999, 'z': 1e999j}")
    assert src == "{'x': 1e999, 'y': -1e999, 'z': (0.0+1e999j)}"
    assert ast.literal_eval(src) == value


def test_input_literal_comment_and_indentation():
    value, _ = parse_input_literal('  {\n    "a": 1,  # first\n    "b": "x",\n}\n')
    assert value == {"a": 1, "b": "x"}


@pytest.mark.parametrize(
    "literal,reason",
    [
        ("{1: 2}", "input_bad_keys"),
        ("{'a b': 1}", "input_bad_keys"),
        ("{'class': 1}", "input_bad_keys"),
        ("{'1x': 1}", "input_bad_keys"),
        ("{(1,): 1}", "input_bad_keys"),
        ("[1, 2]", "input_not_dict"),
        ("('a', 1)", "input_not_dict"),
        ("dict(a=1)", "input_not_literal"),
        ("x = {'a': 1}", "input_not_literal"),
        ("{'a': f(1)}", "input_not_literal"),
        ("{'a': 1", "input_not_literal"),
        ("", "input_not_literal"),
        ("{'a': " + "1" * 5000 + "}", "input_too_large"),
        ("{'a': 0x" + "f" * 4000 + "}", "input_too_large"),
        ("{'a': " + "[" * 300 + "]" * 300 + "}", "input_not_literal"),
        ("{'a': " + "-" * 20000 + "1}", "input_too_large"),
        ("{'a': '" + "x" * (parse_mod.MAX_INPUT_LITERAL_CHARS + 1) + "'}", "input_too_large"),
    ],
)
def test_input_literal_rejections(literal, reason):
    with pytest.raises(ParseFailure) as info:
        parse_input_literal(literal)
    assert info.value.reason == reason


# -------------------------------------------------------------- normalisation


def test_normalise_program_removes_comments_and_layout():
    a = "def f(x):\n    # add one\n    return (x+1)   # done\n\n\n"
    b = "def f( x ):\n    return x + 1"
    assert normalise_program(a, "f") == normalise_program(b, "f") == "def f(x):\n    return x + 1"


def test_normalise_program_entry_point_rules():
    assert normalise_program("import math\nclass A: pass\ndef helper(): pass\ndef f(): return helper()", "f")
    for code in (
        "def g(): pass",
        "class f: pass",
        "def outer():\n    def f(): pass",
        "f = lambda: 1",
        "async def f(): pass",
    ):
        with pytest.raises(ParseFailure) as info:
            normalise_program(code, "f")
        assert info.value.reason == "missing_entry_point"


# ------------------------------------------------------- every reason reached

VALID_PROGRAM = "def f(x):\n    return x - 1"

REASON_EXAMPLES: list[tuple[str, object, str]] = [
    ("alice", b"# Analysis\n\xff\xfe", "not_utf8"),
    ("bob", "# Analysis\n\ud800", "not_utf8"),
    ("alice", "", "empty_output"),
    ("bob", "  \n\t\n", "empty_output"),
    ("alice", "x" * (MAX_OUTPUT_BYTES + 1), "output_too_large"),
    ("bob", b"y" * (MAX_OUTPUT_BYTES + 1), "output_too_large"),
    ("alice", "é" * (MAX_OUTPUT_BYTES // 2 + 1), "output_too_large"),
    ("alice", "just some prose\n## only level two\n", "no_sections"),
    ("bob", "```python\n{'x': 1}\n```", "no_sections"),
    ("alice", "# Analysis\nx\n# Generated program\n```python\ndef f(x): pass\n```\n", "missing_section"),
    (
        "alice",
        "# Generated program\n```python\ndef f(x): pass\n```\n# Diverging input example\n```\n{}\n```",
        "missing_section",
    ),
    ("bob", "# Analysis\nx\n# Answer\nNo", "missing_section"),
    ("bob", "# Analysis\nx\n# Equivalent?\nNo\n", "missing_section"),
    (
        "alice",
        alice_text(VALID_PROGRAM, "{'x': 1}") + "# Generated program\n```python\ndef f(x): pass\n```",
        "duplicate_section",
    ),
    ("bob", "# Analysis\na\n# Analysis\nb\n# Equivalent?\nYes", "duplicate_section"),
    (
        "alice",
        "# Analysis\nx\n# Generated program\ndef f(x): pass\n# Diverging input example\n```\n{}\n```",
        "no_code_block",
    ),
    (
        "alice",
        "# Analysis\nx\n# Generated program\n    def f(x):\n        pass\n\n# Diverging input example\n```\n{}\n```",
        "no_code_block",
    ),
    ("bob", bob_text("No", None), "no_code_block"),
    ("bob", bob_text("No", None) + "{'x': 1}\n", "no_code_block"),
    ("alice", alice_text(VALID_PROGRAM, "{'x': 1}", lang="javascript"), "wrong_code_language"),
    ("bob", bob_text("No", None) + '```json\n{"x": 1}\n```\n', "wrong_code_language"),
    (
        "alice",
        "# Analysis\nx\n# Generated program\n```python\ndef f(x): pass\n```\n```python\ndef f(x): return 1\n```\n# Diverging input example\n```\n{}\n```",
        "several_code_blocks",
    ),
    ("alice", alice_text(VALID_PROGRAM, "{'x': 1}\n```\n```python\n{'x': 2}"), "several_code_blocks"),
    ("bob", bob_text("No", "{'x': 1}") + "```python\n{'x': 2}\n```\n", "several_code_blocks"),
    ("alice", alice_text("def f(x)\n    return x", "{'x': 1}"), "syntax_error"),
    ("alice", alice_text("def f(x):\nreturn x", "{'x': 1}"), "syntax_error"),
    ("alice", alice_text("def f(x):\n    return " + "-" * 20000 + "x", "{'x': 1}"), "code_too_complex"),
    ("alice", alice_text("def g(x):\n    return x", "{'x': 1}"), "missing_entry_point"),
    ("alice", alice_text(VALID_PROGRAM, "[1]"), "input_not_dict"),
    ("alice", alice_text(VALID_PROGRAM, "x=1"), "input_not_literal"),
    ("alice", alice_text(VALID_PROGRAM, "{'x': os.getcwd()}"), "input_not_literal"),
    ("alice", alice_text(VALID_PROGRAM, "{0: 1}"), "input_bad_keys"),
    ("alice", alice_text(VALID_PROGRAM, "{'x': " + "9" * 5000 + "}"), "input_too_large"),
    ("bob", bob_text("No", "{'x': 1, 'y z': 2}"), "input_bad_keys"),
    ("bob", bob_text("No", "{'x': [1, 2}"), "input_not_literal"),
    ("bob", bob_text("Maybe", "{'x': 1}"), "bob_no_answer"),
    ("bob", bob_text("", "{'x': 1}"), "bob_no_answer"),
    ("bob", bob_text("Not equivalent", "{'x': 1}"), "bob_no_answer"),
    ("bob", bob_text("N/A", "{'x': 1}"), "bob_no_answer"),
]


def _run(who: str, text: object):
    return parse_alice(text, "f") if who == "alice" else parse_bob(text)


@pytest.mark.parametrize(
    "who,text,reason", REASON_EXAMPLES, ids=[f"{r}-{i}" for i, (_, _, r) in enumerate(REASON_EXAMPLES)]
)
def test_rejection_reason(who, text, reason):
    result = _run(who, text)
    assert not result.ok
    assert result.reason == reason, result
    assert reason in REASONS
    assert isinstance(result.detail, str)


def test_missing_section_names_it():
    r = parse_alice("# Analysis\nx\n# Generated program\n```python\ndef f(x): pass\n```\n", "f")
    assert r.detail == "# Diverging input example"
    assert parse_bob("# Analysis\nx\n# Equivalent?\nNo\n").detail == "# Diverging input example"


def test_partial_fields_are_kept_on_failure():
    r = parse_alice(alice_text(VALID_PROGRAM, "[1]"), "f")
    assert r.reason == "input_not_dict"
    assert r.program == VALID_PROGRAM and r.analysis
    b = parse_bob(bob_text("No", "[1]"))
    assert b.equivalent == "no" and not b.ok


def test_markdown_error_reason(monkeypatch):
    def broken(text):
        raise RuntimeError("boom")

    monkeypatch.setattr(parse_mod, "_markdown", lambda: broken)
    assert parse_alice(alice_text(VALID_PROGRAM, "{'x': 1}"), "f").reason == "markdown_error"
    assert parse_bob(bob_text("No", "{'x': 1}")).reason == "markdown_error"


def test_unparse_failed_reason(monkeypatch):
    monkeypatch.setattr(ast, "unparse", lambda tree: "def f(:")
    assert parse_alice(alice_text(VALID_PROGRAM, "{'x': 1}"), "f").reason == "unparse_failed"


def test_internal_error_reason(monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(parse_mod, "split_sections", broken)
    assert parse_alice(alice_text(VALID_PROGRAM, "{'x': 1}"), "f").reason == "internal_error"
    assert parse_bob(bob_text("No", "{'x': 1}")).reason == "internal_error"


def test_every_reason_is_reachable():
    reached = {reason for _, _, reason in REASON_EXAMPLES}
    reached |= {"markdown_error", "unparse_failed", "internal_error"}  # via the monkeypatched tests above
    assert reached == set(REASONS)


def test_parse_failure_rejects_unknown_reason():
    with pytest.raises(ValueError):
        ParseFailure("no_such_reason", "")


# --------------------------------------------------------------- size / speed


@pytest.mark.parametrize("size", [10**6, 10**8])
def test_huge_outputs_rejected_fast(size):
    text = "# Analysis\n" + "a" * size
    start = time.perf_counter()
    assert parse_alice(text, "f").reason == "output_too_large"
    assert parse_bob(text.encode()).reason == "output_too_large"
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("unit", ["[a](", "> ", "*a ", "- ", "<", "`", "1. ", "**a _b "])
def test_pathological_markdown_within_cap(unit):
    text = "# Analysis\n" + unit * ((MAX_OUTPUT_BYTES - 20) // len(unit))
    start = time.perf_counter()
    r = parse_alice(text, "f")
    assert not r.ok and r.reason in REASONS and r.reason != "internal_error"
    assert time.perf_counter() - start < 10.0


# ------------------------------------------------------------------ properties


def _check_alice(r: AliceParse) -> None:
    assert isinstance(r, AliceParse)
    if r.ok:
        assert r.reason is None
        ast.parse(r.program)
        assert isinstance(r.diverging_input, dict)
        assert ast.literal_eval(r.input_literal) == r.diverging_input
    else:
        assert r.reason in REASONS and r.reason != "internal_error", r


def _check_bob(r: BobParse) -> None:
    assert isinstance(r, BobParse)
    if r.ok:
        assert r.equivalent in ("yes", "no")
        if r.equivalent == "no":
            assert isinstance(r.diverging_input, dict)
            ast.literal_eval(r.input_literal)
        elif r.diverging_input is not None:  # "Yes" with an input anyway: kept, and run like any other
            assert isinstance(r.diverging_input, dict)
            ast.literal_eval(r.input_literal)
    else:
        assert r.reason in REASONS and r.reason != "internal_error", r


PROPS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(st.text())
def test_property_arbitrary_text(text):
    _check_alice(parse_alice(text, "f"))
    _check_bob(parse_bob(text))


@PROPS
@given(st.binary())
def test_property_arbitrary_bytes(data):
    _check_alice(parse_alice(data, "f"))
    _check_bob(parse_bob(data))


HEADINGS = st.sampled_from(
    [
        "# Analysis",
        "# Generated program",
        "# Diverging input example",
        "# Equivalent?",
        "# equivalent",
        "## Analysis",
        "# Notes",
        "#Analysis",
        "# GENERATED PROGRAM:",
        "Analysis\n===",
        "> # Generated program",
        "- # Analysis",
    ]
)
FENCES = st.sampled_from(["```", "```python", "```py", "~~~", "```json", "````python", "  ```", "```python3"])
CODE = st.one_of(
    st.sampled_from(
        [
            "def f(x):\n    return x",
            "def f(*a, **k):\n    pass",
            "def g(): pass",
            "def f(x)\n  return",
            "async def f(): pass",
            "{'x': 1}",
            "{'x': (1, 2), 'y': {3}}",
            "{1: 2}",
            "[1]",
            "{'x': -1e999}",
            "{\"a\": b'\\xff'}",
            "{'x': " + "[" * 50,
            "def f(x):\n    return (" * 3 + "x" + ")" * 3,
        ]
    ),
    st.text(max_size=60),
)
WORDS = st.sampled_from(["Yes", "No", "**No**", "no.", "Maybe", "", "yes, equal", "`No`", "\n"])


@st.composite
def structured_junk(draw):
    parts = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            parts.append(draw(HEADINGS))
        elif kind == 1:
            fence = draw(FENCES)
            close = fence.strip()[:3] if draw(st.booleans()) else ""
            parts.append(f"{fence}\n{draw(CODE)}\n{close}")
        elif kind == 2:
            parts.append(draw(WORDS))
        elif kind == 3:
            parts.append(draw(CODE))
        else:
            parts.append(draw(st.text(alphabet="#`~*_-=>[]{}():'\" \n\tabcx0123", max_size=40)))
    return draw(st.sampled_from(["\n", "\n\n", "\r\n"])).join(parts)


@PROPS
@given(structured_junk())
def test_property_structured_junk(text):
    _check_alice(parse_alice(text, "f"))
    _check_bob(parse_bob(text))
    _check_alice(parse_alice(text.encode("utf-8", "surrogatepass"), "f"))


BODIES = st.one_of(
    st.builds(lambda f, c: f"{f}\n{c}\n```", FENCES, CODE),
    st.builds(lambda c, d: f"```python\n{c}\n```\n\n```py\n{d}\n```", CODE, CODE),
    CODE,
    WORDS,
    st.just(""),
)


@st.composite
def near_miss(draw):
    """Outputs close to the expected layout: each section present with high probability,
    bodies drawn from plausible and broken code blocks, answers and words."""
    names = draw(
        st.sampled_from(
            [
                ["Analysis", "Generated program", "Diverging input example"],
                ["Analysis", "Equivalent?", "Diverging input example"],
            ]
        )
    )
    parts = []
    for name in names:
        if draw(st.integers(0, 9)) > 0:
            parts.append(f"# {name}")
        parts.append(draw(BODIES))
        if name.startswith("Equivalent"):
            parts.append(draw(WORDS))
    return "\n\n".join(parts)


@PROPS
@given(near_miss())
def test_property_near_miss(text):
    _check_alice(parse_alice(text, "f"))
    _check_bob(parse_bob(text))


INPUT_VALUES = st.dictionaries(
    st.text(alphabet="abcxyz_", min_size=1, max_size=6),  # identifiers, never keywords
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8)
        | st.binary(max_size=4),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.tuples(inner, inner)
            | st.frozensets(st.integers(), max_size=3).map(set)
        ),
        max_leaves=6,
    ),
    max_size=4,
)
valid_alice = st.builds(
    lambda lang, value: (alice_text("def f(**kw):\n    return len(kw)", repr(value), lang=lang), value),
    st.sampled_from(["python", "py", "", "Python"]),
    INPUT_VALUES,
)


@PROPS
@given(valid_alice)
def test_property_valid_inputs_round_trip(case):
    text, value = case
    r = parse_alice(text, "f")
    assert r.ok, r
    assert r.diverging_input == value
    assert parse_input_literal(r.input_literal) == (r.diverging_input, r.input_literal)
