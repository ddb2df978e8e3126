"""Dropping the weights of policy states a GASP run no longer needs (``gasp.update.keep_states``).

Every phase ends in an update that writes a state folder (selfplay.train.rl.recorded), and
with full fine-tuning of a 7B policy a state is ~122 GB, 91 of them the FSDP shards of the
weights and AdamW moments that only the next update reads. With ``keep_states:
checkpoints`` each update job, before it trains, deletes from the state one step behind
the one it starts from what no job will load any more. The update starts from state R
(its previous state, through any skipped updates); R's own update started from state P.
P was read by exactly two jobs, the phase that made the rollouts of R's update and that
update, and both finished before this job could start (a run is one linear chain of
jobs). So:

- P's optimizer state (``optimizer.pt``, ``sharded/``) goes in every case;
- P's weights in ``policy/`` go too, unless P is an evaluated checkpoint, or the state an
  evaluated checkpoint that was a skipped update names (``skipped.json``): every
  ``eval_every``-th iteration's and the last (see outputs.eval_iterations), which the
  benchmark layer and the goalpost filter load at any time;
- the base model is never touched, and a run's last two states stay whole.

Pruning one state behind, not the state the update itself started from, keeps a killed
job safe: if the job dies while it deletes (a cluster's time limit, a preemption), its
rerun needs R, which is whole, and finishes the deletion. Pruning R right after writing
the new state would leave a job that Snakemake reruns (it removes a failed job's output)
from a state already half gone.

What stays is every record (policy_state.json, training_record.json, the adapter's or the
model's config and tokenizer files, the scheduler and RNG states), so tables, figures and
bundles read a pruned state as before; ``pruned.json`` says what was removed, why, by
which job, and whether the policy was kept (``policy_kept``). Loading a pruned state fails
with one line (``selfplay.pipeline.agents.resolve_state`` reads the marker), except a kept
policy loaded for generation or evaluation.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from ...bundle.restore import (
    RECORD_NAME,  # training_record.json: names the state an update started from
    WEIGHT_SUFFIXES,  # what a bundle counts as weights: the same files
)
from ...errors import UserError
from ...layout import POLICY_STATE as STATE_FILE
from ...layout import PRUNED_STATE as PRUNED
from ...layout import SKIPPED_STATE as SKIPPED
from ...records import read_json, write_json

log = logging.getLogger("selfplay")

KEY = "gasp.update.keep_states"
CHOICES = ("all", "checkpoints")
DEFAULT = "all"
ADVICE = (
    "an update can start only from a state that still has its optimizer state (a run's last "
    "two); to remake an earlier one, set gasp.update.keep_states: all and rerun the run from "
    "its first update with --forcerun"
)
# the heavy files of a state folder (selfplay.train.rl.recorded): the AdamW state (data
# parallel), the FSDP shards (weights and AdamW state), and the weights inside policy/
HEAVY_AT_TOP = ("optimizer.pt", "sharded")


def keep_states(update: dict | None) -> str:
    """The ``keep_states`` of a ``gasp.update`` section (absent: all), refusing any other value."""
    value = (update or {}).get("keep_states", DEFAULT)
    if value not in CHOICES:
        raise UserError(f"config key {KEY}: {value!r} is not one of {', '.join(CHOICES)}")
    return value


def recorded_settings(update: dict | None) -> dict:
    """``gasp.update`` without the keys the recorded update does not read (keep_states is
    the workflow's, not the trainer's: RecordedUpdateSettings refuses keys it does not know)."""
    return {k: v for k, v in (update or {}).items() if k != "keep_states"}


def evaluated_states(cfg: dict, method_name: str, seed: int | str) -> list[str]:
    """The state folders of one run that the benchmark layer evaluates: its checkpoints at
    the evaluation interval and the last one, and any checkpoint of this run that
    ``gasp.benchmarks`` names by its tag. What ``keep_states: checkpoints`` never prunes."""
    from ... import layout as results_layout
    from . import layout
    from .outputs import eval_iterations, run_settings

    root = results_layout.exp_dir(cfg, "gasp")
    schedule = run_settings(cfg, method_name)
    iterations = set(eval_iterations(schedule["iterations"], schedule["eval_every"]))
    bench = cfg["gasp"].get("benchmarks") or {}
    tags = list(bench.get("models") or []) + [
        tag
        for spec in (bench.get("runs") or {}).values()
        if isinstance(spec, dict)
        for tag in spec.get("models") or []
    ]
    for tag in tags:
        parsed = layout.parse_tag(tag)
        if parsed and parsed[0] == method_name and str(parsed[1]) == str(seed):
            iterations.add(parsed[2])
    return [layout.checkpoint(root, method_name, seed, i) for i in sorted(iterations)]


def _same(a: str | Path, b: str | Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def skip_chain(previous: str | Path | None) -> list[Path]:
    """The folders from ``previous`` along its ``skipped.json`` links: the last one is the
    state an update started from is loaded from (empty: the base model)."""
    chain: list[Path] = []
    folder = previous
    while folder is not None:
        folder = Path(folder)
        if any(_same(folder, seen) for seen in chain):
            raise UserError(f"{folder / SKIPPED}: skipped states form a loop")
        chain.append(folder)
        marker = folder / SKIPPED
        if not marker.is_file():
            return chain
        folder = read_json(marker).get("use_state")
    return chain  # ends at the base model: nothing to prune


def heavy_files(state: str | Path) -> list[Path]:
    """The files and folders of a state that pruning removes: optimizer.pt, sharded/ and
    the weights in policy/ (not its config, adapter config or tokenizer files)."""
    state = Path(state)
    found = [state / name for name in HEAVY_AT_TOP if (state / name).exists()]
    policy = state / "policy"
    if policy.is_dir():
        found += sorted(p for p in policy.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    return found


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def _loads(folder: str | Path) -> Path | None:
    """The state a folder's jobs load (the end of its skip chain), or None: the base model,
    or a folder not written yet."""
    if not Path(folder).is_dir():
        return None
    chain = skip_chain(folder)
    return chain[-1] if chain and (chain[-1] / STATE_FILE).is_file() else None


def prune_behind(start: str | Path | None, evaluated: list[str], new_state: str | Path) -> dict | None:
    """Before the update that will write ``new_state`` from ``start`` (a state that loads:
    resolved through skipped updates) trains, remove from the state ``start``'s own update
    started from the optimizer state, and its weights too unless an ``evaluated``
    checkpoint loads it. Idempotent: a job killed midway finishes the deletion when rerun.
    Returns the ``pruned.json`` record, or None when there was nothing to prune."""
    if start is None or not (Path(start) / RECORD_NAME).is_file():
        return None
    behind = read_json(Path(start) / RECORD_NAME).get("previous_state")
    if not behind or not (Path(behind) / STATE_FILE).is_file():
        return None  # the base model (or a state from elsewhere): never touched
    target = Path(behind)
    if (target / PRUNED).is_file():
        record = read_json(target / PRUNED)
        _remove(target, record["removed"])  # a rerun after a kill: finish what was started
        return record
    protected = next((e for e in evaluated if (t := _loads(e)) is not None and _same(t, target)), None)
    removed = heavy_files(target)
    if protected is not None:
        removed = [p for p in removed if p.parent == target]  # optimizer.pt, sharded/
        reason = (
            f"the evaluated checkpoint {protected} loads its policy, kept for the benchmark "
            "layer; its optimizer state only the update after it read, and that has run"
        )
    else:
        reason = "not an evaluated checkpoint, and every job that reads it has run"
    if not removed:
        return None
    record: dict[str, Any] = {
        "pruned": True,
        "setting": f"{KEY}: checkpoints",
        "policy_kept": protected is not None,
        "reason": reason,
        "by": f"the update that wrote {Path(new_state)}",
        "replaced_by": str(start),
        "removed": [str(p.relative_to(target)) for p in removed],
        "bytes": sum(_size(p) for p in removed),
        "advice": ADVICE,
    }
    # the marker first: a job killed midway leaves a state that refuses to load, never one
    # that loads with part of its weights gone (and its rerun finishes the deletion)
    write_json(target / PRUNED, record)
    _remove(target, record["removed"])
    log.info("%s: pruned %d bytes (%s; %s)", target, record["bytes"], record["setting"], reason)
    return record


def _remove(target: Path, names: list[str]) -> None:
    for name in names:
        path = target / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
