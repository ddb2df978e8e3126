"""How much GPU memory each GPU job of a config needs, and whether the GPU it asks for has it.

Computed from what the config says, before anything is submitted:

- the model's size and shape (:func:`architecture`): a downloaded model's own
  ``config.json`` where present, else the table in ``models.yaml`` (published configs,
  source named there), else the size in the model's name (``...-27b``) with a shape
  scaled from the nearest table entry (said so in the estimate);
- generation with vLLM, per GPU: weights / tensor-parallel size, the activations of one
  scheduler step, and the KV cache of one full-context sequence (``max_model_len``):
  vLLM refuses to start when one such sequence does not fit in
  ``gpu_memory_utilization`` of the GPU, which is the 32B pool's failure on one GPU;
  the estimate also says how many full-context sequences fit at once;
- training: weights, gradients and AdamW's two moments in the weights' dtype for full
  fine-tuning (4 x 4 bytes = 16 bytes per parameter in float32, 8 in bfloat16: torch's
  AdamW keeps its moments in the parameters' dtype), or the frozen base plus a LoRA
  adapter's weights, gradients and float32 moments; activations of one micro-batch (with
  gradient checkpointing: one hidden state per layer per token, plus the logits and their
  gradient); for GRPO also the KV cache of one generation batch, which TRL samples in
  the training process before the optimizer steps.

All numbers are estimates (GiB = 2^30 bytes) meant to catch a job that cannot fit, not to
tune one; the constants below say what they stand for.

The GPU a job asks for is ``resources.<kind>.gpu_model`` (the name SLURM gets, see
:data:`GPU_MIB`) or ``resources.<kind>.gpu_mem_gib``. A kind that names neither is checked
against the largest GPU in the table: the plan refuses only what fits no GPU, and says so.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import UserError
from ..train.rl.launch import CONFIG_FILES as LAUNCH_CONFIGS
from ..train.rl.settings import MASTER_DTYPE
from .serving import served_backend, tensor_parallel

GIB = float(1 << 30)

# Memory of each GPU, MiB, as nvidia-smi reports memory.total (NVIDIA's datasheets give
# the same sizes in GB: A100 40/80 GB, H100 80 GB (SXM/PCIe) and 94 GB (NVL), H200 141 GB,
# L40S/L40/A40 48 GB, RTX A6000 48 GB, L4 24 GB, A10 24 GB, V100 16/32 GB). Keys are
# normalised names (lowercase, only letters and digits, no trailing "gb"); an ambiguous
# name (a100, v100) means the smaller variant: name the larger one to get it.
GPU_MIB: dict[str, int] = {
    "a100": 40960,
    "a10040": 40960,
    "a100pcie40": 40960,
    "a100sxm440": 40960,
    "a10080": 81920,
    "a100pcie80": 81920,
    "a100sxm480": 81920,
    "h100": 81559,
    "h10080": 81559,
    "h100sxm": 81559,
    "h100pcie": 81559,
    "h100nvl": 95830,
    "h10094": 95830,
    "h200": 143771,
    "h200141": 143771,
    "gh200": 97871,
    "l40s": 46068,
    "l40": 46068,
    "a40": 46068,
    "a6000": 49140,
    "rtxa6000": 49140,
    "l4": 23034,
    "a10": 23028,
    "v100": 16384,
    "v10016": 16384,
    "v10032": 32768,
}

# vLLM's memory outside weights and KV cache (CUDA context, CUDA graphs, sampler and
# LoRA buffers): an allowance, not a measurement.
VLLM_OVERHEAD_GIB = 2.0
# Tokens vLLM processes in one scheduler step (its chunked-prefill budget in the V1
# engine's offline default): the activations it profiles at start.
VLLM_STEP_TOKENS = 8192
# Training: CUDA context, allocator fragmentation and the optimizer's temporaries.
TRAIN_OVERHEAD_GIB = 3.0

DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "auto": 2}

_TABLE_PATH = Path(__file__).with_name("models.yaml")


@dataclass(frozen=True)
class Architecture:
    params_b: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    source: str

    def kv_bytes_per_token(self, dtype_bytes: float, tp: int = 1) -> float:
        """Keys and values of one token over all layers, on one of ``tp`` GPUs (vLLM splits
        the KV heads over the GPUs, and repeats them where there are fewer heads than GPUs)."""
        heads_per_gpu = max(1.0, self.kv_heads / tp)
        return 2 * self.layers * heads_per_gpu * self.head_dim * dtype_bytes

    def lora_params(self, r: int, modules: list[str]) -> float:
        """Parameters of a rank-``r`` adapter on ``modules`` of every layer."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        shapes = {
            "q_proj": (self.hidden, q),
            "k_proj": (self.hidden, kv),
            "v_proj": (self.hidden, kv),
            "o_proj": (q, self.hidden),
            "gate_proj": (self.hidden, self.intermediate),
            "up_proj": (self.hidden, self.intermediate),
            "down_proj": (self.intermediate, self.hidden),
        }
        return float(self.layers * sum(r * sum(shapes.get(m, (self.hidden, self.hidden))) for m in modules))


