"""RFT training records (paper 003, Sec. 3): the solver's prompt for a problem and one
of its own solutions, in the conversational prompt/completion format, loss on the
completion only. The completion is the model's output exactly as it was generated."""

from __future__ import annotations

from . import prompts


def solver_example(language: str, spec: str, output: str, completion: str = "body") -> dict:
    """``completion``: the answer format the output was written in (its prompt asks for it)."""
    return {
        "prompt": prompts.solver_messages(language, spec, completion=completion),
        "completion": [{"role": "assistant", "content": output}],
    }
