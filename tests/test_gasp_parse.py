"""Reading GASP answers (tracks/gasp/parse.py): right, wrong and hostile teacher proposals
and student answers; every failure is a reason code, never an exception."""

from __future__ import annotations

import pytest

from selfplay.evaluate.python_calls import parse_args
from selfplay.tracks.gasp import parse
from selfplay.tracks.gasp.parse import (
    REASONS,
    literal_value,
    parse_abduction,
    parse_deduction,
    parse_induction,
    parse_proposal,
    read_arguments,
    read_literal,
)

CODE = "def f(xs, k):\n    return sum(xs) + k\n"
INPUTS = ["[1, 2], 3", "[], 0", "[5], -1", "[[1], 2], 4", "{'a': 1}, 2"]


def proposal(question="Return the sum of the list plus k.", code=CODE, inputs=INPUTS, before="", after="\n"):
    blocks = "".join(f"\n```input\n{i}\n```\n" for i in inputs)
    return f"{before}Question: {question}\n```python\n{code}```\n{blocks}{after}"


# --------------------------------------------------------------------------- the teacher: right
def test_a_well_formed_proposal_parses_to_question_code_and_five_argument_tuples():
    prop, why = parse_proposal(proposal())
    assert why is None
    assert prop == {
        "question": "Return the sum of the list plus k.",
        "code": CODE,
        "inputs": ["([1, 2], 3)", "([], 0)", "([5], -1)", "([[1], 2], 4)", "({'a': 1}, 2)"],
    }
    # each input is an argument tuple parse_args reads back (what the sandbox shim calls f with)
    assert [parse_args(s) for s in prop["inputs"]][0] == ([1, 2], 3)


def test_one_argument_a_tuple_argument_and_two_arguments_are_told_apart():
    prop, _ = parse_proposal(proposal(inputs=["5", "(1, 2)", "1, 2", "'ab'", "[1, 2],"]))
    assert [parse_args(s) for s in prop["inputs"]] == [(5,), ((1, 2),), (1, 2), ("ab",), ([1, 2],)]


def test_reasoning_before_the_question_and_drafts_in_blocks_are_skipped():
    before = (
        "Let me think. Question: what would be easy?\n```python\ndef g(x):\n    return x\n```\n"
        "**Question:** not this one either\n\n"
    )
    prop, why = parse_proposal(proposal(before=before, question="Count the items."))
    assert why is None and prop["question"] == "Count the items."
    # a first attempt with its own question and program, then the real one
    draft = "Question: draft question\n```python\ndef f(x):\n    return 0\n```\nLet me start over.\n"
    prop, why = parse_proposal(proposal(before=draft, after="\nQuestion: anything else?\n"))
    assert why is None and prop["question"] == "Return the sum of the list plus k." and prop["code"] == CODE
    # a label in bold, a multi-line question, other blocks after the program
    text = (
        "**Question:** Count the odd items\nof the list, plus k.\n\n```python\n"
        + CODE
        + "```\n"
        + "".join(f"```input\n{i}\n```\n```output\n0\n```\n" for i in INPUTS)
    )
    prop, why = parse_proposal(text)
    assert why is None and prop["question"] == "Count the odd items\nof the list, plus k."


def test_a_function_named_otherwise_is_renamed_with_its_recursive_calls():
    code = "import math\nMOD = 7\n\ndef solve(n):\n    'doc'\n    return 1 if n < 2 else solve(n - 1) * n % MOD\n"
    prop, why = parse_proposal(proposal(code=code, inputs=["3"] * 5))
    assert why is None
    assert "def f(n):" in prop["code"] and "f(n - 1)" in prop["code"] and "solve" not in prop["code"]
    # helpers nested inside f are fine
    nested = "def f(xs):\n    def helper(x):\n        return x * 2\n    return [helper(x) for x in xs]\n"
    assert parse_proposal(proposal(code=nested))[1] is None


def test_crlf_line_ends_and_a_cut_off_tail_after_the_fifth_input_are_fine():
    assert parse_proposal(proposal().replace("\n", "\r\n"))[1] is None
    assert parse_proposal(proposal(after="Now the outputs:\n```output\n3"))[1] is None


