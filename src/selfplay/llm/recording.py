"""Run a backend and keep what it produced, so a later run can replay it exactly.

Each record (one JSONL line per request, written atomically) holds::

    key             recording_key(messages, sampling, answer_format)
    messages        the chat as sent
    sampling        sampling.to_dict()
    adapter         the adapter path as given, or None
    adapter_sha256  sha256_tree of the adapter directory, or None
    answer_format   {name, grammar_sha256} of the enforced answer format, or None
                    (unconstrained decoding, as in every paper)
    backend         backend.describe()
    outputs         the sampling.n texts
    meta            the caller's meta: one dict shared by all records, or a list
                    with one dict per request (or None)
    seconds         wall time of the whole generate() call divided evenly over its
                    requests (batched generation has no per-request time)

About the key. It covers the messages and the sampling settings but not the
adapter path, so a recording bundle can be replayed on a machine where adapters
live elsewhere, or are absent. The cost: two rounds that send the same prompt
with the same sampling through different adapters would get the same key. The
pipeline avoids that by always putting a per-round seed into ``SamplingParams``,
which makes the keys of different rounds differ. ``adapter_sha256`` records which
adapter produced each output, for auditing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..records import sha256_tree, write_jsonl
from .base import Backend, GenerationRequest, check_requests


def adapter_fingerprint(adapter: str | None, cache: dict[str, str | None] | None = None) -> str | None:
    """sha256_tree of an adapter directory (None for the base model)."""
    if adapter is None:
        return None
    if cache is not None and adapter in cache:
        return cache[adapter]
    path = Path(adapter)
    if not path.is_dir():
        raise UserError(f"adapter {adapter!r} is not a directory; cannot record its hash")
    digest = sha256_tree(path)
    if cache is not None:
        cache[adapter] = digest
    return digest


def build_records(
    backend: Backend,
    requests: list[GenerationRequest],
    outputs: list[list[str]],
    seconds: float,
    meta: dict | list[dict] | None = None,
    adapter_hashes: dict[str, str | None] | None = None,
) -> list[dict[str, Any]]:
    if len(outputs) != len(requests):
        raise RuntimeError(f"backend {backend.name} returned {len(outputs)} results for {len(requests)} requests")
    described = backend.describe()
    share = round(seconds / len(requests), 6) if requests else 0.0
    hashes = adapter_hashes if adapter_hashes is not None else {}
    if isinstance(meta, list) and len(meta) != len(requests):
        raise ValueError(f"{len(meta)} meta entries for {len(requests)} requests")
    metas = meta if isinstance(meta, list) else [meta] * len(requests)
    records = []
    for req, texts, item_meta in zip(requests, outputs, metas):
        if len(texts) != req.sampling.n:
            raise RuntimeError(f"backend {backend.name} returned {len(texts)} texts for n={req.sampling.n}")
        records.append({
            "key": req.key,
            "messages": req.messages,
            "sampling": req.sampling.to_dict(),
            "adapter": req.adapter,
            "adapter_sha256": adapter_fingerprint(req.adapter, hashes),
            "answer_format": req.answer_format.record() if req.answer_format else None,
            "backend": described,
            "outputs": list(texts),
            "meta": item_meta,
            "seconds": share,
        })
    return records


def generate_and_record(
    backend: Backend,
    requests: list[GenerationRequest],
    out_path: str | Path,
    meta: dict | list[dict] | None = None,
) -> list[dict[str, Any]]:
    """Generate with ``backend``, write one record per request to ``out_path`` (JSONL, atomic), return them."""
    requests = check_requests(requests)
    # Hash adapters before generating so a bad adapter path fails fast.
    hashes: dict[str, str | None] = {}
    for req in requests:
        adapter_fingerprint(req.adapter, hashes)
    started = time.perf_counter()
    outputs = backend.generate(requests)
    seconds = time.perf_counter() - started
    records = build_records(backend, requests, outputs, seconds, meta, hashes)
    write_jsonl(out_path, records)
    return records
