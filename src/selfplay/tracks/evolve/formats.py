"""The skeletons of the EvolveCoder track's answers, for format-constrained decoding
(``llm/answer_format.py``; off in the paper config, on in the embedded default).

* refinement (A.1): ``{"question": "<text>", "tests": ["assert f(<args>) == <value>", ...]}``:
  the question's text, the function's name, the arguments and the expected values are
  the model's; the test's shape (a call compared with a constant) is fixed;
* new tests (A.2, A.3): the same list, with the problem's function name fixed (the
  tests must call it);
* a solution: one ```python block opening with ``def <function>(`` (the problem names
  the function its tests call); the parameters and the body are the model's.

The question is any run of JSON string characters (escapes included, at most
``reasoning_chars``), and the tests' literals need no escaping, so what the grammar lets
through is always valid JSON; how many tests (1 to ``items``) is the model's.
"""

from __future__ import annotations

from ...llm.answer_format import AnswerFormat, fenced_body, lark_string

# JSON string content: any character but a quote, a backslash or a newline, or an escape.
_JSON_CHARS = r'([^"\\\n]|\\["\\nt])'

# A test is `assert <function>(<arguments>) == <expected>`, the arguments and the expected
# value Python literals (numbers, single-quoted strings, None/True/False, lists, tuples,
# dicts of them) written inside the JSON string, so no character needs escaping. Which
# function, which arguments and which expected value stay the model's; the shape is what
# the paper's tests have ("input parameters and expected output" as constants).
_LITERAL_RULES = r"""
j_value: j_atom | "-" J_NUMBER | j_list | j_tuple | j_dict
j_atom: J_NUMBER | J_STRING | "None" | "True" | "False"
j_list: "[" (j_value (", " j_value){0,11})? "]"
j_tuple: "(" (j_value "," | j_value (", " j_value){1,7})? ")"
j_dict: "{" (j_value ": " j_value (", " j_value ": " j_value){0,7})? "}"
j_args: j_value (", " j_value){0,4}
J_NUMBER: /(0|[1-9][0-9]{0,17})(\.[0-9]{1,8})?/
J_STRING: /'[^'"\\\n]{0,60}'/
J_NAME: /[a-z_][a-z0-9_]{0,23}/
"""


def _tests_rules(call: str, settings: dict) -> str:
    """``tests``: a JSON list of 1..``items`` asserts; ``call`` is the Lark text that
    opens the call (the function's name and the parenthesis)."""
    n_tests = int(settings["items"])
    return (
        f'tests: "[" test (", " test){{0,{n_tests - 1}}} "]"\n'
        f'test: "\\"assert " {call} j_args ") == " j_value "\\""\n' + _LITERAL_RULES
    )


def refinement_format(settings: dict) -> AnswerFormat:
    n_question = int(settings["reasoning_chars"])
    grammar = (
        f'start: "{{\\"question\\": \\"" QUESTION ", \\"tests\\": " tests "}}"\n'
        f'QUESTION: /{_JSON_CHARS}{{1,{n_question}}}"/\n' + _tests_rules('J_NAME "("', settings)
    )
    return AnswerFormat("evolve.refine", grammar)


def new_tests_format(entry: str, settings: dict) -> AnswerFormat:
    grammar = 'start: "{\\"tests\\": " tests "}"\n' + _tests_rules(lark_string(f"{entry}("), settings)
    return AnswerFormat(f"evolve.tests.{entry}", grammar)


def solution_format(entry: str | None, settings: dict) -> AnswerFormat:
    """The block opens with ``def <entry>(`` when the problem names its function (the
    tests call it by that name); the parameters and the body are the model's."""
    opening = "```python\n" + (f"def {entry}(" if entry else "")
    grammar = f"start: {lark_string(opening)} CODE\nCODE: /{fenced_body(settings['code_chars'])}/\n"
    return AnswerFormat(f"evolve.solution.{entry}" if entry else "evolve.solution", grammar)