# --------------------------------------------------------------------------- the teacher: wrong
@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty_output"),
        ("   \n\t", "empty_output"),
        (None, "empty_output"),
        ("x" * (parse.MAX_OUTPUT_CHARS + 1), "output_too_large"),
        (proposal().replace("Question: ", "Task: "), "no_question"),
        (proposal(question=""), "empty_question"),
        (proposal(question="x" * (parse.MAX_QUESTION_CHARS + 1)), "question_too_long"),
        (proposal().replace("```python", "```"), "no_code_block"),
        ("```python\n" + CODE + "```\nQuestion: sum it\n", "no_code_block"),
        (proposal(after="```python\nprint(1)\n```\n"), "several_code_blocks"),
        ("Question: q\n```python\ndef f(x):\n    return x\n", "unclosed_block"),
        (proposal(code="def f(x):\n    return x +\n"), "code_syntax_error"),
        (proposal(code="x = 1\n"), "no_function_f"),
        (proposal(code="def f(x):\n    return x\ndef g(x):\n    return x\n"), "several_functions"),
        (proposal(code="def f(x):\n    return x\nprint(f(3))\n"), "top_level_statement"),
        (proposal(code="class A:\n    pass\ndef f(x):\n    return x\n"), "top_level_statement"),
        (proposal(code="async def f(x):\n    return x\n"), "top_level_statement"),
        (proposal(code="def g(x):\n    f = 2\n    return x * f\n"), "name_clash"),
        (proposal(code="from m import f\ndef g(x):\n    return x\n"), "name_clash"),
        (proposal(inputs=INPUTS[:4]), "wrong_input_count"),
        (proposal(inputs=INPUTS + ["1"]), "wrong_input_count"),
        (proposal(inputs=INPUTS[:4], after="```input\n[1, 2"), "unclosed_block"),
        (proposal(inputs=INPUTS[:4] + [""]), "input_empty"),
        (proposal(inputs=INPUTS[:4] + ["x=3"]), "input_not_literal"),
    ],
)
def test_malformed_proposals_get_their_reason(text, reason):
    assert parse_proposal(text) == (None, reason)


# --------------------------------------------------------------------------- inputs and literals
@pytest.mark.parametrize(
    "source, expected",
    [
        ("3, [1, 2]", "(3, [1, 2])"),
        ("5", "(5,)"),
        ("(5)", "(5,)"),
        ("(1, 2)", "((1, 2),)"),
        ("  'a b' ,  None  ", "('a b', None)"),
        ("-1.5, True, b'x'", "(-1.5, True, b'x')"),
        ("{1, 2}, frozenset(), set([3])", "({1, 2}, frozenset(), set([3]))"),
        ("inf, -inf", "(inf, -inf)"),
        ("[1,\n 2], 3  # a comment", "([1, 2], 3)"),
        ("{'k': (1, [2])}", "({'k': (1, [2])},)"),
    ],
)
def test_arguments_read_as_the_source_of_their_tuple(source, expected):
    assert read_arguments(source) == (expected, None)
    assert isinstance(parse_args(expected), tuple)


@pytest.mark.parametrize(
    "source, reason",
    [
        ("", "input_empty"),
        ("  \n ", "input_empty"),
        ("x", "input_not_literal"),
        ("k=3", "input_not_literal"),
        ("*[1, 2]", "input_not_literal"),
        ("**{'a': 1}", "input_not_literal"),
        ("__import__('os').system('true')", "input_not_literal"),
        ("open('/etc/passwd')", "input_not_literal"),
        ("1), f(2", "input_not_literal"),
        ("1)\nf(2", "input_not_literal"),
        ("1) or (2", "input_not_literal"),
        ("[x for x in range(9)]", "input_not_literal"),
        ("lambda: 1", "input_not_literal"),
        ("2 ** 100000", "input_not_literal"),
        ("{[1]: 2}", "input_not_literal"),
        ("{[1], [2]}", "input_not_literal"),
        ("set(1)", "input_not_literal"),
        ("f'{1}'", "input_not_literal"),
        ("'a' 'b' +", "input_not_literal"),
        ("1" * (parse.MAX_LITERAL_CHARS + 1), "input_too_long"),
        ("[" * 17 + "]" * 17, "input_too_deep"),
        ("[" * 300 + "]" * 300, "input_too_deep"),
        ("(" * 1500 + ")" * 1500, "input_too_deep"),
        ("\x00", "input_not_literal"),
        ("'\ud800'", "input_not_literal"),
    ],
)
def test_bad_arguments_are_refused_without_evaluating_them(source, reason):
    assert read_arguments(source) == (None, reason)


def test_literals_read_as_one_value():
    assert read_literal("[1, (2, 'x')]") == ("[1, (2, 'x')]", None)
    assert read_literal("1, 2") == ("(1, 2)", None)  # as after `return`
    assert read_literal("(1, 2)") == ("(1, 2)", None)
    assert read_literal("-3  # minus three") == ("-3", None)
    assert literal_value(read_literal("{'a': [1, None]}")[0]) == {"a": [1, None]}
    assert literal_value(read_literal("1, 2")[0]) == (1, 2)
    assert literal_value(read_literal("(5,)")[0]) == (5,)
    for bad, why in (
        ("", "output_empty"),
        ("x", "output_not_literal"),
        ("1) + (2", "output_not_literal"),
        ("print(1)", "output_not_literal"),
        ("[" * 40 + "]" * 40, "output_too_deep"),
        ("9" * (parse.MAX_LITERAL_CHARS + 1), "output_too_long"),
        ("1\n2", "output_not_literal"),
    ):
        assert read_literal(bad) == (None, why), bad


