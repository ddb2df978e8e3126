"""The PSV track's steps on real Dafny 2.3: preparing shipped problems, scoring solver
samples (screen + verifier), the RFT training set, checking proposals and growing the
pool. Generation files are written by hand here; the workflow tests generate for real."""

from __future__ import annotations

import pytest

from selfplay.dafny.runner import dafny_available
from selfplay.errors import UserError
from selfplay.pipeline import psv
from selfplay.records import read_jsonl, write_jsonl
from selfplay.tracks.psv import prompts

pytestmark = pytest.mark.skipif(
    not dafny_available(),
    reason="Dafny 2.3 and z3 4.8.5 are not installed (scripts/install_system_test.sh installs them)",
)

ABS = "method Abs(x: int) returns (y: int)\n  ensures y >= 0\n  ensures y == x || y == -x\n"
BODY = "{\n  if x < 0 {\n    y := -x;\n  } else {\n    y := x;\n  }\n}\n"


def answer(program: str) -> str:
    return f"```dafny\n{program}```"


def cfg(tmp_path=None, **methods):
    return {
        "seed": 7,
        "psv": {
            "language": "dafny",
            "experiment": "t",
            "problem_sets": {
                "seed": {"source": "embedded", "split": "seed", "difficulties": ["easy"], "count": 3}
            },
            "verify": {
                "dafny": {
                    "time_limit": 10,
                    "run_timeout": 60,
                    "per_job_timeout": 20,
                    "memory_mb": 2048,
                    "batch_size": 24,
                    "workers": 2,
                }
            },
            "difficulty": {"tau_easy": 0.8, "tau_medium": 0.2},
            "rft": {"train_on": "verified", "max_per_problem": 1},
            "iterations": 2,
            "propose": {
                "budget": 4,
                "examples_per_class": 3,
                "input_classes": list(prompts.CLASSES),
                "target_classes": list(prompts.CLASSES),
                "difficulty_labels": True,
                "refresh_examples": True,
                "dedup_scope": "run",
            },
            "methods": methods or {"psv": {}, "no_verification": {"train_on": "all"}},
        },
    }


def write_proposals(path, outputs: list[str], target: str = "EASY") -> None:
    """A recorded propose step: one generation per output, each asking for ``target``."""
    rows = [
        {
            "messages": [{"role": "user", "content": "x"}],
            "outputs": [o],
            "meta": {"index": i, "target": target},
        }
        for i, o in enumerate(outputs)
    ]
    write_jsonl(path, rows)


def test_shipped_problems_are_checked_and_written_without_solutions(tmp_path):
    out = tmp_path / "seed.jsonl"
    psv.prepare_problem_set(cfg(), "seed", str(out))
    rows = read_jsonl(out)
    assert len(rows) == 3
    assert all(
        "solution" not in r and r["spec"].lstrip().startswith(("method", "function", "predicate"))
        for r in rows
    )


def test_a_shipped_problem_whose_reference_fails_stops_the_run_with_its_name(tmp_path, monkeypatch):
    bad = {
        "id": "x1",
        "name": "broken_abs",
        "target": "Abs",
        "spec": ABS,
        "difficulty": "easy",
        "solution": ABS + "{\n  y := x;\n}\n",
    }
    monkeypatch.setattr(psv, "_embedded_problems", lambda c, split: [bad])
    with pytest.raises(UserError, match="broken_abs.*reference solution does not verify"):
        psv.prepare_problem_set(cfg(), "seed", str(tmp_path / "s.jsonl"))


def test_the_solvers_worked_example_verifies():
    from selfplay.dafny.checks import verify_solutions

    rec = verify_solutions(
        [(prompts.EXAMPLE_SPEC["dafny"] + "\n", prompts.EXAMPLE_SOLUTION["dafny"] + "\n")]
    )[0]
    assert rec["verified"], rec["reason"]


# the same five answers in each answer format (psv.solve.completion): the body format
# gets the target's body only, the spec is put in front of it before the screen
ANSWERS = {
    "full_program": [
        answer(ABS + BODY),  # verified
        answer(ABS + "{\n  assume false;\n}\n"),  # escape hatch
        answer(ABS.replace("y >= 0", "y >= -5") + "{\n  y := x;\n}\n"),  # weakened spec
        "I would write it like this, but no code block.",  # malformed
        answer(ABS + "{\n  // no need to assume anything here\n" + BODY[2:]),  # mentions assume: fine
    ],
    "body": [
        answer(BODY),
        answer("{\n  assume false;\n}\n"),
        answer("{\n  y := x;\n}\n" + ABS.replace("y >= 0", "y >= -5") + "{\n  y := x;\n}\n"),
        "I would write it like this, but no code block.",
        answer("{\n  // no need to assume anything here\n" + BODY[2:]),
    ],
}


