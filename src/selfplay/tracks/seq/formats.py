"""The skeletons of the Haskell track's answers (paper 000), for format-constrained
decoding (see llm/answer_format.py).

Every request of this track opens a ``<think>`` block in the user message, so each
answer starts with the model's R1-style reasoning and a ``</think>``; the reasoning is
free text of any kind (markdown headings, code, fences) and only has to stop at its
first ``</think>``. After it, what prompts.py asks for:

* Alice (``seq.alice.seq`` / ``seq.alice.sinq``): ``Generated Program `Q`:`` and one
  ``haskell`` block that opens with Q's signature (P's, which the game requires); in SINQ also ``Diverging Input `x`:`` and, on the next line, the
  arguments as they follow the function name in a call (``3 [1, 2]``);
* the proof (``seq.proof``): one ``haskell`` block holding the lemma;
* Bob (``seq.bob``): optional closing remarks, then ``# Equivalent?`` and Yes or No.

The grammars fix those labels, fences and separators, and keep the model's content
out of the few places where the parsers (parse.py, haskell/liquid/answer.py) would
misread it: a code block cannot hold its own closing fence, a ``</think>``, or the
phrases the parser searches for as markers. Regions are bounded by ``reasoning_chars``
and ``code_chars`` (counted in pieces: one character each, except a backtick or ``<``
together with the characters right after it that decide whether a fence or
``</think>`` starts there); string literals in the input are not bounded.

Size: llguidance builds lexer states as generation goes, and a bounded region costs
states per character (more for a code block, whose exclusions multiply them); past
250000 states the matcher fails. Measured with SmolLM2's tokenizer: fine up to a few
thousand characters per region (the defaults, 600 and 3000, cost about 1 ms a token),
failing from about 10000 characters of code in one answer.

llguidance's lexer is greedy and gives nothing back (see answer_format.py), so every
free region here is a terminal whose regular expression itself ends where the skeleton
resumes: the reasoning ends with its ``</think>``, a code block with its closing fence,
Bob's remarks with the newline before ``#``. Exclusions are written with ``&`` and ``~``
(llguidance's intersection and complement) only on top of such a terminal: the lexer
does not reliably notice that an intersection can no longer grow, so an intersection
must never be what ends a region.
"""

from __future__ import annotations

from ...errors import UserError
from ...haskell.liquid.declarations import default_lemma_name
from ...haskell.types import (
    FRACTIONAL_NAMES,
    INTEGRAL_NAMES,
    UNIT,
    EitherType,
    FunctionType,
    HsType,
    ListType,
    MaybeType,
    Prim,
    TupleType,
    check_supported,
    is_string_type,
    parse_type,
    render_type,
)
from ...llm.answer_format import AnswerFormat, fenced_body, lark_string

PROGRAM_HEAD = "Generated Program `Q`:\n```haskell\n"
INPUT_HEAD = "Diverging Input `x`:\n"
PROOF_HEAD = "```haskell\n"
VERDICT_HEAD = "# Equivalent?\n"

# --------------------------------------------------------------------------- regex pieces
# Written for Rust's regex syntax inside Lark's /.../ (so "/" is escaped as "\/").

# Python's re.IGNORECASE also matches these for i and k (parse.py and answer.py search
# case-insensitively); spelled out so the exclusions do not depend on Rust's case folding.
_FOLD_EXTRA = {"i": r"\x{130}\x{131}", "k": r"\x{212A}"}
# Python's \s on str (the parsers' markers use \s), spelled out for the same reason.
_PY_SPACE = (
    r"[\t\n\x0B\x0C\r\x1C-\x20\x85\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}"
    r"\x{202F}\x{205F}\x{3000}]"
)
# An ASCII character that is neither a word character (Python's \w) nor ' or `: what may
# stand right before or after the lemma's name so that the parser sees the name as a word.
_NON_WORD = r"[\x00-\x26\x28-\x2F\x3A-\x40\x5B-\x5E\x7B-\x7F]"
# Pieces of a code block: never three backticks in a row, so the block cannot close early.
_CODE_UNIT = r"([^`]|`[^`]|``[^`])"


def _ci(word: str) -> str:
    """``word`` matched case-insensitively the way Python's re does it."""
    return "".join(
        f"[{c.lower()}{c.upper()}{_FOLD_EXTRA.get(c.lower(), '')}]" if c.isalpha() else c for c in word
    )


def _literal_regex(text: str) -> str:
    """``text`` as a regex matching exactly it (identifier characters kept, others as \\x{..})."""
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else f"\\x{{{ord(c):X}}}" for c in text)


