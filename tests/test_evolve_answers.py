"""The EvolveCoder track's prompts, answer skeletons and parsers: what the model is
shown, what the constrained decoder lets it write, and how its answers are read."""

import json

import pytest

from selfplay.llm.answer_format import check_grammar, text_matches
from selfplay.tracks.evolve import formats, prompts
from selfplay.tracks.evolve.parse import (
    check_test,
    guess_entry,
    parse_new_tests,
    parse_refinement,
    parse_solution,
)

FORMAT = {"constrained": True, "items": 4, "code_chars": 120, "reasoning_chars": 300}


def test_refine_prompt_shows_reference_only_when_given():
    with_ref = prompts.refine_messages("Add two numbers.", "def add(a, b):\n    return a + b", 20)
    without = prompts.refine_messages("Add two numbers.", None, 20)
    assert "Reference program" in with_ref[1]["content"] and "def add" in with_ref[1]["content"]
    assert "Reference program" not in without[1]["content"]
    assert "exactly 20 independent" in without[1]["content"]
    assert '{"question": "...", "tests": ["assert ...", "assert ..."]}' in without[1]["content"]


def test_evolve_prompts_print_results_rows_per_program():
    rows = [[True, False], [False, False]]
    msgs = prompts.adversarial_messages(
        "Q?", ["def f(x): return x", "def f(x): return 0"], ["assert f(1) == 1", "assert f(2) == 2"], rows, 20
    )
    text = msgs[1]["content"]
    assert (
        "Evaluation results (rows = programs, columns = tests):\n[\n    [True, False],\n    [False, False],\n]"
        in text
    )
    assert "Program 2:\n```python\ndef f(x): return 0\n```" in text
    dis = prompts.discriminative_messages("Q?", ["a"], ["assert f(1) == 1"], [[True]], 5)[1]["content"]
    assert "passed by at least one of the five programs and failed by at least one" in dis


def test_parse_refinement_reads_json_inside_prose_and_fences():
    answer = (
        "Here you go:\n```json\n"
        + json.dumps(
            {
                "question": "Return the sum of a and b.",
                "tests": [
                    "assert add(1, 2) == 3",
                    "assert add(1,2)==3",
                    "print(1)",
                    7,
                    "assert add(-1, 1) == 0; assert True",
                    "assert add(0, 0) == 0",
                ],
            }
        )
        + "\n```"
    )
    got = parse_refinement(answer)
    assert got.reason is None
    assert got.question == "Return the sum of a and b."
    assert got.tests == ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]
    assert [why for _, why in got.rejected] == [
        "duplicate",
        "not_one_assert",
        "not_a_string",
        "not_one_assert",
    ]


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "parse:empty_output"),
        ("no json here", "parse:no_json_object"),
        ('{"tests": ["assert f(1) == 1"]}', "parse:missing_keys"),
        ('{"question": "  ", "tests": []}', "parse:empty_question"),
        ('{"question": "Q", "tests": ["x = 1"]}', "parse:no_usable_tests"),
        ('{"question": "Q", "tests": "assert f(1)"}', "parse:no_usable_tests"),
    ],
)
def test_parse_refinement_failures_have_reasons(text, reason):
    assert parse_refinement(text).reason == reason


def test_new_tests_must_call_the_entry_and_be_new():
    got = parse_new_tests(
        '{"tests": ["assert add(1, 2) == 3", "assert sub(1) == 0", '
        '"assert add(2, 2) == 4", "assert sorted(add(1, 1)) == 2"]}',
        "add",
        existing=["assert add(1,  2) == 3"],
    )
    assert got.tests == ["assert add(2, 2) == 4", "assert sorted(add(1, 1)) == 2"]
    assert got.rejected == [
        ("assert add(1, 2) == 3", "duplicate"),
        ("assert sub(1) == 0", "does_not_call_entry"),
    ]


