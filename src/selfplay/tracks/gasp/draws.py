"""The random choices GASP makes uniformly (paper 004), each reproducible.

Every draw comes from its own generator, ``numpy.random.default_rng(derive_seed(seed,
<what is drawn>, *where))``, where ``where`` names the place in the run (iteration,
phase, attempt, ...). So a rerun draws the same, two kinds of draw at the same place
do not share a stream, and a draw at one place does not shift the draws at another.

- ``draw_parents``: the goalpost a lemma is written from, or the accepted lemma a lift
  is written from (Algorithm 1, lines 3 and 13: "h ~ H", "l0 ~ B0"): uniform, with
  replacement, independently per candidate.
- ``draw_axes``: the difficulty axis of each lemma, I/O or f, uniform (Sec. 3.3.1); an
  ablation passes fewer axes (``("f",)`` for "no i/o axis").
- ``draw_forms``: each solver task's form, induction, deduction or abduction, "uniformly
  at random" (Sec. 3.3.2) by default; ``weights`` makes the mix a setting.
- ``draw_pairs``: which private pair a deduction or abduction task shows (the paper does
  not say; uniform over the 3 private pairs).
- ``draw_references``: a few accepted items shown to an unguided proposer, as Absolute
  Zero shows its proposer reference examples: uniform without replacement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from ...records import derive_seed

FORMS = ("induction", "deduction", "abduction")
AXES = ("io", "f")
T = TypeVar("T")


def rng(seed: int, what: str, *where: Any) -> np.random.Generator:
    """The generator of draw ``what`` at place ``where`` of run ``seed``."""
    return np.random.default_rng(derive_seed(seed, what, *where))


def _n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"number of draws must be a non-negative integer, not {n!r}")
    return n


def draw_parents(ids: Sequence[T], n: int, seed: int, *where: Any) -> list[T]:
    """``n`` of ``ids``, uniform with replacement."""
    if _n(n) and not ids:
        raise ValueError("nothing to draw parents from")
    picks = rng(seed, "parents", *where).integers(0, max(len(ids), 1), size=n)
    return [ids[int(i)] for i in picks]


def draw_axes(n: int, seed: int, *where: Any, axes: Sequence[str] = AXES) -> list[str]:
    """A difficulty axis per candidate, uniform over ``axes``."""
    if not axes:
        raise ValueError("no difficulty axes to draw from")
    unknown = [a for a in axes if a not in AXES]
    if unknown:
        raise ValueError(f"unknown difficulty axes {unknown}; known: {', '.join(AXES)}")
    picks = rng(seed, "axes", *where).integers(0, len(axes), size=_n(n))
    return [axes[int(i)] for i in picks]


def draw_forms(n: int, seed: int, *where: Any, weights: Mapping[str, float] | None = None) -> list[str]:
    """A task form per task, with probability proportional to ``weights`` (uniform by
    default). The forms are taken in the fixed order of ``FORMS``, whatever the mapping's
    order, so the same weights always give the same draws."""
    weights = {f: 1.0 for f in FORMS} if weights is None else dict(weights)
    unknown = sorted(set(weights) - set(FORMS))
    if unknown:
        raise ValueError(f"unknown task forms {unknown}; known: {', '.join(FORMS)}")
    w = np.array([float(weights.get(f, 0.0)) for f in FORMS])
    if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError(f"task form weights must be finite, non-negative and not all zero, not {weights}")
    picks = rng(seed, "forms", *where).choice(len(FORMS), size=_n(n), p=w / w.sum())
    return [FORMS[int(i)] for i in picks]


def draw_pairs(n: int, seed: int, *where: Any, choices: int = 3) -> list[int]:
    """An index in ``range(choices)`` per task, uniform (which private pair is shown)."""
    if isinstance(choices, bool) or not isinstance(choices, int) or choices < 1:
        raise ValueError(f"choices must be a positive integer, not {choices!r}")
    return [int(i) for i in rng(seed, "pairs", *where).integers(0, choices, size=_n(n))]


def draw_references(items: Sequence[T], k: int, seed: int, *where: Any) -> list[T]:
    """``k`` distinct items (all of them when fewer), uniform without replacement, in the
    order drawn."""
    take = min(_n(k), len(items))
    if take == 0:
        return []
    picks = rng(seed, "references", *where).choice(len(items), size=take, replace=False)
    return [items[int(i)] for i in picks]
