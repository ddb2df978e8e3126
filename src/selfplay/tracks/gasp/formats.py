"""The skeletons of the GASP answers, for format-constrained decoding (llm/answer_format.py;
off in the paper config, on in the embedded default, where the tiny model never writes
the layout on its own).

* the teacher's proposal (``gasp.proposal``): ``Question: `` and the question text, a
  ```python block opening with ``def f(``, then exactly five ```input blocks, each one
  call's arguments as Python literals. With ``parameters`` at n > 0 (the default, 3)
  the function's first line is ``def f(a, b):`` with 1 to n plain parameter names, and
  every input gives exactly as many arguments as it names: the tiny model's proposals
  otherwise mostly failed as calls of the wrong arity (TypeError) or on annotations
  naming what was never imported (NameError); 0 leaves the parameter list and the
  argument count the model's;
* the student (``gasp.induction``, ``gasp.deduction``, ``gasp.abduction``): a ```python
  block opening with ``def f(``; an ```output block with one literal; an ```input block
  with an argument list. When every input of the task gives the same number of
  arguments (:func:`task_arity`), the induction answer's ``def f(`` names exactly that
  many plain parameters and the abduction answer gives exactly that many arguments.

What the grammars fix is exactly what parse.py reads as the layout; what stays the
model's is the question's words, the function's parameters and body, and every value.
The program is the only free region parse.py can still refuse: it may not be valid
Python. Every other part of an accepted answer parses by construction
(:data:`SKELETON_REASONS` are the refusals it cannot get; the test draws answers
through the grammar's token masks to check it).

Bounds (``settings``, the role's ``answer_format`` section; defaults :data:`DEFAULTS`,
chosen for SmolLM2-135M within 384 new tokens: with them its constrained lemma proposals
took 151 to 312 tokens, 16 of 16 complete, where 240/480/48 ran one of 8 past 384):

* ``question_chars`` (or the shared ``reasoning_chars``): the question, on one line,
  starting with a visible character that is not markup (so parse.py finds it whole
  after ``Question:``), with no backtick (so it cannot open a block) and no control
  character;
* ``code_chars``: the program's length in pieces (:func:`_program`: about one a
  character, a line break with the next line's indent counting one); its lines after
  the first are blank or indented, so the top level holds nothing but ``f`` (no stray
  calls, no second function: parse.py would refuse those);
* ``parameters``: the most parameters a proposal's ``f`` may take, its inputs giving
  exactly as many arguments (0: any, the parameter list unconstrained). Names are
  lower-case identifiers of at most :data:`NAME_CHARS` characters, without
  annotations or defaults; with a matched signature ``code_chars`` bounds the program
  at most, not exactly (the body's share assumes the longest names);
* ``literal_chars``: one input's or output's characters. Literals are numbers, strings
  without backslashes or backticks, None/True/False, and lists, tuples, dicts (atom
  keys) and sets (atoms) nested at most :data:`LITERAL_DEPTH` deep, items separated by
  ``", "``, as PYTHON_LITERAL_RULES writes them.

llguidance lexes greedily and gives nothing back, so each free region is one terminal
that ends where the skeleton resumes: the question at its newline before the fence (it
holds no backtick), the program with its closing fence, a literal at the newline before
its closing fence (it holds no newline). The character bound on a literal is an
intersection with a plain length bound on top of such a terminal (the literal regex
alone decides where it ends); checked with token masks up to parse.py's limit of 4000
characters (2840 tokens).
"""

from __future__ import annotations

from ...errors import UserError
from ...llm.answer_format import AnswerFormat, lark_string
from . import parse

DEFAULTS = {"question_chars": 200, "code_chars": 400, "literal_chars": 40, "parameters": 3}
FORMS = ("induction", "deduction", "abduction")
LITERAL_DEPTH = 3
NAME_CHARS = 12
# the largest bounds parse.py reads whole
_LIMITS = {
    "question_chars": parse.MAX_QUESTION_CHARS,
    "code_chars": parse.MAX_CODE_CHARS,
    "literal_chars": parse.MAX_LITERAL_CHARS,
    "parameters": 6,
}
_LEAST = {"question_chars": 1, "code_chars": 16, "literal_chars": 1, "parameters": 0}

