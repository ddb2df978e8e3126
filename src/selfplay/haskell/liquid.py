"""Liquid Haskell (LH) proofs of equivalence for the Haskell SEQ game (paper 000).

In SEQ, Alice writes a program Q meant to be equivalent to the reference program P and a
Liquid Haskell lemma proving ``P x1 .. xn == Q x1 .. xn`` for all arguments. This module
does everything around the checker itself, and is fully testable without it:

1. :func:`parse_proof_answer` reads the proof out of raw model text.
2. :func:`assemble` builds the complete file to check and refuses escape hatches.
3. :func:`check_statement` accepts only a lemma that states full pointwise equality.
4. :func:`run_liquid` runs LH (a command from config) on the file and returns a verdict.
5. :func:`extract_error_excerpt` / :func:`retry_feedback` give the checker's error,
   trimmed, for the retry prompt.
6. :func:`check_proof` chains all of it.

Nothing here raises on model text: every failure is a recorded reason, a short snake_case
code (the keys of :data:`REASONS`) plus a human ``detail``.

The file that is checked
------------------------
::

    {-@ LIQUID "--reflection" @-}           -- only the checker writes LIQUID pragmas:
    {-@ LIQUID "--ple" @-}                  -- these two, then LiquidSettings.extra_options
    module Equiv where
    import Language.Haskell.Liquid.ProofCombinators
    import ...                              -- imports found in P / Q / proof, hoisted
                                            -- (allow-listed modules only)
    {-@ reflect f @-}
    <P>
    {-@ reflect f' @-}
    <Q, its function renamed to f' when it has P's name>
    <the proof>

Accepted statement
------------------
For ``f :: T1 -> .. -> Tn -> R`` (arity counted on the curried type, so
``Int -> (Int -> Int)`` has two arguments) the lemma must be named
``lemma_f_equiv`` and have exactly one refinement spec and one Haskell signature:

* spec ``{-@ lemma_f_equiv :: x1:T1 -> .. -> xn:Tn -> { f x1 .. xn == f' x1 .. xn } @-}``:
  one named binder per argument, binder types equal to P's argument types after
  whitespace/parenthesis normalisation (aliases are not resolved: ``String`` is not
  ``[Char]``), no refinement on any binder (not even a trivial one), no LH refined alias
  (``Nat``, ``Pos``, ...) among the binder types, distinct binder names that do not shadow
  P, Q or the lemma. The result is ``{ E }`` or ``{v:Proof | E}`` (``v`` not a binder),
  optionally followed by a termination metric ``/ [..]``. ``E`` is one equality (``==``,
  or LH's older ``=``; either side order; parentheses anywhere around the applications
  or their arguments) between P and Q applied to all binders in order; anything else
  (``&&``, ``||``, ``==>``, ``<=>``, ``not``, constants, fewer or more arguments, the same
  function on both sides) is refused. A class context in the spec may be left out, and
  when given must equal P's; abstract refinements (``forall <p :: ..>``) are refused; a
  spec over :data:`MAX_SPEC_TOKENS` tokens is refused unread (``spec_too_long``).
* Haskell signature ``lemma_f_equiv :: T1 -> .. -> Tn -> Proof`` (``()`` accepted as
  ``Proof``), with the same context as P.

Escape hatches (decisions)
--------------------------
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

Verdict (a JSON-serialisable dict; every key is always present)
---------------------------------------------------------------
``checked``        bool: LH ran to completion and reported (safe / unsafe / error).
``accepted``       bool: true only for status ``safe``: a SAFE result line, no UNSAFE or
                   ERROR line, and exit code 0. Never true when LH did not run.
``status``         ``safe`` | ``unsafe`` | ``error`` | ``timeout`` | ``missing`` |
                   ``crashed`` (killed by a signal, or could not be started) |
                   ``rejected`` (refused before running LH).
``code``           snake_case reason code: ``liquid_safe``, ``liquid_unsafe``,
                   ``liquid_error``, ``liquid_exit_nonzero`` (SAFE printed, nonzero exit),
                   ``liquid_no_result`` (exit 0, no result line), ``liquid_timeout``,
                   ``liquid_missing``, ``liquid_killed``, ``liquid_launch_failed``, or the
                   first precheck problem's code (see :data:`REASONS`).
``reason``         one human line, starting ``accepted:``, ``rejected:`` or ``not
                   checked:``; for a missing tool exactly :data:`MISSING_REASON`.
``detail``         more human detail (may be empty).
``stage``          ``parse`` | ``precheck`` | ``liquid``: where the verdict was decided.
``problems``       list of ``{"code", "detail", "where", "line"}`` found before running
                   (``where`` is ``p``, ``q``, ``proof``, ``file`` or ``answer``).
``returncode``     LH's exit status (negative: killed by that signal), or None.
``timed_out``      bool.
``seconds``        wall-clock seconds LH ran, or None.
``command``        the argv that was run (without the file name), or None.
``markers``        result words found in LH's output, in order (``SAFE``/``UNSAFE``/``ERROR``).
``tool_version``   LH version when its banner shows one, else None.
``error_excerpt``  the error messages, bounded (``max_feedback_chars``), file paths
                   reduced to the bare file name, lines in the proof annotated.
``output_tail``    the last :data:`OUTPUT_TAIL_CHARS` characters of LH's output.
``file_name``      name of the checked file (e.g. ``Equiv.hs``), or None.
``file_sha256``    SHA-256 of the checked file's text, or None.
``file``           the assembled file's text, or None when parsing failed.
``proof``          the proof text read from the model output, or None.
``lemma_name``     e.g. ``lemma_f_equiv``.
``q_name_in_file`` the name Q's function has in the file (e.g. ``f'``), or None.
``part_lines``     ``{"p"|"q"|"proof": [first, last]}`` 1-based line ranges in ``file``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import UserError

# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------

CHECKER_OPTIONS: tuple[str, ...] = ("--reflection", "--ple")
PROOF_MODULE = "Language.Haskell.Liquid.ProofCombinators"
DEFAULT_MODULE_NAME = "Equiv"
DEFAULT_ALLOWED_IMPORTS: frozenset[str] = frozenset(
    {PROOF_MODULE, "Data.List", "Data.Char", "Data.Maybe", "Data.Bits", "Data.Ord"}
)
DEFAULT_TIMEOUT_S = 120.0
MAX_MODEL_OUTPUT_CHARS = 64 * 1024
MAX_FEEDBACK_CHARS = 2000
MAX_SPEC_TOKENS = 2000
OUTPUT_TAIL_CHARS = 4000
OUTPUT_HEAD_BYTES = 64 * 1024
OUTPUT_TAIL_BYTES = 192 * 1024
MISSING_REASON = "not checked: Liquid Haskell missing"

HASKELL_FENCE_LANGUAGES: frozenset[str] = frozenset(
    {"", "haskell", "hs", "liquidhaskell", "liquid-haskell", "liquid", "lh"}
)

# LH's predefined refined type aliases: a binder typed with one of them carries a hidden
# precondition, even when P's (plain Haskell) signature happens to use the same name.
LH_REFINED_ALIASES: frozenset[str] = frozenset(
    {"Nat", "Pos", "NonZero", "Even", "Odd", "TT", "FF", "ListN", "ListNE", "ListL",
     "ListX", "OList", "IncrList", "DecrList", "BNat", "Prop", "Ix"}
)

REASONS: dict[str, str] = {
    # reading the answer
    "not_utf8": "the model output is not valid UTF-8 text",
    "empty_output": "the model output is empty or only whitespace",
    "output_too_large": f"the model output is longer than {MAX_MODEL_OUTPUT_CHARS} characters",
    "no_lemma": "no Haskell code in the answer mentions the lemma lemma_<P>_equiv",
    "no_signature": "the lemma is mentioned but never given a type (no 'lemma_<P>_equiv ::')",
    "no_definition": "the lemma has no defining equation",
    "ambiguous": "several Haskell code blocks mention the lemma and they differ",
    # pragmas and options
    "liquid_pragma": "a {-@ LIQUID ... @-} pragma: only the checker sets LH options",
    "options_pragma": "an {-# OPTIONS... #-} pragma: only the checker sets options",
    "language_pragma": "a {-# LANGUAGE ... #-} pragma: extensions are not allowed",
    "ghc_pragma": "a {-# ... #-} GHC pragma (RULES, INLINE, ANN, ...) is not allowed",
    "liquid_option": "text of a weakening LH option (--no-..., --trust..., --check-var, ...)",
    # annotations
    "assume": "'assume': a trusted, unchecked specification or use of an assumption",
    "assert_annotation": "an 'assert' annotation",
    "lazy": "'lazy': switches off LH's termination check",
    "ignore": "'ignore': switches off checking of a binding",
    "trust": "'trust': an instruction to trust something unchecked",
    "measure": "a 'measure' declaration (may introduce trusted axioms)",
    "axiomatize": "an 'axiomatize' declaration (trusted axioms)",
    "define_axiom": "a 'define' annotation (a trusted logic definition)",
    "invariant": "an 'invariant'/'using' annotation (a trusted invariant)",
    "forbidden_annotation": "an LH annotation other than 'reflect g' or 'g :: spec'",
    "malformed_annotation": "a '{-@' annotation that is not closed by '@-}'",
    "reflect_of_program": "a 'reflect' of P's or Q's function: the checker adds those",
    "reflect_not_local": "a 'reflect' of a name this part does not define",
    "spec_of_program": "a specification re-specifying P's or Q's function",
    "spec_not_local": "a specification for a name this part does not define (library, constructor, ...)",
    # code words
    "undefined": "'undefined' (LH accepts it as a proof of anything)",
    "error_call": "'error' in the proof (may make an unfinished proof pass)",
    "admit": "'Admit'/'admit': an unfinished proof",
    "assumed_equality": "the (==!) operator: an assumed, unchecked equality step",
    "unchecked": "'unchecked'",
    "unsafe_function": "an unsafe function (unsafeCoerce, unsafePerformIO, ...)",
    "foreign_import": "a 'foreign' import or export",
    "template_haskell": "Template Haskell or quasi-quotes",
    # structure
    "module_header": "a 'module' header: the checker writes the header",
    "import_not_allowed": "an import of a module that is not allow-listed",
    "default_declaration": "a 'default' declaration (changes how P's literals are typed)",
    "class_or_instance": "a class, instance or standalone deriving declaration",
    "type_declaration": "a data/newtype/type declaration in the proof",
    "signature_not_local": "a type signature for a name the part does not define (it could retype P's or Q's helpers)",
    "fixity_not_local": "a fixity declaration for an operator the part does not define (it could re-parse P or Q)",
    "unterminated": "an unterminated comment, annotation, pragma or string",
    "leading_indentation": "the first code line is indented (it would continue the previous part)",
    "redefines_program": "the proof defines P's or Q's function",
    "q_references_p": "Q uses P's function (Q must stand alone)",
    "lemma_in_program": "P or Q mentions the lemma",
    "missing_function": "the part does not define its function",
    "no_p_signature": "P's function has no top-level type signature",
    "bad_name": "a function name is not a plain Haskell variable name",
    "fake_result_marker": "text that looks like a checker result line (LIQUID: SAFE ...)",
    # statement
    "spec_too_long": f"the lemma's specification has more than {MAX_SPEC_TOKENS} tokens",
    "no_spec": "the lemma has no {-@ lemma_<P>_equiv :: ... @-} refinement specification",
    "several_specs": "the lemma has more than one refinement specification, or shares one",
    "no_haskell_signature": "the lemma has no Haskell type signature",
    "several_haskell_signatures": "the lemma has more than one Haskell type signature",
    "spec_context_mismatch": "the spec's class context or forall differs from P's",
    "wrong_arity": "the number of binders differs from the number of P's arguments",
    "binder_unnamed": "an argument of the spec has no binder name",
    "binder_bad_name": "a binder name is repeated or shadows P, Q or the lemma",
    "binder_refined": "a binder carries a refinement (a precondition)",
    "binder_refined_alias": "a binder type is an LH refined alias (Nat, Pos, ...)",
    "binder_type_mismatch": "a binder type differs from P's argument type",
    "result_not_refinement": "the result is not one refinement { ... }",
    "result_binder_shadows": "the result binder shadows an argument binder",
    "not_equality": "the result refinement is not an equality",
    "extra_condition": "the result refinement has more than one equality (&&, ||, ==>, ...)",
    "wrong_function": "the equality does not compare P's function with Q's",
    "wrong_arguments": "the functions are not applied to exactly the binders, in order",
    "signature_context_mismatch": "the Haskell signature's class context differs from P's",
    "signature_mismatch": "the Haskell signature's argument types differ from P's",
    "signature_result": "the Haskell signature's result is not Proof",
    # running
    "liquid_safe": "Liquid Haskell accepted the file",
    "liquid_unsafe": "Liquid Haskell reported UNSAFE",
    "liquid_error": "Liquid Haskell reported an error (or the file did not compile)",
    "liquid_exit_nonzero": "Liquid Haskell printed SAFE but exited with a nonzero status",
    "liquid_no_result": "Liquid Haskell exited 0 without a result line",
    "liquid_timeout": "Liquid Haskell did not finish within the time limit",
    "liquid_missing": "Liquid Haskell is not available",
    "liquid_killed": "Liquid Haskell was killed by a signal",
    "liquid_launch_failed": "Liquid Haskell could not be started",
}

# --------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One reason to refuse a file before running LH.

    ``code`` is a key of :data:`REASONS`, ``detail`` human text, ``where`` the part
    (``p``, ``q``, ``proof``, ``file``, ``answer``) and ``line`` a 1-based line within it.
    """

    code: str
    detail: str
    where: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ProofAnswer:
    """Alice's proof read out of model text.

    ``code`` holds the Haskell text (dedented, tabs expanded) when ``ok``; ``origin`` says
    whether it came from a fenced block or bare text; ``candidates`` is how many code
    blocks mentioned the lemma.
    """

    ok: bool
    reason: str | None
    detail: str
    code: str | None
    origin: str | None
    lemma_name: str
    candidates: int = 0


