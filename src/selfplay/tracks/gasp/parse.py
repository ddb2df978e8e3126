"""Reading the GASP teacher's proposals and the student's answers (prompts.py asks for them).

Every function here returns ``(value, None)`` or ``(None, reason)``, the reason a short
snake_case code of :data:`REASONS`; nothing the model writes raises (hostile text, huge
or deeply nested literals, code that does not parse, fences inside strings). Nothing is
ever evaluated: programs are read with ``ast``, and inputs and outputs are checked as
literals in the host with ``selfplay.evaluate.python_calls.parse_args``.

The teacher's answer (lemma, lift, one-step and unguided proposals alike)::

    Question: <the task, in words>
    ```python
    def f(...):
        ...
    ```
    ```input
    <one call's arguments>
    ```
    ... five ```input blocks in all

* The question is the text after the last line that starts with ``Question:`` (outside
  any code block) that some ```python block follows, up to the first such block, which
  holds the program. Free text before the label (the model's reasoning, an earlier
  question with its draft program) is ignored; so are blocks with other labels after
  the program.
* The program must hold exactly one top-level ``def``: AZR's rule (one function, renamed
  to ``f``). Helpers and imports nested inside ``f`` are fine; beside the ``def`` the top
  level may hold only imports, assignments (constants such as ``MOD = 10**9 + 7``) and a
  docstring, because stray calls and classes at the top level are not a function-style
  task (``top_level_statement``). A function named otherwise is renamed to ``f``, every
  use of its old name with it (the renamed program is written back by ``ast.unparse``);
  a program that already uses the name ``f`` for something else is refused.
* Exactly five ```input blocks after the program, each one call's arguments written as
  between the parentheses of ``f(...)``: ``3, [1, 2]`` is two arguments, ``(1, 2)`` one
  tuple, ``'ab'`` one string. Keyword, starred and empty argument lists are refused.
  Each input is returned as the source of its argument tuple, rebuilt from the parsed
  arguments (``(3, [1, 2])``, ``('ab',)``), which ``parse_args`` reads back; whether f
  accepts them is the sandbox's question (validity), not the parser's.

The student's answers: induction one ```python block with ``def f`` (read like the
teacher's program; without a ```python block, the last unlabelled block), deduction one ```output block with one literal, abduction one
```input block with an argument list. Reasoning before the block is allowed (no tags:
see prompts.py) and drafts are allowed too: the *last* block with the right label is the
answer. A block the answer ran out of tokens in (no closing fence) is refused.

Code blocks are found line by line: a fence is a line holding ``````label`` (at most three
spaces before it, as CommonMark allows) and a block ends at the next line holding only
```````. A fence inside a Python string ends a block early; the program then fails to
parse (``code_syntax_error``), it does not raise.
"""

from __future__ import annotations

import ast
import re

from ...evaluate.python_calls import parse_args

MAX_OUTPUT_CHARS = 64 * 1024
MAX_QUESTION_CHARS = 8000
MAX_CODE_CHARS = 16000
MAX_LITERAL_CHARS = 4000
MAX_LITERAL_DEPTH = 16
N_INPUTS = 5

PYTHON_LABELS = frozenset({"python", "py", "python3", "py3"})
INPUT_LABEL = "input"
OUTPUT_LABEL = "output"
QUESTION_LABEL = "Question:"
ENTRY = "f"

REASONS: dict[str, str] = {
    "empty_output": "the answer is empty or only whitespace",
    "output_too_large": f"the answer is longer than {MAX_OUTPUT_CHARS} characters and was not read",
    "no_question": "no line starting with 'Question:' before the ```python block",
    "empty_question": "the question after 'Question:' is empty",
    "question_too_long": f"the question is longer than {MAX_QUESTION_CHARS} characters",
    "no_code_block": "no ```python block (after the question)",
    "several_code_blocks": "more than one ```python block after the question",
    "unclosed_block": "the block the answer needs has no closing fence (the answer was cut off)",
    "code_too_long": f"the program is longer than {MAX_CODE_CHARS} characters",
    "code_syntax_error": "the program is not valid Python",
    "code_too_complex": "the program is too deeply nested for the Python parser",
    "no_function_f": "the program defines no top-level function",
    "several_functions": "the program defines more than one top-level function",
    "top_level_statement": "the program's top level holds more than its function, imports, constants and docstring",
    "name_clash": "the function is not named f, and f already names something else in the program",
    "wrong_input_count": f"not exactly {N_INPUTS} ```input blocks after the program",
    "no_input_block": "no ```input block",
    "no_output_block": "no ```output block",
    "input_empty": "an input block holds no arguments",
    "input_too_long": f"an input is longer than {MAX_LITERAL_CHARS} characters",
    "input_too_deep": f"an input is nested more than {MAX_LITERAL_DEPTH} levels deep",
    "input_not_literal": "an input is not a list of literal positional arguments",
    "output_empty": "the output block is empty",
    "output_too_long": f"the output is longer than {MAX_LITERAL_CHARS} characters",
    "output_too_deep": f"the output is nested more than {MAX_LITERAL_DEPTH} levels deep",
    "output_not_literal": "the output is not one Python literal",
}

