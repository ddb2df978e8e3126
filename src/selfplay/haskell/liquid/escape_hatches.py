"""Escape hatches and structure: what one part (P, Q or the proof) must not hold.

Decisions
---------
The parts are P (reference, from the data set), Q and the proof (both model text).
Comments and string literals are stripped before the word checks, so words inside them
and identifiers that merely contain a banned word (``assumed_value``, ``lazyList``) are
not flagged. Pragma-like text is matched in the *raw* text, comments and strings included,
so a pragma hidden in a comment-looking form is still caught (the price: a comment or
string that merely quotes a pragma is refused too).

Everywhere (P, Q and proof):

* ``{-@ LIQUID ... @-}`` (``liquid_pragma``), any GHC pragma ``{-# ... #-}``
  (``options_pragma`` for OPTIONS*, ``language_pragma`` for LANGUAGE, ``ghc_pragma``
  otherwise: RULES, ANN, INLINE ... are refused too), weakening option text such as
  ``--no-termination``, ``--notermination``, ``--nototality``, ``--trust-internals``,
  ``--check-var`` (``liquid_option``; a Haskell comment starting ``--no-x`` is a
  deliberate false positive).
* LH annotations are allow-listed: only ``{-@ reflect g @-}`` and ``{-@ g :: t @-}``
  where ``g`` is defined at top level in the same part and is neither P's nor Q's
  function (``reflect_of_program`` / ``spec_of_program``; a name not defined there,
  such as a library function or a data constructor, gives ``reflect_not_local`` /
  ``spec_not_local``). Every other annotation is refused: ``assume`` (trusted spec),
  ``assert``, ``lazy`` (no termination check), ``ignore`` (not checked), ``trust...``,
  ``measure`` (uninterpreted measures and measure equations are trusted), ``axiomatize``,
  ``define`` (a trusted logic definition), ``invariant`` / ``using`` (trusted invariants),
  and anything else (``inline``, ``type``/``predicate`` aliases that could redefine what a
  binder type means, ``data`` refinements, ``qualif``, ``ple``, ``rewrite``, ...) as
  ``forbidden_annotation``. Dangerous keywords right after ``{-@`` are also found in the
  raw text (inside comments or strings).
* Code words (whole tokens only): ``assume``, ``lazy``, ``ignore``, ``trust``,
  ``unchecked``, ``admit``/``Admit`` (``x *** Admit`` is an unfinished proof), the
  ``(==!)`` operator of ProofCombinators (an *assumed* equality step:
  ``assumed_equality``), ``unsafeCoerce`` and every ``unsafe[A-Z]..`` function,
  ``inlinePerformIO``, ``accursedUnutterablePerformIO`` (``unsafe_function``),
  ``foreign`` (``foreign_import``), ``TemplateHaskell``/``QuasiQuotes``.
* ``module`` headers (``module_header``: the checker writes the header), imports of a
  module not in the allow-list (``import_not_allowed``; ``Prelude`` is never allowed, so
  nothing can be hidden from it), ``default`` declarations (they change how P's numeric
  literals are typed: ``default_declaration``), unterminated comments, annotations or
  strings (``unterminated``: they would swallow the following part), a first code line
  that is indented (``leading_indentation``: it would continue the previous part's last
  declaration), ``LIQUID: SAFE``-like text (``fake_result_marker``), a type signature
  or fixity declaration for a name the part does not define (``signature_not_local``,
  ``fixity_not_local``: Q or the proof could otherwise retype an unsigned helper of P,
  changing how its literals default, or change how P's operators parse).

In Q and the proof only: ``undefined`` (LH types it as anything, so a lemma defined as
``undefined`` can pass; see liquidhaskell issue 2478), ``class``/``instance``/standalone
``deriving`` declarations.

In the proof only: ``error`` and ``errorWithoutStackTrace`` (``error_call``). Whether LH
treats a call to ``error`` as a checked ``false`` precondition depends on its version and
totality settings; a finished equivalence proof never needs it (unreachable cases can use
ProofCombinators' ``impossible``, whose ``false`` precondition LH checks). In P and Q,
``error`` is program behaviour (e.g. P's own ``head []`` case) and stays allowed: what LH
assumes inside Q's body does not carry over to the lemma, which is checked in the proof.
Also in the proof only: ``data``/``newtype``/``type`` declarations
(``type_declaration``), definitions of P's or Q's function (``redefines_program``).

In Q only: any mention of P's function (``q_references_p``: Q must stand alone; ``f' =
f`` is not an implementation). In P and Q: any mention of the lemma (``lemma_in_program``).

``reflect`` decision: reflecting a helper the same part defines is allowed (LH reflects
the real definition and checks its termination and totality, as ``lazy``/options that
switch these off are refused); reflecting P/Q again, a library function or anything not
defined there is refused. ``measure`` is refused outright: a pointwise equivalence proof
does not need new measures and several of their forms are trusted. What remains is
trusted to LH itself (e.g. its termination checker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lexer import is_identifier, is_symbolic, lex, tokens, unqualified
from .declarations import Decl, ident_tokens, parse_annotation, top_level_decls
from .problems import Problem, ProblemList
from .settings import WEAKENING_OPTION_RE

LIQUID_PRAGMA_RE = re.compile(r"\{-\s*@\s*LIQUID\b", re.IGNORECASE)
_RAW_GHC_PRAGMA = re.compile(r"\{-\s*#\s*([A-Za-z_]*)")
_RAW_ANNOTATION_KEYWORD = re.compile(r"\{-\s*@\s*([A-Za-z][\w-]*)")
_RAW_RESULT_MARKER = re.compile(r"(?:LIQUID|RESULT)\s*:\s*(?:SAFE|UNSAFE|ERROR)", re.IGNORECASE)

_ANNOTATION_KEYWORDS: dict[str, str] = {
    "liquid": "liquid_pragma",
    "assume": "assume",
    "assert": "assert_annotation",
    "lazy": "lazy",
    "ignore": "ignore",
    "measure": "measure",
    "axiomatize": "axiomatize",
    "define": "define_axiom",
    "invariant": "invariant",
    "using": "invariant",
    "unchecked": "unchecked",
    "admit": "admit",
}

_CODE_WORDS: dict[str, str] = {
    "assume": "assume",
    "lazy": "lazy",
    "ignore": "ignore",
    "trust": "trust",
    "unchecked": "unchecked",
    "admit": "admit",
    "Admit": "admit",
    "foreign": "foreign_import",
    "TemplateHaskell": "template_haskell",
    "QuasiQuotes": "template_haskell",
    "inlinePerformIO": "unsafe_function",
    "accursedUnutterablePerformIO": "unsafe_function",
}
_UNSAFE_RE = re.compile(r"^unsafe[A-Z]")


def _annotation_keyword_code(word: str) -> str | None:
    low = word.lower()
    if re.match(r"trust(ed)?(-|$)", low):
        return "trust"
    return _ANNOTATION_KEYWORDS.get(low)


def _code_word_code(tok: str, where: str) -> str | None:
    base = unqualified(tok).rstrip("#") or tok
    if base in _CODE_WORDS:
        return _CODE_WORDS[base]
    if _UNSAFE_RE.match(base):
        return "unsafe_function"
    if base == "undefined" and where in ("q", "proof"):
        return "undefined"
    if base in ("error", "errorWithoutStackTrace") and where == "proof":
        return "error_call"
    if tok == "==!":
        return "assumed_equality"
    return None


@dataclass
class PartScan:
    """What one part (``p``, ``q`` or ``proof``) holds: its text with imports removed,
    the imports (normalised), top-level declarations and problems."""

    where: str
    text: str
    imports: list[str]
    decls: list[Decl]
    defined: set[str]
    problems: list[Problem]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def scan_part(
    text: str,
    where: str,
    *,
    p_name: str,
    q_name: str,
    q_file: str,
    lemma: str,
    allowed_imports: frozenset[str],
) -> PartScan:
    """Look through one part for everything the module docstring refuses, and take its
    imports out (they are hoisted into the file header by the assembly)."""
    probs = ProblemList()
    # Raw text: pragmas, hidden annotations, option strings, fake result lines.
    for m in LIQUID_PRAGMA_RE.finditer(text):
        probs.add(
            "liquid_pragma", "LIQUID pragma: " + _snippet(text, m.start()), where, _line_of(text, m.start())
        )
    for m in _RAW_GHC_PRAGMA.finditer(text):
        word = m.group(1).upper()
        code = (
            "options_pragma"
            if word.startswith("OPTIONS")
            else "language_pragma"
            if word == "LANGUAGE"
            else "ghc_pragma"
        )
        probs.add(code, "GHC pragma: " + _snippet(text, m.start()), where, _line_of(text, m.start()))
    for m in _RAW_ANNOTATION_KEYWORD.finditer(text):
        code = _annotation_keyword_code(m.group(1))
        if code:
            probs.add(code, "annotation: " + _snippet(text, m.start()), where, _line_of(text, m.start()))
    for m in WEAKENING_OPTION_RE.finditer(text):
        probs.add("liquid_option", f"option text {m.group(0)!r}", where, _line_of(text, m.start()))
    for m in _RAW_RESULT_MARKER.finditer(text):
        probs.add("fake_result_marker", f"text {m.group(0)!r}", where, _line_of(text, m.start()))

    lexed = lex(text, guarded=True)
    if lexed.unterminated:
        probs.add("unterminated", f"unterminated {lexed.unterminated.replace('_', ' ')}", where)
    code_view = lexed.view()
    decls, indented = top_level_decls(code_view)
    if indented is not None:
        probs.add("leading_indentation", "the first code line is indented", where, indented)

    defined = {d.names[0] for d in decls if d.kind == "equation" and d.names}
    program_names = {p_name, q_name, q_file}

    # Annotations: allow-list.
    for ann in lexed.annotations():
        if not ann.closed:
            probs.add(
                "malformed_annotation",
                "annotation not closed by '@-}': " + _snippet(ann.inner, 0),
                where,
                ann.line,
            )
            continue
        kind, names, _ = parse_annotation(ann.inner)
        if kind == "reflect":
            if len(names) != 1:
                probs.add(
                    "forbidden_annotation",
                    "reflect must name exactly one function: " + _snippet(ann.inner, 0),
                    where,
                    ann.line,
                )
            elif names[0] in program_names:
                probs.add(
                    "reflect_of_program",
                    f"reflect {names[0]}: the checker reflects P and Q itself",
                    where,
                    ann.line,
                )
            elif names[0] not in defined:
                probs.add(
                    "reflect_not_local", f"reflect {names[0]}: not defined at top level here", where, ann.line
                )
        elif kind == "spec":
            for name in names:
                code = _annotation_keyword_code(name)
                if code:
                    probs.add(code, "annotation: " + _snippet(ann.inner, 0), where, ann.line)
                elif name in program_names:
                    probs.add("spec_of_program", f"a specification for {name}", where, ann.line)
                elif name not in defined:
                    probs.add(
                        "spec_not_local",
                        f"a specification for {name}, which is not defined at top level here",
                        where,
                        ann.line,
                    )
        else:
            word = names[0]
            code = _annotation_keyword_code(word) or "forbidden_annotation"
            probs.add(code, "annotation: " + _snippet(ann.inner, 0), where, ann.line)
        for tok in tokens(ann.inner):
            code = _code_word_code(tok, where)
            if code:
                probs.add(code, f"{tok!r} in an annotation", where, ann.line)

    # Code words (and extension names inside GHC pragmas).
    for seg in lexed.segments:
        if seg.kind == "pragma":
            for tok in tokens(text[seg.start : seg.end]):
                if _CODE_WORDS.get(tok) == "template_haskell":
                    probs.add("template_haskell", f"{tok} in a pragma", where, _line_of(text, seg.start))
    for lineno, line in enumerate(code_view.split("\n"), start=1):
        for tok in tokens(line):
            code = _code_word_code(tok, where)
            if code:
                probs.add(code, f"{tok!r} used", where, lineno)

    # Declarations.
    imports: list[str] = []
    drop_lines: set[int] = set()
    raw_lines = text.split("\n")
    for d in decls:
        if d.kind == "module":
            probs.add("module_header", "a module header: " + " ".join(d.text.split())[:80], where, d.first)
        elif d.kind == "import":
            raw = "\n".join(raw_lines[d.first - 1 : d.last])
            mod = next((t for t in d.tokens[1:] if t not in ("qualified", "safe")), "")
            if '"' in raw or mod not in allowed_imports:
                probs.add(
                    "import_not_allowed",
                    f"import of {mod or '?'} (allowed: {', '.join(sorted(allowed_imports))})",
                    where,
                    d.first,
                )
            imports.append(" ".join(d.text.split()))
            drop_lines.update(range(d.first, d.last + 1))
        elif d.kind == "default":
            probs.add("default_declaration", "a default declaration", where, d.first)
        elif d.kind == "foreign":
            probs.add("foreign_import", "a foreign declaration", where, d.first)
        elif d.kind in ("class", "instance", "deriving") and where in ("q", "proof"):
            probs.add("class_or_instance", f"a {d.kind} declaration", where, d.first)
        elif d.kind in ("data", "newtype", "type") and where == "proof":
            probs.add("type_declaration", f"a {d.kind} declaration", where, d.first)
        elif d.kind in ("infix", "infixl", "infixr"):
            ops = [
                t
                for k, t in enumerate(d.tokens[1:], start=1)
                if (is_symbolic(t) and t != ",") or (is_identifier(t) and d.tokens[k - 1] == "`")
            ]
            for op in ops:
                if op not in defined:
                    probs.add(
                        "fixity_not_local",
                        f"a fixity declaration for {op}, defined elsewhere",
                        where,
                        d.first,
                    )
        elif d.kind == "signature":
            for name in d.names:
                if where == "proof" and name in program_names:
                    probs.add("redefines_program", f"the proof gives {name} a type signature", where, d.first)
                elif name not in defined:
                    probs.add(
                        "signature_not_local",
                        f"a type signature for {name}, not defined in this part",
                        where,
                        d.first,
                    )

    idents = {unqualified(t) for t in ident_tokens(code_view)}
    ann_idents = {t for a in lexed.annotations() for t in ident_tokens(a.inner)}
    if where == "proof":
        for name in sorted(defined & program_names):
            probs.add("redefines_program", f"the proof defines {name}", where)
    else:
        own = p_name if where == "p" else q_name
        if own not in defined:
            probs.add("missing_function", f"{'P' if where == 'p' else 'Q'} does not define {own}", where)
        if lemma in idents or lemma in ann_idents:
            probs.add("lemma_in_program", f"{'P' if where == 'p' else 'Q'} mentions {lemma}", where)
        if where == "q" and q_name != p_name and (p_name in idents or p_name in ann_idents):
            probs.add("q_references_p", f"Q uses P's function {p_name}", where)

    # Hoisted imports leave blank lines, so line k of the part stays line k in the file.
    kept = ["" if k in drop_lines else ln for k, ln in enumerate(raw_lines, start=1)]
    return PartScan(where, "\n".join(kept), imports, decls, defined, probs.items)


def _snippet(text: str, pos: int, width: int = 60) -> str:
    piece = " ".join(text[pos : pos + width * 2].split("\n", 1)[0].split())
    return piece[:width] + ("..." if len(piece) > width else "")
