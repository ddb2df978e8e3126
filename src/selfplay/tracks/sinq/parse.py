"""Parsing and checking Alice's and Bob's raw outputs.

Pipeline: size cap and UTF-8 check -> Markdown AST (mistune 3) -> split into
sections at level-1 headings -> fenced code blocks of the relevant sections ->
Python ``ast`` for the program and ``ast.literal_eval`` for the diverging input.

Nothing here raises on model output: every failure becomes ``ok=False`` with a
stable ``reason`` code from :data:`REASONS` and a human-readable ``detail``.

Policies (where the output format leaves room):

* Headings match loosely: case, surrounding whitespace, inner runs of spaces and
  trailing ``?``, ``:`` or ``.`` do not matter, and emphasis inside the heading is
  read as plain text (``# **Equivalent?**`` counts).
* Only top-level level-1 headings (``# X`` or ``X`` underlined with ``===``) split
  sections. An unknown level-1 heading found while inside ``Analysis`` is kept as
  part of the analysis (models sometimes use ``#`` for their own sub-headings);
  anywhere else it opens a section that is ignored. Text before the first heading
  is ignored. A known heading that appears twice is rejected (``duplicate_section``).
* Code blocks: only fenced blocks count (indented blocks are ignored), including
  fenced blocks nested in lists or quotes of the section. Their language must be
  empty, ``python``, ``py``, ``python3`` or ``py3``; blocks in other languages are
  ignored, and if nothing else is left the section is rejected with
  ``wrong_code_language``. The program section and the input section must each hold
  exactly one such block: two or more is ambiguous (``several_code_blocks``).
* The program is normalised as ``ast.unparse(ast.parse(code))``: comments,
  blank lines, quoting style and layout disappear, so changes that are only textual
  do not count as a different program. It must define a top-level (non-async)
  function named after the entry point, and the normalised text must parse again.
* The diverging input must be a dict literal with identifier (non-keyword) string
  keys; it is normalised to a canonical literal source (see
  :func:`parse_input_literal`).
* Bob answering Yes (equivalent) is a valid answer (``ok=True``,
  ``equivalent='yes'``); it loses unless he still gave a usable input, which is
  kept because Bob is judged by execution, not by his Yes/No (an unusable input
  section is then ignored). When he answers No, a valid input is required. The answer is the first word of the
  ``Equivalent?`` section, so ``No.``, ``**No**`` and ``no, because ...`` all read as no.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
from dataclasses import asdict, dataclass
from typing import Any

MAX_OUTPUT_BYTES = 64 * 1024
MAX_INPUT_LITERAL_CHARS = 16 * 1024

SECTION_ANALYSIS = "analysis"
SECTION_PROGRAM = "generated program"
SECTION_EQUIVALENT = "equivalent"
SECTION_INPUT = "diverging input example"

HEADINGS = {
    SECTION_ANALYSIS: "# Analysis",
    SECTION_PROGRAM: "# Generated program",
    SECTION_EQUIVALENT: "# Equivalent?",
    SECTION_INPUT: "# Diverging input example",
}
ALICE_SECTIONS = (SECTION_ANALYSIS, SECTION_PROGRAM, SECTION_INPUT)
BOB_SECTIONS = (SECTION_ANALYSIS, SECTION_EQUIVALENT, SECTION_INPUT)

PYTHON_LANGUAGES = frozenset({"", "python", "py", "python3", "py3"})

REASONS: dict[str, str] = {
    "not_utf8": "the output bytes are not valid UTF-8 text",
    "empty_output": "the output is empty or only whitespace",
    "output_too_large": f"the output is longer than {MAX_OUTPUT_BYTES} bytes and was not parsed",
    "markdown_error": "the Markdown parser failed on the output",
    "no_sections": "the output has no level-1 Markdown heading at all",
    "missing_section": "a required level-1 section is absent (detail names it)",
    "duplicate_section": "a required level-1 section appears more than once (detail names it)",
    "no_code_block": "a section that must hold a fenced code block has none",
    "wrong_code_language": "the section's fenced code blocks are all marked as a language other than Python",
    "several_code_blocks": "a section that must hold one fenced Python code block holds several",
    "syntax_error": "the generated program is not valid Python",
    "code_too_complex": "the generated program is too deeply nested or too large for the Python parser",
    "unparse_failed": "the program parsed, but its normalised (unparsed) form did not parse again",
    "missing_entry_point": "the program does not define a top-level function with the entry point name",
    "input_too_large": "the diverging input is too long, too deeply nested, or holds an integer too large to print",
    "input_not_literal": "the diverging input is not a Python literal (or cannot be written back as one)",
    "input_not_dict": "the diverging input is a literal but not a dict",
    "input_bad_keys": "the diverging input's keys are not all valid parameter names (identifier strings)",
    "bob_no_answer": "the Equivalent? section does not start with Yes or No",
    "internal_error": "the parser itself failed unexpectedly (a bug; detail has the exception)",
}


class ParseFailure(Exception):
    """A rejected output; ``reason`` is a key of :data:`REASONS`."""

    def __init__(self, reason: str, detail: str = ""):
        if reason not in REASONS:
            raise ValueError(f"unknown parse failure reason {reason!r}")
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass
class AliceParse:
    ok: bool
    reason: str | None = None
    detail: str | None = None
    analysis: str | None = None
    program: str | None = None
    input_literal: str | None = None
    diverging_input: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class BobParse:
    ok: bool
    reason: str | None = None
    detail: str | None = None
    analysis: str | None = None
    equivalent: str | None = None
    input_literal: str | None = None
    diverging_input: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- text


def _decode(text: str | bytes) -> str:
    """Size cap (before anything else), strict UTF-8, newline and BOM clean-up."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raw = bytes(text)
        if len(raw) > MAX_OUTPUT_BYTES:
            raise ParseFailure("output_too_large", f"{len(raw)} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseFailure("not_utf8", f"invalid byte at offset {exc.start}") from None
    elif isinstance(text, str):
        if len(text) > MAX_OUTPUT_BYTES:  # a character is at least one byte
            raise ParseFailure("output_too_large", f"{len(text)} characters")
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            raise ParseFailure("not_utf8", f"unencodable character at index {exc.start}") from None
        if size > MAX_OUTPUT_BYTES:
            raise ParseFailure("output_too_large", f"{size} bytes")
    else:
        raise ParseFailure("not_utf8", f"expected text or bytes, got {type(text).__name__}")
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise ParseFailure("empty_output", "")
    return text


# ----------------------------------------------------------------------- markdown

_MARKDOWN = None


def _markdown():
    global _MARKDOWN
    if _MARKDOWN is None:
        import mistune

        _MARKDOWN = mistune.create_markdown(renderer=None)
    return _MARKDOWN


def _tokens(text: str) -> list[dict]:
    try:
        tokens = _markdown()(text)
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("markdown_error", f"{type(exc).__name__}") from None
    except Exception as exc:  # noqa: BLE001 - a parser bug must not escape
        raise ParseFailure("markdown_error", f"{type(exc).__name__}: {exc}"[:200]) from None
    if not isinstance(tokens, list):
        raise ParseFailure("markdown_error", "unexpected parser result")
    return tokens


def _plain_text(token: Any, out: list[str]) -> None:
    if isinstance(token, list):
        for child in token:
            _plain_text(child, out)
        return
    if not isinstance(token, dict):
        return
    if token.get("type") in ("softbreak", "linebreak", "blank_line"):
        out.append("\n")
    raw = token.get("raw")
    if isinstance(raw, str):
        out.append(raw)
    children = token.get("children")
    if children:
        _plain_text(children, out)
    if token.get("type") in ("paragraph", "heading", "block_code", "list_item", "block_text"):
        out.append("\n")


def plain_text(tokens: Any) -> str:
    out: list[str] = []
    _plain_text(tokens, out)
    return "".join(out)


_TRAILING = " \t?:.!*_"


def canonical_heading(name: str) -> str:
    """Lower-case, single-spaced, without trailing punctuation: 'Equivalent? ' -> 'equivalent'."""
    name = " ".join(name.split()).lower()
    return name.strip(_TRAILING)


def _render_markdown(tokens: list[dict]) -> str:
    """Markdown source for a run of tokens (used for the analysis text)."""
    if not tokens:
        return ""
    try:
        from mistune.core import BlockState
        from mistune.renderers.markdown import MarkdownRenderer

        return MarkdownRenderer()(tokens, BlockState()).strip()
    except Exception:  # noqa: BLE001 - fall back to plain text; the analysis is informative only
        return plain_text(tokens).strip()


def split_sections(tokens: list[dict], wanted: tuple[str, ...]) -> dict[str, list[dict]]:
    """Map each wanted section (canonical name) to its tokens; see the module doc for the rules."""
    sections: dict[str, list[dict]] = {}
    current: str | None = None
    saw_heading = False
    for token in tokens:
        if token.get("type") == "heading" and (token.get("attrs") or {}).get("level") == 1:
            saw_heading = True
            name = canonical_heading(plain_text(token.get("children") or []))
            if name in wanted:
                if name in sections:
                    raise ParseFailure("duplicate_section", HEADINGS.get(name, name))
                sections[name] = []
                current = name
                continue
            if current != SECTION_ANALYSIS:
                current = None
                continue
        if current is not None:
            sections[current].append(token)
    if not saw_heading:
        raise ParseFailure("no_sections", "")
    return sections


def _require(sections: dict[str, list[dict]], names: tuple[str, ...]) -> None:
    for name in names:
        if name not in sections:
            raise ParseFailure("missing_section", HEADINGS[name])


def _fenced_blocks(tokens: Any, out: list[dict]) -> None:
    if isinstance(tokens, list):
        for token in tokens:
            _fenced_blocks(token, out)
    elif isinstance(tokens, dict):
        if tokens.get("type") == "block_code":
            if tokens.get("style") == "fenced":
                out.append(tokens)
            return
        if tokens.get("children"):
            _fenced_blocks(tokens["children"], out)


def single_code_block(tokens: list[dict], section: str) -> str:
    """The one fenced Python code block of a section, as raw text."""
    blocks: list[dict] = []
    _fenced_blocks(tokens, blocks)
    python_blocks: list[str] = []
    others: list[str] = []
    for block in blocks:
        info = str((block.get("attrs") or {}).get("info") or "").strip()
        language = info.split()[0].lower().strip("{}.") if info else ""  # '{.python}' style too
        if language in PYTHON_LANGUAGES:
            python_blocks.append(str(block.get("raw") or ""))
        else:
            others.append(language)
    heading = HEADINGS.get(section, section)
    if not python_blocks:
        if others:
            raise ParseFailure("wrong_code_language", f"{heading}: {', '.join(sorted(set(others)))[:100]}")
        raise ParseFailure("no_code_block", heading)
    if len(python_blocks) > 1:
        raise ParseFailure("several_code_blocks", f"{heading}: {len(python_blocks)} blocks")
    return python_blocks[0]


# ------------------------------------------------------------------------ program


def _syntax_detail(exc: SyntaxError) -> str:
    where = f" (line {exc.lineno})" if exc.lineno else ""
    return f"{exc.msg}{where}"[:200]


def normalise_program(code: str, entry_point: str) -> str:
    """``ast.unparse(ast.parse(code))``, after checking the entry point is defined.

    Raises :class:`ParseFailure` (``syntax_error``, ``code_too_complex``,
    ``missing_entry_point`` or ``unparse_failed``).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ParseFailure("syntax_error", _syntax_detail(exc)) from None
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("code_too_complex", type(exc).__name__) from None
    except (ValueError, TypeError) as exc:  # e.g. null bytes in the source
        raise ParseFailure("syntax_error", str(exc)[:200]) from None

    # The last top-level definition with that name is the one a call would reach.
    definition = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            definition = node
    if definition is None:
        raise ParseFailure("missing_entry_point", f"no top-level 'def {entry_point}(...)'")
    if isinstance(definition, ast.AsyncFunctionDef):
        raise ParseFailure("missing_entry_point", f"'{entry_point}' is an async function")

    try:
        normalised = ast.unparse(tree)
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("code_too_complex", f"unparse: {type(exc).__name__}") from None
    except Exception as exc:  # noqa: BLE001
        raise ParseFailure("unparse_failed", f"{type(exc).__name__}: {exc}"[:200]) from None
    try:
        ast.parse(normalised)
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("code_too_complex", f"re-parse: {type(exc).__name__}") from None
    except Exception as exc:  # noqa: BLE001
        raise ParseFailure("unparse_failed", f"{type(exc).__name__}: {exc}"[:200]) from None
    return normalised


# -------------------------------------------------------------------------- input


def _literal_source(value: Any) -> str:
    """Canonical literal source: ``repr`` except that set elements are sorted and
    infinite floats are written as ``1e999`` so the result is a valid literal."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal_source(k)}: {_literal_source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal_source(v) for v in value) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return "(" + _literal_source(value[0]) + ",)"
        return "(" + ", ".join(_literal_source(v) for v in value) + ")"
    if isinstance(value, (set, frozenset)):
        if not value:
            return "set()"
        return "{" + ", ".join(sorted(_literal_source(v) for v in value)) + "}"
    if isinstance(value, float):
        return _float_source(value)
    if isinstance(value, complex) and not (math.isfinite(value.real) and math.isfinite(value.imag)):
        sign = "-" if math.copysign(1.0, value.imag) < 0 else "+"
        return f"({_float_source(value.real)}{sign}{_float_source(abs(value.imag))}j)"
    return repr(value)


def _float_source(value: float) -> str:
    if math.isinf(value):
        return "1e999" if value > 0 else "-1e999"
    return repr(value)


def _same_value(a: Any, b: Any) -> bool:
    """Structural equality that also compares types (so 1, 1.0 and True differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    return a == b


def parse_input_literal(text: str) -> tuple[dict, str]:
    """Parse a diverging input: a dict literal mapping parameter names to values.

    Returns ``(value, normalised_source)``. The normalised source is the canonical
    literal form of the value (``repr``, with set elements sorted so it does not
    depend on string hashing); ``ast.literal_eval`` of it gives the value back.
    Raises :class:`ParseFailure`.
    """
    if not isinstance(text, str):
        raise ParseFailure("input_not_literal", f"expected text, got {type(text).__name__}")
    if len(text) > MAX_INPUT_LITERAL_CHARS:
        raise ParseFailure("input_too_large", f"{len(text)} characters (limit {MAX_INPUT_LITERAL_CHARS})")
    source = text.strip()
    if not source:
        raise ParseFailure("input_not_literal", "the code block is empty")
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        # An integer literal with thousands of digits is refused by the parser itself.
        reason = "input_too_large" if "digits" in str(exc.msg) else "input_not_literal"
        raise ParseFailure(reason, _syntax_detail(exc)) from None
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("input_too_large", type(exc).__name__) from None
    except (ValueError, TypeError) as exc:
        raise ParseFailure("input_not_literal", str(exc)[:200]) from None
    try:
        value = ast.literal_eval(tree)
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("input_too_large", type(exc).__name__) from None
    except Exception as exc:  # noqa: BLE001 - ValueError/TypeError/... for non-literals
        raise ParseFailure("input_not_literal", f"{type(exc).__name__}: {exc}"[:200]) from None
    if not isinstance(value, dict):
        raise ParseFailure("input_not_dict", f"got a {type(value).__name__}")
    bad = [k for k in value if not (isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k))]
    if bad:
        raise ParseFailure(
            "input_bad_keys", f"not parameter names: {', '.join(repr(k) for k in bad[:5])}"[:200]
        )
    try:
        normalised = _literal_source(value)
    except ValueError as exc:  # an int with too many digits to print
        raise ParseFailure("input_too_large", str(exc)[:200]) from None
    except (RecursionError, MemoryError) as exc:
        raise ParseFailure("input_too_large", type(exc).__name__) from None
    try:
        same = _same_value(ast.literal_eval(normalised), value)
    except Exception as exc:  # noqa: BLE001
        raise ParseFailure(
            "input_not_literal", f"cannot be written back as a literal: {type(exc).__name__}"
        ) from None
    if not same:
        raise ParseFailure("input_not_literal", "cannot be written back as a literal")
    return value, normalised


# ---------------------------------------------------------------------- answers

_FIRST_WORD = re.compile(r"[A-Za-z]+")


def _yes_no(tokens: list[dict]) -> str | None:
    match = _FIRST_WORD.search(plain_text(tokens))
    if match is None:
        return None
    word = match.group(0).lower()
    return word if word in ("yes", "no") else None


def parse_alice(text: str | bytes, entry_point: str) -> AliceParse:
    """Parse Alice's answer; see the module doc for the rules."""
    result = AliceParse(ok=False)
    try:
        sections = split_sections(_tokens(_decode(text)), ALICE_SECTIONS)
        if SECTION_ANALYSIS in sections:
            result.analysis = _render_markdown(sections[SECTION_ANALYSIS])
        _require(sections, ALICE_SECTIONS)
        code = single_code_block(sections[SECTION_PROGRAM], SECTION_PROGRAM)
        result.program = normalise_program(code, entry_point)
        literal = single_code_block(sections[SECTION_INPUT], SECTION_INPUT)
        value, normalised = parse_input_literal(literal)
    except ParseFailure as exc:
        result.reason, result.detail = exc.reason, exc.detail
        return result
    except Exception as exc:  # noqa: BLE001 - never raise on model output
        result.reason, result.detail = "internal_error", f"{type(exc).__name__}: {exc}"[:300]
        return result
    result.input_literal, result.diverging_input = normalised, value
    result.ok = True
    return result


def parse_bob(text: str | bytes) -> BobParse:
    """Parse Bob's answer; see the module doc for the rules."""
    result = BobParse(ok=False)
    try:
        sections = split_sections(_tokens(_decode(text)), BOB_SECTIONS)
        if SECTION_ANALYSIS in sections:
            result.analysis = _render_markdown(sections[SECTION_ANALYSIS])
        _require(sections, (SECTION_ANALYSIS, SECTION_EQUIVALENT))
        answer = _yes_no(sections[SECTION_EQUIVALENT])
        if answer is None:
            raise ParseFailure("bob_no_answer", plain_text(sections[SECTION_EQUIVALENT]).strip()[:80])
        result.equivalent = answer
        if answer == "yes":
            # Bob is judged by execution, not by his Yes/No: an input he gives anyway is
            # kept and run; without a usable one, "Yes" is a valid but losing answer.
            result.ok = True
            try:
                if SECTION_INPUT in sections:
                    value, normalised = parse_input_literal(
                        single_code_block(sections[SECTION_INPUT], SECTION_INPUT)
                    )
                    result.input_literal, result.diverging_input = normalised, value
            except ParseFailure:
                pass
            return result
        _require(sections, (SECTION_INPUT,))
        literal = single_code_block(sections[SECTION_INPUT], SECTION_INPUT)
        value, normalised = parse_input_literal(literal)
    except ParseFailure as exc:
        result.reason, result.detail = exc.reason, exc.detail
        return result
    except Exception as exc:  # noqa: BLE001 - never raise on model output
        result.reason, result.detail = "internal_error", f"{type(exc).__name__}: {exc}"[:300]
        return result
    result.input_literal, result.diverging_input = normalised, value
    result.ok = True
    return result
