"""Build a backend from a config dict: ``{"name": <backend>, ...its settings}``.

Backends and their settings (defaults in the classes):
    transformers: model, dtype, batch_size, threads, device, max_loaded_adapters, max_model_len, progress,
                  merge_adapter
    vllm:         model, max_lora_rank, gpu_memory_utilization, max_model_len, dtype, seed,
                  enable_lora, max_loras, engine_kwargs, use_tqdm, device (cuda|cpu),
                  threads and cpu_kvcache_gib (both only with device cpu; see vllm_backend),
                  tensor_parallel_size, trust_remote_code
    replay:       files, on_missing
    openai:       base_url, model, api_key_env, adapters, timeout, retries, concurrency

Unknown names or settings are rejected with a UserError (a typo must not be
silently ignored). Backend modules are imported only when chosen, so vLLM or
torch are never imported for a backend that does not need them.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from ..errors import UserError
from .base import Backend

BACKENDS = {
    "transformers": ("selfplay.llm.transformers_backend", "TransformersBackend"),
    "vllm": ("selfplay.llm.vllm_backend", "VLLMBackend"),
    "replay": ("selfplay.llm.replay", "ReplayBackend"),
    "openai": ("selfplay.llm.openai_backend", "OpenAIBackend"),
}


def backend_class(name: str) -> type[Backend]:
    if name not in BACKENDS:
        raise UserError(f"unknown generation backend {name!r}; choose one of {sorted(BACKENDS)}")
    module, cls = BACKENDS[name]
    return getattr(importlib.import_module(module), cls)


def checked_settings(cfg: dict) -> tuple[type[Backend], dict]:
    """The backend class and its settings, checked against its constructor without building it
    (so a bad combination is found when the workflow starts, not in the first generation job)."""
    if not isinstance(cfg, dict) or "name" not in cfg:
        raise UserError(f"a backend config must be a dict with a 'name'; got {cfg!r:.200}")
    settings = {k: v for k, v in cfg.items() if k != "name"}
    cls = backend_class(str(cfg["name"]))
    params = inspect.signature(cls.__init__).parameters
    allowed = [p for p in params if p != "self"]
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise UserError(f"backend {cfg['name']!r}: unknown setting(s) {unknown}; allowed: {allowed}")
    missing = [
        p
        for p, spec in params.items()
        if p != "self" and spec.default is inspect.Parameter.empty and p not in settings
    ]
    if missing:
        raise UserError(f"backend {cfg['name']!r}: missing required setting(s) {missing}")
    return cls, settings


def make_backend(cfg: dict) -> Backend:
    cls, settings = checked_settings(cfg)
    return cls(**settings)


def generation_backend_config(cfg: dict, model_dir: str | None) -> dict:
    """The settings :func:`make_backend` gets for a workflow config: its ``backend``
    section plus the model to load (``model_dir``, or for ``openai`` the model's name)."""
    bcfg = dict(cfg["backend"])
    if bcfg["name"] != "replay":
        if not model_dir:
            raise UserError("generation needs a model folder (model_dir) for backend " + bcfg["name"])
        bcfg.setdefault("model", str(model_dir))
        if bcfg["name"] == "openai":
            bcfg["model"] = cfg["model"].get("path") or cfg["model"]["name"]
    return bcfg


def describe_choices() -> dict[str, Any]:
    return {name: f"{mod}.{cls}" for name, (mod, cls) in BACKENDS.items()}