_FENCE = re.compile(r"^ {0,3}```[ \t]*([A-Za-z0-9_+-]*)[ \t]*$")
_LABEL = re.compile(r"^[ \t>#*_]*question[ \t*_]*:[ \t*_]*", re.IGNORECASE)


def _failed(reason: str):
    assert reason in REASONS, reason
    return None, reason


# --------------------------------------------------------------------------- text and blocks


def _lines(text) -> tuple[list[str] | None, str | None]:
    """The answer's lines (newlines normalised), or why it cannot be read."""
    if not isinstance(text, str) or not text.strip():
        return None, "empty_output"
    if len(text) > MAX_OUTPUT_CHARS:
        return None, "output_too_large"
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), None


def _blocks(lines: list[str]) -> list[dict]:
    """Every fenced block in order: label (lower case), first and last line index of its
    body (``end`` is the closing fence's line, or len(lines) when it never closes)."""
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.fullmatch(r" {0,3}```[ \t]*", lines[j]):
            j += 1
        blocks.append(
            {
                "label": m.group(1).lower(),
                "start": i,
                "end": j,
                "closed": j < len(lines),
                "body": "\n".join(lines[i + 1 : j]),
            }
        )
        i = j + 1
    return blocks


def _outside(lines: list[str], blocks: list[dict]) -> list[bool]:
    """For each line, whether it lies outside every block (fences included)."""
    out = [True] * len(lines)
    for b in blocks:
        out[b["start"] : b["end"] + 1] = [False] * (min(b["end"], len(lines) - 1) - b["start"] + 1)
    return out


def _last_block(text, labels, fallback: str | None = None) -> tuple[dict | None, str | None]:
    """The last block labelled one of ``labels`` (else, with ``fallback``, the last block
    labelled that), or (None, why); ``why`` is "" when there is no such block."""
    lines, why = _lines(text)
    if lines is None:
        return None, why
    blocks = _blocks(lines)
    found = [b for b in blocks if b["label"] in labels]
    if not found and fallback is not None:
        found = [b for b in blocks if b["label"] == fallback]
    if not found:
        return None, ""
    if not found[-1]["closed"]:
        return None, "unclosed_block"
    return found[-1], None


# --------------------------------------------------------------------------- programs


def _read_program(code: str) -> tuple[str | None, str | None]:
    """The program with its one top-level function named ``f`` (see the module doc)."""
    if len(code) > MAX_CODE_CHARS:
        return _failed("code_too_long")
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: null bytes
        return _failed("code_syntax_error")
    except (RecursionError, MemoryError, OverflowError):
        return _failed("code_too_complex")
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(defs) > 1:
        return _failed("several_functions")
    for node in tree.body:
        if node in defs or isinstance(
            node, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.Pass)
        ):
            continue
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            continue
        return _failed("top_level_statement")
    if not defs:
        return _failed("no_function_f")
    fn = defs[0]
    if fn.name == ENTRY:
        return code.strip("\n") + "\n", None
    return _renamed(tree, fn.name)


def _renamed(tree: ast.Module, old: str) -> tuple[str | None, str | None]:
    """``tree`` with the function ``old`` and every use of its name called ``f``."""
    try:
        nodes = list(ast.walk(tree))
    except RecursionError:
        return _failed("code_too_complex")
    for node in nodes:
        names = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = list(node.names)
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name.split(".")[0]]
        if ENTRY in names:
            return _failed("name_clash")
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == old:
            node.id = ENTRY
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == old:
            node.name = ENTRY
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            node.names = [ENTRY if n == old else n for n in node.names]
    try:
        code = ast.unparse(tree)
        ast.parse(code)
    except (SyntaxError, ValueError):
        return _failed("code_syntax_error")
    except (RecursionError, MemoryError, OverflowError):
        return _failed("code_too_complex")
    return code + "\n", None


# --------------------------------------------------------------------------- literals


