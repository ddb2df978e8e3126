"""Bob's accuracy on labelled instances, as both papers report it: the share of all his
sampled answers that were judged correct (a diverging input that really diverges, or the
right equivalence verdict), over every instance he answered."""

from __future__ import annotations


def bob_accuracy(labeled: list[dict]) -> tuple[float | None, int, int]:
    """(percent correct or None when he answered nothing, instances, sampled answers)."""
    samples = sum(inst["bob"]["n"] for inst in labeled)
    correct = sum(inst["bob"]["n_correct"] for inst in labeled)
    return (100.0 * correct / samples if samples else None), len(labeled), samples
