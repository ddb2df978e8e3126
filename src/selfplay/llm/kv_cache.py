"""A key/value cache for our decoding loop that is allocated once per batch, not per step.

transformers' ``DynamicCache`` appends each step's keys and values with ``torch.cat``: every
layer's whole cache is copied into a freshly allocated tensor at every step, a cost that
grows with the prompt and the rows. Measured on SmolLM2-135M on 2 cores (one thread,
bench/results/kv_cache.md): a 16-row step on a 600-token cache took 335 ms that way and
246 ms here; the default run's Haskell Alice job (16 rows, long prompts) 1.46x faster,
jobs with short prompts or few rows 1.06-1.18x.

``reserved_cache`` gives a ``DynamicCache`` whose full-attention layers write into a
buffer sized for the whole batch at its first update (the prompt plus every token the
batch may still add) and hand the attention a view of the filled part. The values are
the ones ``torch.cat`` would have produced, so the logits are equal bit for bit. A batch
that outgrows the buffer gets a buffer twice as large (never needed by our loop, which
knows its longest answer). Layers of other kinds (sliding windows, linear attention) keep
transformers' own classes.
"""

from __future__ import annotations

from typing import Any


def _reserved_layer_class():
    """Define the layer class lazily, so that importing this module does not import torch."""
    from transformers.cache_utils import DynamicLayer

    class ReservedLayer(DynamicLayer):
        """A ``DynamicLayer`` writing into a buffer of ``capacity`` positions."""

        def __init__(self, capacity: int):
            super().__init__()
            self.capacity = capacity
            self.length = 0
            self.key_buffer = self.value_buffer = None

        def _view(self) -> None:
            self.keys = self.key_buffer[..., : self.length, :]
            self.values = self.value_buffer[..., : self.length, :]

        def update(self, key_states, value_states, *args, **kwargs):
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            end = self.length + key_states.shape[-2]
            if self.key_buffer is None or end > self.key_buffer.shape[-2]:
                size = (
                    max(end, self.capacity)
                    if self.key_buffer is None
                    else max(end, 2 * self.key_buffer.shape[-2])
                )
                shape = (*key_states.shape[:-2], size, key_states.shape[-1])
                keys, values = key_states.new_empty(shape), value_states.new_empty(shape)
                if self.length:
                    keys[..., : self.length, :] = self.keys
                    values[..., : self.length, :] = self.values
                self.key_buffer, self.value_buffer = keys, values
            self.key_buffer[..., self.length : end, :] = key_states
            self.value_buffer[..., self.length : end, :] = value_states
            self.length = end
            self._view()
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.length

        def reset(self) -> None:
            self.length = 0
            self.key_buffer = self.value_buffer = None
            super().reset()

        def crop(self, tokens_to_remove: int) -> None:
            if tokens_to_remove > 0 or not self.is_initialized:
                super().crop(tokens_to_remove)
                return
            self.length = max(0, self.length + tokens_to_remove)
            self._view()

        def batch_repeat_interleave(self, repeats: int) -> None:
            if self.length:
                self.key_buffer = self.key_buffer.repeat_interleave(repeats, dim=0)
                self.value_buffer = self.value_buffer.repeat_interleave(repeats, dim=0)
                self._view()

        def batch_select_indices(self, indices) -> None:
            if self.length:
                self.key_buffer = self.key_buffer[indices, ...]
                self.value_buffer = self.value_buffer[indices, ...]
                self._view()

        def reorder_cache(self, beam_idx) -> None:
            if self.length:
                self.batch_select_indices(beam_idx.to(self.key_buffer.device))

    return ReservedLayer


_LAYER_CLASS: Any = None


def reserved_cache(model: Any, capacity: int):
    """A fresh ``DynamicCache`` for ``model`` whose full-attention layers each hold
    ``capacity`` positions from their first update on (more if that update is longer)."""
    global _LAYER_CLASS
    from transformers.cache_utils import DynamicCache, DynamicLayer

    if _LAYER_CLASS is None:
        _LAYER_CLASS = _reserved_layer_class()
    cache = DynamicCache(config=model.config)
    for index, layer in enumerate(cache.layers):
        if type(layer) is DynamicLayer:
            cache.layers[index] = _LAYER_CLASS(capacity)
    return cache
