"""Results over several seeds: mean and spread, a paired t-test, and the bold rule.

Paper 003 (PSV) reports every cell as the mean over 5 seeds with the standard
deviation, and bolds the best method of a column when a paired t-test over the seeds
gives p < 0.05. The helpers here do that for any track. A result list holds one value
per seed, and the lists of different methods are matched by position: entry i of every
list must come from the same seed.

A missing value (``None``, or a float NaN as pandas writes one) anywhere in the input
makes the answer "unknown" rather than being skipped, since dropping a seed from one
method but not another would break the pairing and silently change the estimate.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence

from selfplay.errors import UserError, require_module


def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _floats(values: Iterable) -> list[float] | None:
    """The values as floats, or None when any of them is missing."""
    out = []
    for v in values:
        if v is None:
            return None
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise UserError(f"seed results must be numbers or None, got {v!r}") from None
        if math.isnan(x):
            return None
        out.append(x)
    return out


def mean_std(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (divisor n - 1) of per-seed values.

    - no values: ``(None, None)``;
    - one value: ``(value, None)``, since the spread of a single seed is unknown;
    - any value missing (None or NaN): ``(None, None)``; nothing is dropped.
    """
    xs = _floats(values)
    if not xs:
        return None, None
    mean = math.fsum(xs) / len(xs)
    if len(xs) == 1:
        return mean, None
    # Two passes (deviations from the mean) avoid the cancellation of sum(x^2) - n*mean^2.
    var = math.fsum((x - mean) ** 2 for x in xs) / (len(xs) - 1)
    return mean, math.sqrt(var)


def paired_t_test(a: Sequence[float | None], b: Sequence[float | None]) -> float | None:
    """Two-sided p-value of the paired t-test of ``a`` against ``b`` (seed i with seed i).

    Uses ``scipy.stats.ttest_rel``. Returns None, meaning "no test possible", when
    there are fewer than 2 pairs, when a value is missing, or when every difference is
    exactly zero (the t statistic is 0/0; scipy would give NaN). When the differences
    are all equal but not zero, the t statistic is infinite and the p-value is 0.0:
    the same gap on every seed counts as significant. Raises UserError when the two
    lists have different lengths, since they then cannot be paired by seed.
    """
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise UserError(
            f"paired t-test needs one value per seed on both sides, got {len(a)} and {len(b)} values"
        )
    xs, ys = _floats(a), _floats(b)
    if xs is None or ys is None or len(xs) < 2:
        return None
    if all(x - y == 0.0 for x, y in zip(xs, ys)):
        return None
    stats = require_module("scipy.stats", "pip install scipy (it is pinned in requirements.txt)")
    with warnings.catch_warnings():
        # Zero or near-zero variance of the differences makes scipy warn about division
        # by zero / precision loss; the result (an infinite t, p = 0) is what we document.
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(stats.ttest_rel(xs, ys).pvalue)
    return None if math.isnan(p) else p


def best_by_paired_test(rows: Mapping[str, Sequence[float | None]], alpha: float = 0.05) -> set[str]:
    """The method(s) to bold in one table column (higher values are better).

    ``rows`` maps each method to its per-seed values for the column. The rule: take the
    method with the highest mean; it is bold when, against every other method, the
    paired t-test (:func:`paired_t_test`, two-sided) gives p < ``alpha``. The result
    holds that one method, or is empty. It is empty when there are fewer than two
    methods, fewer than two seeds, any missing value in the column, two or more
    methods sharing the highest mean, or any comparison with p >= alpha (or with no
    p-value at all). Raises UserError when the methods have different numbers of seeds
    or ``alpha`` is not in (0, 1).
    """
    if not 0.0 < alpha < 1.0:
        raise UserError(f"significance level alpha must be between 0 and 1, got {alpha!r}")
    rows = {name: list(values) for name, values in rows.items()}
    lengths = {len(values) for values in rows.values()}
    if len(lengths) > 1:
        detail = ", ".join(f"{name}: {len(values)}" for name, values in rows.items())
        raise UserError(f"every method needs the same number of seeds to pair them, got {detail}")
    if len(rows) < 2 or lengths.pop() < 2:
        return set()
    means = {}
    for name, values in rows.items():
        mean, _ = mean_std(values)
        if mean is None:
            return set()
        means[name] = mean
    top = max(means.values())
    leaders = [name for name, mean in means.items() if mean == top]
    if len(leaders) > 1:
        return set()
    best = leaders[0]
    for other in rows:
        if other == best:
            continue
        p = paired_t_test(rows[best], rows[other])
        if p is None or p >= alpha:
            return set()
    return {best}


def format_mean_std(mean: float | None, std: float | None, digits: int = 2) -> str:
    """``"65.63 ± 1.70"``; just ``"65.63"`` without a std; ``"n/a"`` without a mean.

    No scaling is applied: pass fractions through ``100 * x`` first for percent cells.
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise UserError(f"digits must be a whole number >= 0, got {digits!r}")
    if _is_missing(mean):
        return "n/a"
    text = f"{mean:.{digits}f}"
    if not _is_missing(std):
        text += f" ± {std:.{digits}f}"
    return text


def format_mean_std_markdown(
    mean: float | None, std: float | None, bold: bool = False, digits: int = 2
) -> str:
    """:func:`format_mean_std` for a markdown table, wrapped in ``**`` when ``bold``.

    An ``n/a`` cell is never bold: there is no result to highlight.
    """
    text = format_mean_std(mean, std, digits)
    if bold and not _is_missing(mean):
        return f"**{text}**"
    return text
