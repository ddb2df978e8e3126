"""Why a proof is refused or how a check ended: the reason codes (:data:`REASONS`), one
found :class:`Problem`, and an ordered list of them without repeats."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .settings import MAX_MODEL_OUTPUT_CHARS, MAX_SPEC_TOKENS

# Every reason code, with one line saying what it means.
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


class ProblemList:
    """Problems in the order found; the same code at the same place is kept once."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self._seen: set[tuple[str, str, int | None]] = set()

    def add(self, code: str, detail: str, where: str, line: int | None = None) -> None:
        key = (code, where, line)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(Problem(code, detail, where, line))
