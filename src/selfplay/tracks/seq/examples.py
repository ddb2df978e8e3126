"""SFT training records for the Haskell track (paper 000, Section 3.4), in the
conversational prompt/completion format (loss on the completion only).

* Alice's main records: her SEQ or SINQ request at the target difficulty (10, as in
  the paper's Schema 3) -> her output.
* Difficulty-prediction records: P, Q and their relation -> ``Difficulty level: D``
  with the difficulty Bob measured (Schema 4).
* Proof records, for every proved SEQ pair: the SEQ request -> her output followed by
  the accepted Liquid Haskell proof (Schema 5).
* Bob's records: the pair -> one of his correct answers (Schema 6).
"""

from __future__ import annotations

from ...curriculum.difficulty import round_difficulty
from .prompts import alice_messages, bob_messages, difficulty_answer, difficulty_prediction_messages


def _assistant(content: str) -> list[dict]:
    return [{"role": "assistant", "content": content}]


def alice_main_example(inst: dict, target_difficulty: int) -> dict:
    return {
        "prompt": alice_messages(inst["game"], inst["code_p"], inst["arg_types"], target_difficulty),
        "completion": _assistant(inst["alice_output"]),
    }


def alice_difficulty_example(inst: dict) -> dict:
    return {
        "prompt": difficulty_prediction_messages(inst["game"], inst["code_p"], inst["code_q"]),
        "completion": _assistant(difficulty_answer(round_difficulty(inst["difficulty"]))),
    }


def alice_proof_example(inst: dict, target_difficulty: int) -> dict:
    proof = inst["proof"].rstrip()
    return {
        "prompt": alice_messages("seq", inst["code_p"], inst["arg_types"], target_difficulty),
        "completion": _assistant(inst["alice_output"].rstrip() + "\n\nLiquid Haskell proof:\n" + proof),
    }


def bob_example(inst: dict, bob_output: str) -> dict:
    return {"prompt": bob_messages(inst["code_p"], inst["code_q"]), "completion": _assistant(bob_output)}
