"""Settings for LoRA supervised fine-tuning: defaults, validation, resolution.

Every key is optional. Unknown keys and bad values are rejected with a UserError
that names the key, so a typo in a config never silently trains with a default.
Some values depend on the machine ("auto"): they are resolved here once, and the
resolved dictionary is what the training record stores.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserError


def checkpointing_kwargs(enabled: bool) -> dict[str, Any]:
    """Trainer keywords that switch activation (gradient) checkpointing on or off.

    transformers after 5.17 names them ``activation_checkpointing[_kwargs]`` (the old
    ``gradient_checkpointing`` names are deprecated aliases there); 5.17, the newest that
    vLLM 0.31 allows (the GPU image and the vLLM environment), has only the old names.
    """
    import dataclasses

    import transformers

    names = {f.name for f in dataclasses.fields(transformers.TrainingArguments)}
    key = "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"
    return {key: enabled, f"{key}_kwargs": {"use_reentrant": False} if enabled else None}


DEFAULT_TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

# Values chosen for a small model on a CPU; a GPU run usually only raises batch_size.
DEFAULTS: dict[str, Any] = {
    "lora_r": 16,
    "lora_alpha": 32,
    "lora_dropout": 0.05,
    "target_modules": list(DEFAULT_TARGET_MODULES),
    "epochs": 1,
    "learning_rate": 2e-4,
    "lr_scheduler": "linear",
    "warmup_ratio": 0.0,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
    "batch_size": 1,
    "grad_accum": 8,
    "max_length": 2048,
    "max_steps": -1,
    # "auto": on where a GPU is used (memory matters there), off on CPU where it
    # only costs time (measured ~1.5x slower per step).
    "gradient_checkpointing": "auto",
    # Dtype the base weights are loaded in.
    "dtype": "float32",
    # bf16 mixed precision: "auto" turns it on only on a GPU that supports it.
    "bf16": "auto",
    "logging_steps": 1,
    # Optimizer steps between two checkpoints a killed run resumes from (0: none).
    "checkpoint_steps": 50,
    # Where to train: "auto" is the GPU when the job asked its cluster for one (and then one
    # must be visible, else the job stops) or when torch sees one; "cpu" always the CPU.
    "device": "auto",
}

DTYPES = ("float32", "bfloat16", "float16")

SCHEDULERS = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "constant",
    "constant_with_warmup",
    "inverse_sqrt",
    "cosine_with_min_lr",
    "warmup_stable_decay",
)


def _fail(key: str, value: Any, expected: str) -> None:
    raise UserError(f"training setting '{key}' = {value!r} is invalid: expected {expected}")


def _is_int(value: Any) -> bool:
    """An integer, also written as 2.0 (YAML and JSON schema count that as one)."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_positive_int(key: str, value: Any) -> int:
    if not _is_int(value) or value < 1:
        _fail(key, value, "an integer >= 1")
    return int(value)


def _check_float_range(
    key: str, value: Any, low: float, high: float | None, *, low_open: bool = False
) -> float:
    if not _is_number(value):
        _fail(key, value, "a number")
    bad_low = value <= low if low_open else value < low
    if bad_low or (high is not None and value > high):
        bracket = "(" if low_open else "["
        _fail(key, value, f"a number in {bracket}{low}, {high if high is not None else 'inf'}]")
    return float(value)


def _check_tristate(key: str, value: Any) -> bool | str:
    if value == "auto" or isinstance(value, bool):
        return value
    _fail(key, value, 'true, false or "auto"')
    raise AssertionError  # unreachable; keeps type checkers quiet


