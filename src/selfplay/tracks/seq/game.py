"""The Haskell track's bookkeeping: which game each reference program gets in a stage,
and the requests sent to Alice (program, proof) and Bob. Every draw is seeded by the
config seed and the ids involved, so reruns and bundle replays see the same draws.
"""

from __future__ import annotations

import random

from ...llm.answer_format import format_when_constrained
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from . import formats, prompts

GAMES = ("seq", "sinq")


def choose_game(cfg: dict, stage: str, source_id: str) -> str:
    """SEQ with probability ``seq.game.seq_probability`` (the paper's E0: 0.5), else SINQ."""
    p = float(cfg["seq"]["game"]["seq_probability"])
    rng = random.Random(derive_seed(cfg["seed"], "seq-game", stage, source_id))
    return "seq" if rng.random() < p else "sinq"


def alice_request(source: dict, stage: str, game: str, cfg: dict, adapter: str | None) -> GenerationRequest:
    seq = cfg["seq"]
    n = int(seq["alice"]["samples_per_source"])
    seed = derive_seed(cfg["seed"], "seq-alice", stage, game, source["id"])
    messages = prompts.alice_messages(
        game, source["code"], source["arg_types"], seq["game"]["target_difficulty"]
    )
    answer_format = format_when_constrained(
        seq["alice"]["answer_format"], lambda s: formats.alice_format(game, source, s)
    )
    return GenerationRequest(
        messages=messages,
        sampling=SamplingParams.from_config(seq["alice"]["sampling"], n, seed),
        adapter=adapter,
        answer_format=answer_format,
    )


def proof_request(
    candidate: dict, attempt: int, error: str | None, cfg: dict, adapter: str | None
) -> GenerationRequest:
    """Alice's proof for an SEQ candidate; attempts after the first carry the checker's error."""
    proof = cfg["seq"]["proof"]
    seed = derive_seed(cfg["seed"], "seq-proof", candidate["id"], attempt)
    messages = prompts.proof_messages(
        candidate["entry_point"],
        candidate["name_q"],
        candidate["code_p"],
        candidate["code_q"],
        len(candidate["arg_types"]),
        error,
    )
    answer_format = format_when_constrained(
        proof["answer_format"], lambda s: formats.proof_format(candidate, s)
    )
    return GenerationRequest(
        messages=messages,
        sampling=SamplingParams.from_config(proof["sampling"], 1, seed),
        adapter=adapter,
        answer_format=answer_format,
    )


def bob_request(instance: dict, stage: str, who: str, cfg: dict, adapter: str | None) -> GenerationRequest:
    bob = cfg["seq"]["bob"]
    seed = derive_seed(cfg["seed"], "seq-bob", who, stage, instance["id"])
    messages = prompts.bob_messages(instance["code_p"], instance["code_q"])
    answer_format = format_when_constrained(bob["answer_format"], lambda s: formats.bob_format(instance, s))
    return GenerationRequest(
        messages=messages,
        sampling=SamplingParams.from_config(bob["sampling"], int(bob["samples"]), seed),
        adapter=adapter,
        answer_format=answer_format,
    )
