"""Unit tests of the Haskell track's pieces: answer parsing, the game draw, prompts,
proof bookkeeping, training examples and the regimes' arithmetic (paper 000, App. F)."""

from __future__ import annotations

import json

import pytest

from selfplay.errors import UserError
from selfplay.tracks.seq import examples, prompts
from selfplay.tracks.seq.game import choose_game
from selfplay.tracks.seq.parse import parse_alice, parse_bob
from selfplay.tracks.seq.proofs import needs_attempt, settle
from selfplay.tracks.seq.regimes import apply_regime, expected_verified, regime_parameters, yields_from_table6
from selfplay.tracks.seq.translate import parse_translation

Q_BLOCK = "Generated Program `Q`:\n```haskell\nf_alt :: Int -> [Int] -> Int\nf_alt n xs = n + sum xs\n```\n"


def cfg(p=0.5, seed=7):
    return {
        "seed": seed,
        "seq": {"game": {"seq_probability": p, "target_difficulty": 10}, "sources": {"per_round": 500}},
    }


# --------------------------------------------------------------------------- parsing
def test_parse_seq_answer_after_thinking():
    a = parse_alice(
        "<think>Generated Program `Q`: maybe later</think>\n" + Q_BLOCK, "seq", "f", ["Int", "[Int]"]
    )
    assert a.ok and a.name_q == "f_alt" and a.program.startswith("f_alt :: Int -> [Int] -> Int")


def test_parse_sinq_answer_multi_argument_input():
    text = Q_BLOCK + "Diverging Input `x`:\n```haskell\nf 3 [1, -2]\n```\n"
    a = parse_alice(text, "sinq", "f", ["Int", "[Int]"])
    assert a.ok and a.input_args == ["3", "[1, -2]"]
    b = parse_alice(Q_BLOCK + "Diverging Input `x`:\nx = (-1) []\n", "sinq", "f", ["Int", "[Int]"])
    assert b.ok and b.input_args == ["(-1)", "[]"]


def test_q_with_ps_name_is_renamed():
    text = "Generated Program `Q`:\n```haskell\nf :: Int -> Int\nf 0 = 1\nf n = n * f (n - 1)\n```\n"
    a = parse_alice(text, "seq", "f", ["Int"])
    assert a.ok and a.name_q == "f_alt" and "f_alt n = n * f_alt (n - 1)" in a.program and a.notes


@pytest.mark.parametrize(
    "text, game, reason",
    [
        ("no format at all", "seq", "no_program_section"),
        ("Generated Program `Q`:\nf_alt n = n\n", "seq", "no_code_block"),
        ("Generated Program `Q`:\n```haskell\nf_alt n = n\n```\n", "seq", "no_signature"),
        (
            "Generated Program `Q`:\n```haskell\nf_alt :: Int -> Int\nf_alt n = n\n```\n",
            "seq",
            "signature_mismatch",
        ),
        (Q_BLOCK, "sinq", "no_diverging_input"),
        (Q_BLOCK + "Diverging Input `x`:\n3\n", "sinq", "bad_input"),
        (Q_BLOCK + "Diverging Input `x`:\n3 [1\n", "sinq", "bad_input"),
        (
            "Generated Program `Q`:\n```haskell\nf_alt :: Int -> [Int] -> Int\nf_alt n xs = n\n"
            "main :: IO ()\nmain = print 1\n```\n",
            "seq",
            "defines_main",
        ),
        ("x" * 70000, "seq", "too_long"),
    ],
)
def test_malformed_answers_get_a_reason(text, game, reason):
    a = parse_alice(text, game, "f", ["Int", "[Int]"])
    assert not a.ok and a.reason == reason, (a.reason, a.detail)


def test_parse_bob():
    assert parse_bob("<think>hm</think>\nSo.\n# Equivalent?\n**Yes**\n") == ("yes", None)
    assert parse_bob("# Equivalent?\nNo\n\n# Equivalent?\nYes") == ("yes", None)  # the last verdict counts
    assert parse_bob("<think># Equivalent?\nNo</think>\nI am unsure.") == (None, "no_verdict")


def test_parse_translation():
    code, why = parse_translation("Here:\n```haskell\nmodule Main where\ng :: Int -> Int\ng x = x\n```\n")
    assert why is None and code == "g :: Int -> Int\ng x = x\n"
    assert parse_translation("no code") == (None, "no_code_block")
    assert parse_translation("```haskell\na\n```\n```haskell\nb\n```")[1] == "several_code_blocks"


