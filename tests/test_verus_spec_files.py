"""The Verus spec-check files, the solution file, and how spec-check outcomes combine
(pure text: no Verus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfplay.verus import spec_files as sf
from selfplay.verus.declarations import parse
from selfplay.verus.hatches import WORD_CODES
from selfplay.verus.screen import screen_solution
from selfplay.verus.spec import parse_spec

CORPUS = Path(__file__).parent / "verus_corpus"


def spec_of(name: str):
    return parse_spec((CORPUS / name).read_text())


MAX = spec_of("spec_max.rs")


def fn_named(text: str, name: str):
    found = [d for d in parse(text).items if d.name == name and d.kind == "fn"]
    assert len(found) == 1, name
    return found[0]


def test_validity_file_is_the_papers_stub():
    text = sf.validity_file(MAX)
    target = fn_named(text, "max_element")
    assert [a.keys for a in target.attributes] == [("verifier::external_body",)]
    assert text[target.body[0] : target.body[1]] == "{\n    assume(false);\n    arbitrary()\n}"
    # the spec's text up to the target, and the target's header, are kept byte for byte
    assert text.startswith(MAX.text[: MAX.target.start])
    assert MAX.target.header in text
    assert fn_named(text, "main").scope == "verus"
    assert text.rstrip().endswith("} // verus!")


def test_precondition_file_asserts_false_and_is_absent_without_requires():
    text = sf.precondition_file(MAX)
    target = fn_named(text, "max_element")
    assert target.attributes == ()
    assert text[target.body[0] : target.body[1]] == (
        "{\n    proof { assert(false); }\n    vstd::pervasive::unreached()\n}"
    )
    assert sf.precondition_file(spec_of("spec_double.rs")) is None
    assert [f.check for f in sf.spec_check_files(spec_of("spec_double.rs"))] == ["validity", "postconditions"]
    assert [f.check for f in sf.spec_check_files(MAX)] == ["validity", "preconditions", "postconditions"]


def test_postcondition_file_gives_results_and_mut_refs_arbitrary_values():
    text = sf.postcondition_file(MAX)
    target = fn_named(text, "max_element")
    assert text[target.body[0] : target.body[1]] == "{\n    selfplay_arbitrary_value()\n}"
    helper = fn_named(text, sf.ARBITRARY_HELPER)
    assert [a.keys for a in helper.attributes] == [("verifier::external_body",)] and helper.clauses == ()
    swap = sf.postcondition_file(spec_of("spec_swap.rs"))
    target = fn_named(swap, "swap_values")
    assert swap[target.body[0] : target.body[1]] == (
        "{\n    *a = selfplay_arbitrary_value();\n    *b = selfplay_arbitrary_value();\n}"
    )


def test_files_parse_and_keep_every_helper_verbatim():
    for name in ("spec_max.rs", "spec_double.rs", "spec_swap.rs", "spec_abs_dataset.rs", "spec_bare.rs"):
        spec = spec_of(name)
        for f in sf.spec_check_files(spec):
            program = parse(f.text)  # closed braces, one verus! block
            assert len(program.blocks) == 1, (name, f.check)
            for helper in spec.helpers:
                assert helper.text in f.text
            assert len(program.named("main")) == 1, (name, f.check)
            assert f.text.startswith("use vstd::prelude::*;")


def test_dataset_spec_body_is_replaced_not_kept():
    spec = spec_of("spec_abs_dataset.rs")
    for f in sf.spec_check_files(spec):
        assert f.text.count("if x < 0 { -x } else { x }") == 1  # only the helper's
        assert f.text.count("fn main()") == 1


def test_bare_spec_is_wrapped():
    text = sf.validity_file(spec_of("spec_bare.rs"))
    assert text.startswith("use vstd::prelude::*;\n\nverus! {\n")
    assert fn_named(text, "triple").scope == "verus"


def test_solution_file_adds_main_only_when_missing():
    honest = (CORPUS / "double_honest.rs").read_text()
    text = sf.solution_file(spec_of("spec_double.rs"), honest)
    assert fn_named(text, "main").scope == "verus"
    assert text.startswith(honest[: honest.rindex("}")])  # the answer's lines do not move
    with_main = (CORPUS / "max_honest.rs").read_text()
    assert sf.solution_file(MAX, with_main) == with_main
    assert sf.solution_file(MAX, "not rust {") == "not rust {"


def test_generated_stub_would_be_refused_in_an_answer():
    # the external_body stub exists only in the file we generate: an answer containing it is refused
    reasons = screen_solution(MAX, sf.validity_file(MAX)).reasons
    assert {"assume", "external_body", "target_header_changed"} <= set(reasons)
    assert set(reasons) <= set(WORD_CODES.values()) | {"target_header_changed"}
    assert "reserved_name" in screen_solution(MAX, sf.postcondition_file(MAX)).reasons


@pytest.mark.parametrize(
    "validity,pre,post,code",
    [
        ("verified", "refuted", "refuted", "spec_ok"),
        ("verified", None, "refuted", "spec_ok"),
        ("refuted", "verified", "verified", "spec_invalid"),
        ("inconclusive", "refuted", "refuted", "spec_check_inconclusive"),
        ("verified", "verified", "refuted", "vacuous_requires"),
        ("verified", "refuted", "verified", "vacuous_ensures"),
        ("verified", "inconclusive", "refuted", "spec_check_inconclusive"),
        ("verified", "refuted", "inconclusive", "spec_check_inconclusive"),
        ("verified", "refuted", None, "spec_check_inconclusive"),
    ],
)
def test_spec_verdict_table(validity, pre, post, code):
    verdict = sf.spec_verdict(validity, pre, post)
    assert verdict.code == code and verdict.ok == (code == "spec_ok") and verdict.detail


def test_spec_verdict_rejects_unknown_outcomes():
    with pytest.raises(ValueError):
        sf.spec_verdict("passed", None, "refuted")
