"""Per-model serving settings: a model too large for one GPU is served with tensor
parallelism over several GPUs of its job.

A generation job's backend is config ``backend`` with the model's own override on top
(paper 002's pool: ``evolve.pool.models[i].backend``, e.g. ``{tensor_parallel_size: 2}``
for a 32B model). The job asks the cluster for as many GPUs as the backend splits the
model over; the rule passes both through ``params``/``resources``, so changing a model's
override reruns that model's job only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..errors import UserError

# What a per-model override may change: how the model is laid out on the GPUs, its context,
# and whether its own configuration code may load it; not which backend runs it (a
# different backend would be a different experiment).
SERVING_KEYS = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "trust_remote_code")


def served_backend(backend: Mapping[str, Any], override: Mapping[str, Any] | None, where: str) -> dict:
    """``backend`` with the model's serving ``override`` on top (``where``: the override's key)."""
    merged = copy.deepcopy(dict(backend))
    for key, value in (override or {}).items():
        if key not in SERVING_KEYS:
            raise UserError(
                f"{where}.{key}: a model's backend override may set only {', '.join(SERVING_KEYS)}"
            )
        merged[key] = value
    if int(merged.get("tensor_parallel_size", 1)) > 1 and merged.get("name") != "vllm":
        raise UserError(
            f"{where}.tensor_parallel_size: tensor parallelism needs backend vllm, not {merged.get('name')!r}"
        )
    return merged


def tensor_parallel(backend: Mapping[str, Any]) -> int:
    """GPUs one copy of the model is split over (1 unless the backend says otherwise, as a
    setting or in engine_kwargs)."""
    tp = backend.get("tensor_parallel_size") or (backend.get("engine_kwargs") or {}).get(
        "tensor_parallel_size", 1
    )
    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1:
        raise UserError(f"backend.tensor_parallel_size must be an integer >= 1, got {tp!r}")
    return tp


def job_gpus(resources: Mapping[str, Any], backend: Mapping[str, Any]) -> int:
    """GPUs a generation job asks for: its kind's ``gpu``, raised to the tensor-parallel
    size (a job cannot split a model over GPUs it does not hold)."""
    asked = int(resources.get("gpu", 0) or 0)
    tp = tensor_parallel(backend)
    return max(asked, tp) if tp > 1 else asked


def pool_override(cfg: Mapping[str, Any], model: str) -> dict:
    """The backend override of paper 002's pool model ``model`` ({} when none)."""
    for entry in cfg["evolve"]["pool"]["models"]:
        if entry["name"] == model:
            return dict(entry.get("backend") or {})
    return {}


def pool_backend(cfg: Mapping[str, Any], model: str) -> dict:
    """The backend settings paper 002's pool model ``model`` is served with."""
    index = next((i for i, e in enumerate(cfg["evolve"]["pool"]["models"]) if e["name"] == model), None)
    return served_backend(cfg["backend"], pool_override(cfg, model), f"evolve.pool.models[{index}].backend")
