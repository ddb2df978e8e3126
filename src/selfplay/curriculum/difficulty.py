"""Instance difficulty as seen by Bob.

A pair (P, Q) is shown to Bob ``n`` times; if he finds a genuine diverging input
``n_correct`` times, the difficulty is ``10 * (1 - n_correct / n)``: 0 when he always
succeeds, 10 when he never does. Prompts and training records use the difficulty
rounded to an integer (halves round up).
"""

from __future__ import annotations

import math
import operator

MIN_DIFFICULTY = 0
MAX_DIFFICULTY = 10
ANY_DIFFICULTY = "Any"  # the level a prompt names when Alice may choose any difficulty


def difficulty(n_correct: int, n: int) -> float:
    """Difficulty on the 0-10 scale from Bob's success count over ``n`` attempts."""
    n = operator.index(n)
    n_correct = operator.index(n_correct)
    if n <= 0:
        raise ValueError(f"difficulty needs at least one attempt by Bob (n={n})")
    if not 0 <= n_correct <= n:
        raise ValueError(f"n_correct must be between 0 and n={n}, got {n_correct}")
    # Integer numerator first: 4 of 10 gives exactly 6.0 (no 1 - 0.4 rounding noise).
    return MAX_DIFFICULTY * (n - n_correct) / n


def round_half_up(x: float) -> int:
    """Nearest integer, with exact halves going up (2.5 -> 3, -2.5 -> -2).

    Written as floor plus a comparison of the fractional part, which is exact for
    floats, unlike ``floor(x + 0.5)`` (which turns 0.49999999999999994 into 1).
    """
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"cannot round a non-finite value: {x}")
    low = math.floor(x)
    return low + 1 if x - low >= 0.5 else low


def round_difficulty(d: float) -> int:
    """Nearest integer difficulty (halves round up), clamped to 0..10."""
    return min(MAX_DIFFICULTY, max(0, round_half_up(d)))


def is_hard(d: float, threshold: float, strictly_above: bool = False) -> bool:
    """True for instances at or above the threshold (SInQ, threshold 5), or strictly
    above it with ``strictly_above`` (paper 000: hard means d > tau, tau = 3)."""
    return d > threshold if strictly_above else d >= threshold


def prompt_level(difficulty: int | str) -> str:
    """The level a prompt's ``Difficulty level: D`` line names: an integer 0-10 (as int
    or digits) or ``"Any"``; ValueError for anything else."""
    if isinstance(difficulty, bool):
        raise ValueError("difficulty must be an integer 0-10 or 'Any', not a bool")
    if isinstance(difficulty, int):
        if not MIN_DIFFICULTY <= difficulty <= MAX_DIFFICULTY:
            raise ValueError(f"difficulty must be within 0-10, got {difficulty}")
        return str(difficulty)
    if isinstance(difficulty, str):
        if difficulty == ANY_DIFFICULTY:
            return difficulty
        if (
            difficulty.isascii()
            and difficulty.isdigit()
            and MIN_DIFFICULTY <= int(difficulty) <= MAX_DIFFICULTY
        ):
            return str(int(difficulty))
    raise ValueError(f"difficulty must be an integer 0-10 or 'Any', got {difficulty!r}")


def difficulty_answer(d: int) -> str:
    """The one-line answer a player trains on when asked to predict an instance's
    difficulty (SInQ's and the Haskell track's difficulty-prediction records)."""
    if isinstance(d, bool) or not isinstance(d, int) or not MIN_DIFFICULTY <= d <= MAX_DIFFICULTY:
        raise ValueError(f"difficulty answer needs an integer 0-10, got {d!r}")
    return f"Difficulty level: {d}"
