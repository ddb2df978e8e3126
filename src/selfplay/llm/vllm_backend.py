"""Generation with vLLM (GPU environment only).

vLLM is a CUDA stack and is not part of the CPU install; it is imported only when
this backend is chosen, and a missing install gives a one-line MissingToolError.

Mapping of our request onto vLLM's offline API:
- one ``vllm.LLM(model=..., enable_lora=True, max_lora_rank=..., seed=...)`` per backend;
- requests are grouped by adapter and each group is one ``LLM.chat(conversations,
  sampling_params=[one per conversation], lora_request=...)`` call; an adapter
  directory becomes ``LoRARequest(name, int_id, path)`` with a stable id per path
  (vLLM applies LoRA on the fly; nothing is merged);
- ``vllm.SamplingParams(n, temperature, top_p, top_k (-1 = off), presence_penalty
  (0 = off), max_tokens, seed)`` where ``seed`` is :func:`selfplay.llm.base.request_seed`
  (the caller's seed mixed with the request key, as in the transformers backend).
"""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import MissingToolError, UserError
from .base import Backend, GenerationRequest, SamplingParams, check_requests, group_by_adapter

INSTALL_HINT = (
    "the 'vllm' backend needs vLLM, which is not installed here (it is a GPU stack): "
    "run in the GPU environment/container (pip install vllm there), or use backend 'transformers'"
)


def import_vllm():
    """Return (vllm module, LoRARequest class) or raise MissingToolError."""
    try:
        vllm = importlib.import_module("vllm")
        lora_request = importlib.import_module("vllm.lora.request").LoRARequest
    except ImportError as exc:
        raise MissingToolError(INSTALL_HINT) from exc
    return vllm, lora_request


def to_vllm_sampling(vllm: Any, sampling: SamplingParams, seed: int):
    """Our SamplingParams -> ``vllm.SamplingParams`` (seed: the per-request seed to use)."""
    return vllm.SamplingParams(
        n=sampling.n,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=-1 if sampling.top_k is None else sampling.top_k,
        presence_penalty=0.0 if sampling.presence_penalty is None else sampling.presence_penalty,
        max_tokens=sampling.max_new_tokens,
        seed=seed,
    )


class VLLMBackend(Backend):
    name = "vllm"

    def __init__(
        self,
        model: str,
        max_lora_rank: int = 64,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = 8192,
        dtype: str = "auto",
        seed: int = 0,
        enable_lora: bool = True,
        max_loras: int = 1,
        engine_kwargs: dict | None = None,
        use_tqdm: bool = True,
    ):
        self._vllm, self._LoRARequest = import_vllm()
        self.model_id = str(model)
        self.settings = {
            "max_lora_rank": int(max_lora_rank),
            "gpu_memory_utilization": float(gpu_memory_utilization),
            "max_model_len": max_model_len,
            "dtype": dtype,
            "seed": int(seed),
            "enable_lora": bool(enable_lora),
            "max_loras": int(max_loras),
        }
        kwargs = dict(
            model=self.model_id,
            dtype=dtype,
            seed=int(seed),
            gpu_memory_utilization=float(gpu_memory_utilization),
        )
        if max_model_len:
            kwargs["max_model_len"] = int(max_model_len)
        if enable_lora:
            kwargs.update(enable_lora=True, max_lora_rank=int(max_lora_rank), max_loras=int(max_loras))
        kwargs.update(engine_kwargs or {})
        self.use_tqdm = use_tqdm
        self.llm = self._vllm.LLM(**kwargs)
        self._lora_ids: dict[str, int] = {}

    def _lora(self, adapter: str | None):
        if adapter is None:
            return None
        if not self.settings["enable_lora"]:
            raise UserError("a request uses an adapter but the vllm backend was built with enable_lora=false")
        if adapter not in self._lora_ids:
            self._lora_ids[adapter] = len(self._lora_ids) + 1  # vLLM wants ids >= 1
        lora_id = self._lora_ids[adapter]
        return self._LoRARequest(f"adapter{lora_id}", lora_id, adapter)

    def generate(self, requests: list[GenerationRequest]) -> list[list[str]]:
        requests = check_requests(requests)
        results: list[list[str] | None] = [None] * len(requests)
        for adapter, indices in group_by_adapter(requests):
            conversations = [requests[i].messages for i in indices]
            params = [to_vllm_sampling(self._vllm, requests[i].sampling, requests[i].seed) for i in indices]
            outputs = self.llm.chat(
                conversations,
                sampling_params=params,
                use_tqdm=self.use_tqdm,
                lora_request=self._lora(adapter),
            )
            if len(outputs) != len(indices):
                raise RuntimeError(f"vLLM returned {len(outputs)} results for {len(indices)} conversations")
            for i, out in zip(indices, outputs):
                texts = [completion.text for completion in out.outputs]
                if len(texts) != requests[i].sampling.n:
                    raise RuntimeError(f"vLLM returned {len(texts)} samples, expected {requests[i].sampling.n}")
                results[i] = texts
        return results  # type: ignore[return-value]

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "model": self.model_id,
            "versions": {"vllm": getattr(self._vllm, "__version__", "unknown")},
            "device": "cuda",
            **self.settings,
            "adapters": {path: lid for path, lid in self._lora_ids.items()},
        }

    def close(self) -> None:
        self.llm = None
        try:
            import gc

            gc.collect()
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except Exception:  # pragma: no cover - best effort cleanup
            pass
