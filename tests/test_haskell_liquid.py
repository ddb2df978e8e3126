"""Liquid Haskell proofs for the Haskell SEQ game: reading the answer, the statement
check, escape hatches, the assembled file, output parsing, feedback, and the runner
(exercised with ``fake_liquid``, a small test-double script standing in for LH)."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from selfplay.errors import UserError
from selfplay.haskell import liquid as lq
from selfplay.haskell.liquid import (
    MISSING_REASON,
    REASONS,
    LiquidSettings,
    assemble,
    check_proof,
    check_statement,
    extract_error_excerpt,
    find_signature,
    missing_verdict,
    parse_liquid_output,
    parse_proof_answer,
    parse_type_signature,
    q_file_name,
    resolve_command,
    retry_feedback,
    run_liquid,
)

FENCE = "```"

# --------------------------------------------------------------------------------------
# Programs and proofs used throughout
# --------------------------------------------------------------------------------------

P1 = "double :: Int -> Int\ndouble x = x + x\n"
Q1 = "double_alt :: Int -> Int\ndouble_alt x = 2 * x\n"
Q1_SAME = "double :: Int -> Int\ndouble x = 2 * x\n"

PROOF1 = textwrap.dedent(
    """\
    {-@ lemma_double_equiv :: x:Int -> { double x == double_alt x } @-}
    lemma_double_equiv :: Int -> Proof
    lemma_double_equiv x
      =   double x
      === double_alt x
      *** QED"""
)

P3 = textwrap.dedent(
    """\
    clamp3 :: Int -> Int -> Int -> Int
    clamp3 lo hi v = if v < lo then lo else if v > hi then hi else v
    """
)
Q3 = textwrap.dedent(
    """\
    clamp3_alt :: Int -> Int -> Int -> Int
    clamp3_alt lo hi v = max lo (if v > hi then hi else v)
    """
)
PROOF3 = textwrap.dedent(
    """\
    {-@ lemma_clamp3_equiv :: a:Int -> b:Int -> c:Int
          -> { clamp3 a b c == clamp3_alt a b c } @-}
    lemma_clamp3_equiv :: Int -> Int -> Int -> Proof
    lemma_clamp3_equiv a b c = ()"""
)


def fenced(
    code: str, lang: str = "haskell", before: str = "Here is my proof.", after: str = "That is all."
) -> str:
    return f"{before}\n\n{FENCE}{lang}\n{code}\n{FENCE}\n\n{after}\n"


def stmt1(
    spec: str,
    sig: str = "Int -> Proof",
    *,
    q: str = "double_alt",
    body: str = "lemma_double_equiv x = ()",
    p_type: str = "Int -> Int",
):
    code = f"{{-@ lemma_double_equiv :: {spec} @-}}\nlemma_double_equiv :: {sig}\n{body}\n"
    return check_statement(code, p_name="double", q_name_in_file=q, p_type=p_type)


def stmt3(spec: str, sig: str = "Int -> Int -> Int -> Proof", body: str = "lemma_clamp3_equiv a b c = ()"):
    code = f"{{-@ lemma_clamp3_equiv :: {spec} @-}}\nlemma_clamp3_equiv :: {sig}\n{body}\n"
    return check_statement(
        code, p_name="clamp3", q_name_in_file="clamp3_alt", p_type="Int -> Int -> Int -> Int"
    )


def codes(asm) -> set[str]:
    return {p.code for p in asm.problems}


def problems_in(asm, where: str) -> set[str]:
    return {p.code for p in asm.problems if p.where == where}


# --------------------------------------------------------------------------------------
# Reading the answer
# --------------------------------------------------------------------------------------


def test_reads_fenced_block_among_prose():
    ans = parse_proof_answer(fenced(PROOF1), "double")
    assert ans.ok and ans.origin == "fenced" and ans.candidates == 1
    assert ans.code == PROOF1
    assert ans.lemma_name == "lemma_double_equiv"


@pytest.mark.parametrize("lang", ["haskell", "hs", "Haskell", "", "liquidhaskell", "{.haskell}"])
def test_haskell_fence_languages(lang):
    assert parse_proof_answer(fenced(PROOF1, lang=lang), "double").ok


def test_tilde_fence_and_unclosed_fence():
    assert parse_proof_answer(f"~~~haskell\n{PROOF1}\n~~~\n", "double").code == PROOF1
    ans = parse_proof_answer(f"Proof:\n{FENCE}haskell\n{PROOF1}\n", "double")
    assert ans.ok and ans.code == PROOF1


def test_indented_fence_inside_a_list_is_dedented():
    block = textwrap.indent(f"{FENCE}haskell\n{PROOF1}\n{FENCE}", "   ")
    ans = parse_proof_answer(f"1. The proof:\n{block}\n", "double")
    assert ans.ok and ans.code == PROOF1


def test_reads_bare_code_between_prose():
    text = f"Sure. The lemma follows.\n\n{PROOF1}\n\nThis works because PLE unfolds both sides.\n"
    ans = parse_proof_answer(text, "double")
    assert ans.ok and ans.origin == "bare"
    assert ans.code == PROOF1


def test_code_in_other_languages_is_ignored():
    ans = parse_proof_answer(fenced(PROOF1, lang="python"), "double")
    assert not ans.ok and ans.reason == "no_lemma"


def test_think_block_drafts_are_ignored():
    draft = PROOF1.replace("===", "==.")
    text = f"<think>\nFirst try:\n{fenced(draft)}\n</think>\n{fenced(PROOF1)}"
    ans = parse_proof_answer(text, "double")
    assert ans.ok and ans.code == PROOF1


def test_identical_repeats_are_fine_but_different_blocks_are_ambiguous():
    assert parse_proof_answer(fenced(PROOF1) + fenced(PROOF1 + "\n\n"), "double").ok
    other = PROOF1.replace("*** QED", "*** QED -- done")
    ans = parse_proof_answer(fenced(PROOF1) + fenced(other), "double")
    assert not ans.ok and ans.reason == "ambiguous" and ans.candidates == 2


def test_a_block_without_the_lemma_does_not_count_as_a_candidate():
    text = fenced("double :: Int -> Int\ndouble x = x + x") + fenced(PROOF1)
    assert parse_proof_answer(text, "double").ok


@pytest.mark.parametrize(
    "text,reason",
    [
        (fenced("foo :: Int -> Proof\nfoo x = ()"), "no_lemma"),
        ("I could not find a proof.", "no_lemma"),
        (fenced("-- lemma_double_equiv would go here\nlemma_double_equiv x = ()"), "no_signature"),
        (
            fenced(
                "{-@ lemma_double_equiv :: x:Int -> {double x == double_alt x} @-}\nlemma_double_equiv :: Int -> Proof"
            ),
            "no_definition",
        ),
        ("", "empty_output"),
        ("   \n\t ", "empty_output"),
        (b"\xff\xfe not utf8", "not_utf8"),
        ("x" * (lq.MAX_MODEL_OUTPUT_CHARS + 1), "output_too_large"),
    ],
)
def test_answer_rejections(text, reason):
    ans = parse_proof_answer(text, "double")
    assert not ans.ok and ans.reason == reason and ans.code is None
    assert reason in REASONS


def test_utf8_bytes_are_read():
    assert parse_proof_answer(fenced(PROOF1).encode(), "double").ok


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("{-@#}`~\"'\n :=|()xlemma_double_equiv")), max_size=300))
def test_parser_and_checks_never_raise(text):
    ans = parse_proof_answer(text, "double")
    assert isinstance(ans.ok, bool)
    asm = assemble(P1, "double", Q1, "double_alt", text)
    assert isinstance(asm.source, str)
    res = check_statement(text, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int")
    assert isinstance(res.ok, bool)


# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,context,args,result",
    [
        ("Int -> Int", (), ("Int",), "Int"),
        ("Int -> (Int -> Int)", (), ("Int", "Int"), "Int"),
        ("(Int -> Int) -> [Int] -> [ Int ]", (), ("Int -> Int", "[ Int ]"), "[ Int ]"),
        ("(Ord a, Num a) => a -> (a, a) -> a", ("Num a", "Ord a"), ("a", "( a , a )"), "a"),
        ("forall a. Eq a => a -> Bool", ("Eq a",), ("a",), "Bool"),
        ("Int", (), (), "Int"),
        (
            "Maybe (Int) -> ((a), [(b)]) -> Maybe (Maybe Int)",
            (),
            ("Maybe Int", "( a , [ b ] )"),
            "Maybe ( Maybe Int )",
        ),
    ],
)
def test_parse_type_signature(text, context, args, result):
    shape = parse_type_signature(text)
    assert (shape.context, shape.args, shape.result) == (context, args, result)


@pytest.mark.parametrize(
    "spec,reason",
    [
        ("x:" + "(" * 3000 + "Int" + ")" * 3000 + " -> { double x == double_alt x }", "spec_too_long"),
        ("x:Int -> { " + "(" * 40 + "double" + " x)" * 40 + " == double_alt x }", "wrong_arguments"),
        ("x:Int -> { " + "(" * 900 + "double x == double_alt x" + ")" * 900 + " }", None),
    ],
)
def test_deeply_nested_statements_are_fast_and_safe(spec, reason):
    t0 = time.monotonic()
    res = stmt1(spec)
    assert res.reason == reason
    assert time.monotonic() - t0 < 5


def test_long_lines_in_checker_output_are_fast():
    t0 = time.monotonic()
    for out in ("a" * 100_000, "\n" * 100_000, "/a" * 50_000 + ".h", "Equiv.hs:" + "1" * 100_000):
        extract_error_excerpt(out)
        parse_liquid_output(out, 1)
    assert time.monotonic() - t0 < 5


def test_find_signature_multiline_and_shared():
    src = "f, g\n  :: Int\n  -> Int\nf = id\ng = id\n-- h :: Bool\n"
    assert find_signature(src, "g") == "Int -> Int"
    assert find_signature(src, "h") is None


# --------------------------------------------------------------------------------------
# The statement check
# --------------------------------------------------------------------------------------


def test_single_argument_lemma_passes():
    res = check_statement(PROOF1, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int")
    assert res.ok, res
    assert res.binders == ("x",)


def test_three_argument_lemma_passes():
    res = check_statement(
        PROOF3, p_name="clamp3", q_name_in_file="clamp3_alt", p_type="Int -> Int -> Int -> Int"
    )
    assert res.ok, res
    assert res.binders == ("a", "b", "c")


@pytest.mark.parametrize(
    "spec",
    [
        "x:Int -> { double_alt x == double x }",  # sides swapped
        "x:Int -> { double x = double_alt x }",  # LH's older equality
        "x:Int -> {double x==double_alt x}",
        "x : Int -> { (double (x)) == ((double_alt) x) }",
        "x:(Int) -> {v:Proof | double x == double_alt x}",
        "x:Int -> {v:() | double x == double_alt x}",
        "x:Int -> { double x == double_alt x } / [x]",
        "x:Int -> { ( double x == double_alt x ) }",
    ],
)
def test_equivalent_spellings_pass(spec):
    assert stmt1(spec).ok, stmt1(spec)


def test_unit_result_type_and_curried_p_type():
    assert stmt1("x:Int -> { double x == double_alt x }", sig="Int -> ()").ok
    code = textwrap.dedent(
        """\
        {-@ lemma_add_equiv :: a:Int -> b:Int -> { add a b == add' a b } @-}
        lemma_add_equiv :: Int -> Int -> Proof
        lemma_add_equiv a b = ()"""
    )
    assert check_statement(code, p_name="add", q_name_in_file="add'", p_type="Int -> (Int -> Int)").ok


def test_polymorphic_lemma_with_context():
    code = textwrap.dedent(
        """\
        {-@ lemma_srt_equiv :: xs:[a] -> { srt xs == srt' xs } @-}
        lemma_srt_equiv :: Ord a => [a] -> Proof
        lemma_srt_equiv xs = ()"""
    )
    assert check_statement(code, p_name="srt", q_name_in_file="srt'", p_type="Ord a => [a] -> [a]").ok
    extra = code.replace("Ord a =>", "(Ord a, Show a) =>")
    res = check_statement(extra, p_name="srt", q_name_in_file="srt'", p_type="Ord a => [a] -> [a]")
    assert res.reason == "signature_context_mismatch"
    abstract = code.replace("xs:[a]", "forall <p :: a -> Bool>. xs:[a]")
    res = check_statement(abstract, p_name="srt", q_name_in_file="srt'", p_type="Ord a => [a] -> [a]")
    assert res.reason == "spec_context_mismatch"


@pytest.mark.parametrize(
    "spec,reason",
    [
        ("x:{v:Int | v > 0} -> { double x == double_alt x }", "binder_refined"),
        ("x:{v:Int | true} -> { double x == double_alt x }", "binder_refined"),
        ("x:Nat -> { double x == double_alt x }", "binder_refined_alias"),
        ("x:Integer -> { double x == double_alt x }", "binder_type_mismatch"),
        ("Int -> { double 1 == double_alt 1 }", "binder_unnamed"),
        ("double:Int -> { double double == double_alt double }", "binder_bad_name"),
        ("{ double 0 == double_alt 0 }", "wrong_arity"),
        ("x:Int -> y:Int -> { double x == double_alt x }", "wrong_arity"),
        ("x:Int -> { double x == double_alt x && x > 0 }", "extra_condition"),
        ("x:Int -> { x > 0 ==> double x == double_alt x }", "extra_condition"),
        ("x:Int -> { x < 0 || double x == double_alt x }", "extra_condition"),
        ("x:Int -> { (double x == double_alt x) && (0 == 0) }", "extra_condition"),
        ("x:Int -> { double x == double_alt x == True }", "extra_condition"),
        ("x:Int -> { double x == double x }", "wrong_function"),
        ("x:Int -> { double x == triple x }", "wrong_function"),
        ("x:Int -> { double_alt x == double_alt x }", "wrong_function"),
        ("x:Int -> { double 3 == double_alt 3 }", "wrong_arguments"),
        ("x:Int -> { double x == double_alt (x + 0) }", "wrong_arguments"),
        ("x:Int -> { double x == double_alt }", "wrong_arguments"),
        ("x:Int -> { not (double x == double_alt x) }", "not_equality"),
        ("x:Int -> { double x <= double_alt x }", "not_equality"),
        ("x:Int -> { true }", "not_equality"),
        ("x:Int -> Proof", "result_not_refinement"),
        ("x:Int -> {v:Int | double x == double_alt x}", "result_not_refinement"),
        ("x:Int -> {x:Proof | double x == double_alt x}", "result_binder_shadows"),
        ("x:Int -> { double x == double_alt x } / x", "result_not_refinement"),
    ],
)
def test_weaker_or_wrong_statements_are_rejected(spec, reason):
    res = stmt1(spec)
    assert not res.ok and res.reason == reason, res
    assert reason in REASONS


@pytest.mark.parametrize(
    "spec,reason",
    [
        ("a:Int -> b:Int -> { clamp3 a b == clamp3_alt a b }", "wrong_arity"),
        ("a:Int -> b:Int -> c:Int -> { clamp3 a b == clamp3_alt a b }", "wrong_arguments"),
        ("a:Int -> b:Int -> c:Int -> { clamp3 a b c == clamp3_alt a c b }", "wrong_arguments"),
        ("a:Int -> b:Int -> c:Int -> { clamp3 a b c == clamp3_alt a b a }", "wrong_arguments"),
        ("a:Int -> b:Int -> c:Int -> { clamp3 a a a == clamp3_alt a a a }", "wrong_arguments"),
        ("a:Int -> a:Int -> c:Int -> { clamp3 a a c == clamp3_alt a a c }", "binder_bad_name"),
        ("a:Int -> b:{v:Int | v >= a} -> c:Int -> { clamp3 a b c == clamp3_alt a b c }", "binder_refined"),
        ("a:Int -> b:Int -> c:Int -> { a <= b => clamp3 a b c == clamp3_alt a b c }", "extra_condition"),
    ],
)
def test_three_argument_weaker_statements(spec, reason):
    res = stmt3(spec)
    assert not res.ok and res.reason == reason, res


@pytest.mark.parametrize(
    "sig,reason",
    [
        ("Int -> Int -> Proof", "signature_mismatch"),
        ("Integer -> Proof", "signature_mismatch"),
        ("Int -> Bool", "signature_result"),
        ("Ord a => Int -> Proof", "signature_context_mismatch"),
    ],
)
def test_haskell_signature_must_match(sig, reason):
    res = stmt1("x:Int -> { double x == double_alt x }", sig=sig)
    assert not res.ok and res.reason == reason, res


def test_spec_and_signature_presence():
    no_spec = "lemma_double_equiv :: Int -> Proof\nlemma_double_equiv x = ()\n"
    assert (
        check_statement(no_spec, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int").reason
        == "no_spec"
    )
    no_sig = (
        "{-@ lemma_double_equiv :: x:Int -> { double x == double_alt x } @-}\nlemma_double_equiv x = ()\n"
    )
    assert (
        check_statement(no_sig, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int").reason
        == "no_haskell_signature"
    )
    two = "{-@ lemma_double_equiv :: x:Int -> { double x == double_alt x } @-}\n" + PROOF1
    assert (
        check_statement(two, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int").reason
        == "several_specs"
    )
    shared = PROOF1.replace("{-@ lemma_double_equiv ::", "{-@ lemma_double_equiv, helper ::")
    assert (
        check_statement(shared, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int").reason
        == "several_specs"
    )
    commented = "-- " + PROOF1.replace("\n", "\n-- ", 1)
    assert (
        check_statement(commented, p_name="double", q_name_in_file="double_alt", p_type="Int -> Int").reason
        == "no_spec"
    )
    assert (
        check_statement(PROOF1, p_name="double", q_name_in_file="double_alt", p_type=None).reason
        == "no_p_signature"
    )


# --------------------------------------------------------------------------------------
# Escape hatches
# --------------------------------------------------------------------------------------

HATCHES = [
    ('{-@ LIQUID "--no-termination" @-}', "liquid_pragma"),
    ('{-@ LIQUID "--no-termination" @-}', "liquid_option"),
    ('{-@ liquid "--ple" @-}', "liquid_pragma"),
    ("{-# OPTIONS_GHC -fplugin=Other #-}", "options_pragma"),
    ("{-# LANGUAGE TemplateHaskell #-}", "language_pragma"),
    ("{-# LANGUAGE TemplateHaskell #-}", "template_haskell"),
    ('{-# RULES "cheat" forall x. double x = double_alt x #-}', "ghc_pragma"),
    (
        "{-@ assume cheat :: x:Int -> { double x == double_alt x } @-}\ncheat :: Int -> Proof\ncheat _ = ()",
        "assume",
    ),
    ("{-@ lazy helper @-}\nhelper :: Int -> Proof\nhelper x = helper x", "lazy"),
    ("{-@ ignore helper @-}\nhelper :: Int -> Proof\nhelper _ = ()", "ignore"),
    ("{-@ trust helper @-}\nhelper :: Int -> Proof\nhelper _ = ()", "trust"),
    ("{-@ assert helper :: {v:Int | v > 0} @-}\nhelper :: Int\nhelper = 1", "assert_annotation"),
    ("{-@ measure mlen @-}\nmlen :: [a] -> Int\nmlen _ = 0", "measure"),
    ("{-@ measure bogus :: Int -> Int @-}", "measure"),
    ("{-@ axiomatize helper @-}\nhelper :: Int -> Int\nhelper x = x", "axiomatize"),
    ("{-@ define helper x = 0 @-}\nhelper :: Int -> Int\nhelper x = x", "define_axiom"),
    ("{-@ invariant {v:Int | v > 0} @-}", "invariant"),
    ("{-@ using (Int) as {v:Int | v > 0} @-}", "invariant"),
    ("{-@ type Int = {v:GHC.Types.Int | v > 0} @-}", "forbidden_annotation"),
    ("{-@ inline helper @-}\nhelper :: Int -> Int\nhelper x = x", "forbidden_annotation"),
    ("{-@ predicate Pos V = V > 0 @-}", "forbidden_annotation"),
    ("{-@ reflect double @-}", "reflect_of_program"),
    ("{-@ reflect double_alt @-}", "reflect_of_program"),
    ("{-@ reflect map @-}", "reflect_not_local"),
    ("{-@ double :: x:Int -> {v:Int | v = 2 * x} @-}", "spec_of_program"),
    ("{-@ length :: [a] -> {v:Int | v = 0} @-}", "spec_not_local"),
    ("{-@ QED :: {v:QED | false} @-}", "spec_not_local"),
    ("{-@ Admit :: {v:QED | false} @-}", "admit"),
    ("{-@ helper :: Int @-", "malformed_annotation"),
    ("cheat :: Int -> Proof\ncheat _ = undefined", "undefined"),
    ('cheat :: Int -> Proof\ncheat _ = error "later"', "error_call"),
    ('cheat :: Int -> Proof\ncheat _ = errorWithoutStackTrace "later"', "error_call"),
    ("cheat :: Int -> Proof\ncheat x = double x === double_alt x *** Admit", "admit"),
    ("cheat :: Int -> Int\ncheat x = double x ==! double_alt x", "assumed_equality"),
    ("cheat :: Int -> Int\ncheat = (==!) 1", "assumed_equality"),
    ("cheat :: Int -> Proof\ncheat _ = unsafeCoerce ()", "unsafe_function"),
    ("cheat :: Int -> Proof\ncheat _ = unsafePerformIO (return ())", "unsafe_function"),
    ('foreign import ccall "sin" c_sin :: Double -> Double', "foreign_import"),
    ("module Cheat where", "module_header"),
    ("import Unsafe.Coerce", "import_not_allowed"),
    ("import Prelude hiding (Int)", "import_not_allowed"),
    ("import Language.Haskell.Liquid.Prelude", "import_not_allowed"),
    ("default (Integer)", "default_declaration"),
    ("data Int = Fake", "type_declaration"),
    ("type Int = Integer", "type_declaration"),
    ("instance Num Bool", "class_or_instance"),
    ("-- LIQUID: SAFE", "fake_result_marker"),
    ('msg = "**** RESULT: SAFE ****"', "fake_result_marker"),
    ('{- {-@ LIQUID "--no-totality" @-} -}', "liquid_pragma"),
    ("-- {-@ assume double :: x:Int -> {v:Int | v = 0} @-}", "assume"),
    ('hidden = "{-@ lazy helper @-}"', "lazy"),
    ('{-  @  LIQUID "--diff" @ -}', "liquid_pragma"),
    ("{- an unfinished comment", "unterminated"),
    ('msg = "an unfinished string', "unterminated"),
    ("-- run with --trust-internals", "liquid_option"),
    ("-- run with --notermination", "liquid_option"),
    ("double :: Int -> Int\ndouble x = 0", "redefines_program"),
    ("double_alt :: Int -> Int\ndouble_alt x = 0", "redefines_program"),
    ("double_alt :: Integer -> Integer", "redefines_program"),
    ("helper :: Int -> Int", "signature_not_local"),
    ("infixl 9 +", "fixity_not_local"),
    ("infixr 0 `div`", "fixity_not_local"),
]


@pytest.mark.parametrize("extra,reason", HATCHES)
def test_every_escape_hatch_is_rejected_with_its_reason(extra, reason):
    proof = PROOF1 + "\n\n" + extra + "\n"
    asm = assemble(P1, "double", Q1, "double_alt", proof)
    assert not asm.ok
    assert reason in problems_in(asm, "proof"), asm.problems
    assert reason in REASONS
    hit = next(p for p in asm.problems if p.code == reason)
    assert hit.detail and hit.where == "proof"


def test_escape_hatch_in_lemma_body_of_full_check(tmp_path):
    cheat = PROOF1.replace("=   double x\n  === double_alt x\n  *** QED", "= undefined")
    v = check_proof(
        fenced(cheat),
        p_source=P1,
        p_name="double",
        q_source=Q1,
        q_name="double_alt",
        settings={"command": None},
        workdir=tmp_path,
    )
    assert v["status"] == "rejected" and v["code"] == "undefined" and v["stage"] == "precheck"
    assert not v["checked"] and not v["accepted"]
    assert v["problems"][0]["line"] == 4


def test_hatch_line_numbers_point_into_the_part():
    proof = PROOF1 + "\n\ncheat :: Int -> Proof\ncheat _ = undefined\n"
    asm = assemble(P1, "double", Q1, "double_alt", proof)
    (hit,) = [p for p in asm.problems if p.code == "undefined"]
    assert hit.line == 9


def test_leading_indentation_would_continue_q():
    asm = assemble(P1, "double", Q1, "double_alt", "  + 1\n" + PROOF1)
    assert "leading_indentation" in problems_in(asm, "proof")


NOT_HATCHES = textwrap.dedent(
    """\
    -- We assume nothing, lazy evaluation does not matter, and we ignore no case.
    -- Do not trust undefined behaviour; no error, no Admit, nothing unchecked.
    {- a note: {- nested -} assume is fine here -}
    {-@ assumed_value :: Int @-}
    assumed_value :: Int
    assumed_value = 3

    {-@ reflect lazyList @-}
    lazyList :: Int -> [Int]
    lazyList n = if n <= 0 then [] else n : lazyList (n - 1)

    ignoreCase' :: Char -> Char
    ignoreCase' c = c

    trusty, errorless, undefinedness, admitted, unsafe_ok, unchecked_count :: Int
    trusty = 1
    errorless = 2
    undefinedness = 3
    admitted = 4
    unsafe_ok = 5
    unchecked_count = 6

    msg :: String
    msg = "assume lazy ignore undefined error Admit unsafeCoerce"

    quote :: Char
    quote = '"'

    (|->) :: Int -> Int -> Int
    a |-> b = a + b

    arrow :: Int
    arrow = 1 |-> 2 -- comment after an operator
    """
)


def test_no_false_positives_on_identifiers_comments_and_strings():
    asm = assemble(P1, "double", Q1, "double_alt", PROOF1 + "\n\n" + NOT_HATCHES)
    assert asm.ok, asm.problems


def test_helper_lemmas_with_their_own_specs_are_allowed():
    proof = PROOF1 + textwrap.dedent(
        """

        {-@ helper :: n:Int -> { double n == n + n } @-}
        helper :: Int -> Proof
        helper n = ()
        """
    )
    asm = assemble(P1, "double", Q1, "double_alt", proof)
    assert asm.ok, asm.problems


def test_error_is_behaviour_in_p_and_q_but_undefined_only_in_p():
    p = 'hd :: [Int] -> Int\nhd [] = error "empty"\nhd (x:_) = x\n'
    q = 'hd_alt :: [Int] -> Int\nhd_alt xs = case xs of\n  [] -> error "empty"\n  (y:_) -> y\n'
    proof = (
        "{-@ lemma_hd_equiv :: xs:[Int] -> { hd xs == hd_alt xs } @-}\n"
        "lemma_hd_equiv :: [Int] -> Proof\nlemma_hd_equiv xs = ()\n"
    )
    assert assemble(p, "hd", q, "hd_alt", proof).ok
    p_undef = p.replace('error "empty"', "undefined")
    assert assemble(p_undef, "hd", q, "hd_alt", proof).ok
    q_undef = q.replace('error "empty"', "undefined")
    assert "undefined" in problems_in(assemble(p, "hd", q_undef, "hd_alt", proof), "q")


@pytest.mark.parametrize(
    "q,reason",
    [
        ('{-@ LIQUID "--no-termination" @-}\n' + Q1, "liquid_pragma"),
        ("{-# LANGUAGE CPP #-}\n" + Q1, "language_pragma"),
        (Q1 + "{-@ lazy double_alt @-}\n", "lazy"),
        (Q1 + "{-@ double_alt :: {v:Int | v > 0} -> Int @-}\n", "spec_of_program"),
        (Q1 + "{-@ reflect double_alt @-}\n", "reflect_of_program"),
        ("double_alt :: Int -> Int\ndouble_alt x = double x\n", "q_references_p"),
        ("double_alt :: Int -> Int\ndouble_alt = undefined\n", "undefined"),
        ("triple :: Int -> Int\ntriple x = 3 * x\n", "missing_function"),
        (Q1 + "instance Num Bool\n", "class_or_instance"),
        (Q1 + "unused = lemma_double_equiv\n", "lemma_in_program"),
        (Q1 + "{- this comment never ends and would swallow the proof\n", "unterminated"),
        (Q1 + "{-@ helper :: Int\n", "unterminated"),
        ("module Q where\n" + Q1, "module_header"),
        ("  " + Q1, "leading_indentation"),
        (Q1 + "helper :: Int -> Int\n", "signature_not_local"),
        (Q1 + "infixr 0 <+>\n", "fixity_not_local"),
    ],
)
def test_q_is_model_text_too(q, reason):
    asm = assemble(P1, "double", q, "double_alt", PROOF1)
    assert reason in problems_in(asm, "q"), asm.problems


def test_q_cannot_retype_or_reparse_ps_helpers():
    p = "pow2 n = 2 ^ n\n(<+>) :: Int -> Int -> Int\na <+> b = a - b\ndouble :: Int -> Int\ndouble x = pow2 1 * x <+> 0\n"
    q = Q1 + "pow2 :: Int -> Int\ninfixr 0 <+>\n"
    asm = assemble(p, "double", q, "double_alt", PROOF1)
    assert {"signature_not_local", "fixity_not_local"} <= problems_in(asm, "q")
    own = "infixl 6 <+>\n(<+>) :: Int -> Int -> Int\na <+> b = a + b\ndouble_alt :: Int -> Int\ndouble_alt x = x <+> x\n"
    assert assemble(P1, "double", own, "double_alt", PROOF1).ok


def test_crlf_sources_are_normalised():
    asm = assemble(
        P1.replace("\n", "\r\n"),
        "double",
        Q1.replace("\n", "\r\n"),
        "double_alt",
        PROOF1.replace("\n", "\r\n"),
    )
    assert asm.ok and "\r" not in asm.source


def test_q_may_reflect_its_own_helpers_and_use_data_declarations():
    q = textwrap.dedent(
        """\
        data Acc = Acc Int
        {-@ reflect go @-}
        go :: Int -> Int
        go x = x + x
        double_alt :: Int -> Int
        double_alt x = go x
        """
    )
    asm = assemble(P1, "double", q, "double_alt", PROOF1)
    assert asm.ok, asm.problems


def test_p_problems_are_reported_for_p():
    asm = assemble("{-# LANGUAGE BangPatterns #-}\n" + P1, "double", Q1, "double_alt", PROOF1)
    assert "language_pragma" in problems_in(asm, "p")
    asm = assemble("double x = x + x\n", "double", Q1, "double_alt", PROOF1)
    assert "no_p_signature" in problems_in(asm, "p")
    asm = assemble(P1, "Double", Q1, "double_alt", PROOF1)
    assert "bad_name" in problems_in(asm, "p")


# --------------------------------------------------------------------------------------
# The assembled file
# --------------------------------------------------------------------------------------


def test_assembled_file_layout_and_exactly_the_checkers_pragmas():
    asm = assemble(P1, "double", Q1, "double_alt", PROOF1)
    assert asm.ok, asm.problems
    src = asm.source
    pragmas = re.findall(r"\{-@\s*LIQUID\s+\"([^\"]*)\"\s*@-\}", src)
    assert pragmas == ["--reflection", "--ple"]
    assert src.startswith('{-@ LIQUID "--reflection" @-}\n{-@ LIQUID "--ple" @-}\nmodule Equiv where\n')
    assert src.count("import Language.Haskell.Liquid.ProofCombinators") == 1
    assert "{-@ reflect double @-}\ndouble :: Int -> Int" in src
    assert "{-@ reflect double_alt @-}\ndouble_alt :: Int -> Int" in src
    assert (
        src.index("reflect double @-}") < src.index("reflect double_alt") < src.index("lemma_double_equiv ::")
    )
    assert not re.search(r"\{-#", src)
    lines = src.split("\n")
    for where, text in (("p", P1), ("q", Q1), ("proof", PROOF1)):
        first, last = asm.part_lines[where]
        assert "\n".join(lines[first - 1 : last]) == text.strip("\n")
    assert asm.file_name == "Equiv.hs" and asm.q_name_in_file == "double_alt"


def test_config_options_come_after_the_checkers_own():
    s = LiquidSettings(extra_options=("--fuel=10", "--ple"), module_name="Proofs")
    asm = assemble(P1, "double", Q1, "double_alt", PROOF1, s)
    assert re.findall(r'LIQUID "([^"]*)"', asm.source) == ["--reflection", "--ple", "--fuel=10"]
    assert "module Proofs where" in asm.source and asm.file_name == "Proofs.hs"


def test_model_pragmas_are_rejected_not_dropped():
    proof = '{-@ LIQUID "--reflection" @-}\n{-@ LIQUID "--ple" @-}\n' + PROOF1
    asm = assemble(P1, "double", Q1, "double_alt", proof)
    assert "liquid_pragma" in problems_in(asm, "proof")
    assert "liquid_pragma" in problems_in(asm, "file")  # the file holds pragmas the checker did not write
    assert asm.source.count('LIQUID "--ple"') == 2  # kept in the shown file, and refused


def test_q_with_ps_name_is_renamed_in_code_but_not_in_comments_or_strings():
    q = textwrap.dedent(
        """\
        -- double, but recursive
        double :: Int -> Int
        double 0 = 0
        double n = 2 + double (n - 1) -- calls double
        label = "double"
        """
    )
    assert q_file_name("double", "double", P1, q) == "double'"
    proof = PROOF1.replace("double_alt", "double'")
    asm = assemble(P1, "double", q, "double", proof)
    assert asm.ok, asm.problems
    first, last = asm.part_lines["q"]
    q_in_file = "\n".join(asm.source.split("\n")[first - 1 : last])
    assert "double' :: Int -> Int" in q_in_file
    assert "double n = " not in q_in_file and "double' n = 2 + double' (n - 1) -- calls double" in q_in_file
    assert 'label = "double"' in q_in_file and "-- double, but recursive" in q_in_file
    assert "{-@ reflect double' @-}" in asm.source
    assert check_statement(proof, p_name="double", q_name_in_file="double'", p_type="Int -> Int").ok


def test_rename_avoids_names_already_used():
    q = "double :: Int -> Int\ndouble x = double' x\ndouble' :: Int -> Int\ndouble' x = 2 * x\n"
    assert q_file_name("double", "double", P1, q) == "double''"
    assert q_file_name("double", "twice", P1, q) == "twice"


def test_imports_are_hoisted_and_deduplicated():
    q = "import Data.List (foldl')\n\ndouble_alt :: Int -> Int\ndouble_alt x = foldl' (+) 0 [x, x]\n"
    proof = "import Language.Haskell.Liquid.ProofCombinators\n" + PROOF1
    asm = assemble("import Data.List (foldl')\n" + P1, "double", q, "double_alt", proof)
    assert asm.ok, asm.problems
    lines = asm.source.split("\n")
    first, _ = asm.part_lines["q"]
    assert lines[first - 1] == "" and lines[first + 1] == "double_alt :: Int -> Int"  # line numbers kept
    header = asm.source.split("-- P:")[0]
    assert header.count("import Data.List (foldl')") == 1
    assert asm.source.count("import Data.List") == 1
    assert asm.source.count("import Language.Haskell.Liquid.ProofCombinators") == 1


def test_settings_from_config_and_validation():
    s = LiquidSettings.from_config(
        {"command": "apptainer exec lh.sif liquid", "timeout_s": 30, "allowed_imports": ["Data.List"]}
    )
    assert s.command == ("apptainer", "exec", "lh.sif", "liquid") and s.timeout_s == 30.0
    assert s.allowed_imports == frozenset({"Data.List", lq.PROOF_MODULE})
    assert LiquidSettings.from_config({"command": ["liquid", "--ghc-option=-O0"]}).command == (
        "liquid",
        "--ghc-option=-O0",
    )
    assert LiquidSettings.from_config(None).command is None
    with pytest.raises(UserError, match="weaken"):
        LiquidSettings(extra_options=("--no-termination",))
    with pytest.raises(UserError, match="weaken"):
        LiquidSettings(extra_options=("--trust-internals",))
    with pytest.raises(UserError, match="form"):
        LiquidSettings(extra_options=('--x" @-} {-@ assume',))
    with pytest.raises(UserError, match="module"):
        LiquidSettings(module_name="equiv")
    with pytest.raises(UserError, match="Prelude"):
        LiquidSettings.from_config({"allowed_imports": ["Prelude"]})
    with pytest.raises(UserError, match="unknown key"):
        LiquidSettings.from_config({"comand": "liquid"})


# --------------------------------------------------------------------------------------
# Reading LH's output
# --------------------------------------------------------------------------------------

NEW_UNSAFE = textwrap.dedent(
    """\
    [1 of 1] Compiling Equiv            ( Equiv.hs, Equiv.o )

    /tmp/liquid-abc123/Equiv.hs:21:1: error:
        Liquid Type Mismatch
        .
        The inferred type
          VV : {v : () | v == ()}
        .
        is not a subtype of the required type
          VV : {VV : () | double x == double_alt x}
       |
    21 | lemma_double_equiv x
       | ^^^^^^^^^^^^^^^^^^^^

    /tmp/liquid-abc123/Equiv.hs:5:1: warning: [-Wunused-top-binds]
        Defined but not used: 'thing'

    LIQUID: UNSAFE
    """
)

OLD_ERROR = textwrap.dedent(
    """\
    LiquidHaskell Version 0.8.10.2, Git revision d1b3ac5
    Copyright 2013-19 Regents of the University of California. All Rights Reserved.

    **** DONE:  A-Normalization ****************************************************

    **** RESULT: ERROR *************************************************************

     /home/u/run/Equiv.hs:14:28-38: Error: Illegal type specification for `Equiv.lemma_double_equiv`

     14 | {-@ lemma_double_equiv :: x:Int -> { double x == dbl x } @-}
                                     ^^^^^^^^^^^

         Unbound symbol dbl --- perhaps you meant: double ?
    """
)


@pytest.mark.parametrize(
    "output,rc,status,code,markers",
    [
        ("LIQUID: SAFE (7 constraints checked)\n", 0, "safe", "liquid_safe", ["SAFE"]),
        ("**** LIQUID: SAFE (2 constraints checked) *****\n", 0, "safe", "liquid_safe", ["SAFE"]),
        ("**** RESULT: SAFE ************\n", 0, "safe", "liquid_safe", ["SAFE"]),
        (NEW_UNSAFE, 1, "unsafe", "liquid_unsafe", ["UNSAFE"]),
        ("**** RESULT: UNSAFE ****\n", 1, "unsafe", "liquid_unsafe", ["UNSAFE"]),
        (
            "RESULT: Unsafe [Just 32,Just 1083]\n**** RESULT: UNSAFE ****\n",
            1,
            "unsafe",
            "liquid_unsafe",
            ["UNSAFE", "UNSAFE"],
        ),
        ("LIQUID: ERROR\n", 2, "error", "liquid_error", ["ERROR"]),
        (OLD_ERROR, 1, "error", "liquid_error", ["ERROR"]),
        ("LIQUID: SAFE\n", 1, "error", "liquid_exit_nonzero", ["SAFE"]),
        ("LIQUID: SAFE\nLIQUID: UNSAFE\n", 0, "unsafe", "liquid_unsafe", ["SAFE", "UNSAFE"]),
        ("all good\n", 0, "error", "liquid_no_result", []),
        ("Equiv.hs:3:1: error: parse error\n", 1, "error", "liquid_error", []),
        ("   12 | -- LIQUID: SAFE\nEquiv.hs:12:1: error:\n", 1, "error", "liquid_error", []),
        ("\x1b[1mLIQUID: SAFE\x1b[0m\n", 0, "safe", "liquid_safe", ["SAFE"]),
    ],
)
def test_parse_liquid_output(output, rc, status, code, markers):
    res = parse_liquid_output(output, rc)
    assert (res["status"], res["code"], res["markers"]) == (status, code, markers)
    assert res["accepted"] is (status == "safe")


def test_version_is_read_from_the_banner():
    assert parse_liquid_output(OLD_ERROR, 1)["tool_version"] == "0.8.10.2"
    assert parse_liquid_output("LIQUID: SAFE", 0)["tool_version"] is None


def test_error_excerpt_new_format():
    text = extract_error_excerpt(NEW_UNSAFE, part_lines={"p": (8, 9), "q": (13, 14), "proof": (17, 23)})
    assert text.startswith("Equiv.hs:21:1: error:  [line 5 of your proof]")
    assert "/tmp/liquid-abc123" not in text
    assert "Liquid Type Mismatch" in text and "double x == double_alt x" in text
    assert "warning" not in text and "Defined but not used" not in text
    assert "LIQUID" not in text


def test_error_excerpt_old_format():
    text = extract_error_excerpt(OLD_ERROR)
    assert text.startswith("Equiv.hs:14:28-38: Error: Illegal type specification")
    assert "Unbound symbol dbl" in text and "/home/u/run" not in text
    assert "Copyright" not in text


def test_error_excerpt_is_bounded():
    blocks = "".join(
        f"Equiv.hs:{k}:1: error:\n    Variable not in scope: v{k} {'x' * 400}\n\n" for k in range(1, 60)
    )
    text = extract_error_excerpt(blocks, max_chars=600)
    assert len(text) <= 600
    assert text.startswith("Equiv.hs:1:1: error:")
    assert "more error(s) not shown" in text
    huge = extract_error_excerpt("Equiv.hs:1:1: error:\n" + "y" * 10_000, max_chars=300)
    assert len(huge) <= 300


def test_error_excerpt_fallback_without_error_headers():
    out = "LiquidHaskell Version 0.9\n**** DONE: annotate ****\nghc: panic! the impossible happened\nLIQUID: ERROR\n"
    text = extract_error_excerpt(out)
    assert text == "ghc: panic! the impossible happened"
    long = extract_error_excerpt("\n".join(f"line {k}" for k in range(2000)), max_chars=200)
    assert len(long) <= 200 and long.endswith("line 1999")


def test_retry_feedback():
    rejected = check_proof(
        fenced(PROOF1 + "\n{-@ lazy helper @-}\nhelper :: Int\nhelper = helper\n"),
        p_source=P1,
        p_name="double",
        q_source=Q1,
        q_name="double_alt",
    )
    fb = retry_feedback(rejected)
    assert (
        fb.startswith("The proof was refused before checking:")
        and "- annotation: {-@ lazy helper @-} (lazy, line 7 of the proof)" in fb
    )
    assert retry_feedback({"accepted": True, "status": "safe"}) == ""
    assert retry_feedback(missing_verdict()) == ""
    assert "did not finish" in retry_feedback({"accepted": False, "status": "timeout", "detail": "5 seconds"})
    err = {"accepted": False, "status": "unsafe", "error_excerpt": "Equiv.hs:3:1: error: boom"}
    assert retry_feedback(err) == "Equiv.hs:3:1: error: boom"
    assert (
        len(
            retry_feedback({"accepted": False, "status": "error", "error_excerpt": "z" * 5000}, max_chars=100)
        )
        <= 100
    )


# --------------------------------------------------------------------------------------
# Running: the missing tool
# --------------------------------------------------------------------------------------


def test_missing_tool_verdict(tmp_path):
    v = run_liquid("module Equiv where\n", None, 5, tmp_path)
    assert v["checked"] is False and v["accepted"] is False and v["reason"] == MISSING_REASON
    assert v["status"] == "missing" and v["code"] == "liquid_missing"
    assert {
        "checked": False,
        "accepted": False,
        "reason": "not checked: Liquid Haskell missing",
    }.items() <= v.items()
    for cmd in ("definitely-not-a-liquid-binary-xyz", [str(tmp_path / "no" / "liquid")], ""):
        v = run_liquid("module Equiv where\n", cmd, 5, tmp_path)
        assert v["status"] == "missing" and not v["accepted"]
    assert list(tmp_path.iterdir()) == []
    json.dumps(v)


def test_check_proof_without_the_tool_is_never_accepted(tmp_path):
    v = check_proof(
        fenced(PROOF1),
        p_source=P1,
        p_name="double",
        q_source=Q1,
        q_name="double_alt",
        settings=None,
        workdir=tmp_path,
    )
    assert v["reason"] == MISSING_REASON and not v["checked"] and not v["accepted"]
    assert v["file"] and v["proof"] == PROOF1 and v["lemma_name"] == "lemma_double_equiv"
    json.dumps(v)


def test_resolve_command(tmp_path):
    assert resolve_command(None) is None and resolve_command([]) is None
    exe = tmp_path / "tool"
    exe.write_text("#!/bin/sh\n")
    assert resolve_command([str(exe)]) is None  # not executable
    exe.chmod(0o755)
    assert resolve_command(f"{exe} --x") == [str(exe), "--x"]
    assert resolve_command(["sh", "-c"])[0].endswith("sh")


# --------------------------------------------------------------------------------------
# Running: with fake_liquid, a test double for Liquid Haskell
# --------------------------------------------------------------------------------------

FAKE_LIQUID = '''#!{python}
"""fake_liquid: a TEST DOUBLE for Liquid Haskell. argv: MODE FILE."""
import os, signal, subprocess, sys, time
mode, path = sys.argv[1], sys.argv[-1]
sentinel = os.environ.get("FAKE_LIQUID_RAN")
if sentinel:
    open(sentinel, "w").write(os.getcwd())
def spawn_sleeper():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    tmp = os.environ["FAKE_LIQUID_PIDFILE"] + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(str(child.pid))
    os.replace(tmp, os.environ["FAKE_LIQUID_PIDFILE"])
if mode == "safe":
    print("LiquidHaskell Version 0.9.2.8")
    print("LIQUID: SAFE (3 constraints checked)")
elif mode == "old-safe":
    print("**** DONE:  solve ****")
    print("**** RESULT: SAFE ****")
elif mode == "unsafe":
    print(os.path.abspath(path) + ":21:1: error:")
    print("    Liquid Type Mismatch")
    print("LIQUID: UNSAFE")
    sys.exit(1)
elif mode == "error":
    print(path + ":3:1: error: parse error on input 'lemma'")
    print("**** RESULT: ERROR ****", file=sys.stderr)
    sys.exit(2)
elif mode == "safe-exit1":
    print("LIQUID: SAFE")
    sys.exit(1)
elif mode == "silent":
    pass
elif mode == "inspect":
    print("cwd=" + os.getcwd())
    print("files=" + ",".join(sorted(os.listdir("."))))
    print("header=" + open(path).read().splitlines()[0])
    print("LIQUID: SAFE")
elif mode == "big":
    sys.stdout.write(("noise " * 20 + "\\n") * 20000)
    print("LIQUID: SAFE")
elif mode == "sleep":
    spawn_sleeper()
    time.sleep(600)
elif mode == "orphan":
    spawn_sleeper()
    print("LIQUID: SAFE")
elif mode == "suicide":
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "notfound":
    print("liquid: command not found", file=sys.stderr)
    sys.exit(127)
'''


@pytest.fixture
def fake_liquid(tmp_path) -> Path:
    path = tmp_path / "bin" / "fake_liquid"
    path.parent.mkdir()
    path.write_text(FAKE_LIQUID.replace("{python}", sys.executable))
    path.chmod(0o755)
    return path


@pytest.fixture
def work(tmp_path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


SOURCE = assemble(P1, "double", Q1, "double_alt", PROOF1).source


def _dead(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _wait_dead(pid: int, limit: float = 5.0) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if _dead(pid):
            return True
        time.sleep(0.05)
    return _dead(pid)


@pytest.mark.parametrize("mode", ["safe", "old-safe"])
def test_runner_safe(fake_liquid, work, mode):
    v = run_liquid(SOURCE, [str(fake_liquid), mode], 30, work)
    assert v["accepted"] and v["checked"] and v["status"] == "safe" and v["code"] == "liquid_safe"
    assert v["returncode"] == 0 and v["markers"] == ["SAFE"] and not v["timed_out"]
    assert v["reason"].startswith("accepted:")
    assert v["command"] == [str(fake_liquid), mode] and v["file_name"] == "Equiv.hs"
    assert len(v["file_sha256"]) == 64 and v["seconds"] >= 0
    if mode == "safe":
        assert v["tool_version"] == "0.9.2.8"
    assert list(work.iterdir()) == []  # the temporary directory is gone
    json.dumps(v)


def test_runner_unsafe_gives_an_excerpt_without_temp_paths(fake_liquid, work):
    v = run_liquid(SOURCE, [str(fake_liquid), "unsafe"], 30, work, part_lines={"proof": (18, 23)})
    assert v["checked"] and not v["accepted"] and v["status"] == "unsafe" and v["returncode"] == 1
    assert v["error_excerpt"].startswith("Equiv.hs:21:1: error:  [line 4 of your proof]")
    assert "Liquid Type Mismatch" in v["error_excerpt"]
    assert str(work) not in v["error_excerpt"] and str(work) not in v["output_tail"]
    assert retry_feedback(v) == v["error_excerpt"]


def test_runner_error_and_stderr_is_captured(fake_liquid, work):
    v = run_liquid(SOURCE, [str(fake_liquid), "error"], 30, work)
    assert v["status"] == "error" and v["code"] == "liquid_error" and v["checked"] and not v["accepted"]
    assert v["returncode"] == 2 and v["markers"] == ["ERROR"]
    assert "parse error on input" in v["error_excerpt"]


@pytest.mark.parametrize("mode,code", [("safe-exit1", "liquid_exit_nonzero"), ("silent", "liquid_no_result")])
def test_runner_safe_needs_both_marker_and_exit_zero(fake_liquid, work, mode, code):
    v = run_liquid(SOURCE, [str(fake_liquid), mode], 30, work)
    assert not v["accepted"] and v["code"] == code and v["status"] == "error"


def test_runner_fresh_directory_and_file(fake_liquid, work):
    v = run_liquid(SOURCE, [str(fake_liquid), "inspect"], 30, work)
    assert v["accepted"]
    out = v["output_tail"]
    assert "files=Equiv.hs\n" in out
    assert 'header={-@ LIQUID "--reflection" @-}' in out
    assert "cwd=." in out  # the temp dir path is reduced in the recorded output
    assert list(work.iterdir()) == []


def test_runner_module_name_picks_the_file_name(fake_liquid, work):
    v = run_liquid("module Proofs where\n", [str(fake_liquid), "inspect"], 30, work)
    assert "files=Proofs.hs" in v["output_tail"] and v["file_name"] == "Proofs.hs"


def test_runner_timeout_kills_the_whole_process_group(fake_liquid, work, tmp_path):
    pidfile = tmp_path / "child.pid"
    env = {**os.environ, "FAKE_LIQUID_PIDFILE": str(pidfile)}
    t0 = time.monotonic()
    v = run_liquid(SOURCE, [str(fake_liquid), "sleep"], 3.0, work, env=env)
    elapsed = time.monotonic() - t0
    assert v["status"] == "timeout" and v["code"] == "liquid_timeout" and v["timed_out"]
    assert v["checked"] is False and v["accepted"] is False
    assert v["reason"].startswith("not checked:")
    assert 3.0 <= elapsed < 12
    assert pidfile.exists(), "the test double did not start its child in time"
    child = int(pidfile.read_text())
    assert _wait_dead(child), f"child {child} of the timed-out checker is still running"
    assert list(work.iterdir()) == []
    assert "did not finish within 3 seconds" in retry_feedback(v)


def test_runner_kills_leftover_children_after_a_normal_exit(fake_liquid, work, tmp_path):
    pidfile = tmp_path / "orphan.pid"
    env = {**os.environ, "FAKE_LIQUID_PIDFILE": str(pidfile)}
    v = run_liquid(SOURCE, [str(fake_liquid), "orphan"], 30, work, env=env)
    assert v["accepted"]
    assert _wait_dead(int(pidfile.read_text()))


def test_runner_killed_by_signal(fake_liquid, work):
    v = run_liquid(SOURCE, [str(fake_liquid), "suicide"], 30, work)
    assert v["status"] == "crashed" and v["code"] == "liquid_killed" and v["returncode"] == -9
    assert not v["checked"] and not v["accepted"]


def test_runner_exit_127_means_missing(fake_liquid, work):
    v = run_liquid(SOURCE, [str(fake_liquid), "notfound"], 30, work)
    assert v["status"] == "missing" and v["reason"] == MISSING_REASON and not v["accepted"]
    assert v["returncode"] == 127


def test_runner_bounds_large_output(fake_liquid, work):
    v = run_liquid(SOURCE, [str(fake_liquid), "big"], 60, work)
    assert v["accepted"]
    assert len(v["output_tail"]) <= lq.OUTPUT_TAIL_CHARS
    assert len(json.dumps(v)) < 64_000


def test_check_proof_end_to_end_with_the_test_double(fake_liquid, work, tmp_path):
    sentinel = tmp_path / "ran"
    env = {**os.environ, "FAKE_LIQUID_RAN": str(sentinel)}
    cfg = {"command": [str(fake_liquid), "safe"], "timeout_s": 30}
    v = check_proof(
        fenced(PROOF3),
        p_source=P3,
        p_name="clamp3",
        q_source=Q3,
        q_name="clamp3_alt",
        settings=cfg,
        workdir=work,
        env=env,
    )
    assert v["accepted"] and v["stage"] == "liquid" and sentinel.exists()
    assert v["lemma_name"] == "lemma_clamp3_equiv" and v["q_name_in_file"] == "clamp3_alt"
    assert v["file"].count("{-@ reflect clamp3") == 2 and v["proof"] == PROOF3
    assert v["part_lines"]["proof"][0] > v["part_lines"]["q"][1]
    json.dumps(v)

    sentinel.unlink()
    weak = PROOF3.replace("b:Int", "b:{v:Int | v >= a}")
    v = check_proof(
        fenced(weak),
        p_source=P3,
        p_name="clamp3",
        q_source=Q3,
        q_name="clamp3_alt",
        settings=cfg,
        workdir=work,
        env=env,
    )
    assert v["status"] == "rejected" and v["code"] == "binder_refined" and not v["accepted"]
    assert not sentinel.exists(), "a refused proof must never reach the checker"

    v = check_proof(
        "no proof today",
        p_source=P3,
        p_name="clamp3",
        q_source=Q3,
        q_name="clamp3_alt",
        settings=cfg,
        workdir=work,
        env=env,
    )
    assert v["stage"] == "parse" and v["code"] == "no_lemma" and v["problems"][0]["where"] == "answer"
    assert not sentinel.exists()


def test_check_proof_renames_q_with_ps_name(fake_liquid, work):
    proof = PROOF1.replace("double_alt", "double'")
    v = check_proof(
        fenced(proof),
        p_source=P1,
        p_name="double",
        q_source=Q1_SAME,
        q_name="double",
        settings={"command": [str(fake_liquid), "safe"]},
        workdir=work,
    )
    assert v["accepted"] and v["q_name_in_file"] == "double'"
    assert "double' x = 2 * x" in v["file"]


def test_check_proof_unsafe_feedback_points_into_the_proof(fake_liquid, work):
    v = check_proof(
        fenced(PROOF1),
        p_source=P1,
        p_name="double",
        q_source=Q1,
        q_name="double_alt",
        settings={"command": [str(fake_liquid), "unsafe"]},
        workdir=work,
    )
    assert v["status"] == "unsafe"
    first = v["part_lines"]["proof"][0]
    assert f"[line {21 - first + 1} of your proof]" in v["error_excerpt"]


def test_tool_dirs_follow_the_wrappers_package_environment(tmp_path):
    """The haskell image's `liquid` is a script running `ghc -package-env /opt/liquid/env`:
    the sandbox must show that environment and the package store it names, or GHC
    cannot find LH inside."""
    from selfplay.haskell.liquid.settings import tool_dirs

    store = tmp_path / "cabal" / "store" / "ghc-9.0.2"
    (store / "package.db").mkdir(parents=True)
    env = tmp_path / "liquid" / "env"
    env.parent.mkdir()
    env.write_text(
        f"clear-package-db\nglobal-package-db\npackage-db {store / 'package.db'}\npackage-id base\n"
    )
    wrapper = tmp_path / "bin" / "liquid"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nset -eu\nghc -package-env {env} -fplugin=LiquidHaskell "$@"\n')
    assert tool_dirs([str(wrapper), "--flag"]) == sorted({str(wrapper.parent), str(env.parent), str(store)})
    binary = tmp_path / "bin" / "lh"
    binary.write_bytes(b"\x7fELF -package-env /nowhere")
    assert tool_dirs([str(binary)]) == [str(binary.parent)]
