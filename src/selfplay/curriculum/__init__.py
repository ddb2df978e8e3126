"""Instance difficulty measured against Bob, and the hard/easy training-set selection."""

from .difficulty import difficulty, is_hard, round_difficulty
from .selection import select_hard_and_easy

__all__ = ["difficulty", "is_hard", "round_difficulty", "select_hard_and_easy"]