def validate_settings(settings: dict | None) -> dict[str, Any]:
    """Merge ``settings`` over DEFAULTS and check every value; machine-dependent values stay "auto"."""
    if settings is None:
        settings = {}
    if not isinstance(settings, dict):
        raise UserError(f"training settings must be a mapping, got {type(settings).__name__}")
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise UserError(
            f"unknown training setting(s) {', '.join(repr(k) for k in unknown)}; "
            f"known settings: {', '.join(sorted(DEFAULTS))}"
        )
    merged = {**DEFAULTS, **settings}

    for key in ("lora_r", "lora_alpha", "epochs", "batch_size", "grad_accum", "max_length", "logging_steps"):
        merged[key] = _check_positive_int(key, merged[key])
    if merged["max_length"] < 8:
        _fail("max_length", merged["max_length"], "at least 8 tokens")

    merged["lora_dropout"] = _check_float_range("lora_dropout", merged["lora_dropout"], 0.0, 0.9)
    merged["learning_rate"] = _check_float_range(
        "learning_rate", merged["learning_rate"], 0.0, 1.0, low_open=True
    )
    merged["warmup_ratio"] = _check_float_range("warmup_ratio", merged["warmup_ratio"], 0.0, 1.0)
    if merged["warmup_ratio"] >= 1.0:
        # transformers 5 reads a warmup value >= 1 as a step count, so a ratio must stay below 1
        _fail("warmup_ratio", merged["warmup_ratio"], "a fraction of the training steps in [0, 1)")
    merged["weight_decay"] = _check_float_range("weight_decay", merged["weight_decay"], 0.0, None)
    merged["max_grad_norm"] = _check_float_range("max_grad_norm", merged["max_grad_norm"], 0.0, None)

    if not _is_int(merged["checkpoint_steps"]) or merged["checkpoint_steps"] < 0:
        _fail("checkpoint_steps", merged["checkpoint_steps"], "an integer >= 0 (0: no checkpoints)")
    merged["checkpoint_steps"] = int(merged["checkpoint_steps"])

    steps = merged["max_steps"]
    if not _is_int(steps) or steps == 0 or steps < -1:
        _fail("max_steps", steps, "-1 (train for `epochs`) or an integer >= 1")
    merged["max_steps"] = int(steps)

    modules = merged["target_modules"]
    if modules == "all-linear":
        pass
    elif (
        not isinstance(modules, (list, tuple))
        or not modules
        or not all(isinstance(m, str) and m.strip() for m in modules)
    ):
        _fail("target_modules", modules, 'a non-empty list of module names, or "all-linear"')
    else:
        merged["target_modules"] = [m.strip() for m in modules]

    if merged["lr_scheduler"] not in SCHEDULERS:
        _fail("lr_scheduler", merged["lr_scheduler"], f"one of {', '.join(SCHEDULERS)}")
    if merged["dtype"] not in DTYPES:
        _fail("dtype", merged["dtype"], f"one of {', '.join(DTYPES)}")
    if merged["device"] not in DEVICES:
        _fail("device", merged["device"], f"one of {', '.join(DEVICES)}")
    merged["gradient_checkpointing"] = _check_tristate(
        "gradient_checkpointing", merged["gradient_checkpointing"]
    )
    merged["bf16"] = _check_tristate("bf16", merged["bf16"])
    return merged


def resolve_for_device(settings: dict[str, Any], *, on_gpu: bool, bf16_supported: bool) -> dict[str, Any]:
    """Replace the "auto" values by what this machine will actually use."""
    resolved = dict(settings)
    if resolved["gradient_checkpointing"] == "auto":
        resolved["gradient_checkpointing"] = on_gpu
    if resolved["bf16"] == "auto":
        resolved["bf16"] = on_gpu and bf16_supported
    if resolved["bf16"] and not bf16_supported:
        raise UserError("training setting 'bf16' is true, but this machine has no GPU with bf16 support")
    return resolved


DEVICES = ("auto", "cpu", "cuda")


def training_device(requested: str = "auto", *, gpus_requested: int = 0) -> str:
    """The device a training job runs on: ``"auto"`` is the GPU when torch sees one, else
    the CPU. A job whose resources asked the cluster for GPUs never falls back to the
    CPU silently: with none visible it stops, naming what it asked for."""
    import torch

    if requested not in DEVICES:
        raise UserError(f"training device must be one of {', '.join(DEVICES)}, got {requested!r}")
    visible = torch.cuda.is_available()
    if requested == "cuda" or (requested == "auto" and gpus_requested > 0):
        if not visible:
            raise UserError(
                f"the training job asked for {max(gpus_requested, 1)} GPU(s) but torch sees none "
                "(check the job's GPU allocation and CUDA_VISIBLE_DEVICES); refusing to train on the CPU"
            )
        return "cuda"
    if requested == "auto":
        return "cuda" if visible else "cpu"
    return "cpu"
