"""What sharing the prefill saves: the transformers backend on requests of the default run.

A generation job's prompts are long beside its answers (the default's prompts held 155k
padded prompt tokens against 31k generated ones on 2026-11-28), a prompt token costs about
5 ms to prefill on this CPU, and most of a batch's prompts repeat: a request's n samples
are one prompt, and a track's prompts open with the same system prompt, instructions and
examples. The backend prefills each distinct prompt of a batch once and their common
beginning once. This bench replays the requests recorded by a default run (`make run`
first) through the backend twice on the same batches, with that sharing and without it
(`TransformersBackend.share_prefill = False`: every row prefilled whole, as before
2026-11-28), and fails unless both give the same texts.

The recorded requests are replayed unconstrained (a record keeps its answer format's
hash, not the grammar) with their own sampling and seeds, answers cut at --max-new-tokens
so that prefill, which the sharing changes, is what the timing weighs. Results go to
bench/results/prefill.json and prefill.md.

    HF_HUB_OFFLINE=1 python bench/prefill_bench.py [--max-new-tokens 16] [FILE ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from machine import machine_facts  # noqa: E402

from selfplay.llm.base import GenerationRequest, SamplingParams  # noqa: E402
from selfplay.llm.transformers_backend import TransformersBackend  # noqa: E402
from selfplay.records import read_jsonl, write_json, write_text_atomic  # noqa: E402

# One generation job of four tracks in the default run: the PSV solver (4 specs x 4
# samples), SInQ's Alice (4 sources), GASP's goalpost evaluation (8 problems x 2 samples)
# and the Haskell track's Alice (4 sources x 4 samples).
DEFAULT_FILES = [
    "results/psv/default/transfer/base/seed1/iter0/solve.jsonl",
    "results/sinq/default/round1/alice/shard0.jsonl",
    "results/gasp/default/eval/gasp_goalposts/base/gasp_sampled.jsonl",
    "results/seq/default/round1/alice/shard0.jsonl",
]


def recorded_requests(path: Path, max_new_tokens: int) -> list[GenerationRequest]:
    requests = []
    for record in read_jsonl(path):
        if record.get("adapter"):
            raise SystemExit(f"{path}: a request with an adapter; pick a base-model job")
        sampling = SamplingParams(**record["sampling"])
        sampling = replace(sampling, max_new_tokens=min(sampling.max_new_tokens, max_new_tokens))
        requests.append(GenerationRequest(record["messages"], sampling))
    return requests


def run(
    model: str, requests: list[GenerationRequest], batch_size: int, **switches: bool
) -> tuple[list, dict]:
    """Generate ``requests`` once on a fresh backend with its class switches set
    (``share_prefill``, ``reserve_cache``): the texts and the backend's stats with seconds."""
    backend = TransformersBackend(model, batch_size=batch_size, threads=1, progress=False)
    for name, value in switches.items():
        setattr(backend, name, value)
    started = time.perf_counter()
    texts = backend.generate(requests)
    stats = dict(backend.stats, seconds=round(time.perf_counter() - started, 2))
    backend.close()
    return texts, stats


def markdown(result: dict) -> str:
    lines = [
        f"# Shared prefill on the default's requests ({result['date']}, "
        f"{result['machine']['nproc']} cores, one thread)",
        "",
        f"Requests recorded by a default run, replayed unconstrained with their own sampling, answers "
        f"cut at {result['max_new_tokens']} tokens, batches of {result['batch_size']} rows; the same texts "
        "with and without sharing.",
        "",
        "| job | requests | rows | prompt tokens (prefilled unshared) | prefilled shared | "
        "seconds, unshared | seconds, shared | speed-up |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["jobs"]:
        off, on = r["unshared"], r["shared"]
        lines.append(
            f"| {r['job']} | {r['requests']} | {on['rows']} | {off['prefilled_tokens']} | "
            f"{on['prefilled_tokens']} | {off['seconds']} | {on['seconds']} | "
            f"{off['seconds'] / on['seconds']:.2f}x |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES)
    ap.add_argument("--model", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    jobs = []
    for name in args.files:
        path = ROOT / name
        if not path.is_file():
            raise SystemExit(f"{name}: not found; run the default first (make run)")
        requests = recorded_requests(path, args.max_new_tokens)
        unshared_texts, unshared = run(args.model, requests, args.batch_size, share_prefill=False)
        shared_texts, shared = run(args.model, requests, args.batch_size, share_prefill=True)
        if shared_texts != unshared_texts:
            raise SystemExit(f"{name}: the texts differ with and without a shared prefill")
        jobs.append(
            {
                "job": str(Path(name).relative_to("results").with_suffix("")),
                "requests": len(requests),
                "unshared": unshared,
                "shared": shared,
            }
        )
        print(f"{name}: {unshared['seconds']} s unshared, {shared['seconds']} s shared", flush=True)
    result = {
        "benchmark": "transformers backend: prefill shared within a batch (each distinct prompt once, "
        "their common beginning once) against every row prefilled whole",
        "date": dt.date.today().isoformat(),
        "machine": machine_facts(),
        "max_new_tokens": args.max_new_tokens,
        "batch_size": args.batch_size,
        "jobs": jobs,
        "loadavg_after": os.getloadavg(),
    }
    out = ROOT / "bench" / "results"
    write_json(out / "prefill.json", result)
    write_text_atomic(out / "prefill.md", markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
