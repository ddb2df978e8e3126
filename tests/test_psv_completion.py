"""The solver's answer format (config psv.solve.completion). With ``body`` (the paper's
release) the model writes the target's body only and the spec is put in front of it;
the screen and the verifier see the assembled program, so a body that restates or
changes the spec, or hides an escape hatch, is refused with a recorded reason. With
``full_program`` the answer is the program, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfplay.dafny.runner import dafny_available
from selfplay.dafny.screen import screen_solution as dafny_screen
from selfplay.llm.answer_format import check_grammar
from selfplay.tracks.psv import formats, prompts
from selfplay.tracks.psv.completion import assemble, read_answer
from selfplay.verus.screen import screen_solution as verus_screen

CORPUS = Path(__file__).parent / "verus_corpus"
ABS = "method Abs(x: int) returns (y: int)\n  ensures y >= 0\n  ensures y == x || y == -x\n"
ABS_BODY = "{\n  if x < 0 {\n    y := -x;\n  } else {\n    y := x;\n  }\n}\n"


def block(lang: str, text: str) -> str:
    return f"Here it is.\n```{prompts.FENCE[lang]}\n{text}```\n"


def test_a_dafny_body_is_put_after_the_spec_and_passes_the_screen():
    got = read_answer("dafny", ABS, block("dafny", ABS_BODY), "body")
    assert got.reason is None and got.answer == ABS_BODY
    assert got.program == ABS + ABS_BODY
    assert dafny_screen(ABS, got.program).ok


def test_a_verus_body_is_put_after_the_spec_inside_its_block_with_main():
    spec = (CORPUS / "spec_max.rs").read_text()
    honest = (CORPUS / "max_honest.rs").read_text()
    body = honest[honest.index("{\n    let mut max") : honest.index("fn main")].rstrip() + "\n"
    got = read_answer("verus", spec, block("verus", body), "body")
    assert got.reason is None, got.detail
    assert got.program.startswith(spec.rstrip()[:-1].rstrip())  # the spec up to the target's own brace
    assert got.program.rstrip().endswith("fn main() {}\n\n} // verus!")
    assert verus_screen(spec, got.program).ok
    # a lemma of the solver's own after the body is kept, and a main of its own is not doubled
    lemma = "\nproof fn lemma_nothing()\n    ensures true,\n{\n}\n\nfn main() {}\n"
    with_more = read_answer("verus", spec, block("verus", body + lemma), "body")
    assert with_more.reason is None and with_more.program.count("fn main()") == 1
    assert verus_screen(spec, with_more.program).ok


@pytest.mark.parametrize("lang", ["dafny", "verus"])
def test_the_shipped_worked_example_assembles_to_the_shipped_program(lang):
    got = assemble(lang, prompts.EXAMPLE_SPEC[lang] + "\n", prompts.EXAMPLE_BODY[lang])
    assert got.reason is None and got.program.strip() == prompts.EXAMPLE_SOLUTION[lang].strip()


@pytest.mark.skipif(not dafny_available(), reason="Dafny 2.3 and z3 4.8.5 are not installed")
def test_the_assembled_worked_example_verifies():
    from selfplay.dafny.checks import verify_solutions

    got = assemble("dafny", prompts.EXAMPLE_SPEC["dafny"] + "\n", prompts.EXAMPLE_BODY["dafny"])
    rec = verify_solutions([(prompts.EXAMPLE_SPEC["dafny"] + "\n", got.program)])[0]
    assert rec["verified"], rec["reason"]


@pytest.mark.parametrize(
    "output,reason",
    [
        ("no code at all", "parse:no_code_block"),
        (block("dafny", "y := x;\n"), "parse:body_not_braced"),  # bare statements
        (block("dafny", ABS + ABS_BODY), "parse:body_not_braced"),  # the whole program again
        (block("dafny", ABS_BODY + ABS.replace("y >= 0", "y >= -5") + ABS_BODY), "parse:redeclares_spec"),
        (
            block("dafny", ABS_BODY + "method Abs(x: int) returns (y: int)\n{\n  y := 0;\n}\n"),
            "parse:redeclares_spec",
        ),
        (block("dafny", "{\n  y := x;\n}\n/* unterminated\n"), None),  # read: the screen refuses it
    ],
)
def test_wrong_dafny_bodies_are_refused_with_a_reason(output, reason):
    got = read_answer("dafny", ABS, output, "body")
    if reason is None:
        assert got.program is not None and not dafny_screen(ABS, got.program).ok
    else:
        assert got.reason == reason and got.program is None


@pytest.mark.parametrize(
    "body,code",
    [
        ("{\n  assume false;\n}\n", "assume"),
        ("{\n  y := x;\n}\nlemma {:axiom} Cheat()\n  ensures false\n", "axiom_attribute"),
        ("{\n  y := if x < 0 then -x else x;\n}\nlemma Trust()\n  ensures false\n", "bodiless_declaration"),
    ],
)
def test_hostile_dafny_bodies_are_refused_by_the_screen_of_the_assembled_program(body, code):
    got = read_answer("dafny", ABS, block("dafny", body), "body")
    assert got.program is not None
    screen = dafny_screen(ABS, got.program)
    assert not screen.ok and code in screen.reasons


def test_a_mention_of_a_hatch_in_a_comment_or_string_is_not_a_hatch():
    body = "{\n  // we never assume false here\n" + ABS_BODY[2:]
    got = read_answer("dafny", ABS, block("dafny", body), "body")
    assert got.reason is None and dafny_screen(ABS, got.program).ok
    spec = (CORPUS / "spec_double.rs").read_text()
    verus_body = "{\n    // fn double would be wrong to declare again\n    x + x\n}\n"
    assert read_answer("verus", spec, block("verus", verus_body), "body").reason is None


@pytest.mark.parametrize(
    "extra,code",
    [
        ("{\n    proof { admit(); }\n    0\n}\n", "admit"),
        ("{\n    assume(false);\n    0\n}\n", "assume"),
        (
            "{\n    helper(a)\n}\n#[verifier::external_body]\nfn helper(a: &Vec<i32>) -> i32 {\n    a[0]\n}\n",
            "external_body",
        ),
    ],
)
def test_hostile_verus_bodies_are_refused_by_the_screen_of_the_assembled_program(extra, code):
    spec = (CORPUS / "spec_max.rs").read_text()
    got = read_answer("verus", spec, block("verus", extra), "body")
    assert got.program is not None
    screen = verus_screen(spec, got.program)
    assert not screen.ok and code in screen.reasons


@pytest.mark.parametrize(
    "extra",
    [
        "{\n    a[0]\n}\nspec fn is_upper_bound(s: Seq<i32>, m: i32) -> bool {\n    true\n}\n",  # a helper again
        "{\n    a[0]\n}\nfn max_element(a: &Vec<i32>) -> (max: i32)\n{\n    a[0]\n}\n",  # the target again
    ],
)
def test_a_verus_body_that_restates_the_spec_is_refused(extra):
    spec = (CORPUS / "spec_max.rs").read_text()
    got = read_answer("verus", spec, block("verus", extra), "body")
    assert got.reason == "parse:redeclares_spec" and got.program is None


def test_full_program_reads_the_answer_as_the_program_as_before():
    program = ABS + ABS_BODY
    got = read_answer("dafny", ABS, block("dafny", program), "full_program")
    assert got.reason is None and got.program == program == got.answer
    # a body alone is no program: the screen refuses it (the target is missing)
    alone = read_answer("dafny", ABS, block("dafny", ABS_BODY), "full_program")
    assert not dafny_screen(ABS, alone.program).ok


def test_the_body_prompt_asks_for_the_body_and_shows_a_body():
    msgs = prompts.solver_messages("dafny", ABS, completion="body")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert "only that function's body" in msgs[0]["content"] and "complete program" not in msgs[0]["content"]
    assert "only the body" in msgs[-1]["content"] and ABS.strip() in msgs[-1]["content"]
    assert msgs[2]["content"] == prompts.block("dafny", prompts.EXAMPLE_BODY["dafny"])
    full = prompts.solver_messages("dafny", ABS, completion="full_program")
    assert "complete program" in full[0]["content"] and full[-1]["content"].startswith("Implement this")
    assert full[2]["content"] == prompts.block("dafny", prompts.EXAMPLE_SOLUTION["dafny"])
    with pytest.raises(Exception, match="psv.solve.completion"):
        prompts.solver_messages("dafny", ABS, completion="diff")


def test_the_body_grammar_opens_with_the_brace_and_the_program_grammar_with_the_spec():
    body = formats.solver_format("dafny", ABS, {"code_chars": 400}, "body")
    check_grammar(body)
    assert '"```dafny\\n{"' in body.grammar and "Abs" not in body.grammar
    program = formats.solver_format("dafny", ABS, {"code_chars": 400}, "full_program")
    assert "method Abs" in program.grammar


def test_the_answer_format_reaches_the_request_and_the_training_example():
    from selfplay.tracks.psv.examples import solver_example
    from selfplay.tracks.psv.game import solve_request

    cfg = {"seed": 1, "psv": {"language": "dafny", "solve": {"completion": "full_program"}}}
    sampling = {"temperature": 0.8, "top_p": 1.0, "max_new_tokens": 16}
    problem = {"id": "abs", "spec": ABS}
    full = solve_request(cfg, problem, "m", 1, sampling, None, {"constrained": True, "code_chars": 100})
    cfg["psv"]["solve"]["completion"] = "body"
    body = solve_request(cfg, problem, "m", 1, sampling, None, {"constrained": True, "code_chars": 100})
    assert full.key != body.key and "only the body" in body.messages[-1]["content"]
    assert body.answer_format.name.endswith("solver_body")
    example = solver_example("dafny", ABS, block("dafny", ABS_BODY), "body")
    assert example["prompt"] == body.messages