@pytest.fixture(params=["full_program", "body"])
def scored(tmp_path, request):
    problems = tmp_path / "pool.jsonl"
    write_jsonl(problems, [{"id": "abs", "name": "abs_value", "target": "Abs", "spec": ABS}])
    gens = tmp_path / "solve.jsonl"
    write_jsonl(
        gens,
        [
            {
                "messages": prompts.solver_messages("dafny", ABS, completion=request.param),
                "outputs": ANSWERS[request.param],
                "meta": {"problem_id": "abs"},
                "answer_format": None,
            }
        ],
    )
    out = tmp_path / "solutions.jsonl"
    c = cfg()
    c["psv"]["solve"] = {"completion": request.param}
    psv.score_generations(c, str(gens), str(problems), str(out))
    return read_jsonl(out)[0]


def test_samples_are_screened_and_verified_with_a_reason_each(scored):
    flags = [s["verified"] for s in scored["samples"]]
    assert flags == [True, False, False, False, True]
    reasons = [s["reason"] for s in scored["samples"]]
    assert "assume" in reasons[1] and reasons[1].startswith("screen:")
    assert reasons[3] == "parse:no_code_block"
    if scored["completion"] == "body":  # a body that declares Abs again is refused before the screen
        assert reasons[2] == "parse:redeclares_spec" and not scored["samples"][2]["parsed"]
        assert scored["samples"][0]["solution"] == ABS + BODY  # what was verified: spec + body
        assert scored["samples"][0]["answer"] == BODY
    else:
        assert reasons[2].startswith("screen:") and scored["samples"][0]["solution"] == ABS + BODY
    assert (scored["n"], scored["c"], scored["pass_rate"], scored["difficulty"]) == (5, 2, 0.4, "MEDIUM")


def test_rft_keeps_one_verified_solution_per_problem_as_generated(scored, tmp_path):
    sols = tmp_path / "solutions.jsonl"
    write_jsonl(sols, [scored])
    out = tmp_path / "train.jsonl"
    stats = psv.solver_trainset(cfg(), "psv", str(sols), str(out))
    rows = read_jsonl(out)
    assert stats["examples"] == 1 and rows[0]["verified"]
    assert rows[0]["completion"][0]["content"] == scored["outputs"][0]
    assert rows[0]["prompt"][-1]["content"].endswith(prompts.block("dafny", ABS))
    # -verification: the first parsed sample, verified or not
    psv.solver_trainset(cfg(), "no_verification", str(sols), str(out))
    assert read_jsonl(out)[0]["completion"][0]["content"] == scored["outputs"][0]
    scored["samples"][0]["verified"] = False  # a solution that no longer verifies is never trained on
    write_jsonl(sols, [scored])
    assert psv.solver_trainset(cfg(), "psv", str(sols), str(out))["examples"] == 1  # the 5th sample
    assert read_jsonl(out)[0]["completion"][0]["content"] == scored["outputs"][4]


def test_proposals_are_parsed_deduplicated_spec_checked_and_join_the_pool(tmp_path):
    pool = tmp_path / "pool.jsonl"
    write_jsonl(pool, [{"id": "abs", "name": "abs_value", "target": "Abs", "spec": ABS}])
    new = "method Twice(x: int) returns (y: int)\n  ensures y == 2 * x\n"
    outputs = [
        f"# Reasoning\neasy.\n```dafny\n{new}{{\n```",  # valid, new
        f"# Reasoning\nsame.\n```dafny\n{ABS}{{\n```",  # duplicate text
        "# Reasoning\nname.\n```dafny\nmethod Abs(x: int) returns (y: int)\n  ensures y > x\n{\n```",  # same name
        "# Reasoning\nvacuous.\n```dafny\nmethod V(x: int) returns (y: int)\n  requires x > 0 && x < 0\n"
        "  ensures y == 1\n{\n```",  # unsatisfiable
        "# Reasoning\nno block",  # unparsed
        f"# Reasoning\nagain.\n```dafny\n{new}{{\n```",  # repeat of the 1st
    ]
    gens = tmp_path / "propose.jsonl"
    write_proposals(gens, outputs)
    out = tmp_path / "proposals.jsonl"
    stats = psv.check_proposals(cfg(), "psv", str(gens), str(pool), str(out))
    rows = read_jsonl(out)
    assert stats == {"proposed": 6, "parsed": 5, "valid": 4, "unique": 1}
    assert [r["reason"] for r in rows][1:3] == ["duplicate:text", "duplicate:name"]
    assert rows[3]["reason"] and not rows[3]["valid"] and rows[4]["reason"] == "parse:no_code_block"
    assert rows[5]["reason"] == "duplicate:text" and rows[5]["valid"] and not rows[5]["unique"]
    grown = tmp_path / "pool1.jsonl"
    assert psv.grow_pool(str(pool), str(out), 0, str(grown)) == 2
    added = read_jsonl(grown)[1]
    assert added["spec"] == new and added["origin"] == "iter0" and added["id"] == rows[0]["id"]