# Refusals an answer that follows its format cannot get: only the program's content can fail.
SKELETON_REASONS = frozenset(parse.REASONS) - {
    "code_syntax_error",
    "code_too_complex",
    "several_functions",
    "no_function_f",
    "top_level_statement",
    "name_clash",
}

# --------------------------------------------------------------------------- regex pieces
# Rust regex syntax inside Lark's /.../ ("/" never occurs in these).
_NUMBER = r"-?(0|[1-9][0-9]{0,17})(\.[0-9]{1,9})?"
_STRING = r"'[^'\\`\x00-\x1F\x7F]*'|\x22[^\x22\\`\x00-\x1F\x7F]*\x22"
_ATOM = f"({_NUMBER}|{_STRING}|None|True|False)"


def _value(depth: int) -> str:
    """A literal nested at most ``depth`` levels (an atom is level 1)."""
    if depth <= 1:
        return _ATOM
    inner = _value(depth - 1)
    items = f"(({inner}, )*{inner})"
    return (
        f"({_ATOM}|\\[{items}?\\]|\\(({inner},|{inner}(, {inner})+)?\\)"
        f"|\\{{(({_ATOM}: {inner}, )*{_ATOM}: {inner})?\\}}|\\{{({_ATOM}, )*{_ATOM}\\}})"
    )


def _literal_terminal(name: str, chars: int, count: int | None) -> str:
    """``name``: exactly ``count`` literals separated by ``", "`` (None: one or more), at
    most ``chars`` characters."""
    value = _value(LITERAL_DEPTH)
    body = f"({value}, )*{value}" if count is None else ", ".join([value] * count)
    return f"{name}: /{body}/ & /[^\\n]{{1,{int(chars)}}}/\n"


def _program(chars: int, name: str = "PROGRAM", opened: int = 6) -> str:
    """PROGRAM: the rest of ``def f(`` up to and including the block's closing fence. Every
    line after the first is blank or starts with a space or a tab, so nothing but ``f``
    stands at the top level; no three backticks in a row anywhere.

    Bounded in pieces, like ``fenced_body`` (a counted repetition of a small unit, which
    llguidance's lexer follows for thousands of tokens; an intersection with a length
    bound ran out of lexer states after about 1500 tokens of code): a piece is one
    character, or one or two backticks with the character after them, or a line break
    together with up to two backticks before it, up to three blank lines after it and the
    next line's first character. What the skeleton writes before the terminal counts
    ``opened`` (``def f(``: 6); the last line break and the fence are not counted."""
    piece = r"([^`\n\r]|`{1,2}[^`\n\r]|`{0,2}\n{1,4}[ \t])"
    return f"{name}: /{piece}{{0,{max(int(chars) - opened, 0)}}}`{{0,2}}\\n{{1,4}}```/\n"


def _bounds(settings: dict | None) -> dict:
    settings = settings or {}
    out = {
        "question_chars": settings.get(
            "question_chars", settings.get("reasoning_chars", DEFAULTS["question_chars"])
        ),
        "code_chars": settings.get("code_chars", DEFAULTS["code_chars"]),
        "literal_chars": settings.get("literal_chars", DEFAULTS["literal_chars"]),
        "parameters": settings.get("parameters", DEFAULTS["parameters"]),
    }
    for key, value in out.items():
        if isinstance(value, bool) or not isinstance(value, int) or not _LEAST[key] <= value <= _LIMITS[key]:
            why = "0: any" if key == "parameters" else "what parse.py reads"
            raise UserError(
                f"answer_format.{key} must be an integer from {_LEAST[key]} to {_LIMITS[key]} "
                f"({why}), got {value!r}"
            )
    return out