# --------------------------------------------------------------------------- game and prompts
def test_game_draw_is_seeded_and_follows_the_probability():
    games = [choose_game(cfg(), "round1", f"id{i}") for i in range(2000)]
    assert games == [choose_game(cfg(), "round1", f"id{i}") for i in range(2000)]
    assert 0.45 < games.count("seq") / len(games) < 0.55
    assert {choose_game(cfg(p=0.0), "round1", f"id{i}") for i in range(50)} == {"sinq"}
    assert {choose_game(cfg(p=1.0), "round1", f"id{i}") for i in range(50)} == {"seq"}


def test_prompts_keep_the_papers_formats():
    seq_user = prompts.alice_user_message("seq", "f :: Int -> Int -> Int\nf a b = a\n", ["Int", "Int"], 10)
    assert seq_user.startswith("Difficulty level: 10\n") and "t1 = Int\nt2 = Int" in seq_user
    assert "Generated Program `Q`:" in prompts.ALICE_SEQ_SYSTEM
    assert "Diverging Input `x`:" in prompts.ALICE_SINQ_SYSTEM
    assert "# Equivalent?" in prompts.BOB_SYSTEM
    proof = prompts.proof_user_message(
        "f", "f_alt", "f a b = a", "f_alt a b = a", 2, error="binder x1 refined"
    )
    assert "`f x1 x2 == f_alt x1 x2`" in proof and "binder x1 refined" in proof
    assert "{-@ reflect f_alt @-}" in proof
    pred = prompts.difficulty_prediction_messages("sinq", "p", "q")
    assert pred[0]["content"].startswith("Difficulty level: Any") and "inequivalent" in pred[0]["content"]
    with pytest.raises(ValueError):
        prompts.alice_user_message("other", "p", ["Int"], 10)


def test_training_examples():
    inst = {
        "game": "seq",
        "code_p": "f :: Int -> Int\nf x = x\n",
        "code_q": "f_alt :: Int -> Int\nf_alt x = x\n",
        "arg_types": ["Int"],
        "alice_output": "<think>t</think>\nGenerated Program `Q`: ...",
        "difficulty": 6.67,
        "proof": "```haskell\nlemma_f_equiv x = trivial\n```",
    }
    main = examples.alice_main_example(inst, 10)
    assert (
        main["prompt"][1]["content"].startswith("Difficulty level: 10")
        and main["completion"][0]["content"] == inst["alice_output"]
    )
    assert examples.alice_difficulty_example(inst)["completion"][0]["content"] == "Difficulty level: 7"
    assert "lemma_f_equiv" in examples.alice_proof_example(inst, 10)["completion"][0]["content"]


# --------------------------------------------------------------------------- proofs bookkeeping
def _check(cid, attempt, status, accepted=False, feedback=None, reason="r"):
    return {
        "candidate_id": cid,
        "attempt": attempt,
        "gen_key": f"k{attempt}",
        "proof_output": f"proof {attempt}",
        "verdict": {"status": status, "accepted": accepted, "reason": reason, "proof": f"lemma {attempt}"},
        "feedback": feedback,
    }


def test_retries_only_for_fixable_refusals():
    cands = [
        {"id": "a", "status": "awaiting_proof"},
        {"id": "b", "status": "awaiting_proof"},
        {"id": "c", "status": "rejected"},
    ]
    assert [c["id"] for c, fb in needs_attempt(cands, None)] == ["a", "b"]
    previous = [
        _check("a", 1, "rejected", feedback="binder refined"),
        _check("b", 1, "missing", feedback=None),
    ]
    again = needs_attempt(cands, previous)
    assert [(c["id"], fb) for c, fb in again] == [("a", "binder refined")]


def test_settle_takes_the_first_accepted_proof():
    cands = [
        {"id": "a", "status": "awaiting_proof", "verified": False},
        {"id": "b", "status": "awaiting_proof", "verified": False},
        {"id": "c", "status": "verified", "verified": True},
    ]
    out = {
        c["id"]: c
        for c in settle(
            cands,
            [
                [_check("a", 1, "rejected"), _check("b", 1, "missing", reason="nc")],
                [_check("a", 2, "safe", accepted=True)],
            ],
        )
    }
    assert out["a"]["verified"] and out["a"]["proof_attempt"] == 2 and out["a"]["proof"] == "proof 2"
    assert not out["b"]["verified"] and out["b"]["reject_reason"] == "proof:nc"
    assert out["c"]["verified"]


