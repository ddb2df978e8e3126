"""The PSV track's game logic without a verifier: prompts, answer formats, parsing,
difficulty classes, the proposer's bookkeeping and the method settings."""

from __future__ import annotations

import random

import pytest

from selfplay.errors import UserError
from selfplay.llm.answer_format import check_grammar, text_matches
from selfplay.tracks.psv import formats, parse, prompts
from selfplay.tracks.psv.difficulty import difficulty_class, pass_rate
from selfplay.tracks.psv.methods import check_methods, method_names, method_settings
from selfplay.tracks.psv.proposer import Deduplicator, proposal_targets, sample_examples, spec_id

SPEC = "method Abs(x: int) returns (y: int)\n  ensures y >= 0\n  ensures y == x || y == -x\n"
SOLUTION_ANSWER = (
    "```dafny\nmethod Abs(x: int) returns (y: int)\n  ensures y >= 0\n  ensures y == x || y == -x\n"
    "{\n  if x < 0 { y := -x; } else { y := x; }\n}\n```"
)


def cfg(**psv_over):
    psv = {
        "iterations": 3,
        "propose": {
            "budget": 8,
            "examples_per_class": 3,
            "input_classes": list(prompts.CLASSES),
            "target_classes": list(prompts.CLASSES),
            "difficulty_labels": True,
            "refresh_examples": True,
            "dedup_scope": "run",
        },
        "rft": {"train_on": "verified", "max_per_problem": 1},
        "methods": {"psv": {}, "rft": {"propose": False}, "no_verification": {"train_on": "all"}},
        "tables": {"table1": ["base", "fewshot", "rft", "psv"]},
    }
    psv.update(psv_over)
    return {"psv": psv}


# --- difficulty ------------------------------------------------------------------


@pytest.mark.parametrize(
    "rate,expected",
    [
        (1.0, "EASY"),
        (0.8, "EASY"),
        (0.79, "MEDIUM"),
        (0.2, "MEDIUM"),
        (0.19, "HARD"),
        (0.1, "HARD"),
        (0.0, "IMPOSSIBLE"),
    ],
)
def test_difficulty_classes_follow_the_papers_thresholds(rate, expected):
    assert difficulty_class(rate, 0.8, 0.2) == expected


def test_pass_rate_is_the_verified_share_and_bad_thresholds_are_refused():
    assert pass_rate([True, False, False, True]) == 0.5
    with pytest.raises(UserError):
        pass_rate([])
    with pytest.raises(UserError, match="tau_medium < tau_easy"):
        difficulty_class(0.5, 0.2, 0.8)


# --- parsing -------------------------------------------------------------------------


def test_the_solvers_last_dafny_block_is_its_solution():
    out = "Some thought.\n```dafny\nold\n```\nbetter:\n" + SOLUTION_ANSWER + "\ntrailing words"
    parsed = parse.solver_solution(out, "dafny")
    assert parsed.reason is None and parsed.text.startswith("method Abs") and parsed.text.endswith("}\n")


@pytest.mark.parametrize(
    "out,reason",
    [
        ("", "parse:empty_output"),
        ("no code at all", "parse:no_code_block"),
        ("```python\nprint(1)\n```", "parse:wrong_code_language"),
        ("```dafny\nmethod M() {\n", "parse:unterminated_code_block"),
    ],
)
def test_malformed_solver_answers_get_a_reason(out, reason):
    assert parse.solver_solution(out, "dafny").reason == reason


def test_a_proposed_spec_loses_the_open_brace_it_ends_with():
    out = (
        "# Reasoning\nharder.\n```dafny\nmethod Twice(x: int) returns (y: int)\n  ensures y == 2 * x\n{\n```"
    )
    parsed = parse.proposed_spec(out, "dafny")
    assert parsed.text == "method Twice(x: int) returns (y: int)\n  ensures y == 2 * x\n"
    assert parsed.detail == "ended with {"
    assert parse.proposed_spec("```dafny\n{\n```", "dafny").reason == "parse:empty_spec"


def test_cleaning_ignores_comments_and_layout_only():
    a = "method A(x: int) returns (y: int) // note\n  ensures y == x\n"
    b = "method A(x: int)\n returns (y: int)\n/* other */  ensures y == x"
    assert parse.clean_spec(a) == parse.clean_spec(b)
    assert parse.clean_spec(a) != parse.clean_spec(a.replace("y == x", "y == x + 1"))


# --- proposer ------------------------------------------------------------------------


def pool(n_per_class=5):
    return [
        {"id": f"{c}{i}", "spec": f"spec {c} {i}", "difficulty": c}
        for c in prompts.CLASSES
        for i in range(n_per_class)
    ]


def test_labelled_examples_take_per_class_problems_of_each_input_class():
    ex = sample_examples(pool(), list(prompts.CLASSES), 3, True, random.Random(0))
    assert len(ex) == 12
    assert {c: sum(label == c for _, label in ex) for c in prompts.CLASSES} == {c: 3 for c in prompts.CLASSES}
    assert all(spec.split()[1] == label for spec, label in ex)


def test_a_short_class_gives_what_it_has_and_easy_only_input_shows_only_easy():
    short = [p for p in pool() if p["difficulty"] != "HARD"] + [
        {"id": "h", "spec": "spec HARD x", "difficulty": "HARD"}
    ]
    ex = sample_examples(short, list(prompts.CLASSES), 3, True, random.Random(1))
    assert sum(label == "HARD" for _, label in ex) == 1 and len(ex) == 10
    easy = sample_examples(pool(), ["EASY"], 3, True, random.Random(2))
    assert [label for _, label in easy] == ["EASY"] * 3


