"""Tiny randomly initialised models of the paper models' architecture families.

Some code paths depend on the model's architecture, not only on its size: Qwen2 has
biases on q/k/v and an untied output layer, Qwen3 normalises queries and keys and
pads with ``<|endoftext|>`` rather than its end-of-turn token, the chat templates
differ. The embedded default's SmolLM2 (a llama) cannot exercise those paths, and
the real Qwen models are gigabytes behind a network. This module writes a
transformers folder of the same family with random weights, small enough to build in
a second on a CPU:

    from selfplay.llm.tiny_random import write_tiny_model, ensure_tiny_model

    info = write_tiny_model("qwen3", "work/tiny-qwen3", seed=0)   # always (re)writes
    path = ensure_tiny_model("qwen2", "work/tiny-qwen2")          # writes only if missing or stale

or from a shell: ``python -m selfplay.llm.tiny_random qwen3 work/tiny-qwen3 [--seed 0]``.

Families: ``llama`` (SmolLM2, the DeepSeek-R1 Llama distill), ``qwen2`` (Qwen2.5 and
Qwen2.5-Coder, the DeepSeek-R1 Qwen distills: papers 000, 001, 003) and ``qwen3``
(Qwen3: paper 002). Each folder has config.json, model.safetensors,
generation_config.json, tokenizer.json, tokenizer_config.json and chat_template.jinja,
and loads in transformers and in vLLM (the CPU build included).

What is committed and what is generated. ``src/selfplay/data/tiny_models/`` holds the
project's tokenizer (SmolLM2's, the one the embedded default uses, 49,152 tokens) and,
per family, the model config (hidden size 64, 2 layers, 2 query heads of 32 and one
key/value head, so the vocabulary embedding is nearly all of the ~3-6 M parameters),
the generation config, the tokenizer config and the chat template. The weights are not
committed: every tensor is drawn from its own generator, seeded from (seed, family,
tensor name), so the same seed writes the same weights on every machine and the draw
of one tensor does not depend on which others exist. Norm weights are ones, every
other tensor is normal with the config's ``initializer_range`` as standard deviation;
the tensors are drawn in float32 and stored in ``dtype`` (bfloat16 by default, as the
real checkpoints are stored, so a backend's ``dtype: auto`` resolves as it would for
them).

The families mirror the real models where the code can tell: Qwen's special-token
roles (no BOS, EOS ``<|im_end|>``, pad ``<|endoftext|>``, both ending generation), the
default system turn of Qwen2.5's template, Qwen3's template (no default system turn,
``enable_thinking=False`` closing an empty reasoning block, earlier reasoning dropped
from history), the context lengths (8,192 / 32,768 / 40,960) and the published
generation defaults. The tokenizer has no ``<think>`` token; such tags are plain text.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..records import derive_seed, read_json, sha256_file, write_json

DATA = Path(__file__).resolve().parents[1] / "data" / "tiny_models"
FAMILIES = ("llama", "qwen2", "qwen3")
DTYPES = ("bfloat16", "float32", "float16")
# The files copied from DATA/<family>/ as they are (config.json is rewritten by transformers).
FAMILY_FILES = ("generation_config.json", "tokenizer_config.json", "chat_template.jinja")
# Bump when the way weights are drawn changes, so that ensure_tiny_model rewrites old folders.
RECIPE_VERSION = 1
# Config keys an override may not change: the committed tokenizer fixes them.
FIXED_KEYS = ("vocab_size", "model_type", "architectures", "bos_token_id", "eos_token_id", "pad_token_id")


def _check_family(family: str) -> str:
    if family not in FAMILIES:
        raise UserError(f"tiny random model: family must be one of {', '.join(FAMILIES)}, got {family!r}")
    return family


def family_config(family: str, overrides: dict | None = None) -> dict[str, Any]:
    """The committed config of ``family`` with ``overrides`` (e.g. ``{"num_hidden_layers": 4}``) applied."""
    config = read_json(DATA / _check_family(family) / "config.json")
    for key, value in (overrides or {}).items():
        if key in FIXED_KEYS:
            raise UserError(
                f"tiny random model: override {key!r} cannot change (the committed tokenizer fixes it)"
            )
        if key not in config:
            raise UserError(
                f"tiny random model: override {key!r} is not a key of the {family} config; "
                f"known keys: {', '.join(sorted(config))}"
            )
        config[key] = value
    return config


def recipe(family: str, seed: int, dtype: str, overrides: dict | None) -> dict[str, Any]:
    """Everything that determines the folder's contents: the arguments and the committed files."""
    digest = hashlib.sha256()
    for path in [DATA / "tokenizer.json", DATA / family / "config.json"] + [
        DATA / family / f for f in FAMILY_FILES
    ]:
        digest.update(path.name.encode() + b"\0" + sha256_file(path).encode())
    return {
        "source": "tiny-random",
        "family": family,
        "seed": int(seed),
        "dtype": dtype,
        "overrides": dict(sorted((overrides or {}).items())),
        "recipe_version": RECIPE_VERSION,
        "data_sha256": digest.hexdigest(),
    }


