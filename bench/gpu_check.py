"""GPU check: the project's GPU code paths on one GPU, offline, in a few minutes.

What it runs, each part timed and checked (a failed check stops that part, names itself
in one line, and the script exits 1 after writing what it saw):

1. models: tiny randomly initialised llama, qwen2 and qwen3 folders
   (``selfplay.llm.tiny_random``: the project's tokenizer and configs are in the
   repository, the weights come from a seed), written to a temporary folder.
2. generation: the transformers backend on each family, on the device in bfloat16:
   greedy and seeded sampling (repeats exactly), weights really on the device.
3. sft_lora: ``train_lora_sft`` on the qwen2 model (papers 000/001/003 fine-tune
   Qwen2.5 models with LoRA) with paper 001's training settings (PSV's LoRA, bfloat16
   weights, gradient checkpointing), a few steps; then generation through the adapter.
   The project has no full-weight SFT (no paper asks for it); full fine-tuning is GRPO's.
4. grpo_full / grpo_lora: ``train_grpo`` on the qwen3 model (paper 002 trains Qwen3-4B)
   with paper 002's GRPO settings, counts shrunk (two optimizer steps, short rollouts),
   on the device the GRPO job resolves (``training_device``) with float32 master weights
   and bf16 compute where the GPU has it, as ``pipeline.evolve.grpo_round`` runs it.
   Checks: the steps ran, the loss is finite, the weights moved.
5. paper_configs: every ``config/papers/*.yaml`` (``seq_e*`` on top of ``seq``) through
   the project's config loader; for each job kind, the device and dtype it would get on
   this machine, resolved by the code the jobs use (the backend factory and its
   defaults; the SFT and GRPO device and precision resolution). On a GPU: every
   generation and training job on cuda, training in bf16 (the configs' PSV Table 5
   setting, and GRPO's bf16 compute), generation in the checkpoint's bf16 (``auto``).
   With ``--device cpu`` the GRPO job must refuse to train (it asked for a GPU).

On CUDA every training and generation part also checks that the GPU's memory was used
(peak allocated bytes). Results: ``--out X.md`` and ``X.json`` beside it, naming the
device (``torch.cuda.get_device_name``), the library versions and the seconds per part.

    python bench/gpu_check.py --out bench/results/gpu_check.md           # on a GPU machine
    python bench/gpu_check.py --device cpu --rollout-engine transformers --out /tmp/gpu_check.md
                                                   # the same paths on the CPU, without vLLM

The CPU mode hides every GPU from torch (CUDA_VISIBLE_DEVICES=""), so it checks the
script and the refusal path, not the GPU. No network is used (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

# On a GPU the whole check must stay short (the issue asks for under 5 minutes).
BUDGET_S = 300
PAPER_BF16_NOTE = "training in bf16: PSV Table 5 (SFT, papers 000/001/003); GRPO's bf16 compute (paper 002)"


class CheckFailed(Exception):
    """A check of this script did not hold (raised explicitly, so ``python -O`` keeps it)."""


def check(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text if isinstance(exc, CheckFailed) else f"{type(exc).__name__}: {text}"


class Context:
    def __init__(self, device: str, work: Path, steps: int, new_tokens: int, rollout_engine: str = "paper"):
        import torch

        self.torch = torch
        self.device = device
        self.rollout_engine = rollout_engine
        self.work = work
        self.steps = steps
        self.new_tokens = new_tokens
        self.models: dict[str, Path] = {}
        self.adapter: Path | None = None

    @property
    def cuda(self) -> bool:
        return self.device == "cuda"

    def reset_peak(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.reset_peak_memory_stats()

    def peak_mib(self) -> float | None:
        if not self.cuda:
            return None
        self.torch.cuda.synchronize()
        return round(self.torch.cuda.max_memory_allocated() / 2**20, 1)

    def check_gpu_used(self, facts: dict, at_least_mib: float) -> None:
        """On CUDA: the part allocated GPU memory (at least the model's weights)."""
        facts["cuda_peak_mib"] = self.peak_mib()
        if self.cuda:
            check(
                facts["cuda_peak_mib"] >= at_least_mib,
                f"peak CUDA memory {facts['cuda_peak_mib']} MiB < {at_least_mib} MiB: the work did not run on the GPU",
            )


# ------------------------------------------------------------------------------- parts


def part_models(ctx: Context) -> dict:
    from selfplay.llm.tiny_random import FAMILIES, write_tiny_model

    facts = {}
    for family in FAMILIES:
        info = write_tiny_model(family, ctx.work / "models" / family, seed=0)
        ctx.models[family] = ctx.work / "models" / family
        facts[family] = {"parameters": info["parameters"], "weights_sha256": info["weights_sha256"][:16]}
        check(info["parameters"] > 3_000_000, f"{family}: only {info['parameters']} parameters")
    return facts


def chat(text: str, system: str | None = None) -> list[dict]:
    return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]