def test_unlabelled_examples_hide_the_class():
    ex = sample_examples(pool(), list(prompts.CLASSES), 3, False, random.Random(0))
    assert len(ex) == 12 and all(label is None for _, label in ex)


def test_targets_split_the_budget_evenly_over_classes():
    t = proposal_targets(8, list(prompts.CLASSES), random.Random(3))
    assert sorted(t) == sorted(list(prompts.CLASSES) * 2)
    assert proposal_targets(3, ["HARD"], random.Random(3)) == ["HARD"] * 3
    with pytest.raises(UserError):
        proposal_targets(2, ["TRIVIAL"], random.Random(0))


def test_duplicates_by_text_or_by_name():
    d = Deduplicator()
    d.add("method A(x: int) returns (y: int)\n ensures y == x", "A")
    assert d.duplicate_of("method A(x: int) returns (y: int) // same\n  ensures y == x", "A") == "text"
    assert d.duplicate_of("method A(x: int) returns (y: int)\n ensures y == x + 1", "A") == "name"
    assert d.duplicate_of("method B(x: int) returns (y: int)\n ensures y == x + 1", "B") is None


def test_spec_ids_are_content_hashes_of_the_cleaned_text():
    assert spec_id("method A() // c\n") == spec_id("method A()")
    assert spec_id("method A()") != spec_id("method B()")


# --- methods ----------------------------------------------------------------------------


def test_a_method_is_the_shared_settings_with_its_overrides():
    c = cfg()
    assert method_settings(c, "psv")["propose"] is True and method_settings(c, "psv")["budget"] == 8
    assert method_settings(c, "rft")["propose"] is False
    assert method_settings(c, "no_verification")["train_on"] == "all"
    assert method_names(c)[:2] == ["base", "fewshot"]


def test_bad_methods_are_refused_with_the_key():
    with pytest.raises(UserError, match="psv.methods.psv: unknown setting"):
        method_settings(cfg(methods={"psv": {"budgett": 3}}), "psv")
    with pytest.raises(UserError, match="built-in baseline"):
        check_methods(cfg(methods={"base": {}}))
    with pytest.raises(UserError, match="psv.tables.table1"):
        check_methods(cfg(tables={"table1": ["psv", "nope"]}))


# --- prompts ------------------------------------------------------------------------------


def test_the_solver_sees_one_worked_example_then_the_spec():
    msgs = prompts.solver_messages("dafny", SPEC)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert SPEC.strip() in msgs[-1]["content"] and "```dafny" in msgs[-1]["content"]
    shots = prompts.solver_messages("dafny", SPEC, [("s1", "a1"), ("s2", "a2")])
    assert len(shots) == 6 and "a2" in shots[4]["content"]


def test_the_proposer_prompt_labels_examples_unless_the_ablation_hides_them():
    labelled = prompts.proposer_messages("dafny", "HARD", [("method A()", "EASY"), ("method B()", "HARD")])
    text = labelled[0]["content"]
    assert "Problem 1: EASY" in text and "Problem 2: HARD" in text and "is HARD" in text
    hidden = prompts.proposer_messages("dafny", "HARD", [("method A()", None)])[0]["content"]
    assert "Problem 1\n" in hidden and "EASY" not in hidden.split("Problem 1")[1]
    with pytest.raises(UserError):
        prompts.proposer_messages("dafny", "TRIVIAL", [])
    with pytest.raises(UserError):
        prompts.solver_messages("coq", SPEC)


# --- answer formats -----------------------------------------------------------------------


def test_the_solver_format_copies_the_spec_and_leaves_the_body_free(tok):
    fmt = formats.solver_format("dafny", SPEC, {"code_chars": 400}, "full_program")
    check_grammar(fmt)
    assert text_matches(fmt, SOLUTION_ANSWER, *tok)
    changed = SOLUTION_ANSWER.replace("ensures y >= 0", "ensures y >= -1")
    assert not text_matches(fmt, changed, *tok)
    assert not text_matches(fmt, SOLUTION_ANSWER.replace("```dafny", "```python"), *tok)
    # psv.solve.completion: body: the block opens with the body's brace, the spec is not repeated
    body = formats.solver_format("dafny", SPEC, {"code_chars": 400}, "body")
    check_grammar(body)
    assert text_matches(body, "```dafny\n{\n  y := x;\n}\n```", *tok)
    assert not text_matches(body, SOLUTION_ANSWER, *tok)


def test_the_proposer_format_is_reasoning_then_a_block_ending_with_an_open_brace(tok):
    fmt = formats.proposer_format("dafny", {"reasoning_chars": 200, "code_chars": 300})
    check_grammar(fmt)
    good = (
        "# Reasoning\nA harder twist.\n```dafny\nmethod T(x: int) returns (y: int)\n  ensures y > x\n{\n```"
    )
    assert text_matches(fmt, good, *tok)
    assert not text_matches(fmt, good.replace("{\n```", "\n```"), *tok)
    assert not text_matches(fmt, good.replace("# Reasoning", "# Thoughts"), *tok)
    parsed = parse.proposed_spec(good, "dafny")
    assert parsed.reason is None and parsed.text.startswith("method T")
