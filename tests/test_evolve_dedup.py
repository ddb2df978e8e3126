"""EvolveCoder's semantic de-duplication (paper 002, Sec. 2.1): the grouping and seeded
representatives on hand-built unit vectors whose cosines are worked out in comments, the
blockwise scan against the dense matrix, the Table 1 / Figure 1 / Figure 2 numbers, and
the real packaged MiniLM embeddings on rewordings and on the shipped seed set."""

import json
import math

import numpy as np
import pytest

from selfplay import embeddings as embed
from selfplay.errors import UserError
from selfplay.report import evolve_seeds as report
from selfplay.tracks.evolve import dedup, seeds


def unit(*angles_deg):
    """Unit vectors in the plane at the given angles (cosine of two = cos of the gap)."""
    return np.array(
        [[math.cos(math.radians(a)), math.sin(math.radians(a))] for a in angles_deg], dtype=np.float32
    )


def recs(*sources):
    return [{"id": f"p{i}", "source": s} for i, s in enumerate(sources)]


# --- hand-built embeddings ----------------------------------------------------------


def test_exactly_at_threshold_stays_apart_and_just_above_collapses():
    # [1, 0] . [0.9, y] is exactly float32(0.9): not "greater than 0.9", so both stay.
    at = np.array([[1.0, 0.0], [0.9, math.sqrt(1 - 0.81)]], dtype=np.float32)
    assert float(at[0] @ at[1]) == float(np.float32(0.9))
    result = dedup.deduplicate(recs("a", "b"), at, threshold=0.9)
    assert result.kept == ["p0", "p1"] and result.dropped == [] and result.groups == []
    # 0.9005 > 0.9: one of the two goes.
    above = np.array([[1.0, 0.0], [0.9005, math.sqrt(1 - 0.9005**2)]], dtype=np.float32)
    result = dedup.deduplicate(recs("a", "b"), above, threshold=0.9)
    assert len(result.kept) == 1 and len(result.dropped) == 1
    assert result.dropped[0]["cosine"] == pytest.approx(0.9005, abs=1e-6)


def test_chained_pairs_form_one_group_even_when_the_ends_are_further_apart():
    # 0 deg ~ 20 deg (cos 0.940) and 20 deg ~ 40 deg, but 0 deg . 40 deg = cos 40 = 0.766.
    result = dedup.deduplicate(recs("a", "a", "b", "b"), unit(0, 20, 40, 120), threshold=0.9)
    assert result.groups == [["p0", "p1", "p2"]]
    assert len(result.kept) == 2 and "p3" in result.kept
    rep = next(d["representative"] for d in result.dropped)
    assert all(d["representative"] == rep and d["group_size"] == 3 for d in result.dropped)


def test_representative_is_stable_and_follows_the_seed_not_the_input_order():
    emb = unit(0, 5, 10, 100)
    first = dedup.deduplicate(recs("a", "b", "c", "a"), emb, seed=3)
    again = dedup.deduplicate(recs("a", "b", "c", "a"), emb, seed=3)
    assert first.kept == again.kept and first.dropped == again.dropped
    # reversed input order: the same ids survive
    backwards = dedup.deduplicate(list(reversed(recs("a", "b", "c", "a"))), emb[::-1].copy(), seed=3)
    assert set(backwards.kept) == set(first.kept)
    # over a few seeds every member of the group gets to be the representative
    chosen = {
        next(i for i in dedup.deduplicate(recs("a", "b", "c", "a"), emb, seed=s).kept if i != "p3")
        for s in range(20)
    }
    assert chosen == {"p0", "p1", "p2"}


def test_blockwise_scan_equals_the_dense_matrix():
    rng = np.random.default_rng(7)
    base = rng.normal(size=(12, 16))
    near = base[:5] + 0.05 * rng.normal(size=(5, 16))  # five planted near-duplicates
    emb = embed.normalise_rows(np.vstack([base, near]))
    sources = [f"s{i % 3}" for i in range(len(emb))]
    dense = emb @ emb.T
    np.fill_diagonal(dense, -np.inf)
    i, j = np.nonzero(np.triu(dense > np.float32(0.9), 1))
    want_pairs = sorted(zip(i.tolist(), j.tolist()))
    want_knn = np.sort(dense, axis=1)[:, -4:].mean(axis=1)
    records = [{"id": f"x{n}", "source": s} for n, s in enumerate(sources)]
    results = []
    for block in (1, 2, 5, 17, 100):
        found = dedup.scan(emb, 0.9, 4, sources, block_size=block)
        assert [tuple(p) for p in found.pairs.tolist()] == want_pairs
        np.testing.assert_allclose(found.knn_mean, want_knn, rtol=1e-6)
        res, stats = dedup.summary(records, emb, k=4, block_size=block)
        results.append((res.kept, res.dropped, stats))
    assert len(want_pairs) >= 5
    assert all(r == results[0] for r in results[1:])


