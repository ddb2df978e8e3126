"""Generation with Hugging Face transformers on CPU (or any torch device): the default backend.

How a ``generate`` call runs
- Requests are grouped by adapter (base model first). A LoRA adapter directory is
  loaded once with PEFT on top of the base model and kept (up to
  ``max_loaded_adapters``; the least recently used one is dropped beyond that);
  ``set_adapter`` switches between them and ``disable_adapter()`` gives the base.
  Loaded adapters are identified by the hash of their files, so an adapter
  directory rewritten in place is reloaded.
- With float32 weights (``merge_adapter``, on by default there) an adapter is instead
  merged into the weights (W + scale * B A, PEFT's ``merge_and_unload``) while its
  requests decode: an unmerged LoRA layer runs two more small matrix products per
  projection at every step, which on a CPU costs ~15-30% of a decoding step of the tiny
  model (bench/results/lora_merge.md). Another adapter, or the base model, reloads the
  base weights first (exact: nothing is subtracted back). Not with bfloat16 or float16:
  there a small adapter delta would be rounded away by the merge.
- Each request becomes ``n`` rows (one row if greedy: the n texts are then copies).
  Rows are sorted by prompt length and cut into batches of ``batch_size`` rows,
  left-padded (pad = eos = ``<|im_end|>`` for SmolLM2 when there is no pad token).
  Rows of one batch that hold the same prompt (a request's samples) share one prefill:
  the distinct prompts are run once and their cache is copied to each row; their common
  beginning (system prompt, instructions, examples) is run once for the whole batch, and
  the rest of each prompt after it, left-padded (the padding then sits between the two,
  masked, with positions counted as if it were absent). On 2 cores a prompt token costs
  about 5 ms to prefill, a 16-row decoding step about 20 ms per row.
- Decoding is our own loop over the model's forward pass with a KV cache allocated
  once per batch (kv_cache.py), not ``generate``: a batch is prefilled once, then each step feeds every unfinished row
  its last token, and a row that has stopped leaves the batch (its cache rows are
  dropped), so a batch costs what its unfinished rows cost rather than what its
  longest row costs times the batch size (here one decoding step of 8 rows takes
  about 3x one of a single row: bench/results/decode.md).
- Sampling is per row: every row owns a ``torch.Generator`` seeded from (request
  seed, sample index); presence penalty, temperature, top-k and top-p are applied per
  row and the token is drawn with the row's generator (one draw per row per step).
  Consequences: the same request and seed give the same text on a rerun, and (up to
  float rounding differences between batch shapes) whatever else shares its batch;
  rows in one batch may use different settings.
- ``presence_penalty`` is applied exactly as vLLM/OpenAI define it: the penalty is
  subtracted once from the logit of each token already present in the generated
  part of the row (prompt tokens are not penalised).
- A row stops at any stop token (eos, ``<|im_end|>``, the model's generation-config
  eos ids) or at its own ``max_new_tokens``. Only new tokens are decoded, with special
  tokens skipped.
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..containers.runtime import package_version
from ..errors import UserError, require_module
from ..records import derive_seed, sha256_tree
from .base import (
    Backend,
    GenerationRequest,
    SamplingParams,
    check_requests,
    context_overflow,
    group_by_adapter,
    prompt_token_ids,
)
from .kv_cache import reserved_cache
from .peft_notices import quiet_peft

DTYPES = ("float32", "bfloat16", "float16")


@dataclass
class _Row:
    request: int  # index into the caller's request list
    sample: int  # which of the n samples
    prompt_ids: list[int]
    sampling: SamplingParams
    seed: int
    max_new_tokens: int
    answer_format: Any = None  # AnswerFormat the row's text must follow, or None


def _build_sampler_class():
    """Define the row sampler lazily so importing this module does not import torch."""
    import torch

    class RowSampler:
        """Per-row seeded sampling, vectorised over the rows still decoding.

        Called with the next-token logits of the active rows (``active`` holds their
        indices in the batch), it returns the token chosen for each. A sampled token is
        drawn by inverting the cumulative distribution at one uniform number taken from
        the row's own generator (one draw per row per step).
        """

        def __init__(self, rows: list[_Row], matchers: list | None = None, stop_ids: list[int] | None = None):
            # One FormatMatcher per row whose answer has a format (None elsewhere).
            self.matchers = matchers or [None] * len(rows)
            self.stop_ids = torch.tensor(sorted(stop_ids or []), dtype=torch.long)
            self.bitmask = None
            sps = [r.sampling for r in rows]
            self.generators = [torch.Generator().manual_seed(r.seed) for r in rows]
            self.sampled = torch.tensor([not sp.greedy for sp in sps])
            self.temperature = torch.tensor([sp.temperature if not sp.greedy else 1.0 for sp in sps])
            self.presence = torch.tensor([sp.presence_penalty or 0.0 for sp in sps])
            self.top_k = [sp.top_k for sp in sps]
            self.top_p = torch.tensor([sp.top_p for sp in sps])

        def __call__(self, scores, active: list[int], generated: list[list[int]]):
            logits = scores.float()
            rows = torch.tensor(active, dtype=torch.long)
            presence = self.presence[rows]
            if bool((presence != 0).any()):
                present = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
                for i, k in enumerate(active):
                    if generated[k]:
                        present[i, torch.tensor(generated[k], dtype=torch.long, device=logits.device)] = True
                logits = logits - presence.to(logits.device)[:, None] * present
            constrained = [(i, k) for i, k in enumerate(active) if self.matchers[k] is not None]
            if constrained:
                logits = self._mask(logits, constrained)
            choice = torch.argmax(logits, dim=-1)
            sampled = torch.nonzero(self.sampled[rows]).flatten()
            if len(sampled):
                picked = self._sample(logits[sampled.to(logits.device)], rows[sampled])
                choice[sampled.to(choice.device)] = picked.to(choice.device)
            for i, k in constrained:
                self.matchers[k].consume(int(choice[i]))
            return choice

        def _mask(self, logits, constrained):
            """Keep only the tokens each constrained row's format allows next. A row whose
            answer is complete (or whose matcher failed) may only end."""
            vocab = logits.shape[1]
            words = (vocab + 31) // 32
            if self.bitmask is None or self.bitmask.shape[1] < words:
                self.bitmask = torch.zeros((len(self.matchers), words), dtype=torch.int32)
            bits = torch.arange(32, dtype=torch.int32)
            logits = logits.clone()
            for i, k in constrained:
                matcher = self.matchers[k]
                self.bitmask[k].fill_(0)
                matcher.fill_mask(self.bitmask, k)
                allowed = ((self.bitmask[k, :, None] >> bits) & 1).flatten()[:vocab].bool()
                if matcher.error or not bool(allowed.any()):
                    allowed = torch.zeros(vocab, dtype=torch.bool)
                    allowed[self.stop_ids[self.stop_ids < vocab]] = True
                logits[i] = logits[i].masked_fill(~allowed.to(logits.device), float("-inf"))
            return logits

        def _sample(self, logits, rows):
            vocab = logits.shape[1]
            logits = logits / self.temperature[rows].to(logits.device)[:, None]
            ks = [self.top_k[int(r)] for r in rows]
            limited = [k is not None and k < vocab for k in ks]
            if any(limited):
                kmax = max(k for k, on in zip(ks, limited) if on)
                top = torch.topk(logits, kmax, dim=-1).values
                pos = torch.tensor([(k - 1) if on else 0 for k, on in zip(ks, limited)], device=logits.device)
                kth = top.gather(1, pos[:, None])
                kth = torch.where(
                    torch.tensor(limited, device=logits.device)[:, None],
                    kth,
                    torch.full_like(kth, float("-inf")),
                )
                logits = logits.masked_fill(logits < kth, float("-inf"))
            u = torch.cat([torch.rand(1, generator=self.generators[int(r)]) for r in rows]).to(logits.device)
            top_p = self.top_p[rows].to(logits.device)
            picked = torch.empty(len(rows), dtype=torch.long, device=logits.device)
            plain = top_p >= 1.0
            if bool(plain.any()):
                cdf = torch.cumsum(torch.softmax(logits[plain], dim=-1), dim=-1)
                pos = torch.searchsorted(cdf, (u[plain] * cdf[:, -1])[:, None], right=True)
                picked[plain] = pos.clamp_(max=vocab - 1).flatten()
            nucleus = ~plain
            if bool(nucleus.any()):
                # Top-p without sorting the whole vocabulary (a full sort is ~100 ms on
                # 2 cores): take the k most likely tokens, growing k until they hold at
                # least top_p of the mass, which makes the result identical to a full sort.
                probs = torch.softmax(logits[nucleus], dim=-1)
                p = top_p[nucleus]
                k = min(vocab, 256)
                while True:
                    vals, idx = torch.topk(probs, k, dim=-1)
                    cum = torch.cumsum(vals, dim=-1)
                    if k == vocab or bool((cum[:, -1] >= p).all()):
                        break
                    k = min(vocab, k * 8)
                # keep a token while the mass before it is below top_p (the first always stays)
                vals = vals.masked_fill((cum - vals) >= p[:, None], 0.0)
                cdf = torch.cumsum(vals, dim=-1)
                pos = torch.searchsorted(cdf, (u[nucleus] * cdf[:, -1])[:, None], right=True)
                picked[nucleus] = idx.gather(1, pos.clamp_(max=k - 1)).flatten()
            return picked

    return RowSampler


def _peft():
    return require_module("peft", "pip install peft (see requirements.txt)")


class TransformersBackend(Backend):
    name = "transformers"
    # True keeps finished rows in the batch until its longest row ends, as ``generate``
    # does; only bench/decode_bench.py sets it, to measure what leaving saves.
    keep_finished_rows = False
    # False prefills every row of a batch whole, as if no two shared a token; only
    # bench/prefill_bench.py sets it, to measure what sharing saves.
    share_prefill = True
    # False decodes with transformers' DynamicCache, which copies every layer's cache at
    # every step (kv_cache.py); only bench/kv_cache_bench.py sets it.
    reserve_cache = True

    def __init__(
        self,
        model: str,
        dtype: str = "float32",
        batch_size: int = 8,
        threads: int | None = None,
        device: str = "cpu",
        max_loaded_adapters: int = 4,
        max_model_len: int | None = None,
        progress: bool = True,
        merge_adapter: bool | None = None,
    ):
        torch = require_module("torch", "pip install torch (see requirements.txt)")
        transformers = require_module("transformers", "pip install transformers (see requirements.txt)")
        if dtype not in DTYPES:
            raise UserError(f"transformers backend: dtype must be one of {DTYPES}, got {dtype!r}")
        if int(batch_size) < 1:
            raise UserError(f"transformers backend: batch_size must be >= 1, got {batch_size}")
        if threads:
            torch.set_num_threads(int(threads))
        self.model_id = str(model)
        self.dtype = dtype
        self.batch_size = int(batch_size)
        self.device = device
        self.max_loaded_adapters = max(1, int(max_loaded_adapters))
        self.progress = progress
        # merged adapters only in float32 (module docstring: half precision rounds them away)
        self.merge_adapter = dtype == "float32" if merge_adapter is None else bool(merge_adapter)
        if self.merge_adapter and dtype != "float32":
            raise UserError(
                f"transformers backend: merge_adapter needs float32 weights (got {dtype}): merged "
                "into half-precision weights a small adapter update is rounded away"
            )
        self._RowSampler = _build_sampler_class()

        started = time.perf_counter()
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_id)
        except (OSError, ValueError) as exc:
            raise self._load_error(exc) from exc
        self._load_base()
        self.load_seconds = round(time.perf_counter() - started, 3)

        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.pad_id = int(self.tokenizer.pad_token_id)
        self.stop_ids = self._find_stop_ids()
        limit = getattr(self._base.config, "max_position_embeddings", None)
        self.max_model_len = int(max_model_len or limit or 1 << 30)

        self._ll_tokenizer = None  # llguidance's tokenizer view, built when a request has an answer format
        self._peft = None  # the PeftModel wrapping _base once an adapter is loaded
        self._adapters: OrderedDict[str, str] = OrderedDict()  # peft adapter name -> path, LRU order
        self._merged: str | None = None  # the adapter merged into _base's weights (merge_adapter)
        self.stats = {
            "calls": 0,
            "requests": 0,
            "rows": 0,
            "batches": 0,
            "prefilled_rows": 0,  # rows whose prompt was run (samples of one prompt share it)
            "prefilled_tokens": 0,  # prompt tokens run (a batch's common beginning once)
            "prompt_tokens": 0,
            "generated_tokens": 0,
            "seconds": 0.0,
        }

    # ------------------------------------------------------------------ setup helpers
    def _load_error(self, exc: Exception) -> UserError:
        return UserError(
            f"transformers backend: cannot load model {self.model_id!r} ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); give a local HF folder "
            "(the hub is offline when HF_HUB_OFFLINE=1)"
        )

    def _load_base(self) -> None:
        """The base model's weights, as stored (also to undo a merged adapter exactly)."""
        import torch
        import transformers

        try:
            self._base = transformers.AutoModelForCausalLM.from_pretrained(
                self.model_id, dtype=getattr(torch, self.dtype)
            )
        except (OSError, ValueError) as exc:
            raise self._load_error(exc) from exc
        self._base.to(self.device).eval()
        self._merged = None

    def _find_stop_ids(self) -> set[int]:
        ids = set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(int(self.tokenizer.eos_token_id))
        vocab = self.tokenizer.get_vocab()
        if "<|im_end|>" in vocab:
            ids.add(int(vocab["<|im_end|>"]))
        gen_eos = getattr(getattr(self._base, "generation_config", None), "eos_token_id", None)
        if isinstance(gen_eos, int):
            ids.add(gen_eos)
        elif gen_eos:
            ids.update(int(x) for x in gen_eos)
        return ids

    def _prompt_ids(self, req: GenerationRequest) -> list[int]:
        try:
            return prompt_token_ids(self.tokenizer, req.messages)
        except UserError as exc:  # e.g. a base model whose tokenizer has no chat template
            raise UserError(f"model {self.model_id!r}: {exc}") from None

    def unfit(self, request: GenerationRequest) -> str | None:
        return context_overflow(len(self._prompt_ids(request)), self.max_model_len)

    def _use_adapter(self, adapter: str | None):
        """Make ``adapter`` active; returns (model to call generate on, context manager)."""
        if adapter is None:
            if self._merged is not None:
                self._load_base()
            if self._peft is None:
                return self._base, nullcontext()
            return self._peft, self._peft.disable_adapter()
        path = Path(adapter).expanduser().resolve()
        if not (path / "adapter_config.json").is_file():
            raise UserError(f"adapter {adapter!r} is not a PEFT adapter directory (no adapter_config.json)")
        name = "adapter_" + sha256_tree(path)[:16]
        if self.merge_adapter:
            return self._merge(name, path), nullcontext()
        if name not in self._adapters:
            peft = _peft()
            with quiet_peft():
                if self._peft is None:
                    self._peft = peft.PeftModel.from_pretrained(
                        self._base, str(path), adapter_name=name, is_trainable=False
                    )
                    self._peft.eval()
                else:
                    self._peft.load_adapter(str(path), adapter_name=name, is_trainable=False)
            self._adapters[name] = str(path)
            self._peft.set_adapter(name)  # so that the adapter dropped below is never the active one
            while len(self._adapters) > self.max_loaded_adapters:
                oldest = next(iter(self._adapters))
                self._peft.delete_adapter(oldest)
                del self._adapters[oldest]
        self._adapters.move_to_end(name)
        self._peft.set_adapter(name)
        return self._peft, nullcontext()

    def _merge(self, name: str, path: Path):
        """The base model with the adapter at ``path`` merged into its weights (module docstring)."""
        if self._merged == name:
            return self._base
        if self._merged is not None:
            self._load_base()
        peft = _peft()
        try:
            with quiet_peft():
                wrapped = peft.PeftModel.from_pretrained(
                    self._base, str(path), adapter_name=name, is_trainable=False
                )
                self._base = wrapped.merge_and_unload().eval()
        except Exception:
            self._load_base()  # PEFT wraps the layers in place before it reads the adapter's weights
            raise
        self._merged = name
        self._adapters.clear()
        self._adapters[name] = str(path)
        return self._base

    # ------------------------------------------------------------------ generation
    def _rows_for(self, requests: list[GenerationRequest], indices: list[int]) -> list[_Row]:
        rows = []
        for i in indices:
            req = requests[i]
            ids = self._prompt_ids(req)
            room = self.max_model_len - len(ids)
            if room < 1:
                raise UserError(
                    f"prompt of {len(ids)} tokens does not fit the model's {self.max_model_len}-token "
                    f"context (request {i}: {req.last_user_text()!r})"
                )
            budget = min(req.sampling.max_new_tokens, room)
            base_seed = req.seed
            copies = 1 if req.sampling.greedy else req.sampling.n
            for j in range(copies):
                rows.append(
                    _Row(i, j, ids, req.sampling, derive_seed(base_seed, j), budget, req.answer_format)
                )
        return rows

    def _matchers(self, rows: list[_Row]) -> list | None:
        """A fresh FormatMatcher for each row with an answer format (None if no row has one)."""
        if not any(r.answer_format for r in rows):
            return None
        from .answer_format import FormatMatcher, ll_tokenizer_for

        if self._ll_tokenizer is None:
            self._ll_tokenizer = ll_tokenizer_for(self.tokenizer, sorted(self.stop_ids))
        return [FormatMatcher(r.answer_format, self._ll_tokenizer) if r.answer_format else None for r in rows]

    def _run_batch(self, model, rows: list[_Row]) -> list[tuple[str, int]]:
        """Decode one batch: (text, tokens generated counting the stop token) per row."""
        import torch

        # Shared prefill (module docstring): distinct prompts once, their common beginning
        # once; each prompt keeps at least one token of its own, whose logits start it.
        if self.share_prefill:
            distinct: dict[tuple[int, ...], int] = {}
            source = [distinct.setdefault(tuple(r.prompt_ids), len(distinct)) for r in rows]
            prompts = list(distinct)
        else:
            prompts, source = [tuple(r.prompt_ids) for r in rows], list(range(len(rows)))
        shared = 0
        if self.share_prefill and len(prompts) > 1:
            shared = min(len(os.path.commonprefix(prompts)), min(map(len, prompts)) - 1)
        width = max(len(ids) for ids in prompts) - shared
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), shared + width), dtype=torch.long)
        attention[:, :shared] = 1
        for k, ids in enumerate(prompts):
            rest = ids[shared:]
            input_ids[k, width - len(rest) :] = torch.tensor(rest, dtype=torch.long)
            attention[k, shared + width - len(rest) :] = 1
        positions = (attention.cumsum(-1) - 1).masked_fill(attention == 0, 0)[:, shared:]
        sampler = self._RowSampler(rows, self._matchers(rows), sorted(self.stop_ids))
        generated: list[list[int]] = [[] for _ in rows]
        active = list(range(len(rows)))
        attention, positions = attention.to(self.device), positions.to(self.device)
        with torch.inference_mode():
            cache = None
            if self.reserve_cache:
                cache = reserved_cache(model, shared + width + max(r.max_new_tokens for r in rows))
            if shared:
                head = torch.tensor([prompts[0][:shared]], dtype=torch.long, device=self.device)
                cache = model(
                    input_ids=head, past_key_values=cache, use_cache=True, logits_to_keep=1
                ).past_key_values
                cache.batch_repeat_interleave(len(prompts))
            out = model(
                input_ids=input_ids.to(self.device),
                attention_mask=attention,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            cache, logits = out.past_key_values, out.logits[:, -1, :]
            if len(prompts) < len(rows):
                copy = torch.tensor(source, dtype=torch.long, device=self.device)
                cache.batch_select_indices(copy)
                logits, attention, positions = logits[copy], attention[copy], positions[copy]
            self.stats["prefilled_tokens"] += shared + sum(len(ids) - shared for ids in prompts)
            self.stats["prefilled_rows"] += len(prompts)
            next_position = positions[:, -1:] + 1
            finished = [False] * len(rows)
            while True:
                choice = sampler(logits, active, generated)
                for i, k in enumerate(active):
                    if not finished[k]:
                        token = int(choice[i])
                        generated[k].append(token)
                        finished[k] = token in self.stop_ids or len(generated[k]) >= rows[k].max_new_tokens
                keep = [i for i, k in enumerate(active) if not finished[k]]
                if not keep:
                    break
                if len(keep) < len(active) and not self.keep_finished_rows:  # they leave, with their cache
                    kept = torch.tensor(keep, dtype=torch.long, device=self.device)
                    cache.batch_select_indices(kept)
                    attention, next_position, choice = attention[kept], next_position[kept], choice[kept]
                    active = [active[i] for i in keep]
                attention = torch.cat([attention, attention.new_ones((len(active), 1))], dim=1)
                out = model(
                    input_ids=choice[:, None].to(self.device),
                    attention_mask=attention,
                    position_ids=next_position,
                    past_key_values=cache,
                    use_cache=True,
                )
                logits = out.logits[:, -1, :]
                next_position = next_position + 1
        results = []
        for new in generated:
            text_ids = new[:-1] if new and new[-1] in self.stop_ids else new
            results.append((self.tokenizer.decode(text_ids, skip_special_tokens=True), len(new)))
        return results

    def generate(self, requests: list[GenerationRequest]) -> list[list[str]]:
        requests = check_requests(requests)
        if not requests:
            return []
        from tqdm.auto import tqdm

        started = time.perf_counter()
        texts: list[list[str | None]] = [[None] * r.sampling.n for r in requests]
        groups = group_by_adapter(requests)
        all_rows = [(adapter, self._rows_for(requests, idx)) for adapter, idx in groups]
        total = sum(len(rows) for _, rows in all_rows)
        bar = tqdm(
            total=total,
            desc=f"generate[{self.name}]",
            unit="seq",
            file=sys.stderr,
            disable=not self.progress,
            leave=False,
        )
        try:
            for adapter, rows in all_rows:
                model, context = self._use_adapter(adapter)
                ordered = sorted(rows, key=lambda r: len(r.prompt_ids))
                with context:
                    for start in range(0, len(ordered), self.batch_size):
                        batch = ordered[start : start + self.batch_size]
                        for row, (text, count) in zip(batch, self._run_batch(model, batch)):
                            texts[row.request][row.sample] = text
                            self.stats["generated_tokens"] += count
                            self.stats["prompt_tokens"] += len(row.prompt_ids)
                        self.stats["batches"] += 1
                        bar.update(len(batch))
        finally:
            bar.close()
        for i, req in enumerate(requests):
            if req.sampling.greedy:  # one row computed; the n samples are identical
                texts[i] = [texts[i][0]] * req.sampling.n
        self.stats["calls"] += 1
        self.stats["requests"] += len(requests)
        self.stats["rows"] += total
        self.stats["seconds"] += time.perf_counter() - started
        return texts  # type: ignore[return-value]

    # ------------------------------------------------------------------ info / cleanup
    def describe(self) -> dict[str, Any]:
        import torch
        import transformers

        model_path = Path(self.model_id)
        return {
            "name": self.name,
            "model": str(model_path.resolve()) if model_path.exists() else self.model_id,
            "dtype": self.dtype,
            "device": self.device,
            "batch_size": self.batch_size,
            "threads": torch.get_num_threads(),
            "versions": {
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                # None: adapters unusable, base model still fine. Not imported: a job
                # without adapters need not pay for it (0.3 s of an 11.7 s evaluation job).
                "peft": package_version("peft"),
            },
            "sampler": "own decoding loop, finished rows leave the batch; per-row seeded sampling "
            "(temperature, top_k, top_p, presence_penalty as vLLM)",
            "stop_token_ids": sorted(self.stop_ids),
            "pad_token_id": self.pad_id,
            "adapters_loaded": dict(self._adapters),
            "merge_adapter": self.merge_adapter,
            "nproc": os.cpu_count(),
        }

    def close(self) -> None:
        self._peft = None
        self._adapters.clear()
        self._base = None
        self._merged = None
        import gc

        gc.collect()
