"""A reasoning model's answer: what it writes after its thinking.

Thinking models (Qwen3 in thinking mode, R1 distillations, Phi-4-reasoning) write their
reasoning first, closed by ``</think>``, and the answer after it; drafts inside the
reasoning (a JSON object tried out, a first version of the program) are not the answer.
Readers that take the first or last block of some kind read only the final part.
"""

from __future__ import annotations

THINK_END = "</think>"


def final_answer(text: str) -> str:
    """The part after the reasoning: what follows the last ``</think>`` (all of it if none)."""
    end = text.rfind(THINK_END)
    return text[end + len(THINK_END) :] if end >= 0 else text