def _generate_checked(backend, ctx: Context, what: str, adapter: str | None = None) -> dict:
    from selfplay.llm.base import GenerationRequest, SamplingParams

    greedy = SamplingParams(temperature=0.0, max_new_tokens=ctx.new_tokens, n=1, seed=0)
    sampled = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=ctx.new_tokens, n=2, seed=11)
    prompts = [
        chat("Write a Python function that reverses a list."),
        chat("What does `sorted(set(x))` return?", system="You are a careful programmer."),
    ]
    requests = [GenerationRequest(p, greedy, adapter=adapter) for p in prompts]
    requests += [GenerationRequest(prompts[0], sampled, adapter=adapter)]
    first = backend.generate(requests)
    again = backend.generate(requests)
    check([len(x) for x in first] == [1, 1, 2], f"{what}: outputs per request {[len(x) for x in first]}")
    check(all(t for x in first for t in x), f"{what}: an empty output")
    check(first == again, f"{what}: greedy or seeded sampling did not repeat")
    check(first[2][0] != first[2][1], f"{what}: two seeded samples were equal")
    return {"greedy": first[0][0][:60], "sampled": [t[:40] for t in first[2]]}


def part_generation(ctx: Context) -> dict:
    from selfplay.llm.factory import make_backend

    facts = {}
    for family, folder in ctx.models.items():
        ctx.reset_peak()
        started = time.perf_counter()
        backend = make_backend(
            {
                "name": "transformers",
                "model": str(folder),
                "dtype": "bfloat16",
                "device": ctx.device,
                "batch_size": 4,
                "progress": False,
            }
        )
        try:
            param = next(backend._base.parameters())
            check(param.device.type == ctx.device, f"{family}: weights on {param.device}, not {ctx.device}")
            check(str(param.dtype) == "torch.bfloat16", f"{family}: weights in {param.dtype}, not bfloat16")
            out = _generate_checked(backend, ctx, family)
            stats = dict(backend.stats)
        finally:
            backend.close()
        out.update(
            seconds=round(time.perf_counter() - started, 2), generated_tokens=stats.get("generated_tokens")
        )
        check(out["generated_tokens"], f"{family}: no token generated")
        ctx.check_gpu_used(out, 5)
        facts[family] = out
    return facts


def paper_config(files: list[str]) -> dict:
    """A paper config as the workflow loads it (files merged left to right, schema defaults)."""
    from snakemake.common.configfile import load_configfile
    from snakemake.utils import update_config

    from selfplay.config import validate_config

    cfg: dict = {}
    for path in files:
        update_config(cfg, load_configfile(str(path)))
    return validate_config(cfg)


