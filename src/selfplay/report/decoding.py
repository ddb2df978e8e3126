"""How the answers behind a table row were decoded: free (as in every paper) or with the
answer skeleton enforced (format-constrained decoding, llm/answer_format.py). Tables
say it per row, so a number made with the constraint is never read as the paper's."""

from __future__ import annotations

from collections.abc import Iterable


def decoding_of(formats: Iterable[dict | None]) -> str:
    """'free', 'constrained', 'mixed', or '-' when there were no answers, from the
    ``answer_format`` entries of generation records (None: unconstrained)."""
    kinds = {"free" if f is None else "constrained" for f in formats}
    if not kinds:
        return "-"
    return kinds.pop() if len(kinds) == 1 else "mixed"