def test_table1_figure1_and_figure2_numbers_on_a_hand_built_set():
    # p0 (a) at 0 deg, p1 (b) at 10, p2 (b) at 20, p3 (a) at 90.
    # cosines: p0.p1 = cos 10 = 0.985, p0.p2 = cos 20 = 0.940, p1.p2 = 0.985 -> one group {p0, p1, p2}
    # p3 is far from all (cos 90, 80, 70).
    records = recs("a", "b", "b", "a")
    emb = unit(0, 10, 20, 90)
    result, stats = dedup.summary(records, emb, threshold=0.9, seed=0, k=2, order=["a", "b"])
    assert len(result.kept) == 2 and "p3" in result.kept
    after = dedup.source_counts(records, set(result.kept))
    assert stats["table1"] == [
        {"source": "a", "before": 2, "after": after.get("a", 0)},
        {"source": "b", "before": 2, "after": after.get("b", 0)},
        {"source": "Overall", "before": 4, "after": 2},
    ]
    # Figure 1: half of a's problems (p0) have a match in b; both of b's match p0 in a;
    # inside a nobody has a twin, inside b p1 and p2 are twins.
    fig1 = stats["figure1"]
    assert fig1["sources"] == ["a", "b"]
    assert fig1["overlap"] == [[1.0, 0.5], [1.0, 1.0]]
    assert fig1["within"] == [0.0, 1.0]
    # Figure 2 (k = 2): means of each problem's two best cosines to others.
    c = lambda d: math.cos(math.radians(d))  # noqa: E731
    want = [(c(10) + c(20)) / 2, c(10), (c(10) + c(20)) / 2, (c(70) + c(80)) / 2]
    assert stats["figure2"]["before"] == pytest.approx(want, abs=1e-6)
    # after: two problems left, each has one neighbour: the other one
    kept_rows = [int(i[1:]) for i in result.kept]
    other = float(emb[kept_rows[0]] @ emb[kept_rows[1]])
    assert stats["figure2"]["after"] == pytest.approx([other, other], abs=1e-6)
    json.dumps(stats, allow_nan=False)


def test_lonely_problem_has_no_neighbour_value_and_one_problem_source_is_not_its_own_duplicate():
    result, stats = dedup.summary(recs("a"), unit(0), k=10)
    assert result.kept == ["p0"] and stats["figure2"] == {"before": [None], "after": [None]}
    assert stats["figure1"] == {"sources": ["a"], "overlap": [[1.0]], "within": [0.0], "threshold": 0.9}