@dataclass(frozen=True)
class SignatureShape:
    """A parsed Haskell type: sorted normalised class constraints, argument types and
    result type (all normalised: single spaces between tokens, no wrapping parens)."""

    context: tuple[str, ...]
    args: tuple[str, ...]
    result: str


@dataclass(frozen=True)
class StatementCheck:
    """Outcome of :func:`check_statement`; ``binders`` are the lemma's argument names."""

    ok: bool
    reason: str | None
    detail: str
    binders: tuple[str, ...] = ()


@dataclass(frozen=True)
class Assembled:
    """The file to check (always built, even when refused) and what was refused.

    ``part_lines`` maps ``p``/``q``/``proof`` to (first, last) 1-based lines in ``source``;
    line k of a part is line ``first + k - 1`` of the file (hoisted imports leave blanks).
    """

    source: str
    problems: tuple[Problem, ...]
    module_name: str
    lemma_name: str
    q_name_in_file: str
    part_lines: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def file_name(self) -> str:
        return f"{self.module_name}.hs"


# --------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------

_OPTION_RE = re.compile(r"^--[A-Za-z][A-Za-z0-9-]*(=[A-Za-z0-9_.,:/+-]+)?$")
_WEAKENING_OPTION_RE = re.compile(
    r"(?<![\w-])--(?:no-?[a-z][\w-]*|trust[\w-]*|check-var\w*|skip-module\w*|lazy\w*|"
    r"notermination|nototality)",
    re.IGNORECASE,
)
_MODULE_RE = re.compile(r"^[A-Z][A-Za-z0-9_']*(\.[A-Z][A-Za-z0-9_']*)*$")


@dataclass(frozen=True)
class LiquidSettings:
    """How the checker is run.

    ``command``: argv prefix for LH (the file name is appended), None when not available
    (e.g. ``("liquid",)`` or ``("apptainer", "exec", "lh.sif", "liquid")``).
    ``timeout_s``: wall-clock limit. ``extra_options``: LH options fixed by config, written
    as extra LIQUID pragmas after the checker's own. ``module_name``: the checked module.
    ``allowed_imports``: modules P, Q and the proof may import. ``max_feedback_chars``:
    bound on error excerpts.
    """

    command: tuple[str, ...] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra_options: tuple[str, ...] = ()
    module_name: str = DEFAULT_MODULE_NAME
    allowed_imports: frozenset[str] = DEFAULT_ALLOWED_IMPORTS
    max_feedback_chars: int = MAX_FEEDBACK_CHARS

    def __post_init__(self) -> None:
        if not _MODULE_RE.match(self.module_name):
            raise UserError(f"liquid: module_name {self.module_name!r} is not a Haskell module name")
        for opt in self.extra_options:
            if not _OPTION_RE.match(opt):
                raise UserError(f"liquid: extra option {opt!r} is not of the form --name or --name=value")
            if _WEAKENING_OPTION_RE.search(opt):
                raise UserError(f"liquid: extra option {opt!r} would weaken the check; remove it from config")
        for mod in self.allowed_imports:
            if not _MODULE_RE.match(mod) or mod == "Prelude":
                raise UserError(f"liquid: allowed import {mod!r} is not allowed (bad name or Prelude)")
        if not self.timeout_s > 0:
            raise UserError(f"liquid: timeout_s must be positive, got {self.timeout_s!r}")
        if self.max_feedback_chars < 80:
            raise UserError("liquid: max_feedback_chars must be at least 80")

    @property
    def options(self) -> tuple[str, ...]:
        """The LIQUID options written into the file: the checker's, then config's."""
        out: list[str] = []
        for opt in CHECKER_OPTIONS + tuple(self.extra_options):
            if opt not in out:
                out.append(opt)
        return tuple(out)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> "LiquidSettings":
        """Build from a config mapping with keys ``command`` (str, list or null),
        ``timeout_s``, ``extra_options``, ``module_name``, ``allowed_imports`` (replaces the
        default list; ProofCombinators is always allowed), ``max_feedback_chars``."""
        cfg = dict(cfg or {})
        known = {"command", "timeout_s", "extra_options", "module_name", "allowed_imports", "max_feedback_chars"}
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise UserError(f"liquid config: unknown key(s) {unknown}; known: {sorted(known)}")
        kwargs: dict[str, Any] = {"command": normalise_command(cfg.get("command"))}
        if cfg.get("timeout_s") is not None:
            kwargs["timeout_s"] = float(cfg["timeout_s"])
        if cfg.get("extra_options"):
            kwargs["extra_options"] = tuple(str(o) for o in cfg["extra_options"])
        if cfg.get("module_name"):
            kwargs["module_name"] = str(cfg["module_name"])
        if cfg.get("allowed_imports") is not None:
            kwargs["allowed_imports"] = frozenset(str(m) for m in cfg["allowed_imports"]) | {PROOF_MODULE}
        if cfg.get("max_feedback_chars") is not None:
            kwargs["max_feedback_chars"] = int(cfg["max_feedback_chars"])
        return cls(**kwargs)

    @classmethod
    def coerce(cls, value: "LiquidSettings | Mapping[str, Any] | None") -> "LiquidSettings":
        if isinstance(value, LiquidSettings):
            return value
        return cls.from_config(value)


