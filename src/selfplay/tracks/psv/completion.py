"""A solver answer read in the configured answer format (config ``psv.solve.completion``),
and the program it stands for: what the screen and the verifier check.

* ``full_program``: the answer's code block is the program; it must copy the spec
  byte for byte (the screen refuses a changed one).
* ``body`` (paper 003's release: the model completes the spec): the code block holds
  the target's body, from its ``{`` to its ``}``, and may go on with items of the
  solver's own (lemmas, spec helpers). The program is the spec with that text as the
  target's body (``program_with_body`` of the language's spec_files); the screen then
  checks the whole assembled program, so an escape hatch in the body (``assume``,
  ``admit``, ``external_body`` ...) is refused there as in a whole program.

Read rules for ``body``, each refusal a recorded reason:

* the block's first code must be the body's ``{`` (``parse:body_not_braced``: the
  answer starts with something else, e.g. the signature again or bare statements);
* the block must not declare anything the spec declares, the target included
  (``parse:redeclares_spec``): a body cannot restate or alter the contract;
* in Verus, a ``fn main`` of the answer's own is kept (the assembly adds one only when
  neither the spec nor the answer has it).

Never raises on model output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import parse
from .prompts import COMPLETIONS, FENCE

_DECLARING = {
    "verus": r"\b(?:fn|struct|enum|const|type|union|trait|group)\s+{name}\b",
    "dafny": r"\b(?:method|function|predicate|lemma|datatype|codatatype|type|newtype|const|constructor)\s+{name}\b",
}


@dataclass(frozen=True)
class Answer:
    """``answer``: the code block as the model wrote it (None when unreadable);
    ``program``: what is verified (None when refused); ``reason``: why not (None when
    read); ``detail``: more about a refusal."""

    answer: str | None
    program: str | None
    reason: str | None
    detail: str = ""


def _masked(language: str, text: str) -> str:
    """The code of ``text`` with comments and literals blanked (same length)."""
    if language == "verus":
        from ...verus.lexer import lex
    else:
        from ...dafny.source import lex
    return lex(text).masked()


def _spec(language: str, spec: str):
    if language == "verus":
        from ...verus.spec import inspect_spec
    else:
        from ...dafny.screen import inspect_spec
    parsed, _ = inspect_spec(spec)
    return parsed


def read_answer(language: str, spec: str, output: str, completion: str) -> Answer:
    """The solver's ``output`` for ``spec``, read in the ``completion`` format."""
    if completion not in COMPLETIONS:
        return Answer(None, None, "parse:unknown_completion_format", completion)
    parsed = parse.solver_solution(output, FENCE[language])
    if parsed.text is None:
        return Answer(None, None, parsed.reason)
    if completion == "full_program":
        return Answer(parsed.text, parsed.text, None)
    return assemble(language, spec, parsed.text)


def assemble(language: str, spec: str, body: str) -> Answer:
    """The program for a body-format answer ``body`` (see the module docstring)."""
    try:
        masked = _masked(language, body)
    except Exception as exc:  # an unreadable body (an unterminated comment ...)
        return Answer(body, None, "parse:unreadable_body", str(exc)[:200])
    if not masked.lstrip().startswith("{"):
        first = masked.strip().split("\n", 1)[0][:80]
        return Answer(body, None, "parse:body_not_braced", f"starts with {first!r}")
    read = _spec(language, spec)
    if read is None:  # pools hold checked specs: this is a problem file's fault, not the model's
        return Answer(body, None, "parse:spec_unreadable", "the problem's spec does not read as a spec")
    names = [read.target_name] + [h.name for h in read.helpers if h.name]
    for name in names:
        m = re.search(_DECLARING[language].format(name=re.escape(name)), masked)
        if m:
            line = masked.count("\n", 0, m.start()) + 1
            return Answer(body, None, "parse:redeclares_spec", f"line {line} declares {name!r} again")
    if language == "verus":
        from ...verus.spec_files import program_with_body

        own_main = re.search(r"\bfn\s+main\b", masked) is not None
        return Answer(body, program_with_body(read, body, declares_main=own_main), None)
    from ...dafny.spec_files import program_with_body as dafny_program

    return Answer(body, dafny_program(read, body), None)
