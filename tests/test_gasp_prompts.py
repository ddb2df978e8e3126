"""What the GASP teacher and student are shown (tracks/gasp/prompts.py): who sees what
(Sec. 3.3: the lift never sees the goalpost; the student never sees private pairs, nor
the answer it is asked for), the difficulty axis, and requests the parser can read."""

from __future__ import annotations

import pytest

from selfplay.errors import UserError
from selfplay.tracks.gasp import parse, prompts
from selfplay.tracks.gasp.prompts import (
    abduction_messages,
    call_text,
    deduction_messages,
    induction_messages,
    lemma_messages,
    lift_messages,
    onestep_messages,
    student_messages,
    unguided_messages,
)

GOALPOST = {
    "id": "gp-1",
    "title": "digit-sum-chain",
    "text": "Replace num by the sum of its digits until one digit is left. SECRET_GOALPOST_WORDS",
    "starter_code": "class Solution:\n    def digitRoot(self, num: int) -> int:\n        ",
}
TASK = {
    "id": "t1",
    "kind": "lemma",
    "axis": "io",
    "parent": "gp-1",
    "iteration": 0,
    "question": "Return the sum of the digits of n.",
    "code": "def f(n):\n    return sum(int(d) for d in str(n))\n",
    "pairs": [
        {"input": "(38,)", "output": ["int", "11"], "output_repr": "11"},
        {"input": "(0,)", "output": ["int", "0"], "output_repr": "0"},
        {"input": "(905,)", "output": ["int", "14"], "output_repr": "PRIVATE_OUT_2"},
        {"input": "(7777,)", "output": ["int", "28"], "output_repr": "PRIVATE_OUT_3"},
        {"input": "([1, 2], 'x')", "output": ["int", "3"], "output_repr": "PRIVATE_OUT_4"},
    ],
    "shown": [0, 1],
    "private": [2, 3, 4],
}


def text_of(messages) -> str:
    return "\n".join(m["content"] for m in messages)


def test_messages_are_a_system_and_a_user_turn():
    for messages in (
        lemma_messages(GOALPOST, "io"),
        lift_messages(TASK, "f"),
        onestep_messages(GOALPOST, "f", "onestep_hard"),
        unguided_messages([TASK], "io"),
        unguided_messages([], "f"),
        induction_messages(TASK),
        deduction_messages(TASK, 2),
        abduction_messages(TASK, 3),
    ):
        assert [m["role"] for m in messages] == ["system", "user"]
        assert all(isinstance(m["content"], str) and m["content"].strip() for m in messages)
    assert lemma_messages(GOALPOST, "io")[0]["content"] == prompts.TEACHER_SYSTEM
    assert induction_messages(TASK)[0]["content"] == prompts.STUDENT_SYSTEM != prompts.TEACHER_SYSTEM


def test_the_lemma_teacher_sees_the_goalpost_and_is_asked_for_an_easier_task_along_the_axis():
    io, f = text_of(lemma_messages(GOALPOST, "io")), text_of(lemma_messages(GOALPOST, "f"))
    for text in (io, f):
        assert "SECRET_GOALPOST_WORDS" in text and "digit-sum-chain" in text and "def digitRoot" in text
        assert "easier" in text and "```input" in text
    assert prompts.EASIER["io"] in io and prompts.EASIER["f"] not in io
    assert prompts.EASIER["f"] in f and prompts.EASIER["io"] not in f
    # no starter code: no empty block
    assert "Starter code" not in text_of(lemma_messages({**GOALPOST, "starter_code": ""}, "f"))


def test_the_lift_teacher_sees_only_the_lemma_and_its_shown_pairs():
    text = text_of(lift_messages(TASK, "io"))
    assert TASK["question"] in text and "def f(n):" in text
    assert ">>> f(38)\n11" in text and ">>> f(0)\n0" in text
    assert "SECRET_GOALPOST_WORDS" not in text and "digit-sum-chain" not in text  # never the goalpost
    assert "PRIVATE_OUT" not in text and "905" not in text  # never the private pairs
    assert prompts.HARDER["io"] in text and prompts.HARDER["f"] not in text
    assert prompts.HARDER["f"] in text_of(lift_messages(TASK, "f"))


def test_the_ablation_teachers():
    medium, hard = (text_of(onestep_messages(GOALPOST, "io", s)) for s in ("onestep_medium", "onestep_hard"))
    assert "SECRET_GOALPOST_WORDS" in medium and medium != hard
    assert prompts.ONESTEP_TARGET["onestep_hard"] in hard
    unguided = text_of(unguided_messages([TASK, {**TASK, "question": "Another one."}], "f"))
    assert "SECRET_GOALPOST_WORDS" not in unguided and "Another one." in unguided and "Exercise 2" in unguided
    assert "PRIVATE_OUT" not in unguided
    assert "Exercise 1" not in text_of(unguided_messages([], "io"))


@pytest.mark.parametrize(
    "call",
    [
        lambda: lemma_messages(GOALPOST, "g"),
        lambda: lift_messages(TASK, "IO"),
        lambda: onestep_messages(GOALPOST, "f", "onestep_easy"),
        lambda: unguided_messages([], None),
        lambda: deduction_messages(TASK, 5),
        lambda: abduction_messages(TASK, -1),
        lambda: deduction_messages(TASK, True),
        lambda: student_messages(TASK, "translation", 0),
    ],
)
def test_unknown_axes_forms_and_pairs_are_refused(call):
    with pytest.raises(UserError):
        call()


def test_induction_shows_the_question_and_the_shown_pairs_only():
    text = text_of(induction_messages(TASK))
    assert TASK["question"] in text and ">>> f(38)\n11" in text and ">>> f(0)\n0" in text
    assert "sum(int(d)" not in text  # never the code
    assert "PRIVATE_OUT" not in text and "905" not in text and "7777" not in text
    assert "```python" in text


def test_deduction_shows_f_and_one_input_but_not_its_output():
    text = text_of(deduction_messages(TASK, 2))
    assert "sum(int(d) for d in str(n))" in text and ">>> f(905)" in text
    assert "PRIVATE_OUT_2" not in text and TASK["question"] not in text and "```output" in text
    assert text_of(student_messages(TASK, "deduction", 2)) == text


def test_abduction_shows_f_and_one_output_but_not_its_input():
    text = text_of(abduction_messages(TASK, 4))
    assert "sum(int(d) for d in str(n))" in text and "PRIVATE_OUT_4" in text
    assert "[1, 2]" not in text and "```input" in text
    assert text_of(student_messages(TASK, "abduction", 4)) == text
    assert text_of(student_messages(TASK, "induction")) == text_of(induction_messages(TASK))


def test_calls_are_shown_from_the_argument_tuples_the_parser_writes():
    for source, call in (
        ("3, [1, 2]", "f(3, [1, 2])"),
        ("5", "f(5)"),
        ("(1, 2)", "f((1, 2))"),
        ("'a', None", "f('a', None)"),
    ):
        args, _ = parse.read_arguments(source)
        assert call_text(args) == call
    assert call_text("not a tuple") == "f(*not a tuple)"


def test_the_teacher_prompt_names_the_layout_the_parser_reads():
    system = prompts.TEACHER_SYSTEM
    assert "Question:" in system and "```python" in system
    example = system.split("For example:\n\n", 1)[1].split("\n\nChoose", 1)[0]
    assert example.count("```input\n") == parse.N_INPUTS
    prop, why = parse.parse_proposal(example)
    assert why is None and prop["question"].startswith("Given a list of integers")
