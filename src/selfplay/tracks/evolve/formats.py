"""The skeletons of the EvolveCoder track's answers, for format-constrained decoding
(``llm/answer_format.py``; off in the paper config, on in the embedded default).

* refinement (A.1): ``{"question": "<text>", "tests": ["assert <text>", ...]}``: the
  question's text and every test's text after ``assert`` are the model's;
* new tests (A.2, A.3): ``{"tests": ["assert <entry>(<text>", ...]}``: the problem's
  function name is fixed (the tests must call it), the arguments and the comparison
  are the model's;
* a solution: one ```python block, whose text is the model's.

Free text is any run of JSON string characters (escapes included), so what the grammar
lets through is always valid JSON; how many tests (1 to ``items``) is the model's. The question may
hold ``reasoning_chars`` characters, each test ``code_chars``.
"""

from __future__ import annotations

from ...llm.answer_format import AnswerFormat, fenced_body, lark_string

# JSON string content: any character but a quote, a backslash or a newline, or an escape.
_JSON_CHARS = r'([^"\\\n]|\\["\\nt])'


def _tests_rules(prefix: str, settings: dict) -> str:
    n_tests, n_chars = int(settings["items"]), int(settings["code_chars"])
    opening = lark_string('"' + prefix)
    return (f'tests: "[" test (", " test){{0,{n_tests - 1}}} "]"\n'
            f"test: {opening} TEST_TEXT\n"
            f'TEST_TEXT: /{_JSON_CHARS}{{1,{n_chars}}}"/\n')


def refinement_format(settings: dict) -> AnswerFormat:
    n_question = int(settings["reasoning_chars"])
    grammar = (f'start: "{{\\"question\\": \\"" QUESTION ", \\"tests\\": " tests "}}"\n'
               f'QUESTION: /{_JSON_CHARS}{{1,{n_question}}}"/\n'
               + _tests_rules("assert ", settings))
    return AnswerFormat("evolve.refine", grammar)


def new_tests_format(entry: str, settings: dict) -> AnswerFormat:
    grammar = ('start: "{\\"tests\\": " tests "}"\n' + _tests_rules(f"assert {entry}(", settings))
    return AnswerFormat(f"evolve.tests.{entry}", grammar)


def solution_format(settings: dict) -> AnswerFormat:
    grammar = (f'start: {lark_string("```python" + chr(10))} CODE\n'
               f"CODE: /{fenced_body(settings['code_chars'])}/\n")
    return AnswerFormat("evolve.solution", grammar)
