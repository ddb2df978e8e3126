"""Model tags have one owner (selfplay.evaluate.model_tags): built, parsed, checked and
labelled there, and the adapter each names is found by selfplay.layout. A wrong parse
(a prefix taken for a round, a round out of range accepted, a track's tag taken for a
shared one) fails here."""

from __future__ import annotations

import re

import pytest

from selfplay import layout
from selfplay.errors import UserError
from selfplay.evaluate import model_tags
from selfplay.evaluate.model_tags import ModelTag, TrackTagKind
from selfplay.tracks.gasp import layout as gasp_layout


@pytest.mark.parametrize(
    "tag, parsed",
    [
        ("base", ModelTag("base")),
        ("bob", ModelTag("bob")),
        ("alice", ModelTag("alice")),
        ("alice_rounds", ModelTag("alice_rounds")),
        ("grpo_rounds", ModelTag("grpo_rounds")),
        ("alice_r3", ModelTag("alice_round", 3)),
        ("alice_r12", ModelTag("alice_round", 12)),
        ("grpo_r0", ModelTag("grpo_round", 0)),
        ("alice_r", None),
        ("alice_rx", None),
        ("alice_r1_extra", None),
        ("xalice_r1", None),
        ("grpo_r", None),
        ("bob_r1", None),
        ("gpt4o", None),
        ("ck_gasp_s1_i2", None),
    ],
)
def test_parse_names_the_kind_and_round_or_nothing(tag, parsed):
    assert model_tags.parse(tag) == parsed


def test_built_tags_parse_back():
    for k in (0, 1, 7, 10):
        assert model_tags.parse(model_tags.grpo_round(k)) == ModelTag("grpo_round", k)
    for k in (1, 7, 10):
        assert model_tags.parse(model_tags.alice_round(k)) == ModelTag("alice_round", k)


def test_expand_writes_out_the_config_shorthands_once_each():
    assert model_tags.expand(["base", "alice", "alice_rounds"], 3) == [
        "base",
        "alice_r3",
        "alice_r1",
        "alice_r2",
    ]
    assert model_tags.expand(["grpo_rounds", "grpo_r1"], 2) == ["grpo_r0", "grpo_r1", "grpo_r2"]
    assert model_tags.expand(["bob", "gpt4o"], 5) == ["bob", "gpt4o"]


@pytest.mark.parametrize(
    "tag", ["base", "bob", "alice", "alice_r1", "alice_r3", "grpo_r0", "grpo_r3", "gpt4o"]
)
def test_check_accepts_the_models_a_track_has(tag):
    model_tags.check(tag, 3, others=("gpt4o",))


@pytest.mark.parametrize("tag", ["alice_r0", "alice_r4", "grpo_r4", "alice_r", "claude", "alice_rounds_x"])
def test_check_refuses_a_round_out_of_range_or_an_unknown_tag(tag):
    with pytest.raises(UserError, match=f"unknown model '{tag}'"):
        model_tags.check(tag, 3, others=("gpt4o",))


@pytest.mark.parametrize(
    "tag, text",
    [
        ("base", "Base"),
        ("bob", "Trained Bob"),
        ("alice", "Trained Alice"),
        ("alice_r2", "Alice round 2"),
        ("grpo_r0", "GRPO on r0"),
        ("gpt4o", "gpt4o"),
        # config shorthands are not rounds (a prefix test read "alice_rounds" as round "ounds")
        ("alice_rounds", "alice_rounds"),
        ("grpo_rounds", "grpo_rounds"),
    ],
)
def test_label(tag, text):
    assert model_tags.label(tag) == text


def test_a_paper_may_name_a_tag_its_own_way():
    assert model_tags.label("base", {"base": "Base model"}) == "Base model"
    assert model_tags.label("grpo_r2", {"base": "Base model"}) == "GRPO on r2"


