"""float32 vs bfloat16 for the transformers backend on the pipeline's own prompts.

The embedded default's prompts are long (SInQ's Alice prompt around a HumanEval
program is ~700 tokens), so the prompt pass (prefill) weighs as much as decoding.
On a CPU without native bf16 matrix units (AVX2 only, as on the 2-core CI machines)
torch runs bf16 matrix products far slower than float32, which shows in the prefill
and not in the decode steps. This measures both, through TransformersBackend, on a
batch of the real SInQ Alice prompts built by the pipeline's own request builder:

- prefill seconds: generate() with max_new_tokens=1;
- decode ms/step: (generate() with 1 + S new tokens, every row forced to run S steps,
  minus the prefill run) / S.

Results go to bench/results/dtype.json; `config.yaml` picks its `backend.dtype` from them.

    HF_HUB_OFFLINE=1 python bench/dtype_bench.py [--model DIR] [--batch 4] [--steps 48]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from selfplay.data.sources import humaneval_sources  # noqa: E402
from selfplay.llm.base import GenerationRequest, SamplingParams  # noqa: E402
from selfplay.llm.transformers_backend import TransformersBackend  # noqa: E402
from selfplay.records import write_json  # noqa: E402
from selfplay.tracks.sinq.game import alice_request  # noqa: E402


def cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next(
        (line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), []
    )
    return sorted(f for f in flags if f.startswith(("avx", "amx")))


def timed(backend: TransformersBackend, requests: list[GenerationRequest]) -> float:
    started = time.perf_counter()
    backend.generate(requests)
    return time.perf_counter() - started


def measure(model: str, dtype: str, prompts: list[list[dict]], steps: int, threads: int) -> dict:
    backend = TransformersBackend(
        model, dtype=dtype, batch_size=len(prompts), threads=threads, progress=False
    )
    # No stop token can end a row early: every row decodes exactly `steps` tokens.
    backend.stop_ids = set()
    greedy = lambda n: SamplingParams(temperature=0, max_new_tokens=n)  # noqa: E731
    backend.generate([GenerationRequest(prompts[0], greedy(2))])  # warm-up
    prefill = timed(backend, [GenerationRequest(p, greedy(1)) for p in prompts])
    full = timed(backend, [GenerationRequest(p, greedy(1 + steps)) for p in prompts])
    prompt_tokens = sum(len(backend._prompt_ids(GenerationRequest(p, greedy(1)))) for p in prompts)
    backend.close()
    return {
        "dtype": dtype,
        "batch": len(prompts),
        "prompt_tokens": prompt_tokens,
        "prefill_s": round(prefill, 2),
        "decode_ms_per_step": round(1000 * (full - prefill) / steps, 1),
        "seconds_for_320_new_tokens": round(prefill + 320 * (full - prefill) / steps, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / ".cache" / "tests" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--batch", type=int, default=4, help="prompts per batch (the default's SInQ round has 4)")
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "dtype.json"))
    args = ap.parse_args(argv)

    from selfplay.llm.model_prep import ensure_default_model

    model = ensure_default_model(args.model)
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    sources = humaneval_sources("train")[: args.batch]
    prompts = [alice_request(s, "round1", cfg, None).messages for s in sources]

    import torch

    runs = []
    for dtype in ("float32", "bfloat16"):
        print(f"measuring {dtype} ...", file=sys.stderr, flush=True)
        runs.append(measure(str(model), dtype, prompts, args.steps, args.threads))
    result = {
        "benchmark": "transformers backend: float32 vs bfloat16 on SInQ Alice prompts (prefill and decode)",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "nproc": os.cpu_count(),
            "platform": platform.platform(),
            "cpu_flags": cpu_flags(),
            "torch": torch.__version__,
            "threads": args.threads,
        },
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "runs": runs,
    }
    write_json(args.out, result)
    print(
        f"{'dtype':9} {'batch':>5} {'prompt tok':>10} {'prefill s':>9} {'decode ms/step':>14} {'s for 320 new':>13}"
    )
    for r in runs:
        print(
            f"{r['dtype']:9} {r['batch']:>5} {r['prompt_tokens']:>10} {r['prefill_s']:>9} "
            f"{r['decode_ms_per_step']:>14} {r['seconds_for_320_new_tokens']:>13}"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
