"""Difficulty from the solver's pass rate (paper 003, Sec. 3): r = verified / k over the
k samples of one iteration, and four classes with thresholds tau_E > tau_M:

EASY r >= tau_E;  MEDIUM tau_M <= r < tau_E;  HARD 0 < r < tau_M;  IMPOSSIBLE r = 0.
"""

from __future__ import annotations

from ...errors import UserError
from .prompts import CLASSES


def pass_rate(verified: list[bool]) -> float:
    if not verified:
        raise UserError("a pass rate needs at least one sample")
    return sum(bool(v) for v in verified) / len(verified)


def difficulty_class(rate: float, tau_easy: float, tau_medium: float) -> str:
    if not 0.0 < tau_medium < tau_easy <= 1.0:
        raise UserError(
            f"difficulty thresholds need 0 < tau_medium < tau_easy <= 1, got "
            f"tau_medium={tau_medium}, tau_easy={tau_easy}"
        )
    if not 0.0 <= rate <= 1.0:
        raise UserError(f"a pass rate lies in [0, 1], got {rate}")
    if rate >= tau_easy:
        return "EASY"
    if rate >= tau_medium:
        return "MEDIUM"
    return "HARD" if rate > 0 else "IMPOSSIBLE"


def class_counts(classes: list[str]) -> dict[str, int]:
    return {c: sum(x == c for x in classes) for c in CLASSES}
