"""The unbiased pass@k estimator (Chen et al., 2021), and its mean over problems.

With ``n`` samples drawn for a problem, ``c`` of them correct, pass@k estimates the
chance that at least one of ``k`` samples is correct as

    1 - C(n - c, k) / C(n, k)

i.e. one minus the share of size-``k`` subsets of the ``n`` samples that hold no
correct sample. The binomials are never formed: the ratio equals the product
``prod_{i=n-c+1}^{n} (1 - k / i)``, which is summed in log space (``log1p``) and turned
back with ``expm1``, so n = 100 or n = 10**6 costs O(c) float operations and a small
pass@k keeps its relative precision.

pass@k is "not measurable" (``None``) when fewer than ``k`` samples were drawn; a
table shows such a cell as n/a rather than inventing a number.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable

from selfplay.errors import UserError


def _count(value, name: str) -> int:
    """``value`` as an int (numpy integers allowed), or a UserError naming ``name``."""
    if isinstance(value, bool):
        raise UserError(f"pass@k: {name} must be an integer count, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise UserError(f"pass@k: {name} must be an integer count, got {value!r}") from None


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k for one problem from ``n`` samples of which ``c`` are correct.

    Returns a float in [0, 1] (exactly 0.0 when c == 0 and exactly 1.0 when fewer than
    ``k`` samples are wrong), or ``None`` when ``k > n``: with fewer samples than ``k``
    the estimator is undefined. Raises UserError when a count is not an integer,
    ``n`` or ``c`` is negative, ``c > n``, or ``k < 1``.
    """
    n, c, k = _count(n, "n"), _count(c, "c"), _count(k, "k")
    if n < 0:
        raise UserError(f"pass@k: the number of samples n must be >= 0, got n={n}")
    if not 0 <= c <= n:
        raise UserError(f"pass@k: the number of correct samples c must be between 0 and n={n}, got c={c}")
    if k < 1:
        raise UserError(f"pass@k: k must be >= 1, got k={k}")
    if k > n:
        return None
    if c == 0:
        return 0.0
    if k == 1:
        # The product below reduces to c / n; dividing directly keeps it exact-rounded.
        return c / n
    if n - c < k:
        # Every size-k subset contains a correct sample.
        return 1.0
    # C(n-c, k) / C(n, k) = prod over i = n-c+1 .. n of (i - k) / i; each factor is in
    # (0, 1) here because i > n - c >= k.
    log_ratio = math.fsum(math.log1p(-k / i) for i in range(n - c + 1, n + 1))
    return -math.expm1(log_ratio)


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean pass@k over problems, each given as ``(n, c)``.

    ``None`` when there are no problems, or when any problem has fewer than ``k``
    samples (a mean over only the measurable problems would quietly change the
    benchmark). Invalid counts raise UserError as in :func:`pass_at_k`.
    """
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values or any(v is None for v in values):
        return None
    return math.fsum(values) / len(values)


def pass_at_ks(counts: Iterable[tuple[int, int]], ks: Iterable[int]) -> dict[int, float | None]:
    """``{k: mean_pass_at_k(counts, k)}`` for each ``k`` in ``ks`` (counts may be an iterator)."""
    counts = list(counts)
    return {_count(k, "k"): mean_pass_at_k(counts, k) for k in ks}