def part_sft_lora(ctx: Context) -> dict:
    from selfplay.tracks.sinq.prompts import alice_messages
    from selfplay.train.sft import train_lora_sft

    settings = dict(paper_config([ROOT / "config/papers/sinq.yaml"])["sinq"]["training"]["alice"])
    settings.update(max_steps=ctx.steps, grad_accum=1, batch_size=2)
    sources = {
        "add": "def add(a, b):\n    return a + b\n",
        "neg": "def neg(x):\n    return -x\n",
        "first": "def first(xs):\n    return xs[0]\n",
        "swap": "def swap(p):\n    return p[1], p[0]\n",
    }
    examples = [
        {
            "prompt": alice_messages(code, name, 5),
            "completion": [{"role": "assistant", "content": f"<answer>{name}(1, 2) differs</answer>"}],
        }
        for name, code in sources.items()
    ]
    ctx.reset_peak()
    out = ctx.work / "sft_adapter"
    record = train_lora_sft(str(ctx.models["qwen2"]), examples, str(out), settings, seed=3)
    s = record["settings"]
    facts = {
        "device": record["device"],
        "dtype": s["dtype"],
        "bf16": s["bf16"],
        "gradient_checkpointing": s["gradient_checkpointing"],
        "steps": record["steps"],
        "losses": [h["loss"] for h in record["loss_history"]],
        "train_seconds": record["train_seconds"],
    }
    check(record["device"] == ctx.device, f"SFT trained on {record['device']}, not {ctx.device}")
    check(s["dtype"] == "bfloat16", f"SFT weights in {s['dtype']}, the paper config says bfloat16")
    check(s["bf16"] is ctx.cuda, f"SFT bf16 mixed precision is {s['bf16']} on {ctx.device}")
    check(
        s["gradient_checkpointing"] is True, "SFT gradient checkpointing is off; the paper config turns it on"
    )
    check(record["steps"] == ctx.steps, f"SFT ran {record['steps']} steps, not {ctx.steps}")
    check(
        facts["losses"] and all(x is not None and math.isfinite(x) for x in facts["losses"]),
        f"SFT losses not finite: {facts['losses']}",
    )
    from safetensors.torch import load_file

    lora_b = [t for k, t in load_file(str(out / "adapter_model.safetensors")).items() if "lora_B" in k]
    check(lora_b and any(bool(t.abs().sum() > 0) for t in lora_b), "SFT left every LoRA B matrix at zero")
    ctx.check_gpu_used(facts, 5)
    ctx.adapter = out

    from selfplay.llm.factory import make_backend

    backend = make_backend(
        {
            "name": "transformers",
            "model": str(ctx.models["qwen2"]),
            "dtype": "bfloat16",
            "device": ctx.device,
            "batch_size": 4,
            "progress": False,
        }
    )
    try:
        facts["with_adapter"] = _generate_checked(backend, ctx, "qwen2 + SFT adapter", adapter=str(out))
    finally:
        backend.close()
    return facts


def text_length(prompts, completions, **_):
    """A reward that differs between rollouts of one prompt (their length in characters), so
    the group advantages are not all zero and the step really changes the weights."""
    return [float(len(c[-1]["content"] if isinstance(c, list) else c)) for c in completions]


def grpo_settings(ctx: Context, finetune: str) -> dict:
    settings = dict(paper_config([ROOT / "config/papers/evolve.yaml"])["evolve"]["grpo"])
    # counts only (steps, lengths): the paper's schedule, two optimizer steps from one
    # generation of one group of 8 rollouts
    settings.update(finetune=finetune, max_steps=ctx.steps, max_completion_length=ctx.new_tokens, seed=5)
    if ctx.rollout_engine == "transformers":  # asked for by name (--rollout-engine), recorded in the facts
        from selfplay.train.rl.settings import VLLM_KEYS

        settings = {k: v for k, v in settings.items() if k not in VLLM_KEYS} | {
            "rollout_engine": "transformers"
        }
    if finetune == "lora":
        settings["learning_rate"] = 1e-4
    return settings