def _depth(node: ast.AST) -> int:
    """How deeply ``node`` nests, counting expressions only (``5`` is 1, ``[[5]]`` 3),
    iteratively: a hostile literal must not exhaust the stack."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        item, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_LITERAL_DEPTH:
            return d
        stack.extend(
            (child, d + 1) for child in ast.iter_child_nodes(item) if not isinstance(child, ast.expr_context)
        )
    return deepest


def _literal_node(node: ast.AST) -> str | None:
    """The canonical source of one literal argument or value, or None when it is not one
    (``parse_args`` decides, on the tuple of it, without evaluating anything)."""
    try:
        source = ast.unparse(node)
        parse_args("(" + source + ",)")
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, OverflowError, AttributeError):
        return None
    return source


def _parse_expression(source: str) -> tuple[ast.AST | None, bool]:
    """(expression node, too deep) of ``source`` in eval mode; node None when it does not
    parse, too deep when the parser gave up on its nesting."""
    try:
        return ast.parse(source, mode="eval").body, False
    except SyntaxError as exc:
        return None, "too many nested" in str(exc.msg)
    except (ValueError, MemoryError, OverflowError):
        return None, False
    except RecursionError:
        return None, True


def read_arguments(source: str) -> tuple[str | None, str | None]:
    """One call's arguments, written as between the parentheses of ``f(...)``, as the
    source of their tuple (``"3, [1, 2]"`` -> ``"(3, [1, 2])"``), or the reason it is not."""
    if not isinstance(source, str) or not source.strip():
        return _failed("input_empty")
    if len(source) > MAX_LITERAL_CHARS:
        return _failed("input_too_long")
    # the newline lets a trailing comment stand; the call must be all of it: "1), g(2" is no call of f
    node, deep = _parse_expression(f"{ENTRY}({source}\n)")
    if deep:
        return _failed("input_too_deep")
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == ENTRY
        and node.func.col_offset == 0
        and node.end_lineno == source.count("\n") + 2
    ):
        return _failed("input_not_literal")
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return _failed("input_not_literal")
    if not node.args:
        return _failed("input_empty")
    if max(_depth(a) for a in node.args) > MAX_LITERAL_DEPTH:
        return _failed("input_too_deep")
    parts = [_literal_node(a) for a in node.args]
    if any(p is None for p in parts):
        return _failed("input_not_literal")
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")", None


def read_literal(source: str) -> tuple[str | None, str | None]:
    """One Python literal (a returned value) as canonical source, or the reason it is not.
    ``1, 2`` reads as the tuple ``(1, 2)``, as after ``return``."""
    if not isinstance(source, str) or not source.strip():
        return _failed("output_empty")
    if len(source) > MAX_LITERAL_CHARS:
        return _failed("output_too_long")
    node, deep = _parse_expression(f"({source}\n)")
    if deep:
        return _failed("output_too_deep")
    if node is None:
        return _failed("output_not_literal")
    if _depth(node) > MAX_LITERAL_DEPTH:
        return _failed("output_too_deep")
    literal = _literal_node(node)
    if literal is None:
        return _failed("output_not_literal")
    return literal, None


def literal_value(source: str):
    """The value of a source :func:`read_literal` returned (host side, never evaluated)."""
    return parse_args("(" + source + ",)")[0]


# --------------------------------------------------------------------------- the teacher


def parse_proposal(text) -> tuple[dict | None, str | None]:
    """A teacher's answer -> ``{"question", "code", "inputs": [5 argument-tuple sources]}``."""
    lines, why = _lines(text)
    if lines is None:
        return _failed(why)
    blocks = _blocks(lines)
    outside = _outside(lines, blocks)
    labels = [i for i, line in enumerate(lines) if outside[i] and _LABEL.match(line)]
    if not labels:
        return _failed("no_question")
    python = [b for b in blocks if b["label"] in PYTHON_LABELS]
    if not python or python[-1]["start"] < labels[0]:
        return _failed("no_code_block")
    label = max(i for i in labels if i < python[-1]["start"])
    code_block = next(b for b in python if b["start"] > label)
    question = "\n".join(
        [_LABEL.sub("", lines[label], count=1)] + lines[label + 1 : code_block["start"]]
    ).strip()
    if not question:
        return _failed("empty_question")
    if len(question) > MAX_QUESTION_CHARS:
        return _failed("question_too_long")
    if not code_block["closed"]:
        return _failed("unclosed_block")
    after = [b for b in blocks if b["start"] > code_block["end"]]
    if any(b["label"] in PYTHON_LABELS for b in after):
        return _failed("several_code_blocks")
    code, why = _read_program(code_block["body"])
    if code is None:
        return _failed(why)
    input_blocks = [b for b in after if b["label"] == INPUT_LABEL]
    if input_blocks and not input_blocks[-1]["closed"] and len(input_blocks) <= N_INPUTS:
        return _failed("unclosed_block")
    if len(input_blocks) != N_INPUTS:
        return _failed("wrong_input_count")
    inputs = []
    for block in input_blocks:
        args, why = read_arguments(block["body"])
        if args is None:
            return _failed(why)
        inputs.append(args)
    return {"question": question, "code": code, "inputs": inputs}, None


# --------------------------------------------------------------------------- the student


def parse_induction(text) -> tuple[str | None, str | None]:
    """An induction answer -> the program, its one function named ``f``."""
    block, why = _last_block(text, PYTHON_LABELS, fallback="")
    if block is None:
        return _failed(why or "no_code_block")
    return _read_program(block["body"])


def parse_deduction(text) -> tuple[str | None, str | None]:
    """A deduction answer -> the predicted output as one literal's canonical source."""
    block, why = _last_block(text, {OUTPUT_LABEL})
    if block is None:
        return _failed(why or "no_output_block")
    return read_literal(block["body"].strip())


def parse_abduction(text) -> tuple[str | None, str | None]:
    """An abduction answer -> the proposed arguments as the source of their tuple."""
    block, why = _last_block(text, {INPUT_LABEL})
    if block is None:
        return _failed(why or "no_input_block")
    return read_arguments(block["body"].strip())