def test_table6_says_liquid_haskell_was_missing_only_when_the_proof_checks_found_it_missing(tmp_path):
    """Table 6 is built in the python image, which never has Liquid Haskell; whether the
    proofs were checked is what the proof-check jobs (haskell image) recorded."""
    import shutil

    from selfplay.records import write_jsonl
    from selfplay.report.seq import table6

    # as in the python image, where checking the machine concluded "missing"
    assert shutil.which("liquid") is None

    def cand(cid, status):
        return {
            "id": cid,
            "game": "seq",
            "verified": status == "accepted",
            "reject_reason": None if status == "accepted" else f"proof:{status}",
            "proof_attempts": [{"attempt": 1, "status": status, "reason": status}],
        }

    checked, unchecked = tmp_path / "checked.jsonl", tmp_path / "unchecked.jsonl"
    write_jsonl(checked, [cand("a", "accepted"), cand("b", "rejected")])
    write_jsonl(unchecked, [cand("c", "missing"), cand("d", "missing")])
    table6({"round1": [str(checked)]}, str(tmp_path / "t.csv"), str(tmp_path / "t.md"))
    assert "Liquid Haskell was not available" not in (tmp_path / "t.md").read_text()
    table6(
        {"round1": [str(checked)], "round2": [str(unchecked)]},
        str(tmp_path / "t.csv"),
        str(tmp_path / "t.md"),
    )
    assert (
        "Liquid Haskell was not available to the proof checks of 2 SEQ attempts"
        in (tmp_path / "t.md").read_text()
    )


# --------------------------------------------------------------------------- regimes
def test_regime_arithmetic_reproduces_appendix_f():
    params = regime_parameters(34 / 1750, 903 / 1750, 500)  # Table 6 of the paper
    assert params["e2"]["seq_probability"] == 0.96  # App. F.3: 96% SEQ
    assert params["e2"]["expected_seq"] == pytest.approx(9.3, abs=0.05)  # eq. 7
    assert params["e2"]["expected_sinq"] == pytest.approx(10.3, abs=0.05)  # eq. 8
    assert params["e2"]["expected_verified"] == pytest.approx(19.6, abs=0.1)
    assert params["e3"]["P_exact"] == pytest.approx(38.04, abs=0.05)  # eq. 9
    assert params["e3"]["P"] == 38
    assert expected_verified(500, 0.5, 0.0194, 0.516) == pytest.approx(500 * (0.5 * 0.0194 + 0.5 * 0.516))
    with pytest.raises(UserError):
        regime_parameters(0.1, 0.0, 500)


def test_regime_from_table6_and_applied_to_config(tmp_path):
    table6 = tmp_path / "table6.csv"
    table6.write_text(
        "Game,Total Validated,Attempts,Yield,Validated by round\nSEQ,34,1750,1.94%,\nSINQ,903,1750,51.6%,\n"
    )
    assert yields_from_table6(str(table6)) == {"seq": 34 / 1750, "sinq": 903 / 1750}
    regimes = tmp_path / "regimes.json"
    regimes.write_text(json.dumps(regime_parameters(34 / 1750, 903 / 1750, 500)))
    c = cfg()
    c["seq"]["regime"] = {"arm": "e3", "from": str(regimes)}
    applied = apply_regime(c, str(regimes))  # read by the job, from its input, not while planning
    assert applied["seq"]["game"]["seq_probability"] == 0.0 and applied["seq"]["sources"]["per_round"] == 38
    assert c["seq"]["sources"]["per_round"] != 38  # the job's config is a copy
    c["seq"]["regime"] = {"arm": "e2", "from": str(tmp_path / "missing.json")}
    with pytest.raises(UserError, match="run E0 first"):
        apply_regime(c, None)


def test_a_reference_set_smaller_than_asked_is_used_whole_and_said(caplog):
    from selfplay.tracks.stages import select_stage_sources

    cfg = {"seed": 1, "seq": {"sources": {"per_round": 500, "eval_train": 2, "eval_test": 2}}}
    sources = [{"id": f"s{i}"} for i in range(3)]
    with caplog.at_level("WARNING", logger="selfplay"):
        chosen = select_stage_sources(sources, "round1", cfg, track="seq", same_every_round=True)
    assert chosen == sources
    assert "seq.sources.per_round asks for 500 source programs but only 3 passed the filters" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="selfplay"):
        assert len(select_stage_sources(sources, "eval_train", cfg, track="seq")) == 2
    assert caplog.text == ""
