"""The SInQ game's bookkeeping: the requests sent to Alice and Bob, and the seeds and
time limits each draws (stages and shards: tracks/stages.py).

Every random choice takes a seed derived from the config seed and the ids involved,
so a rerun (or a replay from a bundle) sees the same draws.
"""

from __future__ import annotations

import random

from ...llm.answer_format import format_when_constrained
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from ..stages import STAGE_RE, parse_stage, select_stage_sources, shard_of, stage_source_split  # noqa: F401
from . import formats, prompts


def alice_request(source: dict, stage: str, cfg: dict, adapter: str | None) -> GenerationRequest:
    """Alice sees P with the target difficulty (the paper always asks for 10)."""
    sinq = cfg["sinq"]
    n = int(sinq["alice"]["samples_per_source"])
    seed = derive_seed(cfg["seed"], "alice", stage, source["id"])
    messages = prompts.alice_messages(source["code"], source["entry_point"], sinq["target_difficulty"])
    sampling = SamplingParams.from_config(sinq["alice"]["sampling"], n, seed)
    answer_format = format_when_constrained(
        sinq["alice"]["answer_format"], lambda s: formats.alice_format(source, s)
    )
    return GenerationRequest(
        messages=messages, sampling=sampling, adapter=adapter, answer_format=answer_format
    )


def bob_request(instance: dict, stage: str, who: str, cfg: dict, adapter: str | None) -> GenerationRequest:
    """Bob sees P and Q and is sampled N times."""
    sinq = cfg["sinq"]
    seed = derive_seed(cfg["seed"], "bob", who, stage, instance["id"])
    messages = prompts.bob_messages(instance["code_p"], instance["code_q"], instance["entry_point"])
    sampling = SamplingParams.from_config(sinq["bob"]["sampling"], int(sinq["bob"]["samples"]), seed)
    answer_format = format_when_constrained(
        sinq["bob"]["answer_format"], lambda s: formats.bob_format(instance, s)
    )
    return GenerationRequest(
        messages=messages, sampling=sampling, adapter=adapter, answer_format=answer_format
    )


def check_timeout(cfg: dict, *ids) -> float:
    """A time limit drawn uniformly in [timeout_min, timeout_max] for one execution check.

    The limit is random so that a variant cannot wait out a fixed limit and then agree
    with P; it is seeded by the check's ids so reruns draw the same limit.
    """
    v = cfg["sinq"]["verify"]
    rng = random.Random(derive_seed(cfg["seed"], "timeout", *ids))
    return rng.uniform(float(v["timeout_min"]), float(v["timeout_max"]))