def random_state(model, family: str, seed: int) -> dict[str, Any]:
    """Fresh float32 values for every parameter of ``model`` (tied parameters once), each
    from its own generator seeded from (seed, family, name)."""
    import torch

    std = float(model.config.initializer_range)
    values = {}
    for name, param in model.named_parameters():
        if param.ndim == 1 and "norm" in name:
            values[name] = torch.ones(param.shape, dtype=torch.float32)
        else:
            gen = torch.Generator().manual_seed(derive_seed("tiny-random", family, seed, name))
            values[name] = torch.randn(param.shape, generator=gen, dtype=torch.float32) * std
    return values


def write_tiny_model(
    family: str,
    out_dir: str | os.PathLike,
    *,
    seed: int = 0,
    dtype: str = "bfloat16",
    overrides: dict | None = None,
) -> dict[str, Any]:
    """Write a randomly initialised ``family`` model folder at ``out_dir`` (replacing what is
    there) and return its record (also written as ``selfplay_model.json``)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    _check_family(family)
    if dtype not in DTYPES:
        raise UserError(f"tiny random model: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    config_dict = family_config(family, overrides)
    out = Path(out_dir)
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)

    kwargs = {k: v for k, v in config_dict.items() if k != "model_type"}
    config = AutoConfig.for_model(config_dict["model_type"], **kwargs)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    values = random_state(model, family, seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(values[name])
    model = model.to(getattr(torch, dtype))
    model.config.dtype = dtype
    model.save_pretrained(tmp)
    shutil.copyfile(DATA / "tokenizer.json", tmp / "tokenizer.json")
    for name in FAMILY_FILES:  # after save_pretrained, which writes its own generation config
        shutil.copyfile(DATA / family / name, tmp / name)

    info = {
        **recipe(family, seed, dtype, overrides),
        "parameters": sum(p.numel() for p in model.parameters()),
        "weights_sha256": sha256_file(tmp / "model.safetensors"),
    }
    write_json(tmp / "selfplay_model.json", info)
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return info


def ensure_tiny_model(
    family: str,
    out_dir: str | os.PathLike,
    *,
    seed: int = 0,
    dtype: str = "bfloat16",
    overrides: dict | None = None,
) -> Path:
    """``out_dir`` holding the tiny ``family`` model, written first unless the folder there
    was made from the same arguments and committed files. Processes that ask for the same
    folder at once take turns (a lock file beside it), so it is written once."""
    from filelock import FileLock

    out = Path(out_dir)
    _check_family(family)
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        record = out / "selfplay_model.json"
        if record.is_file() and (out / "model.safetensors").is_file():
            have = read_json(record)
            want = recipe(family, seed, dtype, overrides)
            if all(have.get(k) == v for k, v in want.items()):
                return out
        write_tiny_model(family, out, seed=seed, dtype=dtype, overrides=overrides)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write a tiny randomly initialised model folder.")
    ap.add_argument("family", choices=FAMILIES)
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", choices=DTYPES, default="bfloat16")
    args = ap.parse_args(argv)
    info = write_tiny_model(args.family, args.out_dir, seed=args.seed, dtype=args.dtype)
    print(
        f"wrote {args.out_dir}: {args.family}, {info['parameters']:,} parameters, seed {args.seed}, {args.dtype}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
