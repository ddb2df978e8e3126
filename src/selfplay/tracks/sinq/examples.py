"""SFT training records for SInQ, in the conversational prompt/completion format.

Each record is ``{"prompt": [messages...], "completion": [assistant message]}``;
trainers that follow this format compute the loss on the completion only.

* Alice's main records re-label her own successful output with the difficulty
  Bob actually found (rounded, halves up), as if that had been the target.
* Alice's difficulty-prediction records show her output for a request with target
  "Any", then ask for a difficulty estimate; only the estimate is trained.
* Bob's records pair the game prompt with one of his own correct answers.
"""

from __future__ import annotations

from ...curriculum.difficulty import round_difficulty
from .prompts import (
    ANY_DIFFICULTY,
    DIFFICULTY_QUESTION,
    alice_messages,
    bob_messages,
    difficulty_answer,
)


def _assistant(content: str) -> dict:
    return {"role": "assistant", "content": content}


def alice_main_example(code: str, entry_point: str, alice_output: str, difficulty: float) -> dict:
    """Alice's request at the measured (rounded) difficulty -> her output."""
    return {
        "prompt": alice_messages(code, entry_point, round_difficulty(difficulty)),
        "completion": [_assistant(alice_output)],
    }


def alice_difficulty_example(code: str, entry_point: str, alice_output: str, difficulty: float) -> dict:
    """Request at "Any", her output, the difficulty question -> 'Difficulty level: D'."""
    prompt = alice_messages(code, entry_point, ANY_DIFFICULTY)
    prompt.append(_assistant(alice_output))
    prompt.append({"role": "user", "content": DIFFICULTY_QUESTION})
    return {
        "prompt": prompt,
        "completion": [_assistant(difficulty_answer(round_difficulty(difficulty)))],
    }


def bob_example(code_p: str, code_q: str, entry_point: str, bob_output: str) -> dict:
    """Bob's request for the pair (P, Q) -> his (correct) answer."""
    return {
        "prompt": bob_messages(code_p, code_q, entry_point),
        "completion": [_assistant(bob_output)],
    }
