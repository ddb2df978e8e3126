"""One place for a notice PEFT raises that is not ours to act on.

peft 0.21 still reads transformers' old ``is_gradient_checkpointing`` name, which
transformers 5.x marks deprecated with a FutureWarning each time a model is wrapped: the
generation backend (loading an adapter), SFT and GRPO (wrapping a model) all meet it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_peft() -> Iterator[None]:
    """Silence PEFT's ``is_gradient_checkpointing`` deprecation notice inside the block."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        yield
