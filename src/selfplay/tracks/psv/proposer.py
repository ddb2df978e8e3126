"""The proposer's bookkeeping (paper 003, Sec. 3 and 4): which pool problems it sees,
which difficulty it is asked for, and which of its specs are new.

* Examples: ``per_class`` problems of each input class, drawn from the labelled pool
  (paper: 3 of each of the four classes, k_prop = 12); a class with fewer problems
  gives what it has. Without difficulty labels (Appendix G) the same number is drawn
  from the pool at random, classes ignored, and shown unlabelled.
* Targets: each of the B proposals gets a target class; with several target classes the
  B proposals are spread evenly over them (B/4 each for the paper's uniform setting)
  in a seeded order.
* De-duplication: a proposal is a duplicate when its cleaned text (comments dropped,
  whitespace collapsed) or its target function's name was seen before, within the
  iteration (the released code's scope) or in the whole run (pool + every earlier
  proposal: config ``dedup_scope``).
* Ids: content hashes of the cleaned spec text, so the same spec has the same id in
  every run.
"""

from __future__ import annotations

import random

from ...errors import UserError
from ...records import content_id
from .parse import clean_spec
from .prompts import CLASSES


def spec_id(spec: str) -> str:
    return "s" + content_id(clean_spec(spec), 15)


def sample_examples(
    labelled: list[dict], input_classes: list[str], per_class: int, with_labels: bool, rng: random.Random
) -> list[tuple[str, str | None]]:
    """(spec, class or None) pairs for one proposer prompt, in a seeded order.

    ``labelled``: pool problems with ``spec`` and ``difficulty`` (a class), sorted by id."""
    for c in input_classes:
        if c not in CLASSES:
            raise UserError(f"input class {c!r} is not one of {CLASSES}")
    eligible = [p for p in labelled if p["difficulty"] in input_classes]
    if with_labels:
        chosen = []
        for c in input_classes:
            of_class = [p for p in eligible if p["difficulty"] == c]
            chosen += rng.sample(of_class, min(per_class, len(of_class)))
    else:
        chosen = rng.sample(eligible, min(per_class * len(input_classes), len(eligible)))
    rng.shuffle(chosen)
    return [(p["spec"], p["difficulty"] if with_labels else None) for p in chosen]


def proposal_targets(budget: int, target_classes: list[str], rng: random.Random) -> list[str]:
    """One target class per proposal: the classes in turn (an even split), then shuffled."""
    for c in target_classes:
        if c not in CLASSES:
            raise UserError(f"target class {c!r} is not one of {CLASSES}")
    if budget < 0 or not target_classes:
        raise UserError("proposals need a budget >= 0 and at least one target class")
    targets = [target_classes[i % len(target_classes)] for i in range(budget)]
    rng.shuffle(targets)
    return targets


class Deduplicator:
    """Remembers cleaned spec texts and target names; ``seen`` answers for one proposal."""

    def __init__(self) -> None:
        self.texts: set[str] = set()
        self.names: set[str] = set()

    def add(self, spec: str, target: str | None) -> None:
        self.texts.add(clean_spec(spec))
        if target:
            self.names.add(target)

    def duplicate_of(self, spec: str, target: str | None) -> str | None:
        """'text' or 'name' when seen before, else None."""
        if clean_spec(spec) in self.texts:
            return "text"
        if target and target in self.names:
            return "name"
        return None
