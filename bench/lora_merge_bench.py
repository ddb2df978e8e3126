"""What a LoRA adapter costs a decoding step on this CPU, run beside the weights or merged.

The transformers backend merges a request's adapter into float32 weights while it decodes
(``merge_adapter``, src/selfplay/llm/transformers_backend.py). Two measurements with the
real tiny model (SmolLM2-135M-Instruct, float32, one thread) and an adapter of the
default's shape (r 8, alpha 16, the training layer's target modules; B drawn small, as a
few steps of training leave it):

1. Milliseconds per decoding step (KV cache of a 700-token prompt) for 1, 4 and 16 rows:
   the bare model, the adapter run beside it (PEFT's LoRA layers), and the adapter merged.
   The three are measured in turn, ``--repeats`` times, and the median is kept, so a
   slower minute of the machine touches all three alike.
2. The backend on the default's SInQ Alice requests (config.yaml's sampling and answer
   format, the first 8 HumanEval train sources) with the adapter, merged and not, in
   turn: seconds, tokens, and how many texts are identical (merging changes the float
   rounding of each projection, so a sampled token may come out differently).

Results go to bench/results/lora_merge.json and lora_merge.md.

    HF_HUB_OFFLINE=1 python bench/lora_merge_bench.py [--model DIR] [--repeats 3]
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from decode_bench import step_ms  # noqa: E402
from machine import machine_facts  # noqa: E402

from selfplay.config import validate_config  # noqa: E402
from selfplay.data.sources import humaneval_sources  # noqa: E402
from selfplay.llm.transformers_backend import TransformersBackend  # noqa: E402
from selfplay.records import write_json, write_text_atomic  # noqa: E402
from selfplay.tracks.sinq.game import alice_request  # noqa: E402
from selfplay.train.settings import DEFAULT_TARGET_MODULES  # noqa: E402

ROWS = (1, 4, 16)


def make_adapter(model_dir: str, out: Path, seed: int = 0) -> None:
    """A LoRA adapter of the default's shape whose B is small and nonzero (a fresh one is
    zero, which would make the adapter's output the base model's)."""
    import peft
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    lora = peft.LoraConfig(
        r=8,
        lora_alpha=16,
        lora_dropout=0.0,
        target_modules=list(DEFAULT_TARGET_MODULES),
        task_type="CAUSAL_LM",
    )
    wrapped = peft.get_peft_model(model, lora)
    with torch.no_grad():
        for name, param in wrapped.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 2e-3)
    wrapped.save_pretrained(str(out))


def step_costs(model_dir: str, adapter: Path, context: int, steps: int, repeats: int) -> dict:
    import peft
    import torch
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    beside = peft.PeftModel.from_pretrained(copy.deepcopy(base), str(adapter)).eval()
    merged = peft.PeftModel.from_pretrained(copy.deepcopy(base), str(adapter)).merge_and_unload().eval()
    models = {"base": base, "adapter beside": beside, "adapter merged": merged}
    samples: dict[str, dict[int, list[float]]] = {k: {r: [] for r in ROWS} for k in models}
    for _ in range(repeats):
        for rows in ROWS:
            for kind, model in models.items():
                samples[kind][rows].append(step_ms(model, rows, context, steps))
    return {k: {r: round(statistics.median(v), 1) for r, v in per.items()} for k, per in samples.items()}


def backend_runs(model_dir: str, adapter: Path, n_sources: int, repeats: int) -> dict:
    cfg = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    requests = [alice_request(s, "round2", cfg, str(adapter)) for s in humaneval_sources("train")[:n_sources]]
    runs: list[dict] = []
    texts: dict[bool, list] = {}
    for _ in range(repeats):
        for merge in (False, True):
            backend = TransformersBackend(
                model_dir, batch_size=16, threads=1, progress=False, merge_adapter=merge
            )
            started = time.perf_counter()
            out = backend.generate(requests)
            seconds = time.perf_counter() - started
            if merge in texts and out != texts[merge]:
                raise SystemExit(f"merge_adapter={merge}: a rerun gave other texts")
            texts[merge] = out
            runs.append(
                {
                    "merge_adapter": merge,
                    "requests": len(requests),
                    "seconds": round(seconds, 1),
                    "generated_tokens": backend.stats["generated_tokens"],
                    "tokens_per_second": round(backend.stats["generated_tokens"] / seconds, 1),
                }
            )
            backend.close()
    pairs = [(a, b) for ra, rb in zip(texts[False], texts[True]) for a, b in zip(ra, rb)]
    return {"runs": runs, "texts": len(pairs), "identical_texts": sum(a == b for a, b in pairs)}


def markdown(result: dict) -> str:
    steps = result["step_ms"]
    lines = [
        f"# A LoRA adapter beside the weights or merged ({result['date']}, "
        f"{result['machine']['nproc']} cores, one thread)",
        "",
        f"Milliseconds per decoding step, KV cache of {result['context']} tokens "
        f"(median of {result['repeats']} rounds, the three measured in turn)",
        "",
        "| rows | base | adapter beside | adapter merged | beside / merged |",
        "|---|---|---|---|---|",
    ]
    for rows in ROWS:
        b, s, m = (steps[k][rows] for k in ("base", "adapter beside", "adapter merged"))
        lines.append(f"| {rows} | {b} | {s} | {m} | {round(s / m, 2)} |")
    backend = result["backend"]
    lines += [
        "",
        f"Backend on {backend['runs'][0]['requests']} SInQ Alice requests of the default with the adapter "
        f"(batch 16, constrained): {backend['identical_texts']} of {backend['texts']} texts identical "
        "merged and not (a text may differ where float rounding of the projections turns a sampled token)",
        "",
        "| merge_adapter | seconds | tokens | tokens/s |",
        "|---|---|---|---|",
    ]
    for r in backend["runs"]:
        lines.append(
            f"| {r['merge_adapter']} | {r['seconds']} | {r['generated_tokens']} | {r['tokens_per_second']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--sources", type=int, default=8)
    ap.add_argument("--context", type=int, default=700)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import torch

    from selfplay.llm.model_prep import ensure_default_model

    torch.set_num_threads(1)
    model = str(ensure_default_model(args.model))
    with tempfile.TemporaryDirectory() as tmp:
        adapter = Path(tmp) / "adapter"
        make_adapter(model, adapter)
        result = {
            "date": dt.date.today().isoformat(),
            "machine": machine_facts(),
            "model": Path(model).name,
            "context": args.context,
            "repeats": args.repeats,
            "step_ms": step_costs(model, adapter, args.context, args.steps, args.repeats),
            "backend": backend_runs(model, adapter, args.sources, max(1, args.repeats - 1)),
            "loadavg_after": os.getloadavg(),
        }
    out = ROOT / "bench" / "results"
    write_json(out / "lora_merge.json", result)
    write_text_atomic(out / "lora_merge.md", markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