def normalise_command(command: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """A config command (a string split like a shell would, or a list) as a tuple; None
    or empty means 'not available'."""
    if command is None:
        return None
    if isinstance(command, str):
        parts = shlex.split(command)
    else:
        parts = [str(c) for c in command]
    return tuple(parts) or None


def resolve_command(command: str | Sequence[str] | None) -> list[str] | None:
    """The argv to run, with its program resolved to a path, or None when the program
    cannot be found (or is not executable)."""
    argv = normalise_command(command)
    if not argv:
        return None
    prog = argv[0]
    if os.sep in prog:
        if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
            return None
        found = prog
    else:
        found = shutil.which(prog)
        if found is None:
            return None
    return [found, *argv[1:]]


# --------------------------------------------------------------------------------------
# Lexing Haskell text (enough of it to know what is code, comment, annotation, string)
# --------------------------------------------------------------------------------------

_SYMBOL_CHARS = frozenset("!#$%&*+./<=>?@\\^|-~:")
_IDENT_CHARS = re.compile(r"[\w']")
_CHAR_LITERAL = re.compile(r"'(?:[^'\\\n]|\\[^\n][^'\n]{0,10})'")


@dataclass(frozen=True)
class _Segment:
    """A stretch of text: ``code``, ``line_comment``, ``block_comment``, ``annotation``
    ({-@ .. @-}), ``pragma`` ({-# .. #-}), ``string`` or ``char``."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class _Annotation:
    """An LH annotation: its inner text, 1-based line, and whether it ends with ``@-}``."""

    inner: str
    line: int
    closed: bool


@dataclass
class _Lexed:
    text: str
    segments: list[_Segment]
    unterminated: str | None  # kind of the construct left open at the end, if any

    def view(self, keep: frozenset[str] = frozenset({"code"})) -> str:
        """The text with every segment not in ``keep`` blanked (newlines kept)."""
        out: list[str] = []
        for seg in self.segments:
            piece = self.text[seg.start:seg.end]
            out.append(piece if seg.kind in keep else re.sub(r"[^\n]", " ", piece))
        return "".join(out)

    def annotations(self) -> list[_Annotation]:
        out: list[_Annotation] = []
        for seg in self.segments:
            if seg.kind != "annotation":
                continue
            raw = self.text[seg.start:seg.end]
            closed = raw.endswith("@-}") and len(raw) >= 6
            inner = raw[3:-3] if closed else raw[3:]
            out.append(_Annotation(inner, self.text.count("\n", 0, seg.start) + 1, closed))
        return out


def _lex(text: str) -> _Lexed:
    """Split Haskell text into code, comments (nested), annotations, pragmas and literals
    the way GHC's lexer does for the parts that matter here."""
    segs: list[_Segment] = []
    n = len(text)
    i = 0
    code_start = 0
    unterminated: str | None = None

    def flush(upto: int) -> None:
        if upto > code_start:
            segs.append(_Segment("code", code_start, upto))

    while i < n:
        c = text[i]
        if c == "{" and text.startswith("{-", i):
            kind = "pragma" if text.startswith("{-#", i) else "annotation" if text.startswith("{-@", i) else "block_comment"
            flush(i)
            depth = 0
            j = i
            while j < n:
                if text.startswith("{-", j):
                    depth += 1
                    j += 2
                elif text.startswith("-}", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            if depth != 0:
                unterminated = kind
                j = n
            segs.append(_Segment(kind, i, j))
            i = code_start = j
            continue
        if c == "-" and text.startswith("--", i):
            j = i
            while j < n and text[j] == "-":
                j += 1
            nxt = text[j] if j < n else ""
            prev = text[i - 1] if i > 0 else ""
            if nxt in _SYMBOL_CHARS or (prev and prev in _SYMBOL_CHARS):
                i = j  # part of an operator such as --> or |--
                continue
            flush(i)
            end = text.find("\n", j)
            end = n if end < 0 else end
            segs.append(_Segment("line_comment", i, end))
            i = code_start = end
            continue
        if c == '"':
            flush(i)
            j = i + 1
            closed = False
            while j < n:
                ch = text[j]
                if ch == "\\":
                    if j + 1 < n and text[j + 1].isspace():  # string gap
                        k = j + 1
                        while k < n and text[k].isspace():
                            k += 1
                        j = k + 1 if k < n and text[k] == "\\" else k
                    else:
                        j += 2
                elif ch == '"':
                    j += 1
                    closed = True
                    break
                elif ch == "\n":
                    break
                else:
                    j += 1
            if not closed:
                unterminated = unterminated or "string"
            j = min(j, n)
            segs.append(_Segment("string", i, j))
            i = code_start = j
            continue
        if c == "'" and not (i > 0 and _IDENT_CHARS.match(text[i - 1])):
            m = _CHAR_LITERAL.match(text, i)
            if m:
                flush(i)
                segs.append(_Segment("char", i, m.end()))
                i = code_start = m.end()
                continue
        i += 1
    flush(n)
    return _Lexed(text, segs, unterminated)


_TOKEN_RE = re.compile(
    r"""(?P<id>(?:[A-Z][\w']*\.)*[A-Za-z_][\w']*)
      |(?P<num>[0-9][\w.]*)
      |(?P<op>[!#$%&*+./<=>?@\\^|~:-]+)
      |(?P<sp>[()\[\],;`{}])
      |(?P<other>\S)""",
    re.VERBOSE,
)
_HASKELL_KEYWORDS = frozenset(
    {"case", "class", "data", "default", "deriving", "do", "else", "foreign", "if", "import", "in",
     "infix", "infixl", "infixr", "instance", "let", "module", "newtype", "of", "then", "type", "where"}
)
_VARID_RE = re.compile(r"^[a-z_][\w']*$")


def _tokens(text: str) -> list[str]:
    return [m.group(0) for m in _TOKEN_RE.finditer(text)]


def _is_varid(tok: str) -> bool:
    return bool(_VARID_RE.match(tok)) and tok not in _HASKELL_KEYWORDS and tok != "_"


def _is_op(tok: str) -> bool:
    return bool(tok) and all(ch in _SYMBOL_CHARS for ch in tok)


def _last_component(tok: str) -> str:
    return tok.rsplit(".", 1)[-1] if "." in tok and tok[0].isupper() else tok


_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _matching(tokens: list[str], start: int) -> int:
    """Index of the bracket closing the one at ``start``, or -1."""
    stack: list[str] = []
    for k in range(start, len(tokens)):
        t = tokens[k]
        if t in _CLOSE:
            stack.append(_CLOSE[t])
        elif t in (")", "]", "}"):
            if not stack or stack.pop() != t:
                return -1
            if not stack:
                return k
    return -1


def _top_level(tokens: list[str]) -> list[tuple[int, str]]:
    """(index, token) pairs at bracket depth 0."""
    out: list[tuple[int, str]] = []
    depth = 0
    for k, t in enumerate(tokens):
        if t in _CLOSE:
            if depth == 0:
                out.append((k, t))
            depth += 1
        elif t in (")", "]", "}"):
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append((k, t))
    return out


def _split_top(tokens: list[str], seps: set[str]) -> list[list[str]]:
    parts: list[list[str]] = []
    last = 0
    for k, t in _top_level(tokens):
        if t in seps:
            parts.append(tokens[last:k])
            last = k + 1
    parts.append(tokens[last:])
    return parts


def _strip_parens(tokens: list[str]) -> list[str]:
    """Remove parentheses wrapping the whole token list (not a tuple, not unit), in one
    linear pass: layer ``i`` (the ``i``-th wrapping pair) may go when it closes at the end
    and no comma sits directly inside it (at bracket depth ``i + 1``)."""
    n = len(tokens)
    if n <= 2 or tokens[0] != "(":
        return tokens
    match = [-1] * n
    stack: list[int] = []
    comma_depths: set[int] = set()
    for k, t in enumerate(tokens):
        if t in _CLOSE:
            stack.append(k)
        elif t in (")", "]", "}"):
            if not stack:
                return tokens
            match[stack.pop()] = k
        elif t == ",":
            comma_depths.add(len(stack))
    i = 0
    while n - 2 * i > 2 and tokens[i] == "(" and match[i] == n - 1 - i and (i + 1) not in comma_depths:
        i += 1
    return tokens[i:n - i]


def _norm_type_tokens(tokens: list[str], depth: int = 0) -> list[str]:
    """Drop parentheses that wrap the whole type or a single atom (``Maybe (Int)`` is
    ``Maybe Int``), also inside tuples and lists; applications keep theirs."""
    tokens = _strip_parens(list(tokens))
    if depth > 64:
        return tokens
    out: list[str] = []
    k = 0
    while k < len(tokens):
        t = tokens[k]
        if t not in _CLOSE:
            out.append(t)
            k += 1
            continue
        close = _matching(tokens, k)
        if close < 0:
            out.extend(tokens[k:])
            break
        parts = [_norm_type_tokens(p, depth + 1) for p in _split_top(tokens[k + 1:close], {","})]
        if t == "(" and len(parts) == 1 and len(parts[0]) == 1:
            out.extend(parts[0])
        else:
            out.append(t)
            for j, part in enumerate(parts):
                if j:
                    out.append(",")
                out.extend(part)
            out.append(tokens[close])
        k = close + 1
    return out


def _norm_type(tokens: list[str]) -> str:
    return " ".join(_norm_type_tokens(list(tokens)))


# --------------------------------------------------------------------------------------
# Types and signatures
# --------------------------------------------------------------------------------------


def _split_prefix(tokens: list[str]) -> tuple[bool, tuple[str, ...], list[str], str | None]:
    """Split ``forall .. .`` and class contexts off a type.

    Returns (had_forall, sorted normalised constraints, body tokens, problem or None).
    """
    had_forall = False
    problem = None
    if tokens and tokens[0] == "forall":
        had_forall = True
        dot = next((k for k, t in enumerate(tokens) if t == "."), -1)
        if dot < 0:
            return True, (), tokens, "forall without '.'"
        if any(t in ("<", ">") or t.startswith("<") for t in tokens[1:dot]):
            problem = "abstract refinements in forall"
        tokens = tokens[dot + 1:]
    parts = _split_top(tokens, {"=>"})
    constraints: list[str] = []
    for ctx in parts[:-1]:
        ctx = _strip_parens(ctx)
        if len(ctx) >= 2 and ctx[0] == "(" and _matching(ctx, 0) == len(ctx) - 1:
            ctx = ctx[1:-1]  # a tuple of constraints
        for c in _split_top(ctx, {","}):
            if c:
                constraints.append(_norm_type(c))
    return had_forall, tuple(sorted(constraints)), parts[-1], problem


def _curried(body: list[str]) -> tuple[list[list[str]], list[str]]:
    """Argument token lists and result tokens of a type body, flattening a parenthesised
    function result (``A -> (B -> C)`` has two arguments)."""
    segs = _split_top(body, {"->"})
    args = segs[:-1]
    result = segs[-1]
    while True:
        inner = _strip_parens(result)
        more = _split_top(inner, {"->"})
        if len(more) == 1:
            break
        args += more[:-1]
        result = more[-1]
    return args, result


def parse_type_signature(type_text: str) -> SignatureShape:
    """Parse the type of a Haskell signature (the text after ``::``).

    Raises ValueError on an empty or unbalanced type.
    """
    tokens = _tokens(type_text)
    if not tokens:
        raise ValueError("empty type")
    if len(tokens) > MAX_SPEC_TOKENS:
        raise ValueError(f"type longer than {MAX_SPEC_TOKENS} tokens")
    depth = 0
    for t in tokens:
        if t in _CLOSE:
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced brackets in type")
    if depth:
        raise ValueError("unbalanced brackets in type")
    _, context, body, problem = _split_prefix(tokens)
    if problem:
        raise ValueError(problem)
    args, result = _curried(body)
    if any(not a for a in args) or not result:
        raise ValueError("empty argument or result type")
    return SignatureShape(context, tuple(_norm_type(a) for a in args), _norm_type(result))


# --------------------------------------------------------------------------------------
# Top-level declarations
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Decl:
    """A top-level declaration: first and last 1-based line, its code text (comments and
    literals blanked), its tokens, its kind and the names it defines or types."""

    first: int
    last: int
    text: str
    tokens: tuple[str, ...]
    kind: str  # keyword (import, data, ...), 'signature', 'equation' or 'other'
    names: tuple[str, ...]


def _decls(code_view: str) -> tuple[list[_Decl], int | None]:
    """Top-level declarations of a code view, and the line of an indented first code line."""
    lines = code_view.split("\n")
    groups: list[tuple[int, int]] = []
    indented_first: int | None = None
    start: int | None = None
    for idx, line in enumerate(lines):
        if not line.strip():
            continue
        if line[0].isspace():
            if start is None and indented_first is None:
                indented_first = idx + 1
            continue
        if start is not None:
            groups.append((start, idx))
        start = idx
    if start is not None:
        groups.append((start, len(lines)))
    out: list[_Decl] = []
    for a, b in groups:
        text = "\n".join(lines[a:b])
        last = a
        for k in range(a, b):
            if lines[k].strip():
                last = k
        toks = _tokens(text)
        out.append(_classify(a + 1, last + 1, text, toks))
    return out, indented_first


def _classify(first: int, last: int, text: str, toks: list[str]) -> _Decl:
    if not toks:
        return _Decl(first, last, text, (), "other", ())
    head = toks[0]
    if head in _HASKELL_KEYWORDS and head not in ("let", "case", "if", "do"):
        return _Decl(first, last, text, tuple(toks), head, ())
    top = _top_level(toks)
    sig_at = next((k for k, t in top if t == "::"), -1)
    eq_at = next((k for k, t in top if t in ("=", "|")), -1)
    if sig_at >= 0 and (eq_at < 0 or sig_at < eq_at):
        names: list[str] = []
        for part in _split_top(toks[:sig_at], {","}):
            if len(part) == 1 and _is_varid(part[0]):
                names.append(part[0])
            elif len(part) == 3 and part[0] == "(" and part[2] == ")" and _is_op(part[1]):
                names.append(part[1])
        return _Decl(first, last, text, tuple(toks), "signature", tuple(names))
    name: str | None = None
    if _is_varid(head):
        if len(toks) > 1 and _is_op(toks[1]) and toks[1] not in ("=", "|", "@", "::", "->"):
            name = toks[1]
        elif len(toks) > 2 and toks[1] == "`" and _is_varid(toks[2]):
            name = toks[2]
        else:
            name = head
    elif head == "(":
        close = _matching(toks, 0)
        if close == 2 and _is_op(toks[1]):
            name = toks[1]
        elif close > 0 and close + 1 < len(toks) and _is_op(toks[close + 1]) and toks[close + 1] not in ("=", "|", "::"):
            name = toks[close + 1]
        elif close > 0 and close + 2 < len(toks) and toks[close + 1] == "`":
            name = toks[close + 2]
    return _Decl(first, last, text, tuple(toks), "equation" if name else "other", (name,) if name else ())


def find_signature(source: str, name: str) -> str | None:
    """The type text (whitespace collapsed) of ``name``'s top-level signature in a
    Haskell source, or None when there is none."""
    decls, _ = _decls(_lex(source).view())
    for d in decls:
        if d.kind == "signature" and name in d.names:
            after = d.text.split("::", 1)[1]
            return " ".join(after.split())
    return None


def default_lemma_name(p_name: str) -> str:
    """The lemma name the paper's prompt asks for: ``lemma_<P>_equiv``."""
    return f"lemma_{p_name}_equiv"


def _ident_tokens(view: str) -> list[str]:
    return [t for t in _tokens(view) if t[0].isalpha() or t[0] == "_"]


def q_file_name(p_name: str, q_name: str, *texts: str) -> str:
    """The name Q's function has in the checked file: Q's own name when it differs from
    P's, else P's name with primes added until it clashes with no identifier in ``texts``
    (pass P's and Q's sources)."""
    if q_name != p_name:
        return q_name
    used: set[str] = set()
    for t in texts:
        used.update(_last_component(tok) for tok in _ident_tokens(_lex(t).view(frozenset({"code", "annotation"}))))
    candidate = p_name + "'"
    while candidate in used:
        candidate += "'"
    return candidate


def _rename(text: str, old: str, new: str) -> str:
    """Rename identifier ``old`` to ``new`` in code and annotations (not in comments or
    literals)."""
    lexed = _lex(text)
    pattern = re.compile(r"(?<![\w'])" + re.escape(old) + r"(?![\w'])")
    out: list[str] = []
    for seg in lexed.segments:
        piece = text[seg.start:seg.end]
        if seg.kind in ("code", "annotation"):
            piece = pattern.sub(new, piece)
        out.append(piece)
    return "".join(out)


# --------------------------------------------------------------------------------------
# Escape-hatch and structure checks of one part
# --------------------------------------------------------------------------------------

_RAW_LIQUID_PRAGMA = re.compile(r"\{-\s*@\s*LIQUID\b", re.IGNORECASE)
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
    base = _last_component(tok).rstrip("#") or tok
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
class _PartScan:
    """What one part (``p``, ``q`` or ``proof``) holds: its text with imports removed,
    the imports (normalised), top-level declarations and problems."""

    where: str
    text: str
    imports: list[str]
    decls: list[_Decl]
    defined: set[str]
    problems: list[Problem]


class _Problems:
    """An ordered, de-duplicated list of problems."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self._seen: set[tuple[str, str, int | None]] = set()

    def add(self, code: str, detail: str, where: str, line: int | None = None) -> None:
        key = (code, where, line)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(Problem(code, detail, where, line))


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _parse_annotation(inner: str) -> tuple[str, list[str], str]:
    """Classify an annotation's inner text: ('reflect', [name], '') or ('spec', names,
    type text) or ('other', [first word], '')."""
    toks = _tokens(inner)
    if not toks:
        return "other", [""], ""
    if toks[0] == "reflect":
        return "reflect", toks[1:], ""
    top = _top_level(toks)
    sig_at = next((k for k, t in top if t == "::"), -1)
    if sig_at > 0:
        names: list[str] = []
        for part in _split_top(toks[:sig_at], {","}):
            if len(part) == 1:
                names.append(part[0])
            elif len(part) == 3 and part[0] == "(" and part[2] == ")":
                names.append(part[1])
            else:
                names.append(" ".join(part))
        return "spec", names, inner.split("::", 1)[1]
    return "other", [toks[0]], ""


def _scan_part(text: str, where: str, *, p_name: str, q_name: str, q_file: str, lemma: str,
               allowed_imports: frozenset[str]) -> _PartScan:
    probs = _Problems()
    # Raw text: pragmas, hidden annotations, option strings, fake result lines.
    for m in _RAW_LIQUID_PRAGMA.finditer(text):
        probs.add("liquid_pragma", "LIQUID pragma: " + _snippet(text, m.start()), where, _line_of(text, m.start()))
    for m in _RAW_GHC_PRAGMA.finditer(text):
        word = m.group(1).upper()
        code = "options_pragma" if word.startswith("OPTIONS") else "language_pragma" if word == "LANGUAGE" else "ghc_pragma"
        probs.add(code, "GHC pragma: " + _snippet(text, m.start()), where, _line_of(text, m.start()))
    for m in _RAW_ANNOTATION_KEYWORD.finditer(text):
        code = _annotation_keyword_code(m.group(1))
        if code:
            probs.add(code, "annotation: " + _snippet(text, m.start()), where, _line_of(text, m.start()))
    for m in _WEAKENING_OPTION_RE.finditer(text):
        probs.add("liquid_option", f"option text {m.group(0)!r}", where, _line_of(text, m.start()))
    for m in _RAW_RESULT_MARKER.finditer(text):
        probs.add("fake_result_marker", f"text {m.group(0)!r}", where, _line_of(text, m.start()))

    lexed = _lex(text)
    if lexed.unterminated:
        probs.add("unterminated", f"unterminated {lexed.unterminated.replace('_', ' ')}", where)
    code_view = lexed.view()
    decls, indented = _decls(code_view)
    if indented is not None:
        probs.add("leading_indentation", "the first code line is indented", where, indented)

    defined = {d.names[0] for d in decls if d.kind == "equation" and d.names}
    program_names = {p_name, q_name, q_file}

    # Annotations: allow-list.
    for ann in lexed.annotations():
        if not ann.closed:
            probs.add("malformed_annotation", "annotation not closed by '@-}': " + _snippet(ann.inner, 0), where, ann.line)
            continue
        kind, names, _ = _parse_annotation(ann.inner)
        if kind == "reflect":
            if len(names) != 1:
                probs.add("forbidden_annotation", "reflect must name exactly one function: " + _snippet(ann.inner, 0), where, ann.line)
            elif names[0] in program_names:
                probs.add("reflect_of_program", f"reflect {names[0]}: the checker reflects P and Q itself", where, ann.line)
            elif names[0] not in defined:
                probs.add("reflect_not_local", f"reflect {names[0]}: not defined at top level here", where, ann.line)
        elif kind == "spec":
            for name in names:
                code = _annotation_keyword_code(name)
                if code:
                    probs.add(code, "annotation: " + _snippet(ann.inner, 0), where, ann.line)
                elif name in program_names:
                    probs.add("spec_of_program", f"a specification for {name}", where, ann.line)
                elif name not in defined:
                    probs.add("spec_not_local", f"a specification for {name}, which is not defined at top level here", where, ann.line)
        else:
            word = names[0]
            code = _annotation_keyword_code(word) or "forbidden_annotation"
            probs.add(code, "annotation: " + _snippet(ann.inner, 0), where, ann.line)
        for tok in _tokens(ann.inner):
            code = _code_word_code(tok, where)
            if code:
                probs.add(code, f"{tok!r} in an annotation", where, ann.line)

    # Code words (and extension names inside GHC pragmas).
    for seg in lexed.segments:
        if seg.kind == "pragma":
            for tok in _tokens(text[seg.start:seg.end]):
                if _CODE_WORDS.get(tok) == "template_haskell":
                    probs.add("template_haskell", f"{tok} in a pragma", where, _line_of(text, seg.start))
    for lineno, line in enumerate(code_view.split("\n"), start=1):
        for tok in _tokens(line):
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
            raw = "\n".join(raw_lines[d.first - 1:d.last])
            mod = next((t for t in d.tokens[1:] if t not in ("qualified", "safe")), "")
            if '"' in raw or mod not in allowed_imports:
                probs.add("import_not_allowed", f"import of {mod or '?'} (allowed: {', '.join(sorted(allowed_imports))})", where, d.first)
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
            ops = [t for k, t in enumerate(d.tokens[1:], start=1)
                   if (_is_op(t) and t != ",") or (_is_varid(t) and d.tokens[k - 1] == "`")]
            for op in ops:
                if op not in defined:
                    probs.add("fixity_not_local", f"a fixity declaration for {op}, defined elsewhere", where, d.first)
        elif d.kind == "signature":
            for name in d.names:
                if where == "proof" and name in program_names:
                    probs.add("redefines_program", f"the proof gives {name} a type signature", where, d.first)
                elif name not in defined:
                    probs.add("signature_not_local", f"a type signature for {name}, not defined in this part", where, d.first)

    idents = {_last_component(t) for t in _ident_tokens(code_view)}
    ann_idents = {t for a in lexed.annotations() for t in _ident_tokens(a.inner)}
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
    return _PartScan(where, "\n".join(kept), imports, decls, defined, probs.items)


def _snippet(text: str, pos: int, width: int = 60) -> str:
    piece = " ".join(text[pos:pos + width * 2].split("\n", 1)[0].split())
    return piece[:width] + ("..." if len(piece) > width else "")


# --------------------------------------------------------------------------------------
# Reading the answer out of model text
# --------------------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_THINK_END = re.compile(r"</think\s*>", re.IGNORECASE)


def _fenced_blocks(text: str) -> list[tuple[str, str, int, int]]:
    """(language, content, first line index, end line index) of each fenced code block;
    an unclosed block runs to the end."""
    lines = text.split("\n")
    blocks: list[tuple[str, str, int, int]] = []
    k = 0
    while k < len(lines):
        m = _FENCE_OPEN.match(lines[k])
        if not m:
            k += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        opened = k
        lang = info.strip("{}.").lower()
        close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        body: list[str] = []
        k += 1
        while k < len(lines) and not close.match(lines[k]):
            line = lines[k]
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            k += 1
        k += 1
        blocks.append((lang, "\n".join(body), opened, min(k, len(lines))))
    return blocks


def _clean_code(code: str) -> str:
    code = textwrap.dedent(code.expandtabs(8))
    lines = [ln.rstrip() for ln in code.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


_BARE_CODE_START = re.compile(r"^\s*(\{-@|[a-z_][\w']*\s*::)")
_BARE_HASKELLISH = re.compile(r"^(\{-|-}|--|@-}|[a-z_(\[])")


def _bare_region(text: str, lemma_re: re.Pattern[str]) -> str | None:
    """Haskell code given without fences: from the first annotation, signature or lemma
    line to the first unindented line that cannot start Haskell (prose starting with a
    capital letter, a list bullet, a fence, ...)."""
    lines = text.split("\n")
    start = next((k for k, ln in enumerate(lines) if _BARE_CODE_START.match(ln) or lemma_re.match(ln.lstrip())), None)
    if start is None:
        return None
    end = len(lines)
    for k in range(start + 1, len(lines)):
        ln = lines[k]
        if not ln.strip() or ln[0].isspace():
            continue
        if not _BARE_HASKELLISH.match(ln):
            end = k
            break
    return "\n".join(lines[start:end])


def parse_proof_answer(text: str | bytes, p_name: str, *, lemma_name: str | None = None) -> ProofAnswer:
    """Read Alice's proof (the lemma and any helpers) out of raw model output.

    Policy: text after the last ``</think>`` is used when there is one. Fenced blocks
    (``` or ~~~) in a Haskell-ish language (:data:`HASKELL_FENCE_LANGUAGES`) that mention
    the lemma are the candidates; several that differ (after trimming whitespace) are
    ``ambiguous``, identical repeats are fine. Without any fenced block the code is read
    bare (see :func:`_bare_region`). The candidate must type the lemma somewhere
    (``no_signature``) and define it (``no_definition``). Never raises.
    """
    lemma = lemma_name or default_lemma_name(p_name)

    def fail(reason: str, detail: str, candidates: int = 0) -> ProofAnswer:
        return ProofAnswer(False, reason, detail, None, None, lemma, candidates)

    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            return fail("not_utf8", REASONS["not_utf8"])
    if not isinstance(text, str):
        return fail("empty_output", "the model output is not text")
    if len(text) > MAX_MODEL_OUTPUT_CHARS:
        return fail("output_too_large", f"{len(text)} characters (limit {MAX_MODEL_OUTPUT_CHARS})")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return fail("empty_output", REASONS["empty_output"])
    ends = list(_THINK_END.finditer(text))
    if ends:
        text = text[ends[-1].end():]

    lemma_re = re.compile(r"(?<![\w'])" + re.escape(lemma) + r"(?![\w'])")
    fenced = _fenced_blocks(text)
    candidates = [_clean_code(body) for lang, body, _, _ in fenced
                  if lang in HASKELL_FENCE_LANGUAGES and lemma_re.search(body)]
    origin = "fenced"
    if not candidates:
        inside = {k for _, _, a, b in fenced for k in range(a, b)}
        outside = "\n".join(ln for k, ln in enumerate(text.split("\n")) if k not in inside)
        region = _bare_region(outside, lemma_re)
        if region is None or not lemma_re.search(region):
            where = "no Haskell code block" if fenced else "no Haskell code in the answer"
            return fail("no_lemma", f"{where} mentions {lemma}")
        candidates = [_clean_code(region)]
        origin = "bare"
    distinct = list(dict.fromkeys(candidates))
    if len(distinct) > 1:
        return fail("ambiguous", f"{len(candidates)} code blocks mention {lemma} and they differ", len(candidates))
    code = distinct[0]
    view = _lex(code).view(frozenset({"code", "annotation"}))
    if not re.search(r"(?<![\w'])" + re.escape(lemma) + r"\s*::", view):
        return fail("no_signature", f"{lemma} is never given a type ('{lemma} :: ...')", len(candidates))
    decls, _ = _decls(_lex(code).view())
    if not any(d.kind == "equation" and d.names == (lemma,) for d in decls):
        return fail("no_definition", f"{lemma} has no defining equation", len(candidates))
    return ProofAnswer(True, None, f"read from {origin} code", code, origin, lemma, len(candidates))


# --------------------------------------------------------------------------------------
# Statement check
# --------------------------------------------------------------------------------------

_LOGICAL = frozenset({"&&", "||", "==>", "=>", "<=>", "<==>", "/=", "!=", "<", ">", "<=", ">=", "~~"})


def _application(tokens: list[str], depth: int = 0) -> tuple[str, list[str]] | str:
    """Parse ``h a1 .. ak`` (parentheses allowed around the whole, the head application or
    each argument). Returns (head, args) or a problem code."""
    if depth > 64:
        return "wrong_arguments"
    tokens = _strip_parens(tokens)
    if not tokens:
        return "wrong_arguments"
    for t in tokens:
        if _is_op(t) or t in (",", ";", "[", "]", "{", "}", "`"):
            return "extra_condition" if t in _LOGICAL else "wrong_arguments"
    atoms: list[list[str]] = []
    k = 0
    while k < len(tokens):
        if tokens[k] == "(":
            close = _matching(tokens, k)
            if close < 0:
                return "wrong_arguments"
            atoms.append(tokens[k:close + 1])
            k = close + 1
        else:
            atoms.append([tokens[k]])
            k += 1
    head_atom, rest = atoms[0], atoms[1:]
    if len(head_atom) > 1:
        inner = _application(head_atom, depth + 1)
        if isinstance(inner, str):
            return inner
        head, args = inner
    else:
        head, args = head_atom[0], []
    for atom in rest:
        a = _strip_parens(atom)
        if len(a) != 1:
            return "wrong_arguments"
        args.append(a[0])
    return head, args


def check_statement(proof_code: str, *, p_name: str, q_name_in_file: str, p_type: str | None,
                    lemma_name: str | None = None) -> StatementCheck:
    """Accept only a lemma whose spec says P and Q are equal on all their arguments and
    whose Haskell signature matches (see the module docstring for the exact rules)."""
    lemma = lemma_name or default_lemma_name(p_name)

    def fail(reason: str, detail: str) -> StatementCheck:
        return StatementCheck(False, reason, detail)

    if p_type is None:
        return fail("no_p_signature", f"{p_name} has no top-level type signature")
    try:
        p_shape = parse_type_signature(p_type)
    except ValueError as exc:
        return fail("no_p_signature", f"P's signature cannot be read: {exc}")
    n = len(p_shape.args)
    lexed = _lex(proof_code)
    specs = []
    for ann in lexed.annotations():
        kind, names, body = _parse_annotation(ann.inner)
        if kind == "spec" and lemma in names:
            if len(names) > 1:
                return fail("several_specs", f"{lemma} shares its specification with {names}")
            specs.append(body)
    if not specs:
        return fail("no_spec", f"no {{-@ {lemma} :: ... @-}} specification")
    if len(specs) > 1:
        return fail("several_specs", f"{len(specs)} specifications for {lemma}")
    decls, _ = _decls(lexed.view())
    sigs = [d for d in decls if d.kind == "signature" and lemma in d.names]
    if not sigs:
        return fail("no_haskell_signature", f"no Haskell signature '{lemma} :: ...'")
    if len(sigs) > 1 or len(sigs[0].names) > 1:
        return fail("several_haskell_signatures", f"{lemma} has more than one Haskell signature, or shares one")
    if not any(d.kind == "equation" and d.names == (lemma,) for d in decls):
        return fail("no_definition", f"{lemma} has no defining equation")

    # --- the refinement spec
    toks = _tokens(specs[0])
    if len(toks) > MAX_SPEC_TOKENS:
        return fail("spec_too_long", f"{len(toks)} tokens (limit {MAX_SPEC_TOKENS})")
    if _matching(["("] + toks + [")"], 0) != len(toks) + 1:
        return fail("result_not_refinement", "unbalanced brackets in the specification")
    _, ctx, body, problem = _split_prefix(toks)
    if problem:
        return fail("spec_context_mismatch", f"specification: {problem}")
    if ctx and ctx != p_shape.context:
        return fail("spec_context_mismatch", f"context {ctx} differs from P's {p_shape.context}")
    segs = _split_top(body, {"->"})
    binder_segs, result = segs[:-1], segs[-1]
    if len(binder_segs) != n:
        return fail("wrong_arity", f"the specification has {len(binder_segs)} argument(s); {p_name} takes {n}")
    binders: list[str] = []
    for k, seg in enumerate(binder_segs):
        if len(seg) < 3 or seg[1] != ":" or not _is_varid(seg[0]):
            return fail("binder_unnamed", f"argument {k + 1} ({' '.join(seg)}) is not of the form name:Type")
        name, btype = seg[0], seg[2:]
        if name in binders or name in (p_name, q_name_in_file, lemma):
            return fail("binder_bad_name", f"binder {name} is repeated or shadows a function")
        if any(t in ("{", "}", "|") or t.startswith("|") for t in btype):
            return fail("binder_refined", f"binder {name} has a refinement: {' '.join(btype)}")
        alias = next((t for t in btype if _last_component(t) in LH_REFINED_ALIASES), None)
        if alias:
            return fail("binder_refined_alias", f"binder {name} has type {alias}, an LH refined alias")
        if _norm_type(btype) != p_shape.args[k]:
            return fail("binder_type_mismatch", f"binder {name} : {_norm_type(btype)}, but P's argument {k + 1} is {p_shape.args[k]}")
        binders.append(name)

    # optional termination metric  / [ ... ]
    top = _top_level(result)
    slash = next((k for k, t in top if t == "/"), -1)
    if slash >= 0:
        metric = result[slash + 1:]
        if not (metric and metric[0] == "[" and _matching(metric, 0) == len(metric) - 1):
            return fail("result_not_refinement", "unexpected '/' after the result")
        result = result[:slash]
    if not (result and result[0] == "{" and _matching(result, 0) == len(result) - 1):
        return fail("result_not_refinement", f"the result {' '.join(result)} is not one {{ ... }} refinement")
    inner = result[1:-1]
    bar = next((k for k, t in _top_level(inner) if t == "|"), -1)
    if bar >= 0:
        left, expr = inner[:bar], inner[bar + 1:]
        if len(left) < 3 or left[1] != ":" or not _is_varid(left[0]) or _norm_type(left[2:]) not in ("Proof", "( )"):
            return fail("result_not_refinement", f"result binder {' '.join(left)} is not v:Proof")
        if left[0] in binders:
            return fail("result_binder_shadows", f"the result binder {left[0]} shadows an argument")
    else:
        expr = inner
    expr = _strip_parens(expr)
    top_ops = [(k, t) for k, t in _top_level(expr) if _is_op(t) or t in (",", ";")]
    eqs = [k for k, t in top_ops if t in ("==", "=")]
    if not eqs:
        if any(t in ("&&", "||", "==>", "=>", "<=>", "<==>") for _, t in top_ops):
            return fail("extra_condition", f"the refinement {' '.join(expr)} combines conditions")
        return fail("not_equality", f"{' '.join(expr)} is not an equality")
    if len(top_ops) != 1:
        return fail("extra_condition", f"the refinement {' '.join(expr)} is more than one equality")
    at = eqs[0]
    sides = []
    for side in (expr[:at], expr[at + 1:]):
        parsed = _application(side)
        if isinstance(parsed, str):
            return fail(parsed, f"side {' '.join(side)} is not a function applied to the binders")
        sides.append(parsed)
    heads = [_last_component(h) for h, _ in sides]
    if sorted(heads) != sorted([p_name, q_name_in_file]):
        return fail("wrong_function", f"the equality compares {heads[0]} with {heads[1]}; expected {p_name} and {q_name_in_file}")
    for head, args in sides:
        if args != binders:
            want = " ".join([head, *binders])
            return fail("wrong_arguments", f"expected {want}, got {' '.join([head, *args])}")

    # --- the Haskell signature
    sig_type = sigs[0].text.split("::", 1)[1]
    try:
        shape = parse_type_signature(sig_type)
    except ValueError as exc:
        return fail("signature_mismatch", f"the Haskell signature cannot be read: {exc}")
    if shape.context != p_shape.context:
        return fail("signature_context_mismatch", f"context {shape.context} differs from P's {p_shape.context}")
    if shape.args != p_shape.args:
        return fail("signature_mismatch", f"argument types {list(shape.args)} differ from P's {list(p_shape.args)}")
    if shape.result not in ("Proof", "( )"):
        return fail("signature_result", f"the result type is {shape.result}, not Proof")
    call = " ".join(binders)
    return StatementCheck(True, None, f"{lemma} states {p_name} {call} == {q_name_in_file} {call}".replace("  ", " "),
                          tuple(binders))


# --------------------------------------------------------------------------------------
# Assembling the file
# --------------------------------------------------------------------------------------


def assemble(p_source: str, p_name: str, q_source: str, q_name: str, proof_code: str,
             settings: LiquidSettings | Mapping[str, Any] | None = None) -> Assembled:
    """Build the complete LH file (see the module docstring) and record every escape
    hatch or structural problem in P, Q and the proof. The file is built even when
    refused, so it can be shown; only an ``ok`` one may be given to LH."""
    settings = LiquidSettings.coerce(settings)
    lemma = default_lemma_name(p_name)
    probs = _Problems()
    p_source, q_source, proof_code = (t.replace("\r\n", "\n").replace("\r", "\n") for t in (p_source, q_source, proof_code))
    for label, name in (("p", p_name), ("q", q_name)):
        if not _is_varid(name):
            probs.add("bad_name", f"{name!r} is not a plain Haskell variable name", label)
    q_file = q_file_name(p_name, q_name, p_source, q_source)
    scans = {}
    for where, text in (("p", p_source), ("q", q_source), ("proof", proof_code)):
        scan = _scan_part(text, where, p_name=p_name, q_name=q_name, q_file=q_file, lemma=lemma,
                          allowed_imports=settings.allowed_imports)
        for pr in scan.problems:
            probs.add(pr.code, pr.detail, pr.where, pr.line)
        scans[where] = scan
    if find_signature(p_source, p_name) is None:
        probs.add("no_p_signature", f"{p_name} has no top-level type signature", "p")

    q_text = scans["q"].text
    if q_file != q_name:
        q_text = _rename(q_text, q_name, q_file)

    header = [f'{{-@ LIQUID "{opt}" @-}}' for opt in settings.options]
    header += [f"module {settings.module_name} where", "", f"import {PROOF_MODULE}"]
    seen = {f"import {PROOF_MODULE}"}
    for where in ("p", "q", "proof"):
        for imp in scans[where].imports:
            if imp not in seen:
                seen.add(imp)
                header.append(imp)
    lines: list[str] = list(header)
    part_lines: dict[str, tuple[int, int]] = {}

    def add_part(where: str, comment: str, reflect: str | None, text: str) -> None:
        lines.extend(["", comment])
        if reflect:
            lines.append(f"{{-@ reflect {reflect} @-}}")
        body = text.split("\n")
        if len(body) > 1 and body[-1] == "":
            body.pop()  # the part's final newline
        first = len(lines) + 1
        lines.extend(body)
        part_lines[where] = (first, len(lines))

    add_part("p", "-- P: the reference program", p_name, scans["p"].text)
    add_part("q", "-- Q: the candidate program", q_file, q_text)
    add_part("proof", "-- The proof of equivalence", None, scans["proof"].text)
    source = "\n".join(lines) + "\n"

    # Defence in depth: the whole file must lex cleanly and hold exactly our pragmas.
    whole = _lex(source)
    if whole.unterminated:
        probs.add("unterminated", f"the assembled file ends inside a {whole.unterminated}", "file")
    pragmas = [a for a in whole.annotations() if _RAW_LIQUID_PRAGMA.match("{-@" + a.inner)]
    if len(pragmas) != len(settings.options):
        probs.add("liquid_pragma", "the assembled file holds LIQUID pragmas the checker did not write", "file")
    return Assembled(source, tuple(probs.items), settings.module_name, lemma, q_file, part_lines)


# --------------------------------------------------------------------------------------
# Reading LH's output
# --------------------------------------------------------------------------------------

_MARKER_RE = re.compile(r"^[ \t*]*(?:LIQUID|RESULT)\s*:\s*(SAFE|UNSAFE|ERROR)\b", re.IGNORECASE | re.MULTILINE)
_VERSION_RE = re.compile(r"LiquidHaskell\s+(?:Version\s+|v)([0-9][\w.\-]*)", re.IGNORECASE)
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ERROR_HEADER_RE = re.compile(
    r"^[ \t]*(?P<path>(?:[^\s:]*/)?(?P<file>[^\s:/]+\.l?hs)):(?P<line>\(?\d+)[^\s:]*(?::[^\s:]*)?:[ \t]*(?P<kind>error|warning)\b",
    re.IGNORECASE,
)
_NOISE_RE = re.compile(
    r"^\s*(\*{4}|LiquidHaskell\s|Copyright|Working\s|\[\d+ of \d+\]|Loaded package|Compiling|"
    r"Checking |Done solving|SAFE|UNSAFE)",
    re.IGNORECASE,
)


def parse_liquid_output(output: str, returncode: int | None) -> dict[str, Any]:
    """Decide LH's outcome from its output and exit status.

    Result lines are ``LIQUID: SAFE|UNSAFE|ERROR`` (newer) or ``**** RESULT: ... ****``
    (older), matched at the start of a line (so quoted source lines, which GHC prefixes
    with a line number, never count). Any ERROR line gives ``error``; else any UNSAFE
    gives ``unsafe``; a SAFE line with exit 0 gives ``safe``; SAFE with a nonzero exit is
    an ``error`` (``liquid_exit_nonzero``); no result line is an ``error``
    (``liquid_no_result`` on exit 0, ``liquid_error`` otherwise). Returns
    ``{"status", "code", "accepted", "markers", "tool_version"}``.
    """
    text = _ANSI_RE.sub("", output or "")
    markers = [m.group(1).upper() for m in _MARKER_RE.finditer(text)]
    version_m = _VERSION_RE.search(text)
    if "ERROR" in markers:
        status, code = "error", "liquid_error"
    elif "UNSAFE" in markers:
        status, code = "unsafe", "liquid_unsafe"
    elif "SAFE" in markers:
        status, code = ("safe", "liquid_safe") if returncode == 0 else ("error", "liquid_exit_nonzero")
    else:
        status, code = "error", ("liquid_no_result" if returncode == 0 else "liquid_error")
    return {"status": status, "code": code, "accepted": status == "safe", "markers": markers,
            "tool_version": version_m.group(1) if version_m else None}


def _part_label(line: int, part_lines: Mapping[str, Sequence[int]] | None) -> str:
    if not part_lines:
        return ""
    names = {"p": "P", "q": "Q", "proof": "your proof"}
    for where, span in part_lines.items():
        first, last = int(span[0]), int(span[1])
        if first <= line <= last:
            return f"  [line {line - first + 1} of {names.get(where, where)}]"
    return ""


def _bounded(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - 4)].rstrip() + "\n..."


