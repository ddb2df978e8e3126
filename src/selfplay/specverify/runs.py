"""What the verifiers' runners share: the verdict for a text no verifier should see,
a sandbox borrowed from the caller or started for one call, and run statistics.

How a tool is started and how its output is read stay in each back-end's runner."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

MAX_TEXT_CHARS = 200_000
"""Longer programs are never handed to a verifier."""


def early_refusal(text: str, max_chars: int = MAX_TEXT_CHARS) -> str | None:
    """Why ``text`` must not reach a verifier (a NUL character, or longer than
    ``max_chars``), or None. Each runner turns the reason into its own verdict."""
    if "\x00" in text:
        return "the program contains a NUL character"
    if len(text) > max_chars:
        return f"the program is longer than {max_chars} characters"
    return None


@contextmanager
def borrowed_sandbox(
    sandbox: Any, *, workers: int, tool_dirs: Callable[[], list[str]], limits: Any
) -> Iterator[Any]:
    """``sandbox`` itself, or, when it is None, a private
    :class:`selfplay.sandbox.Sandbox` showing ``tool_dirs()`` with ``limits``, closed
    when the block ends."""
    if sandbox is not None:
        yield sandbox
        return
    from ..sandbox import Sandbox

    own = Sandbox(workers=workers, tool_dirs=tool_dirs(), limits=limits)
    try:
        yield own
    finally:
        own.close()


def add_stats(stats: dict[str, int] | None, counts: Mapping[str, int]) -> None:
    """Add a run's ``counts`` (processes, retries ...) into the caller's ``stats``, if any."""
    if stats is not None:
        for key, value in counts.items():
            stats[key] = stats.get(key, 0) + value


def fill_missing(verdicts: list[Any], missing: Callable[[int], Any]) -> list[Any]:
    """The verdicts, each one still None replaced by ``missing(index)`` (an internal error)."""
    return [v if v is not None else missing(k) for k, v in enumerate(verdicts)]