@functools.cache
def _table() -> dict[str, dict]:
    """The shipped table, read once: a paper plan asks for a model's shape per job (GASP's:
    ~7,000 times, which took over a minute when each call parsed the file). Read only."""
    return yaml.safe_load(_TABLE_PATH.read_text())


def _from_config_json(path: Path) -> Architecture | None:
    try:
        c = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    c = c.get("text_config", c)
    try:
        hidden, heads, layers = (
            int(c["hidden_size"]),
            int(c["num_attention_heads"]),
            int(c["num_hidden_layers"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
    head_dim = int(c.get("head_dim") or hidden // heads)
    kv = int(c.get("num_key_value_heads") or heads)
    inter = int(c.get("intermediate_size") or 4 * hidden)
    vocab = int(c.get("vocab_size") or 32000)
    experts = int(c.get("num_experts") or c.get("n_routed_experts") or 0)
    moe_inter = int(c.get("moe_intermediate_size") or inter)
    # parameters: embeddings (twice unless tied) + attention + MLP (every expert) per layer
    attn = hidden * (heads * head_dim) * 2 + hidden * (kv * head_dim) * 2
    mlp = 3 * hidden * (moe_inter * experts if experts else inter)
    emb = vocab * hidden * (1 if c.get("tie_word_embeddings") else 2)
    params = layers * (attn + mlp) + emb
    return Architecture(params / 1e9, layers, hidden, heads, kv, head_dim, inter, vocab, f"{path}")


def _from_name(name: str) -> Architecture | None:
    """A shape for a model known only by its size in the name (``...-27b``): the nearest
    dense table entry scaled to that size (layers and width grow as the square and cube roots)."""
    m = re.search(r"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)b(?![a-z])", name.lower())
    if not m:
        return None
    size = float(m.group(1))
    table = {k: v for k, v in _table().items() if "A3B" not in k}
    key, ref = min(table.items(), key=lambda kv_: abs(math.log(kv_[1]["params_b"] / size)))
    scale = size / ref["params_b"]
    return Architecture(
        size,
        max(1, round(ref["layers"] * scale ** (1 / 3))),
        round(ref["hidden"] * scale ** (1 / 3)),
        ref["heads"],
        ref["kv_heads"],
        ref["head_dim"],
        round(ref["intermediate"] * scale ** (1 / 3)),
        ref["vocab"],
        f"size from the name {name!r}, shape scaled from {key}",
    )


def architecture(spec: Mapping[str, Any], model_dir: str | None = None) -> Architecture:
    """The size and shape of the model a config entry names (see the module doc)."""
    candidates = [model_dir] if model_dir else []
    if spec.get("source") == "local" and spec.get("path"):
        candidates.append(str(spec["path"]))
    for folder in candidates:
        found = _from_config_json(Path(folder) / "config.json")
        if found:
            return found
    # the table and the name describe hub models; another source (a PyPI-packaged model,
    # a local folder) is known only by its own config.json
    hub = spec.get("source") == "hf"
    row = _table().get(str(spec.get("path") or "")) if hub else None
    if row:
        return Architecture(source=f"selfplay/plan/models.yaml ({spec['path']})", **row)
    found = _from_name(str(spec.get("path") or spec.get("name") or "")) if hub else None
    if found:
        return found
    raise UserError(
        f"model {spec.get('name')!r}: its size is unknown to the plan (no config.json in "
        f"{model_dir or 'its folder'}, not in selfplay/plan/models.yaml, no size in its name); "
        "download it first or add it to that table"
    )


# --- the GPU a kind of job asks for -----------------------------------------------------------


def _norm(name: str) -> str:
    n = re.sub(r"[^a-z0-9]", "", name.lower().replace("nvidia", ""))
    return n[:-2] if n.endswith("gb") else n


def gpu_of(resources: Mapping[str, Any], kind: str) -> tuple[float, str, bool]:
    """(GiB per GPU, how it was named, whether the config named it) for ``resources.<kind>``."""
    if resources.get("gpu_mem_gib"):
        return (
            float(resources["gpu_mem_gib"]),
            f"{resources['gpu_mem_gib']} GiB (resources.{kind}.gpu_mem_gib)",
            True,
        )
    model = resources.get("gpu_model") or ""
    if model:
        mib = GPU_MIB.get(_norm(str(model)))
        if mib is None:
            raise UserError(
                f"resources.{kind}.gpu_model: {model!r} is not in the plan's GPU table "
                f"({', '.join(sorted(GPU_MIB))}); set resources.{kind}.gpu_mem_gib to its memory"
            )
        return mib / 1024, f"{model} ({mib / 1024:.0f} GiB)", True
    largest = max(GPU_MIB.values())
    return (
        largest / 1024,
        f"any GPU (no resources.{kind}.gpu_model: checked against the largest, {largest / 1024:.0f} GiB)",
        False,
    )


# --- estimates ----------------------------------------------------------------------------------


@dataclass
class Need:
    """One GPU job's memory need per GPU, in GiB, by part."""

    rule: str
    kind: str
    model: str
    what: str
    gpus: int
    parts: dict[str, float] = field(default_factory=dict)
    budget_share: float = 1.0  # vLLM may use only gpu_memory_utilization of the GPU
    notes: list[str] = field(default_factory=list)
    share_of: str = "vLLM"  # what the budget share is kept for (the refusal names it)
    hint: str | None = None  # what to change when it does not fit (else by kind of job)

    @property
    def total(self) -> float:
        return sum(self.parts.values())


def vllm_need(rule: str, kind: str, spec: Mapping, backend: Mapping, arch: Architecture, gpus: int) -> Need:
    tp = tensor_parallel(backend)
    wbytes = DTYPE_BYTES.get(str(backend.get("dtype") or "auto"), 2)
    ctx = int(backend.get("max_model_len") or 8192)
    act_tokens = min(VLLM_STEP_TOKENS, ctx)
    need = Need(
        rule,
        kind,
        str(spec.get("name")),
        f"vLLM serving of {spec.get('name')}, context {ctx:,}"
        + (f", tensor parallel {tp}" if tp > 1 else ""),
        gpus,
        budget_share=float(backend.get("gpu_memory_utilization", 0.9)),
    )
    need.parts["weights"] = arch.params_b * 1e9 * wbytes / tp / GIB
    need.parts["activations"] = (
        act_tokens * (2 * arch.intermediate / tp + 4 * arch.hidden) * wbytes / GIB + VLLM_OVERHEAD_GIB
    )
    per_seq = arch.kv_bytes_per_token(wbytes, tp) * ctx / GIB
    need.parts["kv cache (1 full-context sequence)"] = per_seq
    need.notes.append(f"KV {per_seq:.1f} GiB per {ctx:,}-token sequence per GPU")
    return need


def _activations(arch: Architecture, tokens: float, act_bytes: int, checkpointing: bool) -> dict[str, float]:
    # with checkpointing, one hidden state per layer and token is kept, and one layer's full
    # activations exist while it is recomputed; without, every layer keeps ~16 hidden-sized
    # tensors per token (attention and MLP inputs/outputs, norms; flash attention's own is small)
    per_layer = arch.hidden * act_bytes * (1 if checkpointing else 16)
    kept = arch.layers * tokens * per_layer
    recompute = tokens * (16 * arch.hidden + 3 * arch.intermediate) * act_bytes if checkpointing else 0
    logits = 2 * tokens * arch.vocab * act_bytes  # logits and their gradient
    return {"activations": (kept + recompute) / GIB, "logits": logits / GIB}


def training_need(
    rule: str,
    kind: str,
    spec: Mapping,
    arch: Architecture,
    *,
    finetune: str,
    dtype: str,
    micro_batch: int,
    seq_len: int,
    checkpointing: bool,
    lora_r: int = 16,
    lora_modules: list[str] | None = None,
    generation_batch: int = 0,
    gpus: int = 1,
    compute_dtype: str | None = None,
    sharded: bool = False,
) -> Need:
    """``dtype``: the weights' (and so the optimizer state's); ``compute_dtype``: what
    activations and the rollouts' KV cache are held in (bf16 mixed precision computes in
    bfloat16 over float32 weights); by default the weights' dtype. ``sharded``: FSDP's full
    shard over the job's ``gpus``: each GPU holds 1/gpus of the weights, gradients and AdamW
    moments, plus the layers gathered whole while they compute (two at a time, prefetching)."""
    pbytes = DTYPE_BYTES.get(dtype, 4)
    cbytes = DTYPE_BYTES.get(compute_dtype or dtype, pbytes)
    mixed = f" (computing in {compute_dtype})" if compute_dtype and compute_dtype != dtype else ""
    need = Need(
        rule,
        kind,
        str(spec.get("name")),
        f"{'full fine-tuning' if finetune == 'full' else 'LoRA'} of {spec.get('name')} in {dtype}{mixed}, "
        f"{micro_batch} x {seq_len:,} tokens per micro-batch",
        gpus,
    )
    params = arch.params_b * 1e9
    if finetune == "full" and sharded and gpus > 1:
        need.what += f", FSDP full shard over {gpus} GPUs"
        need.parts[f"weights, grads, AdamW moments (1/{gpus})"] = params * 4 * pbytes / gpus / GIB
        need.parts["layers gathered whole (2)"] = 2 * params / arch.layers * cbytes / GIB
    elif finetune == "full":
        need.parts["weights, grads, AdamW moments"] = params * 4 * pbytes / GIB
    else:
        lora = arch.lora_params(lora_r, lora_modules or ["q_proj", "k_proj", "v_proj", "o_proj"])
        need.parts["frozen weights"] = params * pbytes / GIB
        need.parts["LoRA weights, grads, AdamW moments"] = lora * 16 / GIB
    act = _activations(arch, micro_batch * seq_len, cbytes, checkpointing)
    train_peak = sum(act.values())
    gen_peak = arch.kv_bytes_per_token(cbytes) * generation_batch * seq_len / GIB if generation_batch else 0.0
    if gen_peak > train_peak:
        need.parts[f"kv cache ({generation_batch} rollouts x {seq_len:,} tokens)"] = gen_peak
        need.notes.append(f"training-step activations {train_peak:.1f} GiB (less than generation's)")
    else:
        need.parts.update(act)
        if generation_batch:
            need.notes.append(f"rollout KV cache {gen_peak:.1f} GiB (less than training's)")
    need.parts["overhead"] = TRAIN_OVERHEAD_GIB
    return need


def colocated_needs(
    trainer: Need, grpo: Mapping, spec: Mapping, arch: Architecture, rollouts: int, seq_len: int
) -> list[Need]:
    """GRPO with its rollouts from a vLLM engine inside the trainer (TRL's colocate mode):
    the engine may use ``vllm_gpu_memory_utilization`` of the GPU for its weights (bf16),
    the rollouts' KV cache and its activations; training gets the rest. With sleep mode the
    engine frees its weights and KV cache while the policy trains, leaving its CUDA
    context (the vLLM overhead), so training may use the whole GPU less that."""
    util = float(grpo.get("vllm_gpu_memory_utilization", 0.3))
    engine = Need(
        f"{trainer.rule} (its colocated vLLM engine)",
        trainer.kind,
        trainer.model,
        f"vLLM colocated in the trainer, {rollouts} rollouts x {seq_len:,} tokens",
        trainer.gpus,
        budget_share=util,
        hint="raise vllm_gpu_memory_utilization, or lower steps_per_generation x batch_size or "
        "max_completion_length",
    )
    engine.parts["weights (bf16)"] = arch.params_b * 1e9 * 2 / GIB
    engine.parts[f"kv cache ({rollouts} rollouts x {seq_len:,} tokens)"] = (
        arch.kv_bytes_per_token(2) * rollouts * seq_len / GIB
    )
    engine.parts["activations"] = (
        min(VLLM_STEP_TOKENS, seq_len) * (2 * arch.intermediate + 4 * arch.hidden) * 2 / GIB
        + VLLM_OVERHEAD_GIB
    )
    if grpo.get("vllm_sleep_mode"):
        trainer.parts["vLLM asleep (its CUDA context)"] = VLLM_OVERHEAD_GIB
        trainer.notes.append("the colocated vLLM engine sleeps while the policy trains")
    else:
        trainer.budget_share = 1.0 - util
        trainer.share_of = "training beside the colocated vLLM engine"
    return [trainer, engine]


# --- the GPU jobs of a config ------------------------------------------------------------------


def _model_folder(spec: Mapping) -> str:
    return spec["path"] if spec.get("source") == "local" else f"resources/models/{spec.get('name')}"


def _gpus(resources: Mapping, kind: str) -> int:
    return int((resources.get(kind) or {}).get("gpu", 0) or 0)


def _train_dtype(settings: Mapping, backend: Mapping) -> str:
    dtype = settings.get("dtype") or backend.get("dtype")
    # GPU training runs in bfloat16 unless the config names another precision (issue 19)
    return str(dtype) if dtype in ("float32", "bfloat16", "float16") else "bfloat16"


def gpu_jobs(cfg: Mapping[str, Any], workdir: str = ".", unchecked: list[str] | None = None) -> list[Need]:
    """Every kind of GPU job the config's tracks plan, with its memory need per GPU. A job
    whose model's size cannot be known before the run (a local folder the run writes first,
    as the rehearsals' tiny models) is left out, with a line in ``unchecked``."""
    res = cfg.get("resources") or {}
    backend = cfg["backend"]
    tracks = [t for t in ("sinq", "seq", "psv", "evolve", "gasp") if t in cfg]
    out: list[Need] = []
    unknown = unchecked if unchecked is not None else []

    def arch_of(spec):
        return architecture(spec, str(Path(workdir) / _model_folder(spec)))

    def serve(rule, kind, spec, bk):
        if bk.get("name") != "vllm" or not _gpus(res, kind):
            return
        tp = tensor_parallel(bk)
        try:
            out.append(vllm_need(rule, kind, spec, bk, arch_of(spec), max(_gpus(res, kind), tp)))
        except UserError as exc:  # a model whose size the plan cannot know yet
            unknown.append(f"resources.{kind}: rule {rule} not checked: {exc}")

    model = cfg["model"]
    for track in tracks:
        tcfg = cfg[track]
        if track == "evolve":
            serve("evolve_refine", "generate", tcfg.get("generator") or model, backend)
            for entry in tcfg["pool"]["models"]:
                spec = model if entry["name"] == "track" else tcfg["models"][entry["name"]]
                index = tcfg["pool"]["models"].index(entry)
                bk = served_backend(backend, entry.get("backend"), f"evolve.pool.models[{index}].backend")
                serve(f"evolve_pool_generate ({entry['name']})", "generate", spec, bk)
        elif track == "gasp":
            serve("gasp_*_phase, gasp_eval_generate", "generate", model, backend)
        else:
            serve(f"{track}_*_generate", "generate", model, backend)
        if track == "psv":
            for spec in (tcfg.get("table6") or {}).get("models", []):
                serve(f"psv_t6_eval_generate ({spec['name']})", "generate", spec, backend)
        if track == "seq" and "translate" in tcfg:
            tr = tcfg["translate"]
            # translate.model null: the game's model translates (config.yaml's schema)
            serve(
                "seq_translate_generate",
                "translate",
                tr.get("model") or model,
                {**backend, **(tr.get("backend") or {})},
            )
        if not _gpus(res, "train"):
            continue
        if track == "gasp":
            # one update on recorded rollouts: the longest is a teacher's proposal or a student's
            # answer after its prompt (a goalpost statement: up to 2,048 tokens assumed)
            u = tcfg.get("update") or {}
            longest = max(
                int(tcfg[role]["sampling"]["max_new_tokens"]) for role in ("teacher", "solver", "real_data")
            )
            arch = _arch_or_note(arch_of, model, "resources.train: rule gasp_update", unknown)
            if arch is None:
                continue
            out.append(
                training_need(
                    "gasp_update",
                    "train",
                    model,
                    arch,
                    finetune=str(u.get("finetune", "full")),
                    dtype=MASTER_DTYPE,
                    micro_batch=int(u.get("micro_batch_size", 4)),
                    compute_dtype=MASTER_DTYPE if u.get("bf16") is False else "bfloat16",
                    seq_len=2048 + longest,
                    checkpointing=u.get("gradient_checkpointing", "auto") is not False,
                    lora_r=int((u.get("lora") or {}).get("r", 16)),
                    gpus=_gpus(res, "train"),
                    sharded=u.get("engine") == "fsdp",
                )
            )
            continue
        if track == "evolve":
            g = tcfg.get("grpo") or {}
            batch = int(g.get("batch_size", 8))
            arch = _arch_or_note(arch_of, model, "resources.train: rule evolve_grpo", unknown)
            if arch is None:
                continue
            seq_len = int(g.get("max_prompt_tokens", 4096)) + int(g.get("max_completion_length", 32768))
            rollouts = batch * int(g.get("steps_per_generation", 2))
            colocated = g.get("rollout_engine") == "vllm" and g.get("vllm_mode", "colocate") == "colocate"
            trainer = training_need(
                "evolve_grpo",
                "train",
                model,
                arch,
                finetune=str(g.get("finetune", "full")),
                dtype=MASTER_DTYPE,
                micro_batch=batch,
                # bf16 mixed precision on the GPU unless the config turns it off
                compute_dtype=MASTER_DTYPE if g.get("bf16") is False else "bfloat16",
                seq_len=seq_len,
                checkpointing=g.get("gradient_checkpointing", "auto") is not False,
                lora_r=int((g.get("lora") or {}).get("r", 16)),
                # rollouts from the trainer's own generate hold their KV cache in its memory
                generation_batch=0 if colocated else rollouts,
                gpus=_gpus(res, "train"),
                sharded="fsdp" in LAUNCH_CONFIGS.get(str(g.get("finetune", "full")), ""),
            )
            if colocated:
                out.extend(colocated_needs(trainer, g, model, arch, rollouts, seq_len))
            else:
                out.append(trainer)
            continue
        # the SFT tracks
        agents = tcfg.get("training") or {}
        for agent, s in agents.items():
            if not isinstance(s, dict) or "lora_r" not in s:
                continue
            rule = {"sinq": f"train_{agent}", "seq": f"train_{agent}", "psv": "psv_train_solver"}[track]
            specs = [model] + (list((tcfg.get("table6") or {}).get("models", [])) if track == "psv" else [])
            for spec in specs:
                r = rule if spec is model else "psv_t6_train"
                name = f"{r} ({spec['name']})" if r == "psv_t6_train" else r
                arch = _arch_or_note(arch_of, spec, f"resources.train: rule {name}", unknown)
                if arch is None:
                    continue
                out.append(
                    training_need(
                        name,
                        "train",
                        spec,
                        arch,
                        finetune="lora",
                        dtype=_train_dtype(s, backend),
                        micro_batch=int(s.get("batch_size", 1)),
                        seq_len=int(s.get("max_length", 2048)),
                        checkpointing=bool(s.get("gradient_checkpointing", True)),
                        lora_r=int(s["lora_r"]),
                        lora_modules=list(s.get("target_modules") or []) or None,
                        gpus=_gpus(res, "train"),
                    )
                )
    return out


def _arch_or_note(arch_of, spec, where: str, unknown: list[str]):
    try:
        return arch_of(spec)
    except UserError as exc:
        unknown.append(f"{where} not checked: {exc}")
        return None


def check(
    cfg: Mapping[str, Any], workdir: str = ".", unchecked: list[str] | None = None
) -> list[tuple[Need, float, str]]:
    """(need, GiB per GPU, GPU named) of every GPU job; a job that does not fit raises a
    one-line UserError naming the resources key and the rule. Jobs that cannot be checked
    yet are named in ``unchecked``."""
    rows = []
    res = cfg.get("resources") or {}
    for need in gpu_jobs(cfg, workdir, unchecked):
        gib, named, _ = gpu_of(res.get(need.kind) or {}, need.kind)
        rows.append((need, gib, named))
        if need.total > need.budget_share * gib:
            parts = ", ".join(f"{k} {v:.1f}" for k, v in need.parts.items())
            share = f" ({need.budget_share:.0%} of it for {need.share_of})" if need.budget_share < 1 else ""
            hint = need.hint or (
                "raise tensor_parallel_size (and the job's GPUs) or lower max_model_len"
                if "vLLM" in need.what
                else "lower the micro-batch or sequence length, or use LoRA"
            )
            raise UserError(
                f"resources.{need.kind}: rule {need.rule} needs ~{need.total:.0f} GiB per GPU "
                f"({need.what}: {parts} GiB) but asks for {need.gpus} x {named}{share}; "
                f"set resources.{need.kind}.gpu_model to a larger GPU, or {hint}"
            )
    return rows


def concurrency(need: Need, gib: float) -> int:
    """Full-context sequences a vLLM job can hold at once on that GPU."""
    kv = next((v for k, v in need.parts.items() if k.startswith("kv cache (1")), 0.0)
    if not kv:
        return 0
    free = need.budget_share * gib - (need.total - kv)
    return max(0, int(free // kv))
