"""pass@k (checked against enumeration and exact fractions) and the seed statistics."""

from __future__ import annotations

import itertools
import math
import statistics
import warnings
from fractions import Fraction

import pytest
from scipy import stats

from selfplay.errors import UserError
from selfplay.metrics import (
    best_by_paired_test,
    format_mean_std,
    format_mean_std_markdown,
    mean_pass_at_k,
    mean_std,
    paired_t_test,
    pass_at_k,
    pass_at_ks,
)

# --- pass@k -------------------------------------------------------------------------


def brute_force_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Share of the size-k subsets of n samples (c of them correct) holding a correct one."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(samples, k))
    return Fraction(sum(any(s) for s in subsets), len(subsets))


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_matches_enumerating_every_subset(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            expected = brute_force_pass_at_k(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(float(expected), rel=1e-13, abs=0), (n, c, k)


def test_pass_at_1_is_the_success_rate():
    for n, c in [(10, 3), (100, 37), (7, 1), (3, 2)]:
        assert pass_at_k(n, c, 1) == c / n


def test_pass_at_k_edge_cases_are_exact():
    assert pass_at_k(10, 0, 1) == 0.0 and pass_at_k(10, 0, 10) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0 and pass_at_k(10, 10, 10) == 1.0
    # k = n: all samples are drawn, so one correct sample is enough.
    assert pass_at_k(5, 1, 5) == 1.0
    # Fewer than k wrong samples: every draw of k contains a correct one.
    assert pass_at_k(10, 8, 3) == 1.0
    assert pass_at_k(10, 7, 3) == pytest.approx(1 - 1 / math.comb(10, 3), rel=1e-14)


def test_pass_at_k_is_not_measurable_with_fewer_samples_than_k():
    assert pass_at_k(4, 1, 5) is None
    assert pass_at_k(4, 4, 5) is None
    assert pass_at_k(0, 0, 1) is None
    assert pass_at_k(9, 3, 10) is None


@pytest.mark.parametrize(
    "n, c, k, fragment",
    [
        (-1, 0, 1, "n must be >= 0"),
        (5, -1, 1, "between 0 and n=5"),
        (5, 6, 1, "between 0 and n=5"),
        (5, 2, 0, "k must be >= 1"),
        (5, 2, -3, "k must be >= 1"),
        (5.0, 2, 1, "n must be an integer"),
        (5, True, 1, "c must be an integer"),
        (5, 2, "1", "k must be an integer"),
        (3, 4, 10, "between 0 and n=3"),  # invalid counts are reported even when k > n
    ],
)
def test_pass_at_k_rejects_invalid_input_with_one_line(n, c, k, fragment):
    with pytest.raises(UserError, match=fragment) as info:
        pass_at_k(n, c, k)
    assert "\n" not in str(info.value)


def test_pass_at_k_accepts_numpy_integers():
    import numpy as np

    expected = float(exact_pass_at_k(10, 3, 2))
    assert pass_at_k(np.int64(10), np.int32(3), np.int64(2)) == pytest.approx(expected, rel=1e-14)


def test_pass_at_k_for_n_100_matches_the_exact_fraction():
    # The paper's final evaluation uses n = 100; C(100, 50) is about 1e29.
    for c in [0, 1, 2, 5, 17, 50, 83, 95, 99, 100]:
        for k in [1, 2, 5, 10, 25, 50, 90, 100]:
            expected = float(exact_pass_at_k(100, c, k))
            assert pass_at_k(100, c, k) == pytest.approx(expected, rel=1e-13, abs=0), (c, k)


def test_pass_at_k_keeps_relative_precision_for_large_n_and_small_values():
    # Tiny pass@k: 1 - (product close to 1) would lose digits to cancellation.
    for n, c, k in [(10**6, 1, 2), (10**6, 3, 7), (10**5, 2, 10), (5000, 40, 60)]:
        expected = float(exact_pass_at_k(n, c, k))
        assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=0), (n, c, k)


def test_mean_pass_at_k_averages_over_problems():
    counts = [(10, 3), (10, 0), (10, 10), (20, 5)]
    expected = statistics.fmean(float(exact_pass_at_k(n, c, 5)) for n, c in counts)
    assert mean_pass_at_k(counts, 5) == pytest.approx(expected, rel=1e-14)
    assert mean_pass_at_k(iter(counts), 1) == pytest.approx((0.3 + 0 + 1 + 0.25) / 4, rel=1e-14)


def test_mean_pass_at_k_is_none_without_problems_or_when_one_problem_is_short():
    assert mean_pass_at_k([], 1) is None
    assert mean_pass_at_k([(10, 3), (4, 4), (10, 9)], 5) is None
    assert mean_pass_at_k([(10, 3), (4, 4), (10, 9)], 4) is not None
    with pytest.raises(UserError):
        mean_pass_at_k([(10, 3), (10, 11)], 1)


def test_pass_at_ks_gives_every_k_even_from_an_iterator():
    counts = [(10, 3), (10, 6)]
    got = pass_at_ks(iter(counts), [1, 5, 10, 20])
    assert list(got) == [1, 5, 10, 20]
    assert got[1] == pytest.approx(0.45, rel=1e-14)
    assert got[5] == pytest.approx(mean_pass_at_k(counts, 5), rel=1e-14)
    assert got[10] == 1.0
    assert got[20] is None


# --- mean and standard deviation over seeds --------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [65.1, 66.2, 63.9, 67.4, 65.55],
        [0.2, 0.2, 0.2],
        [1, 2],
        [1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4],  # large offset: a naive sum-of-squares loses it
    ],
)
def test_mean_std_matches_statistics(values):
    mean, std = mean_std(values)
    assert mean == pytest.approx(statistics.fmean(values), rel=1e-14)
    assert std == pytest.approx(statistics.stdev(values), rel=1e-9, abs=1e-15)


