"""What a cache allocated once per batch saves: the transformers backend on the default's requests.

transformers' DynamicCache appends each decoding step's keys and values with ``torch.cat``,
copying every layer's whole cache into a new tensor at every step; the backend's
``reserved_cache`` (src/selfplay/llm/kv_cache.py) writes them into a buffer allocated once
per batch. The copy grows with the prompt and the rows, so it weighs on the jobs with long
prompts and full batches. This bench replays the requests recorded by a default run
(`make run` first) through the backend both ways on the same batches, answers at their
recorded length limits (decoding is what the cache changes), and fails unless both give
the same texts. It also times one decoding step of the bare model on a 600-token cache
both ways. Results go to bench/results/kv_cache.json and kv_cache.md.

    HF_HUB_OFFLINE=1 python bench/kv_cache_bench.py [--results DIR] [FILE ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from machine import machine_facts  # noqa: E402
from prefill_bench import DEFAULT_FILES, recorded_requests, run  # noqa: E402

from selfplay.llm.kv_cache import reserved_cache  # noqa: E402
from selfplay.records import write_json, write_text_atomic  # noqa: E402


def decoding_step_ms(model_dir: str, rows: int, cached: int = 600, steps: int = 20) -> dict:
    """One decoding step of the bare model (no sampling) with ``rows`` rows on a ``cached``-token
    cache, transformers' cache against the reserved one, interleaved three times; the median."""
    import statistics

    import torch
    import transformers
    from transformers.cache_utils import DynamicCache

    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    generator = torch.Generator().manual_seed(0)
    prompt = torch.randint(100, 40000, (rows, cached), generator=generator)
    token = torch.randint(100, 40000, (rows, 1), generator=generator)
    times: dict[str, list[float]] = {"transformers": [], "reserved": []}
    for _ in range(3):
        for name in times:
            with torch.inference_mode():
                cache = DynamicCache(config=model.config) if name == "transformers" else None
                cache = cache or reserved_cache(model, cached + steps)
                model(input_ids=prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)
                attention = torch.ones(rows, cached, dtype=torch.long)
                started = time.perf_counter()
                for k in range(steps):
                    attention = torch.cat([attention, attention.new_ones((rows, 1))], dim=1)
                    position = torch.full((rows, 1), cached + k)
                    model(
                        input_ids=token,
                        attention_mask=attention,
                        position_ids=position,
                        past_key_values=cache,
                        use_cache=True,
                    )
                times[name].append((time.perf_counter() - started) / steps * 1e3)
    return {name: round(statistics.median(ms), 1) for name, ms in times.items()}


def markdown(result: dict) -> str:
    lines = [
        f"# A KV cache allocated once per batch ({result['date']}, {result['machine']['nproc']} cores, one thread)",
        "",
        "Requests recorded by a default run, replayed unconstrained with their own sampling and length "
        f"limits, batches of {result['batch_size']} rows; the same texts with transformers' DynamicCache "
        "and with the reserved cache.",
        "",
        "| job | requests | rows | generated tokens | seconds, DynamicCache | seconds, reserved | speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["jobs"]:
        off, on = r["dynamic"], r["reserved"]
        lines.append(
            f"| {r['job']} | {r['requests']} | {on['rows']} | {on['generated_tokens']} | {off['seconds']} | "
            f"{on['seconds']} | {off['seconds'] / on['seconds']:.2f}x |"
        )
    lines += [
        "",
        "One decoding step of the bare model on a 600-token cache (ms, median of 3 interleaved runs of 20 steps):",
        "",
        "| rows | DynamicCache | reserved |",
        "|---|---|---|",
    ]
    for rows, ms in result["decoding_step_ms"].items():
        lines.append(f"| {rows} | {ms['transformers']} | {ms['reserved']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", default=DEFAULT_FILES)
    ap.add_argument("--results", default=str(ROOT), help="the folder holding the default run's results/")
    ap.add_argument("--model", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--batch-size", type=int, default=16)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    jobs = []
    for name in args.files:
        path = Path(args.results) / name
        if not path.is_file():
            raise SystemExit(f"{path}: not found; run the default first (make run)")
        requests = recorded_requests(path, max_new_tokens=10**6)
        dynamic_texts, dynamic = run(args.model, requests, args.batch_size, reserve_cache=False)
        reserved_texts, reserved = run(args.model, requests, args.batch_size, reserve_cache=True)
        if reserved_texts != dynamic_texts:
            raise SystemExit(f"{name}: the texts differ between the two caches")
        jobs.append(
            {
                "job": str(Path(name).relative_to("results").with_suffix("")),
                "requests": len(requests),
                "dynamic": dynamic,
                "reserved": reserved,
            }
        )
        print(f"{name}: {dynamic['seconds']} s DynamicCache, {reserved['seconds']} s reserved", flush=True)
    result = {
        "benchmark": "transformers backend: KV cache allocated once per batch against transformers' "
        "DynamicCache (torch.cat at every step)",
        "date": dt.date.today().isoformat(),
        "machine": machine_facts(),
        "batch_size": args.batch_size,
        "jobs": jobs,
        "decoding_step_ms": {rows: decoding_step_ms(args.model, rows) for rows in (1, 4, 16)},
        "loadavg_after": os.getloadavg(),
    }
    out = ROOT / "bench" / "results"
    write_json(out / "kv_cache.json", result)
    write_text_atomic(out / "kv_cache.md", markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
