"""Stages and shards, shared by every track.

A *stage* is one pass of Alice over source programs: ``round1`` .. ``roundR`` during
training, or ``eval_train`` / ``eval_test`` for the intrinsic evaluation. Sources are
drawn with a seed derived from the config seed, the track and the stage, so a rerun
(or a replay from a bundle) sees the same draws; shards split a stage's sources
round-robin.
"""

from __future__ import annotations

import logging
import random
import re

from ..errors import UserError
from ..records import derive_seed

log = logging.getLogger("selfplay")

STAGE_RE = re.compile(r"^(round(?P<round>[1-9][0-9]*)|eval_(?P<split>train|test))$")


def parse_stage(stage: str) -> tuple[str, int | None, str | None]:
    """('round', r, None) or ('eval', None, split)."""
    m = STAGE_RE.match(stage)
    if not m:
        raise UserError(f"unknown stage {stage!r} (expected roundN, eval_train or eval_test)")
    if m.group("round"):
        return "round", int(m.group("round")), None
    return "eval", None, m.group("split")


def stage_source_split(stage: str) -> str:
    kind, _, split = parse_stage(stage)
    return "train" if kind == "round" else split


def select_stage_sources(
    sources: list[dict], stage: str, cfg: dict, track: str = "sinq", same_every_round: bool = False
) -> list[dict]:
    """The source programs a stage uses (seeded sample, stable across reruns); the
    counts are config ``<track>.sources.per_round`` / ``eval_train`` / ``eval_test``.

    With ``same_every_round`` every round draws the same set (paper 000's reference set
    D of P programs, Appendix E.2); otherwise each round draws its own."""
    kind, r, split = parse_stage(stage)
    src_cfg = cfg[track]["sources"]
    count = src_cfg["per_round"] if kind == "round" else src_cfg[f"eval_{split}"]
    ordered = sorted(sources, key=lambda s: s["id"])
    if count is not None and count > len(ordered):
        key = "per_round" if kind == "round" else f"eval_{split}"
        log.warning(
            "%s: %s.sources.%s asks for %d source programs but only %d passed the filters; using all of them",
            stage,
            track,
            key,
            count,
            len(ordered),
        )
    if count is None or count >= len(ordered):
        return ordered
    draw = "rounds" if kind == "round" and same_every_round else stage
    rng = random.Random(derive_seed(cfg["seed"], f"{track}-sources", draw))
    return sorted(rng.sample(ordered, count), key=lambda s: s["id"])


def shard_of(items: list[dict], shard: int, shards: int) -> list[dict]:
    if not 0 <= shard < shards:
        raise UserError(f"shard {shard} is outside 0..{shards - 1}")
    return [item for pos, item in enumerate(items) if pos % shards == shard]
