"""What LoRA dropout costs in a CPU training step of the tiny model.

With dropout above 0, PEFT runs every adapted layer's input through dropout before the
adapter (a new copy of the input per adapted module, and its backward pass); at 0 it
skips that. The embedded default trains its LoRA adapters for 1 to 3 steps, where
dropout regularises nothing, so config.yaml sets it to 0 (the paper configs keep the
library's 0.05). This bench times one forward and backward pass of SmolLM2-135M-Instruct
(float32, one thread) on one sequence, as the default's SFT runs them (batch 1), under a
LoRA adapter on all seven projections (r=8, alpha=16) with dropout 0.05 and 0, and with
full fine-tuning beside them; the three are interleaved, so a slower spell of the machine
weighs on each alike. Results go to bench/results/lora_dropout.json and .md.

    HF_HUB_OFFLINE=1 python bench/lora_dropout_bench.py [--tokens 830] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from machine import machine_facts  # noqa: E402

from selfplay.records import write_json, write_text_atomic  # noqa: E402

MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def models(path: str) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    out = {}
    for dropout in (0.05, 0.0):
        torch.manual_seed(0)
        base = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cfg = LoraConfig(
                r=8, lora_alpha=16, lora_dropout=dropout, target_modules=MODULES, task_type="CAUSAL_LM"
            )
            out[f"LoRA, dropout {dropout}"] = get_peft_model(base, cfg).train()
    out["full fine-tuning"] = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).train()
    return out


def step_seconds(model, ids) -> float:
    started = time.perf_counter()
    model(input_ids=ids, labels=ids).loss.backward()
    seconds = time.perf_counter() - started
    model.zero_grad(set_to_none=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--tokens", type=int, default=830)  # a SInQ Alice training example of the default
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    ids = torch.randint(100, 40000, (1, args.tokens), generator=torch.Generator().manual_seed(0))
    built = models(args.model)
    for model in built.values():  # warm-up
        step_seconds(model, ids)
    times: dict[str, list[float]] = {name: [] for name in built}
    for _ in range(args.repeats):
        for name, model in built.items():
            times[name].append(round(step_seconds(model, ids), 2))
    result = {
        "benchmark": "one forward and backward pass of the tiny model on one sequence: LoRA dropout 0.05 vs 0",
        "date": dt.date.today().isoformat(),
        "machine": machine_facts(),
        "tokens": args.tokens,
        "seconds": times,
        "median_seconds": {name: statistics.median(t) for name, t in times.items()},
        "loadavg_after": os.getloadavg(),
    }
    med = result["median_seconds"]
    lines = [
        f"# LoRA dropout in a CPU training step ({result['date']}, {result['machine']['nproc']} cores, one thread)",
        "",
        f"One forward and backward pass, SmolLM2-135M-Instruct, float32, one sequence of {args.tokens} tokens; "
        f"LoRA r=8, alpha=16 on {', '.join(MODULES)}; {args.repeats} interleaved repeats after a warm-up.",
        "",
        "| model | seconds (median) | each repeat |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {med[name]} | {', '.join(map(str, times[name]))} |" for name in built]
    lines += [
        "",
        f"Dropout 0.05 costs {med['LoRA, dropout 0.05'] / med['LoRA, dropout 0.0']:.2f}x the step without it. "
        f"Load average after the run: {', '.join(f'{x:.2f}' for x in result['loadavg_after'])}.",
    ]
    out = ROOT / "bench" / "results"
    write_json(out / "lora_dropout.json", result)
    write_text_atomic(out / "lora_dropout.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
