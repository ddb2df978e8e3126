"""Rehearsal overlays: what a dress rehearsal of a paper config may change.

A rehearsal runs a paper config end to end on a small machine (issue 19): the paper's
engines, trainers, sharding, benchmark adapters and SLURM profile, with only the things a
small machine forces laid over it. The overlays are shipped files,
``config/rehearsals/<paper>.yaml``, used as::

    snakemake --profile tests/slurm/profile \\
        --configfile config/papers/sinq.yaml config/rehearsals/sinq.yaml

This module says which keys such an overlay may touch, by kind, and checks an overlay
against it, so a rehearsal cannot quietly stop being the paper's run:

* ``model``: which model a job loads (any ``model`` mapping, ``models`` / ``other_models``
  lists, a backend's ``base_url``): the tiny model instead of a 7B download, a local test
  server instead of a public API.
* ``count``: how much is done (problems, samples, rounds, steps, shards, token budgets,
  item limits, ...), recognised by the key's own name (:data:`COUNT_KEYS`).
* ``device``: where and in what precision it runs (``device``, ``dtype``, ``threads``,
  sandbox ``workers``, tensor parallelism, ``gpu_memory_utilization``, and the whole
  ``resources`` section, which sizes the SLURM jobs).
* ``experiment``: the run's folder name, and where a run finds its other regimes' runs
  (paper 000's ``regimes.experiments`` and ``regime.from`` name them).
* ``data``: a data source swapped to a shipped fixture (``evaluation.benchmarks.<b>``
  ``source``/``path``, ``<track>.sources.dataset``).

Anything else must be named with a reason in ``extra`` (a per-paper allowance, kept
in the test that rehearses that paper), or the check fails naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass

from selfplay.errors import UserError

KINDS = {
    "model": "model names, paths and revisions (the tiny model; a local server for served models)",
    "count": "counts: problems, samples, rounds, steps, shards, token budgets, item limits",
    "device": "devices, threads, precision and the job sizes the cluster is asked for",
    "experiment": "the run's folder name (and the names of the runs it compares with)",
    "data": "a data source swapped to a shipped fixture in the release's format",
}

# Leaf names that are sizes of the run, whichever section they are in.
COUNT_KEYS = frozenset(
    {
        # problems / sources / items
        "per_round",
        "eval_train",
        "eval_test",
        "limit",
        "count",
        "problems",
        "seeds",
        "fraction",
        "opinstruct_limit",
        "max_problems",
        "per_dataset",
        "size",
        "pool_size",
        # samples
        "samples",
        "samples_per_source",
        "n",
        "k",
        "num_samples",
        "group_size",
        "attempts",
        # rounds and steps
        "rounds",
        "iterations",
        "steps",
        "max_steps",
        "epochs",
        "save_steps",
        # scale-out
        "shards",
        # token budgets and context (a tiny model has a short context)
        "max_new_tokens",
        "max_length",
        "max_model_len",
        "max_prompt_length",
    }
)
# Leaf names that say where and how fast a job runs, not what it computes.
DEVICE_KEYS = frozenset(
    {
        "device",
        "dtype",
        "threads",
        "workers",
        "tensor_parallel_size",
        "gpu_memory_utilization",
        "batch_size_generate",
    }
)
MODEL_KEYS = frozenset({"model", "models", "other_models", "base_url", "api_key_env"})
# Sections (dotted prefixes) whose every key is a device setting.
DEVICE_SECTIONS = ("resources",)


@dataclass(frozen=True)
class Change:
    """One key an overlay sets, and why it may (kind) or may not (kind None)."""

    key: str
    kind: str | None
    reason: str


def leaves(tree: dict, prefix: str = "") -> list[str]:
    """Dotted paths of an overlay's leaves; a ``model`` mapping counts as one leaf."""
    out = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and key not in MODEL_KEYS:
            out += leaves(value, path + ".")
        else:
            out.append(path)
    return out


def classify(key: str, extra: dict[str, str] | None = None) -> Change:
    """Which allowed kind a dotted key is, or kind None when it is a setting of the paper's."""
    parts = key.split(".")
    last = parts[-1]
    for allowed, reason in (extra or {}).items():
        if key == allowed or key.startswith(allowed + "."):
            return Change(key, "extra", reason)
    if any(p in MODEL_KEYS for p in parts):
        return Change(key, "model", KINDS["model"])
    if parts[0] in DEVICE_SECTIONS or last in DEVICE_KEYS:
        return Change(key, "device", KINDS["device"])
    if last in COUNT_KEYS:
        return Change(key, "count", KINDS["count"])
    if last in ("experiment", "experiments") or parts[-2:] == ["regime", "from"]:
        return Change(key, "experiment", KINDS["experiment"])
    if len(parts) == 4 and parts[:2] == ["evaluation", "benchmarks"] and last in ("source", "path"):
        return Change(key, "data", KINDS["data"])
    if len(parts) == 3 and parts[1] == "sources" and last == "dataset":
        return Change(key, "data", KINDS["data"])
    return Change(key, None, "a setting of the paper's: a rehearsal must keep it")


def check_overlay(overlay: dict, extra: dict[str, str] | None = None, name: str = "overlay") -> list[Change]:
    """Every key the overlay sets, classified; raises UserError naming the first key that
    is not a model, count, device, experiment or fixture change (nor in ``extra``)."""
    if not isinstance(overlay, dict) or not overlay:
        raise UserError(f"{name}: a rehearsal overlay must be a non-empty mapping of config keys")
    changes = [classify(key, extra) for key in leaves(overlay)]
    refused = [c.key for c in changes if c.kind is None]
    if refused:
        raise UserError(
            f"{name}: key {refused[0]} is not a model, count, device, experiment or fixture change "
            f"(a rehearsal keeps the paper's settings){' and ' + str(len(refused) - 1) + ' more' if len(refused) > 1 else ''}"
        )
    return changes