def test_bad_inputs_are_refused():
    with pytest.raises(UserError, match="unit L2 norm"):
        dedup.deduplicate(recs("a", "b"), np.array([[2.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(UserError, match="unique"):
        dedup.deduplicate([{"id": "x", "source": "a"}, {"id": "x", "source": "b"}], unit(0, 90))
    with pytest.raises(UserError, match="2 embeddings for 3 records"):
        dedup.deduplicate(recs("a", "b", "c"), unit(0, 90))


def test_report_writes_table_and_figures(tmp_path):
    records = recs("taco", "apps", "apps", "codeforces")
    _, stats = dedup.summary(records, unit(0, 10, 20, 90), k=2, order=seeds.SOURCES)
    frame = report.table1(stats, str(tmp_path / "t.csv"), str(tmp_path / "t.md"))
    assert list(frame.columns) == ["Dataset", "Before filtering", "After filtering", "final dataset"]
    assert frame["Dataset"].tolist() == [
        "TACO",
        "APPS",
        "PrimeIntellect",
        "CodeContests",
        "Codeforces",
        "Overall",
    ]
    assert frame["Before filtering"].tolist() == [1, 2, 0, 0, 1, 4]
    assert frame["After filtering"].tolist()[-1] == 2
    assert frame["final dataset"].tolist() == ["n/a"] * 6
    assert "n/a" in (tmp_path / "t.md").read_text()
    final = {"taco": 1, "apps": 0, "primeintellect": 0, "code_contests": 0, "codeforces": 1}
    frame = report.table1(stats, str(tmp_path / "t2.csv"), str(tmp_path / "t2.md"), final_counts=final)
    assert frame["final dataset"].tolist() == [1, 0, 0, 0, 1, 2]
    heat = report.figure1(stats, str(tmp_path / "f1.png"), str(tmp_path / "f1.pdf"), str(tmp_path / "f1.csv"))
    # paper order: TACO, APPS, PrimeIntellect, CodeContests, Codeforces (only those present)
    assert heat.index.tolist() == ["TACO", "APPS", "Codeforces"]
    assert heat.loc["TACO", "APPS"] == 1.0 and heat.loc["Codeforces", "TACO"] == 0.0
    summary = report.figure2(stats, str(tmp_path / "f2.png"), None, str(tmp_path / "f2.csv"))
    assert summary["problems"].tolist() == [4, 2]
    assert summary.loc[0, "mean"] == pytest.approx(np.mean(stats["figure2"]["before"]))
    for name in ("t.csv", "t.md", "f1.png", "f1.pdf", "f1.csv", "f2.png", "f2.csv"):
        assert (tmp_path / name).stat().st_size > 0


# --- real embeddings (the packaged all-MiniLM-L6-v2) --------------------------------


@pytest.fixture(scope="module")
def encoder():
    return embed.load_encoder()


def test_packaged_model_embeds_unit_float32_rows_deterministically(encoder):
    texts = ["Print the sum of two integers.", "Reverse a string.", "Count the vowels in a word."]
    first = embed.embed_texts(texts, encoder=encoder, batch_size=2)
    again = embed.embed_texts(texts, encoder=encoder, batch_size=3)
    assert first.dtype == np.float32 and first.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(first, again, atol=1e-5)
    assert embed.embed_texts([], encoder=encoder).shape == (0, 384)
    assert embed.resolve_model_path(None) == embed.resolve_model_path("packaged")
    with pytest.raises(UserError, match="does not exist"):
        embed.resolve_model_path("/nonexistent/all-mpnet-base-v2")
    # the error names the config key of the caller that chose the model, not evolve's
    with pytest.raises(UserError, match=r"\(gasp\.novelty\.model\) does not exist"):
        embed.resolve_model_path("/nonexistent/all-mpnet-base-v2", key="gasp.novelty.model")


def test_rewordings_collapse_and_different_problems_stay(encoder):
    problems = [
        {"id": "sum", "source": "taco", "question": "Read n integers and print the sum of the even ones."},
        {"id": "sum2", "source": "apps", "question": "Read n integers and print the sum of all even ones."},
        {"id": "max", "source": "apps", "question": "Read n integers and print the largest of them."},
        {"id": "rev", "source": "codeforces", "question": "Given a string, print it reversed."},
        {"id": "prime", "source": "codeforces", "question": "Decide whether the number n is prime."},
    ]
    emb = embed.embed_texts([p["question"] for p in problems], encoder=encoder)
    result = dedup.deduplicate(problems, emb, seed=0)
    assert result.groups == [["sum", "sum2"]]
    assert {"max", "rev", "prime"} <= set(result.kept) and len(result.kept) == 4


def test_shipped_seed_set_collapses_its_four_planted_near_duplicates(encoder):
    records, skipped = seeds.shipped_records()
    assert skipped == []
    emb = embed.embed_texts([r["question"] for r in records], encoder=encoder)
    result, stats = dedup.summary(records, emb, seed=0, order=seeds.SOURCES)
    pairs = {frozenset(g) for g in result.groups}
    assert pairs == {
        frozenset({"taco/train/0", "apps/train/90000"}),  # sum of evens
        frozenset({"taco/train/2", "code_contests/train/smoke_B. Vowel Count"}),  # vowels
        frozenset(
            {"primeintellect/smoke_pi_2", "code_contests/train/smoke_A. Greatest Common Divisor"}
        ),  # gcd
        frozenset({"primeintellect/smoke_pi_0", "codeforces/smoke/A"}),  # anagrams
    }
    assert len(result.kept) == 21 and stats["table1"][-1] == {"source": "Overall", "before": 25, "after": 21}
    assert all(d["cosine"] > 0.9 for d in result.dropped)
    # the next most similar pair is well below the threshold
    sims = emb @ emb.T
    np.fill_diagonal(sims, -1)
    index = {r["id"]: n for n, r in enumerate(records)}
    for group in result.groups:
        a, b = (index[i] for i in group)
        sims[a, b] = sims[b, a] = -1
    assert sims.max() < 0.85
    before, after = (np.mean(stats["figure2"][w]) for w in ("before", "after"))
    assert after < before