def extract_error_excerpt(output: str, *, max_chars: int = MAX_FEEDBACK_CHARS,
                          part_lines: Mapping[str, Sequence[int]] | None = None,
                          max_line_chars: int = 240) -> str:
    """The checker's error messages, for the retry prompt: each ``File.hs:L:C: error``
    block (warnings dropped, duplicates dropped, paths cut to the file name, each line cut
    to ``max_line_chars``, the part and line noted for lines inside P, Q or the proof),
    in order, until ``max_chars``; when no such block exists, the tail of the output
    without banners and progress lines. The result is at most ``max_chars`` long."""
    text = _ANSI_RE.sub("", output or "").replace("\r\n", "\n")
    lines = [ln.rstrip() for ln in text.split("\n")]
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for ln in lines:
        m = _ERROR_HEADER_RE.match(ln[:400])
        if m:
            if current:
                blocks.append(current)
            if m.group("kind").lower() == "warning":
                current = None
                continue
            line_no = int(m.group("line").lstrip("("))
            header = ln.strip().replace(m.group("path"), m.group("file"), 1) + _part_label(line_no, part_lines)
            current = [header]
            continue
        if current is not None:
            if _MARKER_RE.match(ln) or re.match(r"^\s*\*{4}", ln):
                blocks.append(current)
                current = None
                continue
            current.append(ln)
    if current:
        blocks.append(current)
    pieces: list[str] = []
    seen: set[str] = set()
    for b in blocks:
        while b and not b[-1].strip():
            b.pop()
        body = "\n".join((ln if len(ln) <= max_line_chars else ln[:max_line_chars] + "...") for ln in b)
        body = re.sub(r"(?:/[^\s:/]+)+/([^\s:/]+\.l?hs)", r"\1", body)
        if body and body not in seen:
            seen.add(body)
            pieces.append(body)
    if pieces:
        out: list[str] = []
        used = 0
        for k, piece in enumerate(pieces):
            if out and used + len(piece) + 2 > max_chars:
                out.append(f"... ({len(pieces) - k} more error(s) not shown)")
                break
            out.append(piece)
            used += len(piece) + 2
        return _bounded("\n\n".join(out), max_chars)
    rest = [ln for ln in lines if ln.strip() and not _NOISE_RE.match(ln) and not _MARKER_RE.match(ln)]
    rest = [(ln if len(ln) <= max_line_chars else ln[:max_line_chars] + "...") for ln in rest]
    tail = re.sub(r"(?:/[^\s:/]+)+/([^\s:/]+\.l?hs)", r"\1", "\n".join(rest))
    if len(tail) > max_chars:
        tail = "...\n" + tail[-(max_chars - 4):]
    return tail