def part_grpo(ctx: Context, finetune: str) -> dict:
    import torch
    from safetensors.torch import load_file

    from selfplay.records import read_jsonl
    from selfplay.tracks.evolve.prompts import solve_messages
    from selfplay.train.rl.grpo import train_grpo
    from selfplay.train.settings import training_device

    cfg = paper_config([ROOT / "config/papers/evolve.yaml"])
    device = training_device(
        "auto", gpus_requested=int(cfg["resources"]["train"].get("gpu", 0)) if ctx.cuda else 0
    )
    check(device == ctx.device, f"the GRPO job would train on {device}, not {ctx.device}")
    questions = [("Return the sum of a list of integers.", "total"), ("Reverse a string.", "flip")]
    records = [{"prompt": solve_messages(q, e), "task": "code", "role": "solver"} for q, e in questions]
    settings = grpo_settings(ctx, finetune)
    out, rollouts = ctx.work / f"grpo_{finetune}", ctx.work / f"grpo_{finetune}.jsonl"
    ctx.reset_peak()
    record = train_grpo(
        str(ctx.models["qwen3"]),
        records,
        text_length,
        settings,
        str(out),
        recordings_path=str(rollouts),
        device=device,
        dtype="float32",
    )
    losses = [h.get("loss") for h in record["history"]]
    facts = {
        "rollout_engine": record["settings"].get("rollout_engine"),
        "device": record["device"],
        "master_dtype": record["dtype"],
        "bf16": record["resolved"]["bf16"],
        "gradient_checkpointing": record["resolved"]["gradient_checkpointing"],
        "steps": record["steps"],
        "n_rollouts": record["n_rollouts"],
        "losses": losses,
        "train_seconds": record["train_seconds"],
        "seconds_per_step": record["seconds_per_step"],
    }
    check(record["steps"] == ctx.steps, f"GRPO ran {record['steps']} steps, not {ctx.steps}")
    check(record["device"] == ctx.device, f"GRPO trained on {record['device']}")
    check(
        record["resolved"]["bf16"] is ctx.cuda,
        f"GRPO bf16 compute is {record['resolved']['bf16']} on {ctx.device}",
    )
    check(
        losses and all(x is not None and math.isfinite(x) for x in losses),
        f"GRPO losses not finite: {losses}",
    )
    group = int(settings["group_size"])
    check(
        record["n_rollouts"] >= group and record["n_rollouts"] % group == 0,
        f"GRPO wrote {record['n_rollouts']} rollouts, not whole groups of {group}",
    )
    written = read_jsonl(rollouts)
    check(
        len(written) == record["n_rollouts"] // group and all(len(r["outputs"]) == group for r in written),
        "the rollouts file does not hold one record of a whole group per prompt generated",
    )
    if finetune == "full":
        before = load_file(str(ctx.models["qwen3"] / "model.safetensors"))
        after = load_file(str(out / "model.safetensors"))
        moved = max(float((after[k].float() - before[k].float()).abs().max()) for k in before if k in after)
        facts["max_weight_change"] = moved
        check(
            all(t.dtype == torch.float32 for t in after.values()), "the full policy was not saved in float32"
        )
        check(moved > 0, "GRPO full fine-tuning left every weight unchanged")
    else:
        lora_b = [t for k, t in load_file(str(out / "adapter_model.safetensors")).items() if "lora_B" in k]
        check(
            lora_b and any(bool(t.abs().sum() > 0) for t in lora_b), "GRPO left every LoRA B matrix at zero"
        )
    ctx.check_gpu_used(facts, 5)
    return facts


def paper_config_sets() -> list[list[Path]]:
    """Every paper config; a regime file ``<base>_e<k>.yaml`` goes on top of ``<base>.yaml``."""
    sets = []
    for path in sorted(Path(p) for p in glob.glob(str(ROOT / "config" / "papers" / "*.yaml"))):
        m = re.fullmatch(r"(.+)_e\d+", path.stem)
        sets.append([path.with_name(m.group(1) + ".yaml"), path] if m else [path])
    return sets


def resolve_jobs(cfg: dict) -> list[dict]:
    """Device and dtype per job kind of ``cfg`` on this machine, from the code the jobs run."""
    import inspect

    from selfplay.errors import UserError
    from selfplay.llm.factory import checked_settings, generation_backend_config
    from selfplay.train.rl.grpo import _device_flags
    from selfplay.train.rl.settings import GRPOSettings
    from selfplay.train.settings import resolve_for_device, training_device, validate_settings
    from selfplay.train.sft import _device_facts

    rows = []
    cls, settings = checked_settings(
        generation_backend_config(cfg, "resources/models/" + cfg["model"]["name"])
    )
    defaults = {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items() if k != "self"}
    gen = {**defaults, **settings}
    rows.append(
        {
            "job": f"generate ({cfg['backend']['name']})",
            "gpus": int(cfg["resources"]["generate"].get("gpu", 0)),
            "device": gen.get("device"),
            "dtype": gen.get("dtype"),
            "precision": None,
        }
    )
    train_gpus = int(cfg["resources"]["train"].get("gpu", 0))
    for track in cfg["tracks"]:
        for agent, s in (cfg[track].get("training") or {}).items():
            if not isinstance(s, dict):
                continue
            on_gpu, bf16_ok = _device_facts()  # what the SFT job itself looks at
            r = resolve_for_device(validate_settings(s), on_gpu=on_gpu, bf16_supported=bf16_ok)
            row = {
                "job": f"sft {track}.{agent} (LoRA)",
                "gpus": train_gpus,
                "device": "cuda" if on_gpu else "cpu",
                "dtype": r["dtype"],
                "precision": "bf16" if r["bf16"] else "as weights",
            }
            if train_gpus and not on_gpu:
                row["note"] = (
                    "asked for a GPU, sees none, and would train on the CPU (the SFT job does not refuse)"
                )
            rows.append(row)
        if track == "evolve":
            g = GRPOSettings.from_dict(cfg["evolve"]["grpo"])
            row = {"job": f"grpo evolve ({g.finetune})", "gpus": train_gpus, "dtype": "float32 (master)"}
            try:
                row["device"] = training_device(
                    "auto", gpus_requested=train_gpus
                )  # as rule evolve_grpo passes it
                on_gpu, bf16_ok = _device_flags(row["device"])
                r = resolve_for_device(
                    {"gradient_checkpointing": g.gradient_checkpointing, "bf16": g.bf16},
                    on_gpu=on_gpu,
                    bf16_supported=bf16_ok,
                )
                row["precision"] = "bf16" if r["bf16"] else "float32"
            except UserError as exc:
                row.update(device="refused", precision=None, note=f"refuses: {exc}")
            rows.append(row)
    return rows


