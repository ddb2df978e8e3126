"""Training that survives a kill: transformers' own checkpoints, kept beside the output.

A training job saves a checkpoint (weights being trained, optimizer, scheduler, RNG
states, trainer state: ``Trainer``'s ``save_strategy="steps"``) every ``checkpoint_steps``
optimizer steps into ``.<output>.checkpoints`` next to its output folder. That folder is
not a declared output, so Snakemake leaves it alone when the job fails; a rerun of the
same training (same base model, examples, settings, seed and library versions, hashed
into ``resume_key.json``) hands its last complete checkpoint to
``Trainer.train(resume_from_checkpoint=...)``, which restores the state and skips the
batches already seen, so the run ends where an uninterrupted one would. A folder left by
other work is emptied first. The folder is removed once the output is in place.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..records import canonical_json

log = logging.getLogger(__name__)

RESUME_KEY = "resume_key.json"
STATE_FILE = "trainer_state.json"  # what transformers writes last into a checkpoint
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def checkpoint_folder(out_dir: str | os.PathLike) -> Path:
    """Where the training that writes ``out_dir`` keeps its checkpoints."""
    out = Path(out_dir).resolve()
    return out.parent / f".{out.name}.checkpoints"


def save_args(checkpoint_steps: int) -> dict[str, Any]:
    """The trainer arguments that save a checkpoint every ``checkpoint_steps`` optimizer
    steps, keeping only the last (0: never)."""
    if checkpoint_steps <= 0:
        return {"save_strategy": "no"}
    return {
        "save_strategy": "steps",
        "save_steps": int(checkpoint_steps),
        "save_total_limit": 1,
        "save_only_model": False,
    }


def resume_key(**work: Any) -> str:
    """A hash of everything a checkpoint is only valid for."""
    return hashlib.sha256(canonical_json(work).encode("utf-8")).hexdigest()


def _complete(folder: Path) -> list[tuple[int, Path]]:
    found = []
    for path in folder.iterdir():
        match = _CHECKPOINT.match(path.name)
        if match and path.is_dir():
            found.append((int(match.group(1)), path))
    return sorted(found)


def resume_point(folder: Path, key: str) -> str | None:
    """The checkpoint a run of the work named by ``key`` resumes from (None: from the
    start). Checkpoints of other work, and a last one a kill left unfinished, are removed."""
    folder.mkdir(parents=True, exist_ok=True)
    key_file = folder / RESUME_KEY
    try:
        recorded = json.loads(key_file.read_text()).get("key")
    except (OSError, ValueError, AttributeError):
        recorded = None
    if recorded != key:
        stale = [p for p in folder.iterdir()]
        if stale:
            log.warning(
                "%s: checkpoints of other work (another base model, data, settings or seed); starting over",
                folder,
            )
        for path in stale:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        key_file.write_text(json.dumps({"key": key}) + "\n")
        return None
    last = None
    for step, path in _complete(folder):
        if (path / STATE_FILE).is_file():
            last = (step, path)
        else:  # a kill while it was being written
            log.warning("%s: unfinished checkpoint, removed", path)
            shutil.rmtree(path)
    if last is None:
        return None
    log.info("resuming training from %s (step %d)", last[1], last[0])
    return str(last[1])
