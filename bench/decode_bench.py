"""What a decoding step costs on this CPU, and what the backend's own loop saves.

Two measurements with the real tiny model (SmolLM2-135M-Instruct, float32, one thread):

1. Milliseconds per decoding step of the bare model (KV cache of a 700-token prompt,
   one new token per row) for batches of 1, 4, 8 and 16 rows. A step of many rows
   costs far less than that many steps of one row, and a batch that shrinks as rows
   finish costs less than one that keeps its finished rows.
2. The transformers backend on the SInQ Alice requests of the default (config.yaml's
   sampling and answer format, the first 8 HumanEval train sources, round-1 seeds),
   once with its own loop (finished rows leave the batch) and once with a loop that
   keeps every row until the longest one ends (what ``generate`` does), at batch sizes
   8 and 16. The texts must be identical in all four runs; the run fails otherwise.

Results go to bench/results/decode.json and decode.md.

    HF_HUB_OFFLINE=1 python bench/decode_bench.py [--model DIR] [--sources 8]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from machine import machine_facts  # noqa: E402

from selfplay.config import validate_config  # noqa: E402
from selfplay.data.sources import humaneval_sources  # noqa: E402
from selfplay.llm.transformers_backend import TransformersBackend  # noqa: E402
from selfplay.records import write_json, write_text_atomic  # noqa: E402
from selfplay.tracks.sinq.game import alice_request  # noqa: E402


def step_ms(model, rows: int, context: int, steps: int) -> float:
    """Milliseconds per greedy decoding step of ``model`` for ``rows`` rows on a cache of
    ``context`` random prompt tokens (the prompt pass is not counted)."""
    import torch

    ids = torch.randint(100, 40000, (rows, context), generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        cache, nxt = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
        started = time.perf_counter()
        for _ in range(steps):
            out = model(input_ids=nxt, past_key_values=cache, use_cache=True)
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
    return (time.perf_counter() - started) / steps * 1000


def step_costs(model_dir: str, context: int, steps: int, rows_list=(1, 4, 8, 16)) -> dict[int, float]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    return {rows: round(step_ms(model, rows, context, steps), 1) for rows in rows_list}


def backend_runs(model_dir: str, n_sources: int) -> list[dict]:
    cfg = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    requests = [alice_request(s, "round1", cfg, None) for s in humaneval_sources("train")[:n_sources]]
    runs, texts = [], None
    for keep_finished in (False, True):
        for batch in (8, 16):
            backend = TransformersBackend(model_dir, batch_size=batch, threads=1, progress=False)
            backend.keep_finished_rows = keep_finished
            started = time.perf_counter()
            out = backend.generate(requests)
            seconds = time.perf_counter() - started
            if texts is not None and out != texts:
                raise SystemExit(f"texts differ (batch {batch}, keep finished rows {keep_finished})")
            texts = out
            runs.append(
                {
                    "loop": "rows kept until the longest ends" if keep_finished else "finished rows leave",
                    "batch_size": batch,
                    "requests": len(requests),
                    "seconds": round(seconds, 1),
                    "generated_tokens": backend.stats["generated_tokens"],
                    "tokens_per_second": round(backend.stats["generated_tokens"] / seconds, 1),
                }
            )
            backend.close()
    return runs


def markdown(result: dict) -> str:
    lines = [
        f"# Decoding on this CPU ({result['date']}, {result['machine']['nproc']} cores, one thread)",
        "",
        f"Bare model, KV cache of {result['context']} tokens: milliseconds per decoding step",
        "",
        "| rows | ms per step | ms per row-step |",
        "|---|---|---|",
    ]
    for rows, ms in result["step_ms"].items():
        lines.append(f"| {rows} | {ms} | {round(ms / int(rows), 1)} |")
    lines += [
        "",
        f"Backend on {result['runs'][0]['requests']} SInQ Alice requests of the default "
        "(constrained, identical texts in every run)",
        "",
        "| loop | batch size | seconds | tokens | tokens/s |",
        "|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['loop']} | {r['batch_size']} | {r['seconds']} | {r['generated_tokens']} | "
            f"{r['tokens_per_second']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--sources", type=int, default=8)
    ap.add_argument("--context", type=int, default=700)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    import torch

    from selfplay.llm.model_prep import ensure_default_model

    torch.set_num_threads(1)
    model = str(ensure_default_model(args.model))
    result = {
        "date": dt.date.today().isoformat(),
        "machine": machine_facts(),
        "model": Path(model).name,
        "context": args.context,
        "step_ms": step_costs(model, args.context, args.steps),
        "runs": backend_runs(model, args.sources),
        "loadavg_after": os.getloadavg(),
    }
    out = ROOT / "bench" / "results"
    write_json(out / "decode.json", result)
    write_text_atomic(out / "decode.md", markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