def retry_feedback(verdict: Mapping[str, Any], *, max_chars: int = MAX_FEEDBACK_CHARS) -> str:
    """The error text to show Alice on a retry (the prompt wording lives elsewhere):
    the problems found before checking, a timeout note, or the checker's error excerpt.
    Empty when the proof was accepted or the checker is missing (nothing for Alice to fix)."""
    if verdict.get("accepted") or verdict.get("status") == "missing":
        return ""
    if verdict.get("status") == "rejected":
        names = {"p": "P", "q": "Q", "proof": "the proof"}
        items = []
        for p in verdict.get("problems") or []:
            where = names.get(p.get("where"), "the answer")
            at = f", line {p['line']} of {where}" if p.get("line") else f", in {where}"
            items.append(f"- {p.get('detail') or p.get('code')} ({p.get('code')}{at})")
        if not items:
            items = [f"- {verdict.get('detail') or verdict.get('code')}"]
        return _bounded("The proof was refused before checking:\n" + "\n".join(items), max_chars)
    if verdict.get("status") == "timeout":
        return _bounded(f"Liquid Haskell did not finish within {verdict.get('detail') or 'the time limit'}.", max_chars)
    excerpt = verdict.get("error_excerpt") or verdict.get("output_tail") or verdict.get("reason") or ""
    return _bounded(str(excerpt), max_chars)