def test_mean_std_small_cases_and_missing_values():
    assert mean_std([]) == (None, None)
    assert mean_std([3.5]) == (3.5, None)
    assert mean_std(v for v in [1.0, 3.0]) == (2.0, math.sqrt(2))
    assert mean_std([1.0, None, 3.0]) == (None, None)
    assert mean_std([1.0, float("nan"), 3.0]) == (None, None)
    with pytest.raises(UserError):
        mean_std([1.0, "high"])


# --- paired t-test ---------------------------------------------------------------------


def test_paired_t_test_matches_a_hand_computed_statistic():
    a = [0.61, 0.64, 0.70, 0.66, 0.72]
    b = [0.60, 0.62, 0.67, 0.62, 0.67]  # differences 1, 2, 3, 4, 5 (hundredths)
    # mean(d) = 0.03, sd(d) = 0.01 * sqrt(2.5), t = 0.03 / (sd / sqrt(5)) = 3 / sqrt(0.5)
    t = 3 / math.sqrt(0.5)
    expected = 2 * stats.t.sf(t, df=4)
    assert 0.01 < expected < 0.05
    assert paired_t_test(a, b) == pytest.approx(expected, rel=1e-9)
    assert paired_t_test(b, a) == pytest.approx(expected, rel=1e-9)  # two-sided


def test_paired_t_test_pairs_by_position_not_by_pooling():
    # Large seed-to-seed spread but a steady gain: paired p is small, unpaired would not be.
    a = [0.31, 0.52, 0.73, 0.44, 0.65]
    b = [0.30, 0.50, 0.70, 0.42, 0.62]
    d = [x - y for x, y in zip(a, b)]
    t = statistics.fmean(d) / (statistics.stdev(d) / math.sqrt(len(d)))
    assert paired_t_test(a, b) == pytest.approx(2 * stats.t.sf(abs(t), df=4), rel=1e-9)
    assert paired_t_test(a, b) < 0.01
    assert stats.ttest_ind(a, b).pvalue > 0.5


def test_paired_t_test_degenerate_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from scipy may leak out
        assert paired_t_test([0.5, 0.6, 0.7], [0.5, 0.6, 0.7]) is None  # all differences zero
        assert paired_t_test([2.0, 3.0, 4.0], [1.0, 2.0, 3.0]) == 0.0  # same nonzero gap on every seed
        assert paired_t_test([0.7], [0.1]) is None  # one pair
        assert paired_t_test([], []) is None
        assert paired_t_test([0.7, None, 0.5], [0.1, 0.2, 0.3]) is None
        assert paired_t_test([0.7, 0.6, 0.5], [0.1, float("nan"), 0.3]) is None
    with pytest.raises(UserError, match="3 and 2"):
        paired_t_test([0.1, 0.2, 0.3], [0.1, 0.2])