def test_a_list_nested_up_to_the_limit_is_fine():
    ok = "[" * parse.MAX_LITERAL_DEPTH + "]" * parse.MAX_LITERAL_DEPTH
    assert read_arguments(ok)[1] is None and read_literal(ok)[1] is None


# --------------------------------------------------------------------------- the student
def test_induction_takes_the_last_python_block_and_names_its_function_f():
    text = (
        "I will try.\n```python\ndef f(x):\n    return 0\n```\nBetter:\n```python\ndef g(xs):\n"
        "    return sorted(xs)\n```\nDone."
    )
    assert parse_induction(text) == ("def f(xs):\n    return sorted(xs)\n", None)
    # without a python label, the last unlabelled block
    assert parse_induction("```\ndef f(x):\n    return x\n```") == ("def f(x):\n    return x\n", None)
    assert parse_induction("```py\ndef f(x):\n    return x\n```\n```\n5\n```")[1] is None


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty_output"),
        ("def f(x):\n    return x\n", "no_code_block"),
        ("```python\ndef f(x):\n    return x\n", "unclosed_block"),
        ("```python\ndef f(x) return x\n```", "code_syntax_error"),
        (
            "```python\ns = '''\n```\n'''\ndef f(x):\n    return x\n```",
            "code_syntax_error",
        ),  # a fence in a string
        ("```python\nprint(1)\n```", "top_level_statement"),
        ("```python\ndef f(x):\n    return x\ndef h(x):\n    return x\n```", "several_functions"),
        ("```python\n" + "x = (" * 300 + "1" + ")" * 300 + "\ndef f(): pass\n```", "code_syntax_error"),
    ],
)
def test_bad_induction_answers_get_their_reason(text, reason):
    assert parse_induction(text) == (None, reason)


def test_deduction_reads_the_last_output_block_as_a_literal():
    assert parse_deduction("f doubles it.\n```output\n[2, 4]\n```") == ("[2, 4]", None)
    assert parse_deduction("```output\n1\n```\nNo wait:\n```output\n 'ab' \n```") == ("'ab'", None)
    assert parse_deduction("```python\n[2, 4]\n```") == (None, "no_output_block")
    assert parse_deduction("```output\n[2, 4]") == (None, "unclosed_block")
    assert parse_deduction("```output\n\n```") == (None, "output_empty")
    assert parse_deduction("```output\n__import__('os').getcwd()\n```") == (None, "output_not_literal")


def test_abduction_reads_the_last_input_block_as_arguments():
    assert parse_abduction("```input\n[3, 1], 2\n```") == ("([3, 1], 2)", None)
    assert parse_abduction("```input\nf([3, 1], 2)\n```") == (None, "input_not_literal")
    assert parse_abduction("```output\n3\n```") == (None, "no_input_block")
    assert parse_abduction("```input\n\n```") == (None, "input_empty")


# --------------------------------------------------------------------------- hostile text
HOSTILE = [
    "```" * 20000,
    "```python\n" * 6000,
    "Question: x\n" * 5000 + "```python\ndef f(x):\n    return x\n```\n",
    "Question: q\n```python\n"
    + "def f(x):\n"
    + "    if x:\n" * 200
    + "        pass\n```\n"
    + "```input\n1\n```\n" * 5,
    "Question: q\n```python\ndef f(x):\n    return x\n```\n" + ("```input\n" + "[" * 3000 + "\n```\n") * 5,
    "Question: q\n```python\ndef f(x):\n    return x\n```\n" + "```input\n9" + "9" * 3998 + "\n```\n" * 5,
    "Question: q\n```python\n\x00def f(x):\n    return x\n```\n",
    "\ud800\udfff Question: \u2028\n```python\ndef f(x):\n    return x\n```",
    "Question: q\n```python\ndef solve(x):\n    return solve\n"
    + "    "
    + "(" * 199
    + ")" * 199
    + "\n```\n"
    + "```input\n1\n```\n" * 5,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_gives_a_reason_and_never_raises(text):
    for reader in (parse_proposal, parse_induction, parse_deduction, parse_abduction):
        value, why = reader(text)
        assert (value is None) == (why is not None)
        assert why is None or why in REASONS