def proposal_format(settings: dict | None = None) -> AnswerFormat:
    """The teacher's answer: question, ```python block opening ``def f(``, five ```input
    blocks; with ``parameters`` n > 0, one alternative per arity k = 1..n, in which the
    first line names k parameters and every input gives k arguments."""
    b = _bounds(settings)
    question = f"QUESTION: /[^`\\s*_>#][^`\\x00-\\x1F\\x7F]{{0,{b['question_chars'] - 1}}}\\n/\n"
    opening = f"start: {lark_string('Question: ')} QUESTION {lark_string('```python' + chr(10) + 'def f(')} "

    def inputs(args: str) -> str:
        one = lark_string("\n\n```input\n") + f" {args} " + lark_string("\n```")
        return " ".join([one] * parse.N_INPUTS)

    n = b["parameters"]
    if not n:
        grammar = (
            opening
            + "PROGRAM "
            + inputs("ARGS")
            + ' "\\n"?\n'
            + question
            + _program(b["code_chars"])
            + _literal_terminal("ARGS", b["literal_chars"], None)
        )
        return AnswerFormat("gasp.proposal", grammar)
    rules, terminals = [], [question, _param_terminal()]
    for k in range(1, n + 1):
        rules.append(f"sig{k}: {_signature(k)} PROGRAM{k} {inputs(f'ARGS{k}')}\n")
        terminals.append(_program(b["code_chars"], f"PROGRAM{k}", _signature_chars(k)))
        terminals.append(_literal_terminal(f"ARGS{k}", b["literal_chars"], k))
    alternatives = " | ".join(f"sig{k}" for k in range(1, n + 1))
    grammar = opening + f'({alternatives}) "\\n"?\n' + "".join(rules) + "".join(terminals)
    return AnswerFormat("gasp.proposal", grammar)


def task_arity(task: dict) -> int | None:
    """How many arguments every input of ``task`` gives (its pairs' inputs, as argument
    tuples), or None when they differ or exceed what a signature may name."""
    from .execution import NotALiteral, read_call_args

    try:
        counts = {len(read_call_args(pair["input"], parse.MAX_LITERAL_CHARS)) for pair in task["pairs"]}
    except (NotALiteral, KeyError, TypeError):
        return None
    if len(counts) != 1:
        return None
    (count,) = counts
    return count if 1 <= count <= _LIMITS["parameters"] else None


def _signature(arity: int) -> str:
    """The parameter list of ``def f(`` with ``arity`` plain names, and its closing ``):``."""
    return " ".join(['PARAM ", "'] * (arity - 1) + ["PARAM", lark_string("):")])


def _param_terminal() -> str:
    return f"PARAM: /[a-z_][a-z0-9_]{{0,{NAME_CHARS - 1}}}/\n"


def _signature_chars(arity: int) -> int:
    """What ``def f(`` and a signature of ``arity`` names at their longest count."""
    return 6 + arity * NAME_CHARS + 2 * (arity - 1) + 2


def answer_format(form: str, settings: dict | None = None, arity: int | None = None) -> AnswerFormat:
    """The student's answer in ``form``: induction, deduction or abduction. With ``arity``
    (the task's argument count, :func:`task_arity`) an induction answer's ``def f(`` names
    exactly that many plain parameters and an abduction answer gives exactly that many
    arguments: the task's own inputs fix both, and a tiny model left free writes calls of
    another arity."""
    b = _bounds(settings)
    if arity is not None and not 1 <= arity <= _LIMITS["parameters"]:
        raise UserError(f"a task's arity must be 1 to {_LIMITS['parameters']}, got {arity!r}")
    opening = lark_string("```python" + chr(10) + "def f(")
    if form == "induction" and arity:
        grammar = (
            f'start: {opening} {_signature(arity)} PROGRAM "\\n"?\n'
            + _program(b["code_chars"], opened=_signature_chars(arity))
            + _param_terminal()
        )
    elif form == "induction":
        grammar = f'start: {opening} PROGRAM "\\n"?\n' + _program(b["code_chars"])
    elif form == "deduction":
        grammar = (
            f'start: {lark_string("```output" + chr(10))} VALUE {lark_string(chr(10) + "```")} "\\n"?\n'
            + _literal_terminal("VALUE", b["literal_chars"], 1)
        )
    elif form == "abduction":
        grammar = (
            f'start: {lark_string("```input" + chr(10))} ARGS {lark_string(chr(10) + "```")} "\\n"?\n'
            + _literal_terminal("ARGS", b["literal_chars"], arity)
        )
    else:
        raise UserError(f"unknown GASP task form {form!r}; known: {', '.join(FORMS)}")
    return AnswerFormat(f"gasp.{form}", grammar)