def test_rounds_of_picks_one_numbered_kind():
    tags = ["base", "grpo_r0", "alice_r2", "grpo_r3", "grpo_rounds", "gpt4o"]
    assert model_tags.rounds_of(tags, "grpo_round") == {"grpo_r0": 0, "grpo_r3": 3}
    assert model_tags.rounds_of(tags, "alice_round") == {"alice_r2": 2}


def test_a_track_kind_builds_and_parses_its_own_tags_only():
    kind = TrackTagKind("ck_{method}_s{seed}_i{iteration}", method=str, seed=int, iteration=int)
    tag = kind.build(method="gasp_real_rl", seed=3, iteration=12)
    assert tag == "ck_gasp_real_rl_s3_i12"
    assert kind.parse(tag) == {"method": "gasp_real_rl", "seed": 3, "iteration": 12}
    for other in ("ck_gasp_s3", "ck_gasp_s3_i", "ck_Gasp_s1_i1", "base", "alice_r1", "ck_gasp_s1_i2x"):
        assert kind.parse(other) is None
    with pytest.raises(ValueError):
        TrackTagKind("ck_{method}_s{seed}", method=str)
    # a template that would match shared tags still never claims them
    assert TrackTagKind("{who}", who=str).parse("base") is None


def test_gasp_checkpoint_tags_go_through_the_owner():
    assert gasp_layout.model_tag("no_io_axis", 2, 40) == "ck_no_io_axis_s2_i40"
    assert gasp_layout.parse_tag("ck_no_io_axis_s2_i40") == ("no_io_axis", 2, 40)
    assert gasp_layout.parse_tag("azr") is None and gasp_layout.parse_tag("grpo_r1") is None


# --- the adapter a tag names (selfplay.layout) ------------------------------------

CFG = {
    "seq": {
        "experiment": "e0",
        "rounds": 3,
        "shards": 2,
        "benchmarks": {"models": ["base"], "runs": {}, "other_models": [{"tag": "gpt4o"}]},
    }
}


@pytest.mark.parametrize(
    "tag, adapter",
    [
        ("base", []),
        ("gpt4o", []),
        ("bob", "results/seq/e0/bob/adapter"),
        ("alice", "results/seq/e0/round3/adapter_alice"),
        ("alice_r2", "results/seq/e0/round2/adapter_alice"),
        ("grpo_r0", "results/seq/e0/grpo/r0/adapter"),
    ],
)
def test_the_adapter_each_tag_names(tag, adapter):
    assert layout.eval_adapter(CFG, "seq", tag) == adapter


def test_a_track_kind_is_asked_first_and_an_unknown_tag_fails():
    def ck(tag):
        parsed = gasp_layout.parse_tag(tag)
        return f"ck/{parsed[0]}/{parsed[2]}" if parsed else None

    assert layout.eval_adapter(CFG, "seq", "ck_gasp_s1_i4", ck) == "ck/gasp/4"
    assert layout.eval_adapter(CFG, "seq", "bob", ck) == "results/seq/e0/bob/adapter"
    for bad in ("alice_rounds", "alice_rx", "claude"):
        with pytest.raises(ValueError, match="unknown model tag"):
            layout.eval_adapter(CFG, "seq", bad, ck)


def test_wildcard_patterns_split_served_models_from_loaded_ones():
    any_tag = r"[a-z][a-z0-9_]*"
    assert model_tags.wildcard_patterns([], any_tag) == {"own": any_tag}
    patterns = model_tags.wildcard_patterns(["o1", "r1"], any_tag)
    own, client = (re.compile(patterns[k] + "/greedy") for k in ("own", "client"))
    for tag in ("base", "bob", "alice_r1", "o1x", "r1_distill"):
        assert own.fullmatch(f"{tag}/greedy") and not client.fullmatch(f"{tag}/greedy")
    for tag in ("o1", "r1"):
        assert client.fullmatch(f"{tag}/greedy") and not own.fullmatch(f"{tag}/greedy")
