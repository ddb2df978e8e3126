"""The skeletons of PSV's two answers, for format-constrained decoding (llm/answer_format.py).

Solver (``psv.solve.completion``): with ``full_program``, one code block holding the
whole program. The spec is the problem's, not the model's choice (a changed spec is
refused anyway), so the grammar copies it verbatim after the opening fence and leaves
everything after it to the model: the body, its invariants and proof code, and the
closing brace, up to ``code_chars`` characters. With ``body``, the block opens with the
body's ``{`` and the rest, up to ``code_chars`` characters, is the model's.

Proposer (Appendix A): ``# Reasoning``, free text, then one code block whose text ends
with the target function's open brace ``{`` on the block's last line. Everything in the
block (which helpers, which signature, which contract) is the model's.
"""

from __future__ import annotations

from ...llm.answer_format import AnswerFormat, fenced_body, lark_string
from .prompts import FENCE


def solver_format(language: str, spec: str, settings: dict, completion: str = "body") -> AnswerFormat:
    if completion == "body":
        opening = f"```{FENCE[language]}\n{{"
        grammar = f"start: {lark_string(opening)} BODY\nBODY: /{fenced_body(settings['code_chars'])}/\n"
        return AnswerFormat(f"psv.{language}.solver_body", grammar)
    opening = f"```{FENCE[language]}\n{spec.strip(chr(10))}\n"
    grammar = f"start: {lark_string(opening)} BODY\nBODY: /{fenced_body(settings['code_chars'])}/\n"
    return AnswerFormat(f"psv.{language}.solver", grammar)


def proposer_format(language: str, settings: dict) -> AnswerFormat:
    n_reason, n_code = int(settings["reasoning_chars"]), int(settings["code_chars"])
    grammar = (
        f'start: "# Reasoning\\n" REASONING {lark_string("```" + FENCE[language] + chr(10))} SPEC\n'
        f"REASONING: /[^#`]{{0,{n_reason}}}\\n/\n"
        # the block's text, then the open brace ending its last line, then the fence
        f"SPEC: /([^`]|`[^`]|``[^`]){{1,{n_code}}}\\{{\\n```/\n"
    )
    return AnswerFormat(f"psv.{language}.proposer", grammar)