# --------------------------------------------------------------------------------------
# Running LH
# --------------------------------------------------------------------------------------


def _verdict(status: str, code: str, reason: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "checked": status in ("safe", "unsafe", "error"),
        "accepted": status == "safe",
        "status": status,
        "code": code,
        "reason": reason,
        "detail": "",
        "stage": "liquid",
        "problems": [],
        "returncode": None,
        "timed_out": False,
        "seconds": None,
        "command": None,
        "markers": [],
        "tool_version": None,
        "error_excerpt": "",
        "output_tail": "",
        "file_name": None,
        "file_sha256": None,
        "file": None,
        "proof": None,
        "lemma_name": None,
        "q_name_in_file": None,
        "part_lines": {},
    }
    out.update(fields)
    return out


def missing_verdict(**fields: Any) -> dict[str, Any]:
    """The verdict when LH is not available: never checked, never accepted."""
    return _verdict("missing", "liquid_missing", MISSING_REASON, **fields)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_bounded(fh: Any) -> str:
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    fh.seek(0)
    if size <= OUTPUT_HEAD_BYTES + OUTPUT_TAIL_BYTES:
        data = fh.read()
    else:
        head = fh.read(OUTPUT_HEAD_BYTES)
        fh.seek(size - OUTPUT_TAIL_BYTES)
        tail = fh.read()
        data = head + f"\n[... {size - len(head) - len(tail)} bytes of output omitted ...]\n".encode() + tail
    return data.decode("utf-8", errors="replace")