_PROGRAM_MARKER = f"{_ci('generated')}{_PY_SPACE}+{_ci('program')}"  # parse.PROGRAM_MARKER's core
_INPUT_MARKER = f"{_ci('diverging')}{_PY_SPACE}+{_ci('input')}"  # parse.INPUT_MARKER's core


def _excluding(*patterns: str) -> str:
    """The complement of 'contains one of ``patterns``', to intersect with a region."""
    return "~/(?s:.*(" + "|".join(patterns) + ").*)/"


def _think(settings: dict) -> str:
    """THINK: the reasoning up to and including its first ``</think>``.

    Any text without ``</think>`` in it: pieces that are a character other than ``<``,
    or ``<`` followed by a start of ``/think>`` that then goes astray (after any number of
    such starts that a new ``<`` cut short), and finally ``</think>`` itself.
    """
    n = int(settings["reasoning_chars"])
    partial = r"(\/(t(h(i(n(k)?)?)?)?)?)?"
    astray = r"([^\/<]|\/[^t<]|\/t[^h<]|\/th[^i<]|\/thi[^n<]|\/thin[^k<]|\/think[^><])"
    # A run of false starts counts as one piece only up to 4 of them, so that the region
    # stays bounded (the tiny model can repeat `<` for ever).
    piece = f"([^<]|(<{partial}){{0,3}}<{astray})"
    return f"THINK: /{piece}{{0,{n}}}(<{partial}){{0,3}}<\\/think>/\n"


def _code(name: str, settings: dict, *excluded: str) -> str:
    """A code block's body and its closing fence on a line of its own; the body holds no
    three backticks in a row, ends with a newline and contains none of ``excluded``."""
    rule = f"{name}: /{fenced_body(settings['code_chars'])}/"
    return rule + (" & " + _excluding(*excluded) if excluded else "") + "\n"


def _proof_code(lemma: str, settings: dict) -> str:
    """The proof block's body and closing fence: as :func:`_code`, and it must name the
    lemma as a whole word (else the parser sees no candidate block) and hold no
    ``</think>`` in any spelling the proof parser accepts."""
    n = int(settings["code_chars"])
    u, nw = _CODE_UNIT, _NON_WORD
    before = f"({u}{{0,{n}}}({nw}|`{nw}|``{nw}))?"
    after = f"(({nw}|`[^`]|``[^`]){u}{{0,{n}}})?"
    think_end = f"<\\/{_ci('think')}{_PY_SPACE}*>"
    return f"PROOF: /{before}{_literal_regex(lemma)}{after}`{{0,2}}\\n```/ & {_excluding(think_end)}\n"


# --------------------------------------------------------------------------- literals
# The diverging input's arguments as parse.py and haskell/literals.py read them. Only
# the syntax is fixed (brackets, quotes, separators, parentheses where an argument must
# be atomic); which values to write is the model's choice.

_PLAIN = r"\x00-\x1F\x7F-\x9F\x{2028}\x{2029}"  # never raw in a literal: controls, line breaks
_ESCAPE = (
    r"\\[abfnrtv\\\x22']|\\\^[@A-Z\[\]\^_]|\\(NUL|SOH|STX|ETX|EOT|ENQ|ACK|BEL|BS|HT|LF|VT|FF|CR|SO|SI|"
    r"DLE|DC1|DC2|DC3|DC4|NAK|SYN|ETB|CAN|EM|SUB|ESC|FS|GS|RS|US|SP|DEL)"
)
_NUMERIC = r"(\\[0-9]{1,6}|\\x[0-9a-fA-F]{1,5}|\\o[0-7]{1,6})"  # codes stay below 0x110000
# A string argument: at most MAX_STRING_CHARS pieces. Written so that "--" (parse.py cuts
# comments out of the input line, inside strings too) and "</" (the start of a
# "</think>") cannot occur without an intersection, which would overflow llguidance's
# lexer on top of a length bound: a "-" or "<" is always followed by a character that is
# neither (nor "/" after "<"), except right before the closing quote. Escapes are the
# simple ones (\n, \t, \", ...); numeric and named escapes are left out.
MAX_STRING_CHARS = 40
_STRING_CHAR = rf"[^\x22\\{_PLAIN}<\-]"
_STRING_BODY = (
    rf"({_STRING_CHAR}|-[^\x22\\{_PLAIN}<\-]|<[^\x22\\{_PLAIN}<\-\/]|\\[abfnrtv\\\x22'&])"
    rf"{{0,{MAX_STRING_CHARS}}}[\-<]?"
)

_STRING_EXCLUDED = _excluding(_PROGRAM_MARKER)