def test_entry_guess_and_single_test_checks():
    assert guess_entry(["assert sorted(solve([3, 1])) == [1, 3]", "assert solve([]) == []"]) == "solve"
    assert guess_entry("nope") is None
    assert check_test("assert 1 == 1") == "calls_no_function"
    assert check_test("assert f(1) == 1") is None
    assert check_test("assert (") == "syntax_error"
    assert check_test("assert f(1) == 1", entry="g") == "does_not_call_entry"


def test_parse_solution():
    assert parse_solution("```python\ndef f(x):\n    return x\n```", "f") == ("def f(x):\n    return x", None)
    assert parse_solution("", "f") == (None, "parse:empty_output")
    assert parse_solution("I cannot", "f") == (None, "parse:no_code_block")
    assert parse_solution("```python\ndef f(:\n```", "f") == (None, "parse:syntax_error")


def test_a_thinking_models_drafts_are_not_its_answer():
    # Qwen3 in thinking mode (the paper config's policy and generator) drafts inside
    # <think>: the answer is what follows </think>.
    draft = '{"question": "draft", "tests": ["assert add(1, 1) == 3"]}'
    final = '{"question": "Add two numbers.", "tests": ["assert add(1, 2) == 3"]}'
    got = parse_refinement(f"<think>Maybe {draft}? No.</think>\n{final}", "add")
    assert (got.question, got.tests) == ("Add two numbers.", ["assert add(1, 2) == 3"])
    got = parse_new_tests('<think>{"tests": ["assert add(0, 0) == 1"]}</think>{"tests": []}', "add", [])
    assert got.tests == []
    assert parse_refinement(f"<think>only a draft: {draft}</think>").reason == "parse:empty_output"
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    right = "```python\ndef add(a, b):\n    return a + b\n```"
    assert parse_solution(f"<think>{right}</think>\n{wrong}", "add")[0].endswith("return a - b")
    assert parse_solution(f"<think>{wrong}\n</think>\n{right}", "add")[0].endswith("return a + b")
    assert parse_solution(f"<think>{right}</think>", "add") == (None, "parse:empty_output")
    # no </think>: the whole text is the answer, as before
    assert parse_solution(right, "add")[0].endswith("return a + b")


def test_skeletons_compile_accept_well_formed_and_refuse_malformed(tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    refine, tests, solution = (
        formats.refinement_format(FORMAT),
        formats.new_tests_format("add", FORMAT),
        formats.solution_format("add", FORMAT),
    )
    for f in (refine, tests, solution):
        check_grammar(f)
    good_refine = json.dumps(
        {
            "question": 'Add "two" numbers.\nReturn the sum.',
            "tests": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"],
        }
    )
    assert text_matches(refine, good_refine, tok)
    assert parse_refinement(good_refine).tests == ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]
    assert not text_matches(refine, '{"question": "x", "tests": []}', tok)
    assert not text_matches(refine, json.dumps({"question": "x", "tests": ["print(1)"]}), tok)
    five = json.dumps({"question": "x", "tests": [f"assert add({i}, 0) == {i}" for i in range(5)]})
    assert not text_matches(refine, five, tok)  # more than `items`
    assert text_matches(tests, '{"tests": ["assert add(1, 2) == 3"]}', tok)
    assert text_matches(tests, '{"tests": ["assert add([1, -2], {\'a\': (1,)}) == None"]}', tok)
    assert not text_matches(
        tests, '{"tests": ["assert add(1, 2) == 1 + 2"]}', tok
    )  # expected must be a literal
    assert not text_matches(tests, '{"tests": ["assert add(1, 2) != 3"]}', tok)
    assert not text_matches(tests, '{"tests": ["assert sub(1, 2) == 3"]}', tok)
    assert text_matches(solution, "```python\ndef add(a, b):\n    return a + b\n```", tok)
    assert not text_matches(solution, "def add(a, b): return a + b", tok)
    assert not text_matches(
        solution, "```python\ndef plus(a, b):\n    return a + b\n```", tok
    )  # the tests call add
    free_name = formats.solution_format(None, FORMAT)  # a problem without a known function name
    assert text_matches(free_name, "```python\ndef plus(a, b):\n    return a + b\n```", tok)
