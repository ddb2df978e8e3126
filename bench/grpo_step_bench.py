"""Wall time of GRPO optimizer steps on this CPU, with the real tiny model.

Runs ``selfplay.train.rl.train_grpo`` (TRL's GRPOTrainer) on SmolLM2-135M-Instruct
with the layer's default schedule: group size 8, a micro-batch of 8 completions (one
prompt's group), steps_per_generation 2, so one generation of 2 prompts x 8 rollouts
feeds 2 optimizer steps. Each setting trains 2 steps:

- step 1 pays the generation (16 rollouts), the reward function, the old-policy
  log-probabilities (needed because the clip can act) and one forward/backward/
  optimizer step on 8 completions;
- step 2 is one forward/backward/optimizer step only.

Both estimators (TRL's GRPO, task-relative REINFORCE++) at two completion lengths
with a LoRA adapter (r 16), plus full fine-tuning at the shorter length. The
completions are the pipeline's kind of prompt (a small Python function and a task,
~150-300 tokens, from generation_bench). The rollouts are sampled, so a row may stop
before the length limit; ``completion_tokens`` says how long they were. The CPU may
be shared with other workers: the 1-minute load average is recorded around every
setting, and every setting runs ``--repeats`` times (default 2), the fastest reported.
Results go to bench/results/grpo_steps.json and grpo_steps.md.

    HF_HUB_OFFLINE=1 python bench/grpo_step_bench.py [--model DIR] [--lengths 16 64] [--threads 2] [--repeats 2]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from generation_bench import make_prompts  # noqa: E402
from machine import machine_facts  # noqa: E402

from selfplay.records import read_jsonl, write_json, write_text_atomic  # noqa: E402
from selfplay.train.rl import train_grpo  # noqa: E402

TASKS = ("deduction", "abduction")


def text_length(prompts, completions, **columns):
    """A cheap reward that varies between rollouts of one prompt: the completion's length in characters."""
    return [float(len(c[0]["content"])) for c in completions]


def fastest_of(model: str, estimator: str, finetune: str, length: int, work: Path, repeats: int) -> dict:
    """Run a setting ``repeats`` times; the fastest run (by training time), with every run's times beside it."""
    runs = []
    for i in range(repeats):
        runs.append(run_setting(model, estimator, finetune, length, work / f"repeat{i}"))
    best = min(runs, key=lambda r: r["train_s"])
    return {
        **best,
        "repeats": [
            {
                k: r[k]
                for k in ("generation_s", "step1_s", "step2_s", "train_s", "loadavg_before", "loadavg_after")
            }
            for r in runs
        ],
    }


def run_setting(model: str, estimator: str, finetune: str, length: int, work: Path) -> dict:
    records = [{"prompt": p, "task": TASKS[i % 2], "role": "solver"} for i, p in enumerate(make_prompts(2))]
    settings = {
        "group_size": 8,
        "batch_size": 8,
        "steps_per_generation": 2,
        "grad_accum": 1,
        "max_steps": 2,
        "max_completion_length": length,
        "finetune": finetune,
        "estimator": estimator,
        "seed": 1,
    }
    name = f"{estimator}-{finetune}-{length}"
    load_before = os.getloadavg()
    started = time.perf_counter()
    record = train_grpo(
        model, records, text_length, settings, work / name, recordings_path=work / f"{name}.jsonl"
    )
    seconds = time.perf_counter() - started
    rollouts = read_jsonl(work / f"{name}.jsonl")
    history = record["history"]
    tokens = [n for r in rollouts for n in r["meta"]["completion_tokens"]]
    return {
        "estimator": estimator,
        "finetune": finetune,
        "max_completion_length": length,
        "completion_tokens_mean": round(sum(tokens) / len(tokens), 1),
        "generation_s": round(sum(r["seconds"] for r in rollouts), 2),
        "step1_s": history[0]["seconds"],
        "step2_s": history[1]["seconds"],
        "train_s": record["train_seconds"],
        "total_s_with_load_and_save": round(seconds, 2),
        "loss": [h["loss"] for h in history],
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def markdown(result: dict) -> str:
    lines = [
        f"# GRPO step wall time ({result['date'][:10]}, {result['machine']['nproc']} cores, "
        f"{result['threads']} torch threads)",
        "",
        "SmolLM2-135M-Instruct on CPU, float32; group size 8, micro-batch 8 completions, "
        "steps_per_generation 2 (one generation of 2 prompts x 8 rollouts feeds 2 optimizer steps). "
        "Step 1 includes generating the 16 rollouts, scoring them and the old-policy log-probabilities; "
        "step 2 is one forward/backward/optimizer step on 8 completions. "
        f"Fastest of {result['repeats']} runs per setting; the CPU was shared with other workers (load1: the "
        "1-minute load average before and after the reported run). "
        "`bench/grpo_step_bench.py` made this; the JSON beside it has every run.",
        "",
        "| estimator | finetune | max tokens | mean tokens | generation s | step 1 s | step 2 s | load1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['estimator']} | {r['finetune']} | {r['max_completion_length']} | {r['completion_tokens_mean']} "
            f"| {r['generation_s']} | {r['step1_s']} | {r['step2_s']} "
            f"| {r['loadavg_before'][0]:.1f} -> {r['loadavg_after'][0]:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / ".cache" / "tests" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--lengths", nargs="+", type=int, default=[16, 64])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2, help="runs per setting; the fastest is reported")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "grpo_steps.json"))
    args = ap.parse_args(argv)

    from selfplay.llm.model_prep import ensure_default_model

    model = str(ensure_default_model(args.model))
    import torch
    import trl

    torch.set_num_threads(args.threads)
    settings = [(est, "lora", n) for n in args.lengths for est in ("grpo", "task_relative_reinforce_pp")]
    settings.append(("grpo", "full", min(args.lengths)))
    runs = []
    with tempfile.TemporaryDirectory(prefix="grpo-bench-") as tmp:
        for estimator, finetune, length in settings:
            print(f"running {estimator} {finetune} max {length} tokens ...", file=sys.stderr, flush=True)
            runs.append(fastest_of(model, estimator, finetune, length, Path(tmp), args.repeats))

    result = {
        "benchmark": "GRPO optimizer step wall time (train_grpo on TRL), tiny model on CPU",
        "model": model,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(torch=torch.__version__, trl=trl.__version__),
        "threads": args.threads,
        "repeats": args.repeats,
        "note": "seconds are wall time of the fastest of `repeats` runs per setting (all runs under `repeats`); "
        "the CPU may be shared with other workers (see loadavg_before/after)",
        "runs": runs,
    }
    write_json(args.out, result)
    write_text_atomic(Path(args.out).with_suffix(".md"), markdown(result))
    print(markdown(result))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