_LITERAL_TERMINALS = (
    r"HS_INTEGRAL: /[0-9]{1,40}|0[xX][0-9a-fA-F]{1,32}|0[oO][0-7]{1,40}/"
    "\n"
    r"HS_FRACTIONAL: /[0-9]{1,40}(\.[0-9]{1,40})?([eE][-+]?[0-9]{1,4})?/"
    "\n"
    rf"HS_CHAR: /'([^'\\{_PLAIN}]|{_ESCAPE}|{_NUMERIC})'/"
    "\n"
    rf"HS_STRING: /\x22{_STRING_BODY}\x22/ & {_STRING_EXCLUDED}"
    "\n"
    r"HS_SEP: /, ?/"
    "\n"
)


# A list in the input holds at most this many items, so that it cannot run on until the
# token budget is spent (the tiny model, left alone, counts up in a list for ever).
MAX_ITEMS = 16


class _LiteralRules:
    """Lark rules for literals of the argument types: ``atom`` where an argument or a
    constructor's field stands, ``expr`` inside brackets (negation and ``Just x`` bare)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names: dict[tuple[str, str], str] = {}

    def rule(self, kind: str, t: HsType) -> str:
        key = (kind, render_type(t))
        if key not in self._names:
            name = f"hs_{kind}_{len(self._names)}"
            self._names[key] = name
            self.lines.append(f"{name}: {self._body(kind, t)}")
        return self._names[key]

    def _body(self, kind: str, t: HsType) -> str:
        atom = kind == "atom"
        if is_string_type(t):
            return f'''HS_STRING | "[" (HS_CHAR (HS_SEP HS_CHAR){{0,{MAX_ITEMS - 1}}})? "]"'''
        if isinstance(t, Prim):
            if t.name in INTEGRAL_NAMES or t.name in FRACTIONAL_NAMES:
                num = "HS_INTEGRAL" if t.name in INTEGRAL_NAMES else "HS_FRACTIONAL"
                return f'{num} | "(-" {num} ")"' + ("" if atom else f' | "-" {num}')
            if t.name == "Bool":
                return '"True" | "False"'
            if t.name == "Char":
                return "HS_CHAR"
            if t == UNIT:
                return '"()"'
        if isinstance(t, ListType):
            e = self.rule("expr", t.elem)
            return f'"[" ({e} (HS_SEP {e}){{0,{MAX_ITEMS - 1}}})? "]"'
        if isinstance(t, TupleType):
            return '"(" ' + " HS_SEP ".join(self.rule("expr", i) for i in t.items) + ' ")"'
        if isinstance(t, MaybeType):
            a = self.rule("atom", t.inner)
            return f'"Nothing" | "(Just " {a} ")"' + ("" if atom else f' | "Just " {a}')
        if isinstance(t, EitherType):
            left, right = self.rule("atom", t.left), self.rule("atom", t.right)
            body = f'"(Left " {left} ")" | "(Right " {right} ")"'
            return body + ("" if atom else f' | "Left " {left} | "Right " {right}')
        check_supported(t)  # raises for what has no literals
        raise UserError(f"no literal grammar for type {render_type(t)}")  # pragma: no cover


def _arguments_rules(arg_types: list[str]) -> str:
    """``args``: one atomic literal per argument type, separated by single spaces."""
    rules = _LiteralRules()
    parts = []
    for i, text in enumerate(arg_types, 1):
        t = parse_type(text)
        check_supported(t, f"argument {i}")
        parts.append(rules.rule("atom", t))
    if not parts:
        raise UserError("a SINQ input needs at least one argument")
    return "args: " + ' " " '.join(parts) + "\n" + "\n".join(rules.lines) + "\n" + _LITERAL_TERMINALS


# --------------------------------------------------------------------------- the formats
# Import lines the model may put before Q's signature (Q may need Data.Char & co.): a
# module of the packages the GHC checker exposes (haskell/ghc_check.py), imported whole,
# with a list of names, or qualified with an alias. The list only keeps out modules that
# do not exist (the tiny model imports `P`); which of them to import is the model's choice.
IMPORT_MODULES = (
    "Data.Char",
    "Data.List",
    "Data.Maybe",
    "Data.Either",
    "Data.Ord",
    "Data.Function",
    "Data.Bits",
    "Data.Tuple",
    "Data.Foldable",
    "Control.Monad",
    "Numeric",
    "Data.Map",
    "Data.Map.Strict",
    "Data.Set",
    "Data.IntMap",
    "Data.Array",
)
MAX_IMPORTS = 3
_IDENT = r"[a-z_][A-Za-z0-9_']{0,30}"
IMPORT_RULE = (
    "IMPORT: /import (qualified )?("
    + "|".join(m.replace(".", r"\.") for m in IMPORT_MODULES)
    + rf")( \(({_IDENT}(, ?{_IDENT}){{0,7}})?\)| as [A-Z][A-Za-z0-9]{{0,15}})?\n/"
    "\n"
)


def signature_line(source: dict) -> str:
    """P's signature as Q must carry it: ``name :: T1 -> ... -> R`` (P's own name, which
    parse.py renames to ``<name>_alt``; P's argument and result types, instantiated)."""
    t = parse_type(source["result_type"])
    for arg in reversed(source["arg_types"]):
        t = FunctionType(parse_type(arg), t)
    return f"{source['entry_point']} :: {render_type(t)}\n"


