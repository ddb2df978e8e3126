"""Running one workflow step: logging to the rule's log file and one-line user errors."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from pathlib import Path

from ..errors import UserError
from .warm_start import hand_off

log = logging.getLogger("selfplay")


@contextlib.contextmanager
def step(name: str, log_path: str | None = None, offline: bool = True):
    """Log a step's progress to ``log_path`` (and stderr); turn a UserError into one line.

    A UserError is re-raised as SystemExit with its message, so Snakemake shows the
    message and the rule fails without a Python traceback.
    """
    if offline:  # nothing in the default path may reach a model hub
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    hand_off()  # with SELFPLAY_WARM=1: the job runs in a warm child and this process exits
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w"))
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", handlers=handlers, force=True
    )
    start = time.time()
    log.info("step %s: start", name)
    try:
        yield log
    except UserError as exc:
        log.error("step %s: %s", name, exc)
        raise SystemExit(f"error in {name}: {exc}") from None
    log.info("step %s: done in %.1f s", name, time.time() - start)


def optional_path(value) -> str | None:
    """A rule input that may be absent (an input function returned []): its path or None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return str(value[0]) if value else None
    return str(value) or None
