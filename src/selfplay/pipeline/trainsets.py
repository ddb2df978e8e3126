"""What every track's training-set steps share: the labelled instances accumulated over
rounds, and Bob's set of his own correct answers. A track supplies only how one
instance and one answer become a training example (its ``examples`` module)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..records import read_jsonl, write_jsonl

log = logging.getLogger(__name__)


def accumulated_labeled(labeled_paths: list[str]) -> list[dict]:
    """Every labelled instance of the rounds so far (paths in round order), each once even
    when met again in a later round, sorted by id so the set does not depend on sharding."""
    items, seen = [], set()
    for path in labeled_paths:
        for inst in read_jsonl(path):
            if inst.get("difficulty") is not None and inst["id"] not in seen:
                seen.add(inst["id"])
                items.append(inst)
    return sorted(items, key=lambda i: i["id"])


def write_bob_trainset(
    labeled_paths: list[str], out: str, example_of: Callable[[dict, str], dict], what: str
) -> dict:
    """Bob's training set: one example per sampled answer of his that was judged correct,
    built by ``example_of(instance, answer_text)``; written to ``out`` in a fixed order."""
    rows = []
    for path in labeled_paths:
        for inst in read_jsonl(path):
            for k, sample in enumerate(inst["bob"]["samples"]):
                if sample["correct"]:
                    rows.append(
                        {
                            "kind": "bob",
                            "instance_id": inst["id"],
                            "sample": k,
                            **example_of(inst, sample["output"]),
                        }
                    )
    rows.sort(key=lambda r: (r["instance_id"], r["sample"]))
    write_jsonl(out, rows)
    log.info("%s bob training set: %d correct answers", what, len(rows))
    return {"examples": len(rows)}
