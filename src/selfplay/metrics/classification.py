"""Binary classification scores and majority voting, for the benchmarks that ask a model
to pick one of two labels (a patch fixes a vulnerability or not, two programs are
equivalent or not, snippet A or B is the correct one).

An answer that could not be read as any label (``None``) is never correct: it counts
against accuracy, and when the gold label is the positive one it is a false negative.
It is not a positive prediction, so it never adds a false positive. Values are
fractions; ``None`` where a score is undefined (no items; precision with no positive
predictions; recall with no positive items; F1 when both are undefined or zero).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from selfplay.errors import UserError


def binary_scores(gold: Sequence[str], predicted: Sequence[str | None], positive: str) -> dict:
    """accuracy, precision, recall, f1 and the confusion counts of ``predicted`` against
    ``gold`` (same length), with ``positive`` the label that counts as positive."""
    if len(gold) != len(predicted):
        raise UserError(f"classification scores: {len(gold)} gold labels but {len(predicted)} predictions")
    tp = sum(g == positive and p == positive for g, p in zip(gold, predicted))
    fp = sum(g != positive and p == positive for g, p in zip(gold, predicted))
    fn = sum(g == positive and p != positive for g, p in zip(gold, predicted))
    correct = sum(g == p for g, p in zip(gold, predicted))
    unparsed = sum(p is None for p in predicted)
    n = len(gold)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None or precision + recall == 0:
        f1 = None if precision is None and recall is None else 0.0
    else:
        f1 = 2 * precision * recall / (precision + recall)
    return {
        "n": n,
        "accuracy": correct / n if n else None,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": n - tp - fp - fn - _unparsed_negatives(gold, predicted, positive),
        "unparsed": unparsed,
    }


def _unparsed_negatives(gold, predicted, positive) -> int:
    """Items whose gold label is negative and whose answer was unreadable: neither a true
    negative nor a false positive."""
    return sum(g != positive and p is None for g, p in zip(gold, predicted))


def majority_vote(answers: Sequence[str | None]) -> str | None:
    """The label given most often among the readable answers; a tie goes to the tied
    label that appeared first in sample order (samples are seeded, so this is
    reproducible). ``None`` when no answer was readable."""
    readable = [a for a in answers if a is not None]
    if not readable:
        return None
    counts = Counter(readable)
    best = max(counts.values())
    return next(a for a in readable if counts[a] == best)
