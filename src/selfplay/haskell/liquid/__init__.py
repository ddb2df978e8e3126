"""Liquid Haskell (LH) proofs of equivalence for the Haskell SEQ game (paper 000).

In SEQ, Alice writes a program Q meant to be equivalent to the reference program P and
a Liquid Haskell lemma proving ``P x1 .. xn == Q x1 .. xn`` for all arguments. This
package does everything around the checker itself, and can be tested without it. Its
modules, in the order a check uses them:

* :mod:`.settings`       - fixed limits, :class:`LiquidSettings` from config, and
  :func:`resolve_command` (is LH there to run?).
* :mod:`.answer`         - :func:`parse_proof_answer` reads the proof out of model text.
* :mod:`.declarations`   - top-level declarations and annotations of a part, the lemma's
  name, P's signature, the name Q's function gets in the file.
* :mod:`.escape_hatches` - what P, Q and the proof must not contain (pragmas, trusted
  annotations, ``undefined``, foreign imports, ...).
* :mod:`.assembly`       - :func:`assemble` builds the file to check from the three parts.
* :mod:`.type_shapes`    - :func:`parse_type_signature`: types compared by written shape.
* :mod:`.statement`      - :func:`check_statement`: the lemma states exactly P == Q.
* :mod:`.runner`         - :func:`run_liquid` / :func:`run_liquid_confined` run LH.
* :mod:`.output`         - :func:`parse_liquid_output` reads LH's result lines.
* :mod:`.verdicts`       - the verdict dict every check returns (all keys listed there).
* :mod:`.feedback`       - :func:`extract_error_excerpt` and :func:`retry_feedback`: the
  error text shown to Alice on a retry.
* :mod:`.problems`       - the reason codes (:data:`REASONS`) and :class:`Problem`.
* :mod:`.check`          - :func:`check_proof` runs all of the above in turn.

Haskell text is cut into code, comments, pragmas, annotations and literals by the lexer
shared with :mod:`selfplay.haskell.signature` (:mod:`selfplay.haskell.lexer`), always
in its ``guarded`` reading, meant for untrusted text.

Nothing here raises on model text: every failure is a recorded reason, a short
snake_case code (the keys of :data:`REASONS`) plus a human ``detail``.
"""

from __future__ import annotations

from .answer import HASKELL_FENCE_LANGUAGES, ProofAnswer, parse_proof_answer
from .assembly import Assembled, assemble
from .check import check_proof
from .declarations import default_lemma_name, find_signature, q_file_name
from .feedback import extract_error_excerpt, retry_feedback
from .output import parse_liquid_output
from .problems import REASONS, Problem
from .runner import run_liquid, run_liquid_confined
from .settings import (
    CHECKER_OPTIONS,
    DEFAULT_ALLOWED_IMPORTS,
    DEFAULT_MODULE_NAME,
    DEFAULT_TIMEOUT_S,
    MAX_FEEDBACK_CHARS,
    MAX_MODEL_OUTPUT_CHARS,
    MAX_SPEC_TOKENS,
    MISSING_REASON,
    OUTPUT_HEAD_BYTES,
    OUTPUT_TAIL_BYTES,
    OUTPUT_TAIL_CHARS,
    PROOF_MODULE,
    LiquidSettings,
    normalise_command,
    resolve_command,
)
from .statement import LH_REFINED_ALIASES, StatementCheck, check_statement
from .type_shapes import SignatureShape, parse_type_signature
from .verdicts import missing_verdict

__all__ = [
    "CHECKER_OPTIONS",
    "DEFAULT_ALLOWED_IMPORTS",
    "DEFAULT_MODULE_NAME",
    "DEFAULT_TIMEOUT_S",
    "HASKELL_FENCE_LANGUAGES",
    "LH_REFINED_ALIASES",
    "MAX_FEEDBACK_CHARS",
    "MAX_MODEL_OUTPUT_CHARS",
    "MAX_SPEC_TOKENS",
    "MISSING_REASON",
    "OUTPUT_HEAD_BYTES",
    "OUTPUT_TAIL_BYTES",
    "OUTPUT_TAIL_CHARS",
    "PROOF_MODULE",
    "REASONS",
    "Assembled",
    "LiquidSettings",
    "Problem",
    "ProofAnswer",
    "SignatureShape",
    "StatementCheck",
    "assemble",
    "check_proof",
    "check_statement",
    "default_lemma_name",
    "extract_error_excerpt",
    "find_signature",
    "missing_verdict",
    "normalise_command",
    "parse_liquid_output",
    "parse_proof_answer",
    "parse_type_signature",
    "q_file_name",
    "resolve_command",
    "retry_feedback",
    "run_liquid",
    "run_liquid_confined",
]