def check_jobs(name: str, rows: list[dict], cuda: bool) -> None:
    """What each job of paper config ``name`` must get: on a GPU machine, the GPU for every
    job that asks for one, bf16 training and bf16 (or the checkpoint's, ``auto``)
    generation; without a GPU, a GRPO job that asked for one refuses to train."""
    for row in rows:
        where = f"{name}: {row['job']}"
        if cuda:
            if row["gpus"] > 0:
                check(
                    row["device"] == "cuda",
                    f"{where} asks for {row['gpus']} GPU(s) but would run on {row['device']}",
                )
            if row["job"].startswith("generate"):
                check(
                    row["dtype"] in ("auto", "bfloat16"), f"{where}: dtype {row['dtype']}, not bf16 or auto"
                )
            else:
                check(row["precision"] == "bf16", f"{where}: trains in {row['precision']}, not bf16")
        elif row["job"].startswith("grpo") and row["gpus"] > 0:
            check(
                row["device"] == "refused",
                f"{where}: asked for a GPU, sees none, would train on {row['device']}",
            )
        if row["job"].startswith("sft"):
            check(row["dtype"] == "bfloat16", f"{where}: weights in {row['dtype']}; {PAPER_BF16_NOTE}")


def part_paper_configs(ctx: Context) -> dict:
    facts = {}
    for files in paper_config_sets():
        name = "+".join(p.stem for p in files)
        rows = resolve_jobs(paper_config(files))
        check_jobs(name, rows, ctx.cuda)
        facts[name] = rows
    check(len(facts) >= 5, f"found only {len(facts)} paper configs under config/papers")
    if ctx.cuda:
        check(
            ctx.torch.cuda.is_bf16_supported(),
            "this GPU has no bf16: vLLM's auto and the bf16 training cannot run",
        )
    return facts


PARTS = [
    ("models", part_models),
    ("generation", part_generation),
    ("sft_lora", part_sft_lora),
    ("grpo_full", lambda ctx: part_grpo(ctx, "full")),
    ("grpo_lora", lambda ctx: part_grpo(ctx, "lora")),
    ("paper_configs", part_paper_configs),
]


# ------------------------------------------------------------------------------- output


def device_facts(device: str) -> dict:
    import torch
    from machine import machine_facts

    versions = {}
    for lib in ("transformers", "trl", "peft", "accelerate"):
        try:
            versions[lib] = __import__(lib).__version__
        except ImportError:
            versions[lib] = None
    facts = {
        "device": device,
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        **versions,
        "machine": machine_facts(),
    }
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        facts.update(
            gpu=torch.cuda.get_device_name(0),
            gpu_memory_gib=round(props.total_memory / 2**30, 1),
            gpu_capability=f"{props.major}.{props.minor}",
            bf16_supported=torch.cuda.is_bf16_supported(),
            gpus_visible=torch.cuda.device_count(),
        )
    else:
        facts["gpu"] = None
    return facts