def test_an_invalid_proposal_does_not_block_a_valid_one_of_the_same_name(tmp_path):
    """The release de-duplicates valid proposals only; checking names before the spec
    check let an unsatisfiable Neg keep out a later valid Neg."""
    pool = tmp_path / "pool.jsonl"
    write_jsonl(pool, [{"id": "abs", "name": "abs_value", "target": "Abs", "spec": ABS}])
    outputs = [
        "```dafny\nmethod Neg(x: int) returns (y: int)\n  requires x > 0 && x < 0\n  ensures y == 1\n{\n```",
        "```dafny\nmethod Neg(x: int) returns (y: int)\n  ensures y == -x\n{\n```",
    ]
    gens = tmp_path / "propose.jsonl"
    write_proposals(gens, outputs)
    out = tmp_path / "proposals.jsonl"
    assert psv.check_proposals(cfg(), "psv", str(gens), str(pool), str(out)) == {
        "proposed": 2,
        "parsed": 2,
        "valid": 1,
        "unique": 1,
    }
    first, second = read_jsonl(out)
    assert not first["valid"] and not first["reason"].startswith("duplicate")
    assert second["valid"] and second["unique"] and second["reason"] is None
    assert psv.grow_pool(str(pool), str(out), 0, str(tmp_path / "pool1.jsonl")) == 2


def test_table6_takes_the_earliest_verified_solution_of_each_problem(scored, tmp_path):
    later = dict(scored, outputs=list(scored["outputs"]))
    later["outputs"][0] = later["outputs"][0].replace("y := -x;", "y := 0 - x;")
    later["samples"] = [dict(s) for s in scored["samples"]]
    later["samples"][0]["solution"] = later["samples"][0]["solution"].replace("y := -x;", "y := 0 - x;")
    first, second = tmp_path / "iter0.jsonl", tmp_path / "iter1.jsonl"
    write_jsonl(first, [scored])
    write_jsonl(second, [later])
    out = tmp_path / "t6.jsonl"
    assert psv.table6_trainset(cfg(), [str(first), str(second)], str(out))["examples"] == 1
    assert read_jsonl(out)[0]["completion"][0]["content"] == scored["outputs"][0]


def test_a_problem_is_never_its_own_worked_example(tmp_path):
    """The prompting baseline's worked examples leave out the problem being evaluated (as
    the release does); the count is still filled from the other problems."""
    seen = {}

    def fake_generate(cfg, model_dir, requests, metas, out, what):
        seen["metas"], seen["messages"] = metas, [r.messages for r in requests]

    sols = tmp_path / "seed_solutions.jsonl"
    rows = []
    for pid, name in (("a", "Alpha"), ("b", "Beta"), ("c", "Gamma")):
        spec = f"method {name}(x: int) returns (y: int)\n  ensures y == x\n"
        rows.append(
            {
                "problem_id": pid,
                "spec": spec,
                "samples": [{"verified": True, "solution": f"{spec}{{ y := x; }}"}],
            }
        )
    write_jsonl(sols, rows)
    problems = tmp_path / "problems.jsonl"
    write_jsonl(problems, [{"id": "b", "spec": rows[1]["spec"]}, {"id": "z", "spec": "method Z() {}\n"}])
    c = cfg()
    c["psv"]["fewshot"] = {"exemplars": 2}
    c["psv"]["evaluation"] = {
        "samples": 1,
        "sampling": {"temperature": 0.8, "top_p": 1.0, "max_new_tokens": 8},
    }
    c["psv"]["solve"] = {"answer_format": {"constrained": False}}
    import selfplay.pipeline.psv as module

    original = module.generate_to_file
    module.generate_to_file = fake_generate
    try:
        psv.eval_generate(c, "fewshot", str(problems), None, None, str(tmp_path / "out.jsonl"), str(sols))
    finally:
        module.generate_to_file = original
    assert [m["exemplars"] for m in seen["metas"]] == [2, 2]
    text_b = "\n".join(m["content"] for m in seen["messages"][0])
    assert text_b.count("method Beta") == 1  # only as the problem to solve
    assert "method Alpha" in text_b and "method Gamma" in text_b
    text_z = "\n".join(m["content"] for m in seen["messages"][1])
    assert "method Alpha" in text_z and "method Beta" in text_z and "method Gamma" not in text_z
