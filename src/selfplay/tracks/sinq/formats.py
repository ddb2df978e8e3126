"""The skeletons of SInQ's two answers, for format-constrained decoding (llm/answer_format.py).

The paper fixes the answer layout: level-1 sections ``# Analysis``, ``# Generated
program`` (one Python block) and ``# Diverging input example`` (one Python block
holding a dict of the entry point's arguments) for Alice; ``# Analysis``,
``# Equivalent?`` (Yes or No) and, after No, ``# Diverging input example`` for Bob.

What a grammar here fixes: those headings, the code fences, the opening
``def <entry point>(`` of Alice's program (after up to MAX_IMPORTS import lines: the
game calls Q by P's name, and without it the tiny model often named its function
otherwise, ``parse:missing_entry_point``), and the input dict's braces and
separators, with keys drawn from P's parameter names (either quote style, any order,
as the parser reads them). What stays the model's: the analysis text, the rest of the
program (its parameters, body, helpers after it, which modules to import), which
arguments to give and every value (any Python literal), and Bob's Yes or No. Free regions are bounded in
characters (``reasoning_chars``, ``code_chars``) so that the skeleton completes within
the token budget.
"""

from __future__ import annotations

import ast

from ...errors import UserError
from ...llm.answer_format import PYTHON_LITERAL_RULES, AnswerFormat, fenced_body, lark_string

# Parse failures an answer that follows the format cannot have (its skeleton is right);
# what remains possible is content: a program that does not parse or lacks the entry point.
SKELETON_REASONS = frozenset(
    {
        "empty_output",
        "no_sections",
        "missing_section",
        "duplicate_section",
        "no_code_block",
        "wrong_code_language",
        "several_code_blocks",
        "input_not_literal",
        "input_not_dict",
        "input_bad_keys",
        "bob_no_answer",
    }
)


def parameter_names(code: str, entry_point: str) -> list[str]:
    """P's entry point parameters in call order (positional, then keyword-only)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise UserError(f"source program for {entry_point} does not parse: {exc.msg}") from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            a = node.args
            return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    raise UserError(f"source program has no top-level function {entry_point}")


def _analysis(settings: dict) -> str:
    """The analysis: it cannot hold a heading's `#` or a fence, so it ends where the next
    heading begins, and it ends with a newline, so that heading starts a line."""
    return f"ANALYSIS: /[^#`]{{0,{int(settings['reasoning_chars'])}}}\\n/\n"


# Import lines Alice may put before the entry point (``import m``, ``from m import x``).
MAX_IMPORTS = 3
IMPORT_RULE = r"IMPORT: /(import|from) [A-Za-z_][^`\n]{0,100}\n/" "\n"


def _program(settings: dict) -> str:
    """A program block's body, ending with its own closing fence at a line start."""
    return f"PROGRAM: /{fenced_body(settings['code_chars'])}/\n"


def _input_dict(params: list[str]) -> str:
    """The diverging input's dict literal: keys are P's parameter names (quoted either way,
    in any order, as the parser reads them), values any Python literal."""
    if not params:
        return '"{}"'
    keys = " | ".join(f"{lark_string(q + p + q)}" for p in params for q in ('"', "'"))
    more = f' (", " param_key ": " py_value){{0,{len(params) - 1}}}' if len(params) > 1 else ""
    return f'"{{" (param_key ": " py_value{more})? "}}"\nparam_key: {keys}'


def alice_format(source: dict, settings: dict) -> AnswerFormat:
    params = parameter_names(source["code"], source["entry_point"])
    grammar = (
        'start: "# Analysis\\n" ANALYSIS "# Generated program\\n```python\\n" '
        f"IMPORT{{0,{MAX_IMPORTS}}} {lark_string('def ' + source['entry_point'] + '(')} PROGRAM "
        '"\\n\\n# Diverging input example\\n```python\\n" py_input "\\n```" "\\n"?\n'
        f"py_input: {_input_dict(params)}\n"
        + _analysis(settings)
        + _program(settings)
        + IMPORT_RULE
        + PYTHON_LITERAL_RULES
    )
    return AnswerFormat("sinq.alice", grammar)


def bob_format(instance: dict, settings: dict) -> AnswerFormat:
    params = parameter_names(instance["code_p"], instance["entry_point"])
    grammar = (
        'start: "# Analysis\\n" ANALYSIS "# Equivalent?\\n" (yes | no)\n'
        'yes: "Yes" "\\n\\n# Diverging input example\\n"?\n'
        'no: "No\\n\\n# Diverging input example\\n```python\\n" py_input "\\n```" "\\n"?\n'
        f"py_input: {_input_dict(params)}\n" + _analysis(settings) + PYTHON_LITERAL_RULES
    )
    return AnswerFormat("sinq.bob", grammar)