def run_liquid(source: str, command: str | Sequence[str] | None, timeout: float,
               workdir: str | os.PathLike[str] | None = None, *, file_name: str | None = None,
               env: Mapping[str, str] | None = None, max_feedback_chars: int = MAX_FEEDBACK_CHARS,
               part_lines: Mapping[str, Sequence[int]] | None = None) -> dict[str, Any]:
    """Run LH on ``source`` and return a verdict (see the module docstring).

    ``command`` is the argv prefix (the file name is appended); None, or a program that
    cannot be found, gives :func:`missing_verdict`. The file is written to a fresh
    temporary directory under ``workdir`` (the system temp dir when None) that is also
    LH's working directory and is removed afterwards. LH runs in its own session and
    process group; the whole group is killed with SIGKILL when ``timeout`` seconds pass,
    and also after LH exits (nothing it started outlives it). Output (stdout and stderr
    together) goes to an unnamed file and is read back bounded.
    """
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if file_name is None:
        m = re.search(r"^module\s+([A-Z][\w.']*)", source, re.MULTILINE)
        file_name = f"{m.group(1) if m else DEFAULT_MODULE_NAME}.hs"
    base = {"file_name": file_name, "file_sha256": digest, "part_lines": {k: list(v) for k, v in (part_lines or {}).items()}}
    argv = resolve_command(command)
    if argv is None:
        return missing_verdict(command=list(normalise_command(command) or []) or None, **base)
    root = Path(workdir) if workdir is not None else Path(tempfile.gettempdir())
    root.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="liquid-", dir=root)
    try:
        (Path(tmp) / file_name).write_text(source, encoding="utf-8")
        with tempfile.TemporaryFile() as out:
            start = time.monotonic()
            try:
                proc = subprocess.Popen(
                    [*argv, file_name], cwd=tmp, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True, close_fds=True, env=dict(env) if env is not None else None,
                )
            except FileNotFoundError:
                return missing_verdict(command=argv, **base)
            except OSError as exc:
                return _verdict("crashed", "liquid_launch_failed", "not checked: Liquid Haskell could not be started",
                                detail=str(exc), command=argv, **base)
            timed_out = False
            delay = 0.005
            try:
                while True:
                    # Wait without reaping, so the group id stays ours until we kill it.
                    try:
                        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                            break
                    except ChildProcessError:
                        break
                    left = start + timeout - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    time.sleep(min(delay, left))
                    delay = min(delay * 2, 0.1)
            finally:
                _kill_group(proc.pid)
                proc.wait()
            seconds = round(time.monotonic() - start, 3)
            output = _read_bounded(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    output = _ANSI_RE.sub("", output).replace(tmp + os.sep, "").replace(tmp, ".")
    return _run_verdict(output, proc.returncode, timed_out, seconds, argv, base, timeout, max_feedback_chars,
                        part_lines)


def _run_verdict(output: str, rc: int | None, timed_out: bool, seconds: float, argv: list[str], base: dict,
                 timeout: float, max_feedback_chars: int, part_lines: Mapping[str, Sequence[int]] | None) -> dict:
    """The verdict of one finished (or timed-out) LH run from its output and exit status."""
    tail = output[-OUTPUT_TAIL_CHARS:]
    common = dict(command=argv, returncode=rc, seconds=seconds, output_tail=tail, **base)
    if timed_out:
        return _verdict("timeout", "liquid_timeout", f"not checked: Liquid Haskell timed out after {timeout:g} s",
                        detail=f"{timeout:g} seconds", timed_out=True, **common)
    parsed = parse_liquid_output(output, rc)
    common.update(markers=parsed["markers"], tool_version=parsed["tool_version"])
    if rc is not None and rc < 0:
        return _verdict("crashed", "liquid_killed", f"not checked: Liquid Haskell was killed by signal {-rc}",
                        error_excerpt=extract_error_excerpt(output, max_chars=max_feedback_chars, part_lines=part_lines),
                        **common)
    if rc in (126, 127) and not parsed["markers"]:
        return missing_verdict(detail=f"the command exited with {rc} (not found or not executable)", **common)
    status, code = parsed["status"], parsed["code"]
    if status == "safe":
        return _verdict("safe", code, "accepted: Liquid Haskell says SAFE", **common)
    reason = {
        "liquid_unsafe": "rejected: Liquid Haskell says UNSAFE",
        "liquid_error": "rejected: Liquid Haskell reported an error",
        "liquid_exit_nonzero": f"rejected: Liquid Haskell printed SAFE but exited with status {rc}",
        "liquid_no_result": "rejected: Liquid Haskell printed no result",
    }[code]
    return _verdict(status, code, reason,
                    error_excerpt=extract_error_excerpt(output, max_chars=max_feedback_chars, part_lines=part_lines),
                    **common)


def run_liquid_confined(source: str, command: str | Sequence[str] | None, timeout: float, sandbox: Any, *,
                        limits: Any = None, file_name: str | None = None,
                        max_feedback_chars: int = MAX_FEEDBACK_CHARS,
                        part_lines: Mapping[str, Sequence[int]] | None = None) -> dict[str, Any]:
    """:func:`run_liquid` inside :class:`selfplay.sandbox.Sandbox` (``run_command``): the
    same confinement as every other run of model-written code (network/PID/mount
    namespaces, an unprivileged uid, rlimits, a private work directory holding only the
    file, a scrubbed environment, a whole-namespace kill at ``timeout``). LH compiles the
    proof with GHC, so this is where model text meets a compiler."""
    if file_name is None:
        m = re.search(r"^module\s+([A-Z][\w.']*)", source, re.MULTILINE)
        file_name = f"{m.group(1) if m else DEFAULT_MODULE_NAME}.hs"
    base = {"file_name": file_name, "file_sha256": hashlib.sha256(source.encode("utf-8")).hexdigest(),
            "part_lines": {k: list(v) for k, v in (part_lines or {}).items()}}
    argv = resolve_command(command)
    if argv is None:
        return missing_verdict(command=list(normalise_command(command) or []) or None, **base)
    res = sandbox.run_command([*argv, file_name], timeout, files={file_name: source}, limits=limits,
                              max_output_kb=OUTPUT_HEAD_BYTES // 1024 + OUTPUT_TAIL_BYTES // 1024)
    if res.status == "error":
        if res.detail and ("No such file" in res.detail or "not found" in res.detail):
            return missing_verdict(command=argv, detail=res.detail, **base)
        return _verdict("crashed", "liquid_launch_failed", "not checked: Liquid Haskell could not be started",
                        detail=res.detail or "", command=argv, **base)
    output = _ANSI_RE.sub("", res.text("stdout") + res.text("stderr"))
    rc = res.exit_code if res.status == "exited" else (-9 if res.status == "killed" else None)
    verdict = _run_verdict(output, rc, res.status == "timeout", round(res.seconds, 3), argv, base, timeout,
                           max_feedback_chars, part_lines)
    verdict["isolation"] = res.isolation
    return verdict


# --------------------------------------------------------------------------------------
# Everything together
# --------------------------------------------------------------------------------------


def check_proof(model_output: str | bytes, *, p_source: str, p_name: str, q_source: str, q_name: str,
                settings: LiquidSettings | Mapping[str, Any] | None = None,
                workdir: str | os.PathLike[str] | None = None,
                env: Mapping[str, str] | None = None, sandbox: Any = None,
                sandbox_limits: Any = None) -> dict[str, Any]:
    """Read the proof from ``model_output``, assemble and pre-check the file, check the
    statement, and run LH when all of that passes. Returns a verdict (module docstring);
    refusals before LH have status ``rejected`` whether or not LH is available."""
    settings = LiquidSettings.coerce(settings)
    lemma = default_lemma_name(p_name)
    answer = parse_proof_answer(model_output, p_name)
    if not answer.ok:
        prob = Problem(answer.reason or "no_lemma", answer.detail, "answer")
        return _verdict("rejected", prob.code, f"rejected: {answer.detail}", detail=answer.detail, stage="parse",
                        problems=[prob.to_dict()], lemma_name=lemma)
    asm = assemble(p_source, p_name, q_source, q_name, answer.code or "", settings)
    problems = list(asm.problems)
    stmt = check_statement(answer.code or "", p_name=p_name, q_name_in_file=asm.q_name_in_file,
                           p_type=find_signature(p_source, p_name), lemma_name=lemma)
    if not stmt.ok and not any(p.code == stmt.reason for p in problems):
        problems.append(Problem(stmt.reason or "no_spec", stmt.detail, "proof"))
    extra = dict(file=asm.source, proof=answer.code, lemma_name=lemma, q_name_in_file=asm.q_name_in_file,
                 file_name=asm.file_name, file_sha256=hashlib.sha256(asm.source.encode("utf-8")).hexdigest(),
                 part_lines={k: list(v) for k, v in asm.part_lines.items()})
    if problems:
        first = problems[0]
        return _verdict("rejected", first.code, f"rejected: {first.detail}", detail=first.detail, stage="precheck",
                        problems=[p.to_dict() for p in problems], **extra)
    if sandbox is not None:  # the pipeline's way: confined like every other run of model-written code
        verdict = run_liquid_confined(asm.source, settings.command, settings.timeout_s, sandbox,
                                      limits=sandbox_limits, file_name=asm.file_name,
                                      max_feedback_chars=settings.max_feedback_chars, part_lines=asm.part_lines)
    else:
        verdict = run_liquid(asm.source, settings.command, settings.timeout_s, workdir, file_name=asm.file_name,
                             env=env, max_feedback_chars=settings.max_feedback_chars, part_lines=asm.part_lines)
    verdict.update({k: v for k, v in extra.items() if k not in ("file_name", "file_sha256")})
    return verdict