def markdown(result: dict) -> str:
    env = result["environment"]
    where = env["gpu"] or f"CPU only ({env['machine'].get('cpu_model')})"
    lines = [
        f"# GPU check: {'passed' if result['ok'] else 'FAILED'} on {where}",
        "",
        f"{result['date']}; `bench/gpu_check.py --device {env['device']}`; torch {env['torch']} "
        f"(CUDA {env['cuda_runtime']}), transformers {env['transformers']}, trl {env['trl']}, peft {env['peft']}. "
        f"Total {result['seconds']} s. Tiny random models (selfplay.llm.tiny_random, seed 0); "
        f"{result['steps']} training steps, {result['new_tokens']} new tokens per row.",
        "",
        "| part | ok | seconds | facts |",
        "|---|---|---|---|",
    ]
    for p in result["parts"]:
        facts = p.get("error") or ", ".join(
            _short(k, v) for k, v in (p.get("facts") or {}).items() if p["name"] != "paper_configs"
        )
        lines.append(f"| {p['name']} | {'yes' if p['ok'] else 'NO'} | {p['seconds']} | {facts} |")
    configs = next((p.get("facts") for p in result["parts"] if p["name"] == "paper_configs"), None)
    if configs:
        lines += [
            "",
            "Device and dtype per job of each paper config on this machine:",
            "",
            "| config | job | GPUs asked | device | dtype | compute | note |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, rows in configs.items():
            for r in rows:
                lines.append(
                    f"| {name} | {r['job']} | {r['gpus']} | {r['device']} | {r['dtype']} | "
                    f"{r.get('precision') or ''} | {r.get('note') or ''} |"
                )
    return "\n".join(lines) + "\n"


def _short(key: str, value) -> str:
    if isinstance(value, dict):
        inner = {k: v for k, v in value.items() if k in ("seconds", "device", "cuda_peak_mib", "parameters")}
        return f"{key}: {json.dumps(inner)}" if inner else f"{key}: ok"
    if isinstance(value, list) and value and isinstance(value[0], float):
        value = [round(v, 4) for v in value]
    return f"{key}={value}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument(
        "--out",
        default=str(ROOT / "bench" / "results" / "gpu_check.md"),
        help="the markdown result; the JSON goes beside it (.json)",
    )
    ap.add_argument("--steps", type=int, default=2, help="optimizer steps of each training part (>= 2)")
    ap.add_argument("--new-tokens", type=int, default=16, help="tokens per generated row and GRPO rollout")
    ap.add_argument("--work", help="folder for the models and trained outputs (default: a temporary one)")
    ap.add_argument(
        "--rollout-engine",
        choices=("paper", "transformers"),
        default="paper",
        help="GRPO's rollouts: the paper config's engine (paper 002: vLLM colocated, which needs vLLM "
        "in this Python, as in the GPU image) or the policy's own generate",
    )
    args = ap.parse_args(argv)
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch is imported: the CPU mode sees no GPU
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(
            "gpu_check: FAILED: torch sees no CUDA device (use --device cpu to check the script without one)",
            file=sys.stderr,
        )
        return 1
    out = Path(args.out)
    started = time.perf_counter()
    parts = []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        ctx = Context(args.device, work, args.steps, args.new_tokens, args.rollout_engine)
        for name, fn in PARTS:
            t0 = time.perf_counter()
            print(f"gpu_check: {name} ...", file=sys.stderr, flush=True)
            entry = {"name": name}
            try:
                entry.update(ok=True, facts=fn(ctx))
            except Exception as exc:  # noqa: BLE001 - every failure becomes the part's one-line reason
                entry.update(ok=False, error=one_line(exc))
            entry["seconds"] = round(time.perf_counter() - t0, 2)
            print(
                f"gpu_check: {name}: {'ok' if entry['ok'] else 'FAILED: ' + entry['error']} ({entry['seconds']} s)",
                file=sys.stderr,
                flush=True,
            )
            parts.append(entry)
            if name == "models" and not entry["ok"]:
                break  # nothing else can run without the models
    seconds = round(time.perf_counter() - started, 1)
    if args.device == "cuda" and seconds > BUDGET_S:
        parts.append(
            {
                "name": "budget",
                "ok": False,
                "seconds": 0.0,
                "error": f"the check took {seconds} s on the GPU, over its {BUDGET_S} s budget",
            }
        )
    result = {
        "check": "bench/gpu_check.py",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "ok": all(p["ok"] for p in parts) and len(parts) >= len(PARTS),
        "seconds": seconds,
        "steps": args.steps,
        "new_tokens": args.new_tokens,
        "environment": device_facts(args.device),
        "parts": parts,
    }
    from selfplay.records import write_json, write_text_atomic

    write_json(out.with_suffix(".json"), result)
    write_text_atomic(out, markdown(result))
    print(f"gpu_check: wrote {out} and {out.with_suffix('.json')}", file=sys.stderr)
    failed = [p for p in parts if not p["ok"]]
    if failed or not result["ok"]:
        first = failed[0] if failed else {"name": "models", "error": "did not run every part"}
        print(f"gpu_check: FAILED: {first['name']}: {first['error']}", file=sys.stderr)
        return 1
    print(
        f"gpu_check: passed on {result['environment']['gpu'] or 'the CPU'} in {result['seconds']} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
