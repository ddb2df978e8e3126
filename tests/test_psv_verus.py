"""The PSV steps with `psv.language: verus`, against the Verus TEST DOUBLE
(tests/fakes/fake_verus.py replays recorded Verus output; Verus cannot run here): the
same pipeline code scores solutions and checks proposals with either verifier."""

from __future__ import annotations

import pytest
from test_psv_steps import write_proposals
from test_verus_checks import FAKE, RECORDED

from selfplay.errors import UserError
from selfplay.pipeline import psv
from selfplay.records import read_jsonl, write_jsonl
from selfplay.tracks.psv import prompts


@pytest.fixture(autouse=True)
def recordings_reachable(monkeypatch):
    """The test double reads its recordings from tests/verus_recorded; a checkout under
    /tmp (CI's clone) is hidden inside the sandbox, so that folder is made reachable too."""
    from selfplay.verus import runner

    real = runner.tool_dirs
    monkeypatch.setattr(runner, "tool_dirs", lambda settings=None: real(settings) + [str(RECORDED)])


SPEC = (
    "use vstd::prelude::*;\n\nverus! {\n\nfn double(x: u32) -> (r: u64)\n    ensures\n        r == 2 * x,\n"
)
HONEST = "{\n    (x as u64) * 2\n}\n\n} // verus!\n"
CHEAT = "{\n    assume(false);\n    0\n}\n\n} // verus!\n"


def cfg():
    return {
        "seed": 3,
        "psv": {
            "language": "verus",
            "verify": {
                "verus": {
                    "command": [str(FAKE)],
                    "timeout": 2.0,
                    "retries": 1,
                    "memory_mb": 2048,
                    "max_processes": 64,
                }
            },
            "difficulty": {"tau_easy": 0.8, "tau_medium": 0.2},
            "iterations": 2,
            "rft": {"train_on": "verified", "max_per_problem": 1},
            "propose": {
                "budget": 2,
                "examples_per_class": 3,
                "input_classes": list(prompts.CLASSES),
                "target_classes": list(prompts.CLASSES),
                "difficulty_labels": True,
                "refresh_examples": True,
                "dedup_scope": "run",
            },
            "methods": {"psv": {}},
        },
    }


def test_verus_solutions_are_screened_then_verified_by_the_double(tmp_path):
    pool = tmp_path / "pool.jsonl"
    write_jsonl(pool, [{"id": "d", "name": "double", "target": "double", "spec": SPEC}])
    outputs = [
        f"```rust\n{SPEC}{HONEST}```",
        f"```rust\n{SPEC}{CHEAT}```",
        f"```rust\n{SPEC.replace('2 * x', '3 * x')}{HONEST}```",
    ]
    gens = tmp_path / "solve.jsonl"
    write_jsonl(
        gens,
        [
            {
                "messages": prompts.solver_messages("verus", SPEC, completion="full_program"),
                "outputs": outputs,
                "meta": {"problem_id": "d"},
            }
        ],
    )
    out = tmp_path / "solutions.jsonl"
    c = cfg()
    c["psv"]["solve"] = {"completion": "full_program"}
    psv.score_generations(c, str(gens), str(pool), str(out))
    row = read_jsonl(out)[0]
    assert [s["verified"] for s in row["samples"]] == [True, False, False]
    assert row["samples"][1]["reason"].startswith("screen:") and "assume" in row["samples"][1]["reason"]
    assert row["samples"][2]["reason"].startswith("screen:")
    assert row["verifier"]["verifier"] == "verus" and row["difficulty"] == "MEDIUM"


def test_verus_bodies_are_assembled_with_the_spec_then_screened_and_verified(tmp_path):
    """psv.solve.completion: body (the release's format): the answer is the body; the
    program the double verifies is the spec with it, main and the block's close."""
    pool = tmp_path / "pool.jsonl"
    write_jsonl(pool, [{"id": "d", "name": "double", "target": "double", "spec": SPEC}])
    body, cheat = HONEST.replace("\n\n} // verus!", ""), CHEAT.replace("\n\n} // verus!", "")
    outputs = [
        f"```rust\n{body}```",
        f"```rust\n{cheat}```",
        f"```rust\n{SPEC}{HONEST}```",
        f"```rust\n{body}fn double(x: u32) -> (r: u64) {{\n    0\n}}\n```",
    ]
    gens = tmp_path / "solve.jsonl"
    write_jsonl(
        gens,
        [
            {
                "messages": prompts.solver_messages("verus", SPEC),
                "outputs": outputs,
                "meta": {"problem_id": "d"},
            }
        ],
    )
    out = tmp_path / "solutions.jsonl"
    c = cfg()
    c["psv"]["solve"] = {"completion": "body"}
    psv.score_generations(c, str(gens), str(pool), str(out))
    row = read_jsonl(out)[0]
    assert [s["verified"] for s in row["samples"]] == [True, False, False, False]
    first = row["samples"][0]
    assert first["answer"] == body and first["solution"].startswith(SPEC)
    assert first["solution"].rstrip().endswith("fn main() {}\n\n} // verus!")
    reasons = [s["reason"] for s in row["samples"]]
    assert reasons[1].startswith("screen:") and "assume" in reasons[1]
    assert reasons[2:] == ["parse:body_not_braced", "parse:redeclares_spec"]


def test_verus_proposals_are_parsed_and_spec_checked(tmp_path):
    pool = tmp_path / "pool.jsonl"
    write_jsonl(pool, [{"id": "d", "name": "double", "target": "double", "spec": SPEC}])
    new = SPEC.replace("double", "triple").replace("2 * x", "3 * x")
    outputs = [f"# Reasoning\nx.\n```rust\n{new}{{\n```", f"# Reasoning\ny.\n```rust\n{SPEC}{{\n```"]
    gens = tmp_path / "propose.jsonl"
    write_proposals(gens, outputs, target="HARD")
    out = tmp_path / "proposals.jsonl"
    stats = psv.check_proposals(cfg(), "psv", str(gens), str(pool), str(out))
    rows = read_jsonl(out)
    assert stats["parsed"] == 2 and rows[1]["reason"] == "duplicate:text"
    assert rows[0]["name"] == "triple" and rows[0]["valid"], rows[0]["reason"]


def test_the_solver_prompt_uses_rust_fences_for_verus():
    text = prompts.solver_messages("verus", SPEC)[-1]["content"]
    assert "```rust\n" in text and "fn double" in text
    with pytest.raises(UserError, match="PSV language"):
        prompts.solver_messages("lean", SPEC)
