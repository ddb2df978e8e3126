"""The SInQ game's bookkeeping: which sources a stage uses, the requests sent to
Alice and Bob, and the seeds and time limits each draws.

A *stage* is one pass of Alice over source programs: ``round1`` .. ``roundR`` during
training, or ``eval_train`` / ``eval_test`` for the intrinsic evaluation (the paper's
Table 1). Every random choice takes a seed derived from the config seed and the ids
involved, so a rerun (or a replay from a bundle) sees the same draws.
"""

from __future__ import annotations

import random
import re

from ...errors import UserError
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from . import prompts

STAGE_RE = re.compile(r"^(round(?P<round>[1-9][0-9]*)|eval_(?P<split>train|test))$")


def parse_stage(stage: str) -> tuple[str, int | None, str | None]:
    """('round', r, None) or ('eval', None, split)."""
    m = STAGE_RE.match(stage)
    if not m:
        raise UserError(f"unknown SInQ stage {stage!r} (expected roundN, eval_train or eval_test)")
    if m.group("round"):
        return "round", int(m.group("round")), None
    return "eval", None, m.group("split")


def stage_source_split(stage: str) -> str:
    kind, _, split = parse_stage(stage)
    return "train" if kind == "round" else split


def select_stage_sources(sources: list[dict], stage: str, cfg: dict) -> list[dict]:
    """The source programs a stage uses (seeded sample, stable across reruns)."""
    kind, r, split = parse_stage(stage)
    src_cfg = cfg["sinq"]["sources"]
    count = src_cfg.get("per_round") if kind == "round" else src_cfg.get(f"eval_{split}")
    ordered = sorted(sources, key=lambda s: s["id"])
    if count is None or count >= len(ordered):
        return ordered
    rng = random.Random(derive_seed(cfg["seed"], "sinq-sources", stage))
    return sorted(rng.sample(ordered, count), key=lambda s: s["id"])


def shard_of(items: list[dict], shard: int, shards: int) -> list[dict]:
    if not 0 <= shard < shards:
        raise UserError(f"shard {shard} is outside 0..{shards - 1}")
    return [item for pos, item in enumerate(items) if pos % shards == shard]


def _sampling(section: dict, n: int, seed: int) -> SamplingParams:
    s = section["sampling"]
    return SamplingParams(
        temperature=float(s["temperature"]),
        top_p=float(s["top_p"]),
        top_k=s.get("top_k"),
        presence_penalty=s.get("presence_penalty"),
        max_new_tokens=int(s["max_new_tokens"]),
        n=n,
        seed=seed,
    )


def alice_request(source: dict, stage: str, cfg: dict, adapter: str | None) -> GenerationRequest:
    """Alice sees P with the target difficulty (the paper always asks for 10)."""
    sinq = cfg["sinq"]
    n = int(sinq["alice"].get("samples_per_source", 1))
    seed = derive_seed(cfg["seed"], "alice", stage, source["id"])
    messages = prompts.alice_messages(source["code"], source["entry_point"], sinq["target_difficulty"])
    return GenerationRequest(messages=messages, sampling=_sampling(sinq["alice"], n, seed), adapter=adapter)


def bob_request(instance: dict, stage: str, who: str, cfg: dict, adapter: str | None) -> GenerationRequest:
    """Bob sees P and Q and is sampled N times."""
    sinq = cfg["sinq"]
    seed = derive_seed(cfg["seed"], "bob", who, stage, instance["id"])
    messages = prompts.bob_messages(instance["code_p"], instance["code_q"], instance["entry_point"])
    return GenerationRequest(messages=messages, sampling=_sampling(sinq["bob"], int(sinq["bob"]["samples"]), seed),
                             adapter=adapter)


def check_timeout(cfg: dict, *ids) -> float:
    """A time limit drawn uniformly in [timeout_min, timeout_max] for one execution check.

    The limit is random so that a variant cannot wait out a fixed limit and then agree
    with P; it is seeded by the check's ids so reruns draw the same limit.
    """
    v = cfg["sinq"]["verify"]
    rng = random.Random(derive_seed(cfg["seed"], "timeout", *ids))
    return rng.uniform(float(v["timeout_min"]), float(v["timeout_max"]))