def alice_format(game: str, source: dict, settings: dict) -> AnswerFormat:
    """Alice's answer for P = ``source`` in game ``game`` ("seq" or "sinq").

    Fixed: the end of the reasoning (``</think>``, then one or two newlines), the line
    ``Generated Program `Q`:``, the ``haskell`` fence and its closing fence on a line of
    its own; in SINQ also ``Diverging Input `x`:`` after one or two newlines, then one
    line holding one literal per argument of P (P's ``arg_types``), separated by single
    spaces, negative numbers and constructor applications parenthesised. Nothing may
    follow but a newline. Q opens with P's signature (:func:`signature_line`) and P's
    name: the game requires Q to take P's arguments and return P's result, so the types
    are not the model's to choose, and the name is P's because parse.py renames Q
    anyway (to ``<P>_alt``, recursive calls included); without them the tiny model
    rarely wrote a signature at all (``parse:no_signature``). Up to MAX_IMPORTS import
    lines of modules that exist (IMPORT_MODULES) may come before the signature.

    The model's own: the whole reasoning, which modules to import, Q's arguments and body
    and any helper definitions after it, and every value of the input (any literal of the
    argument's type: numbers, strings, characters, lists, tuples, Maybe, Either). Q's
    code may not contain ``</think>``, "Generated Program" or "Diverging Input" (the
    parser would take them for markers), and a string argument holds at most
    MAX_STRING_CHARS characters, simple escapes only, no "--" (the parser cuts comments
    out of the input line, inside strings too), no "</" and no marker.
    """
    if game not in ("seq", "sinq"):
        raise UserError(f"unknown game {game!r} (seq or sinq)")
    name = str(source["entry_point"])
    head = (
        f"start: THINK NL {lark_string(PROGRAM_HEAD)} IMPORT{{0,{MAX_IMPORTS}}} {lark_string(signature_line(source))} "
        f"{lark_string(name)} PROGRAM "
    )
    if game == "seq":
        grammar = head + '"\\n"?\n'
    else:
        grammar = (
            head + f'NL {lark_string(INPUT_HEAD)} args "\\n"?\n' + _arguments_rules(list(source["arg_types"]))
        )
    grammar += (
        "NL: /\\n\\n?/\n"
        + IMPORT_RULE
        + _think(settings)
        + _code("PROGRAM", settings, "<\\/think>", _PROGRAM_MARKER, _INPUT_MARKER)
    )
    return AnswerFormat(f"seq.alice.{game}", grammar)


def proof_format(candidate: dict, settings: dict) -> AnswerFormat:
    """Alice's proof that P (``candidate["entry_point"]``) equals Q.

    Fixed: the end of the reasoning (``</think>``, then one or two newlines), then one
    ``haskell`` block and nothing after it but a newline, as the prompt asks for "the
    lemma only ... in one block, with no text outside it". The model's own: the
    reasoning and the whole block (annotation, signature, definition, helper lemmas, in
    any order). The block only has to name ``lemma_<P>_equiv`` somewhere as a whole word,
    which is what makes the parser take it for the proof, and may not hold ``</think>``.
    """
    lemma = default_lemma_name(str(candidate["entry_point"]))
    grammar = (
        f'start: THINK NL {lark_string(PROOF_HEAD)} PROOF "\\n"?\n'
        "NL: /\\n\\n?/\n" + _think(settings) + _proof_code(lemma, settings)
    )
    return AnswerFormat("seq.proof", grammar)


def bob_format(instance: dict, settings: dict) -> AnswerFormat:
    """Bob's verdict on an instance (the same skeleton for every instance).

    Fixed: the end of the reasoning (``</think>``), the heading ``# Equivalent?`` on a
    line of its own, and the word after it, Yes or No (which of them is the model's
    choice); nothing may follow but a newline. The model's own: the reasoning and any
    remarks between ``</think>`` and the heading (up to ``reasoning_chars`` characters
    without a ``#``, so the heading is the only one and its verdict the one the parser
    reads).
    """
    n = int(settings["reasoning_chars"])
    grammar = (
        f'start: THINK REMARKS {lark_string(VERDICT_HEAD)} ("Yes" | "No") "\\n"?\n'
        f"REMARKS: /[^#]{{0,{n}}}\\n/\n" + _think(settings)
    )
    return AnswerFormat("seq.bob", grammar)