# --- bold rule -------------------------------------------------------------------------

PSV = [65.1, 66.2, 63.9, 67.4, 65.5]
RFT = [34.0, 35.1, 33.2, 36.0, 34.0]
ALPHAVERUS = [24.0, 23.5, 25.1, 24.2, 23.5]


def test_a_clearly_better_method_is_bold():
    assert best_by_paired_test({"RFT": RFT, "PSV": PSV, "AlphaVerus": ALPHAVERUS}) == {"PSV"}
    assert best_by_paired_test({"AlphaVerus": ALPHAVERUS, "RFT": RFT}) == {"RFT"}


def test_identical_results_are_not_bold():
    assert best_by_paired_test({"A": PSV, "B": list(PSV)}) == set()
    # Same mean, different seeds.
    assert best_by_paired_test({"A": [1.0, 2.0, 3.0], "B": [3.0, 2.0, 1.0], "C": [0.0, 0.0, 0.0]}) == set()


def test_a_higher_but_noisy_mean_is_not_bold():
    a = [60.0, 70.0, 55.0, 72.0, 66.0]
    b = [62.0, 64.0, 58.0, 66.0, 63.0]
    assert statistics.fmean(a) > statistics.fmean(b)
    assert paired_t_test(a, b) >= 0.05  # the premise of this case
    assert best_by_paired_test({"A": a, "B": b}) == set()


def test_the_best_must_beat_every_other_method():
    close = [p - d for p, d in zip(PSV, [0.5, -0.3, 0.8, -0.2, 0.4])]
    assert paired_t_test(PSV, close) >= 0.05
    assert best_by_paired_test({"PSV": PSV, "RFT": RFT, "close": close}) == set()


def test_alpha_sets_the_threshold():
    a = [0.61, 0.64, 0.70, 0.66, 0.72]
    b = [0.60, 0.62, 0.67, 0.62, 0.67]  # p is about 0.013
    assert best_by_paired_test({"a": a, "b": b}) == {"a"}
    assert best_by_paired_test({"a": a, "b": b}, alpha=0.01) == set()
    with pytest.raises(UserError):
        best_by_paired_test({"a": a, "b": b}, alpha=1.5)


def test_no_bold_without_a_comparison_or_with_one_seed_or_missing_values():
    assert best_by_paired_test({}) == set()
    assert best_by_paired_test({"PSV": PSV}) == set()
    assert best_by_paired_test({"PSV": [65.0], "RFT": [34.0]}) == set()
    assert best_by_paired_test({"PSV": PSV, "RFT": RFT[:4] + [None]}) == set()


def test_the_bold_rule_needs_the_same_seeds_for_every_method():
    with pytest.raises(UserError, match="same number of seeds"):
        best_by_paired_test({"PSV": PSV, "RFT": RFT[:4]})


# --- formatting ------------------------------------------------------------------------


def test_format_mean_std():
    assert format_mean_std(65.634, 1.7) == "65.63 ± 1.70"
    assert format_mean_std(65.634, 1.7, digits=1) == "65.6 ± 1.7"
    assert format_mean_std(65.634, 1.7, digits=0) == "66 ± 2"
    assert format_mean_std(65.634, None) == "65.63"
    assert format_mean_std(None, None) == "n/a"
    assert format_mean_std(None, 1.2) == "n/a"
    assert format_mean_std(*mean_std([0.5])) == "0.50"
    with pytest.raises(UserError):
        format_mean_std(1.0, 0.1, digits=-1)


def test_format_mean_std_markdown():
    assert format_mean_std_markdown(65.634, 1.7, bold=True) == "**65.63 ± 1.70**"
    assert format_mean_std_markdown(65.634, 1.7) == "65.63 ± 1.70"
    assert format_mean_std_markdown(24.06, None, bold=True, digits=1) == "**24.1**"
    assert format_mean_std_markdown(None, None, bold=True) == "n/a"
