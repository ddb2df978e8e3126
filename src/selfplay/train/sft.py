"""LoRA supervised fine-tuning with TRL's SFTTrainer and a PEFT adapter.

Input examples are conversational prompt/completion records::

    {"prompt": [{"role": "system", ...}, {"role": "user", ...}, ...],
     "completion": [{"role": "assistant", "content": ...}]}

What is trained is exactly what the model wrote. The prompt is rendered with the
base model's chat template and its generation header, as the generation backends
render it; the completion is the assistant message's text token for token, followed
by the tokenizer's end-of-sequence token (the model learns to stop). The completion
is never passed through the chat template: templates of reasoning models
(DeepSeek-R1 style) cut everything up to ``</think>`` out of assistant turns, and
paper 000 trains on Alice's and Bob's reasoning (Eq. 3, 5; Appendix E.4). The
examples reach TRL already tokenized, with a ``completion_mask``; with
``completion_only_loss`` TRL's collator turns every prompt token's label into -100.
The prompt may hold earlier assistant turns (rendered by the template, as context);
they carry no loss. ``n_label_tokens`` in the record is counted from the labels the
trainer really feeds the model.

The adapter is written to a staging folder next to ``out_dir`` and renamed into
place only once training and saving have finished, with ``training_record.json``
inside it, so an interrupted run never leaves something that looks finished.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..containers.runtime import package_version, runtime_record
from ..errors import UserError, require_module
from ..llm.peft_notices import quiet_peft
from ..records import sha256_tree, write_json
from .checkpoints import checkpoint_folder, resume_key, resume_point, save_args
from .settings import checkpointing_kwargs, resolve_for_device, training_device, validate_settings

log = logging.getLogger(__name__)

RECORD_NAME = "training_record.json"
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")
ROLES = ("system", "user", "assistant")
_INSTALL_HINT = "pip install -r requirements.txt (torch, transformers, peft, trl, datasets)"


class TrainingSkipped(Exception):
    """Nothing to train on; no adapter was written. Callers record the message and go on."""


# --------------------------------------------------------------------------- input checks


def _check_message(message: Any, where: str) -> dict[str, str]:
    if not isinstance(message, dict):
        raise UserError(f"{where}: a message must be an object with 'role' and 'content'")
    role, content = message.get("role"), message.get("content")
    if role not in ROLES:
        raise UserError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
    if not isinstance(content, str) or not content.strip():
        raise UserError(f"{where}: content must be a non-empty string")
    return {"role": role, "content": content}


def validate_examples(examples: Any) -> list[dict[str, list[dict[str, str]]]]:
    """Check every example and return clean copies holding only role/content messages.

    Raises UserError naming the index of the first malformed example.
    """
    if not isinstance(examples, (list, tuple)):
        raise UserError(f"training examples must be a list, got {type(examples).__name__}")
    clean = []
    for i, ex in enumerate(examples):
        where = f"training example {i}"
        if not isinstance(ex, dict):
            raise UserError(f"{where}: expected an object with 'prompt' and 'completion'")
        for key in ("prompt", "completion"):
            if key not in ex:
                raise UserError(f"{where}: missing '{key}'")
            if not isinstance(ex[key], (list, tuple)):
                raise UserError(f"{where}: '{key}' must be a list of chat messages")
        prompt = [_check_message(m, f"{where}, prompt message {j}") for j, m in enumerate(ex["prompt"])]
        if not prompt:
            raise UserError(f"{where}: 'prompt' is empty")
        if prompt[-1]["role"] != "user":
            raise UserError(f"{where}: the prompt must end with a user message, not {prompt[-1]['role']!r}")
        if len(ex["completion"]) != 1:
            raise UserError(
                f"{where}: 'completion' must be exactly one assistant message, got {len(ex['completion'])} messages"
            )
        completion = [_check_message(ex["completion"][0], f"{where}, completion")]
        if completion[0]["role"] != "assistant":
            raise UserError(
                f"{where}: the completion message must have role 'assistant', not {completion[0]['role']!r}"
            )
        clean.append({"prompt": prompt, "completion": completion})
    return clean


# --------------------------------------------------------------------------- trainer


def _device_facts(requested: str = "auto", gpus: int = 0) -> tuple[bool, bool]:
    """(train on the GPU, it supports bf16): ``requested`` is the ``device`` setting,
    ``gpus`` what the job asked its cluster for; asked for and not visible stops the job
    (train.settings.training_device) rather than training on the CPU for days."""
    import torch

    on_gpu = training_device(requested, gpus_requested=gpus) == "cuda"
    return on_gpu, bool(on_gpu and torch.cuda.is_bf16_supported())


def load_chat_tokenizer(transformers, model_dir: str, what: str):
    """The model's tokenizer for conversational training (``what``: SFT, GRPO), with a pad
    token; refuses a model without a chat template."""
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    except OSError as exc:
        raise UserError(f"cannot load the tokenizer of {model_dir!r} for {what} training: {exc}") from exc
    if tokenizer.chat_template is None:
        raise UserError(f"base model {model_dir!r} has no chat template; conversational {what} needs one")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def build_sft_trainer(
    base_model: str,
    examples: list[dict],
    work_dir: str | os.PathLike,
    settings: dict | None,
    seed: int,
    gpus: int = 0,
):
    """Load the base model, wrap it in a fresh LoRA adapter and return ``(trainer, resolved_settings)``.

    The trainer's ``train_dataset`` is already tokenized, with ``labels`` masked to
    the completion. ``work_dir`` is the trainer's scratch output folder (its
    checkpoints go there). ``gpus``: the GPUs the job asked its cluster for (a job that
    asked for one never trains on the CPU). Exposed so tests can inspect the exact data
    the trainer trains on.
    """
    clean, resolved = _check_inputs(examples, settings, seed)

    torch = require_module("torch", _INSTALL_HINT)
    transformers = require_module("transformers", _INSTALL_HINT)
    peft = require_module("peft", _INSTALL_HINT)
    datasets = require_module("datasets", _INSTALL_HINT)
    trl = require_module("trl", _INSTALL_HINT)

    on_gpu, bf16_ok = _device_facts(resolved["device"], gpus)
    resolved = resolve_for_device(resolved, on_gpu=on_gpu, bf16_supported=bf16_ok)
    resolved["device"] = "cuda" if on_gpu else "cpu"

    # Seed Python, NumPy and torch before anything random happens (LoRA init, dropout, shuffling).
    transformers.set_seed(seed)

    tokenizer = load_chat_tokenizer(transformers, base_model, "SFT")
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            base_model, dtype=getattr(torch, resolved["dtype"])
        )
    except OSError as exc:
        raise UserError(f"cannot load base model {base_model!r} for training: {exc}") from exc

    lora = peft.LoraConfig(
        r=resolved["lora_r"],
        lora_alpha=resolved["lora_alpha"],
        lora_dropout=resolved["lora_dropout"],
        target_modules=resolved["target_modules"],
        bias="none",
        task_type="CAUSAL_LM",
    )
    config = trl.SFTConfig(
        output_dir=str(work_dir),
        seed=seed,
        data_seed=seed,
        use_cpu=not on_gpu,
        bf16=resolved["bf16"],
        fp16=False,
        num_train_epochs=resolved["epochs"],
        max_steps=resolved["max_steps"],
        per_device_train_batch_size=resolved["batch_size"],
        gradient_accumulation_steps=resolved["grad_accum"],
        learning_rate=resolved["learning_rate"],
        lr_scheduler_type=resolved["lr_scheduler"],
        # transformers 5 has no warmup_ratio; a warmup_steps value below 1 is read as a ratio
        warmup_steps=resolved["warmup_ratio"],
        weight_decay=resolved["weight_decay"],
        max_grad_norm=resolved["max_grad_norm"],
        max_length=resolved["max_length"],
        # under the name the installed transformers has (see checkpointing_kwargs)
        **checkpointing_kwargs(resolved["gradient_checkpointing"]),
        logging_steps=resolved["logging_steps"],
        logging_strategy="steps",
        # Loss only on the completion; explicit rather than relying on the dataset-type default.
        completion_only_loss=True,
        assistant_only_loss=False,
        packing=False,
        # checkpoints every `checkpoint_steps` into work_dir, for a rerun to resume from
        **save_args(resolved["checkpoint_steps"]),
        eval_strategy="no",
        report_to="none",
        push_to_hub=False,
        disable_tqdm=True,
        dataloader_num_workers=0,
        dataloader_pin_memory=on_gpu,
    )
    dataset = datasets.Dataset.from_list([tokenize_example(tokenizer, ex) for ex in clean])
    with quiet_peft():
        trainer = trl.SFTTrainer(
            model=model,
            args=config,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=lora,
        )
    return trainer, resolved


def tokenize_example(tokenizer, example: dict) -> dict[str, list[int]]:
    """``input_ids`` and ``completion_mask`` of one example: the templated prompt (with
    the generation header), then the assistant's raw text and the end-of-sequence token."""
    try:
        prompt_text = tokenizer.apply_chat_template(
            example["prompt"], tokenize=False, add_generation_prompt=True
        )
    except ValueError as exc:
        raise UserError(f"cannot apply the base model's chat template: {exc}") from exc
    prompt_ids = list(tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    completion_ids = list(
        tokenizer(example["completion"][0]["content"], add_special_tokens=False)["input_ids"]
    )
    if tokenizer.eos_token_id is None:
        raise UserError("the base model's tokenizer has no end-of-sequence token to end a completion with")
    completion_ids.append(tokenizer.eos_token_id)
    return {
        "input_ids": prompt_ids + completion_ids,
        "completion_mask": [0] * len(prompt_ids) + [1] * len(completion_ids),
    }


def _check_inputs(examples: Any, settings: Any, seed: Any) -> tuple[list[dict], dict[str, Any]]:
    """All cheap checks, done before any heavy import or model load."""
    clean = validate_examples(examples)
    if not clean:
        raise TrainingSkipped("no training examples: nothing to fine-tune, no adapter written")
    resolved = validate_settings(settings)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        # NumPy's global seeding (done by transformers.set_seed) accepts only this range
        raise UserError(f"training seed must be an integer in [0, 2**32), got {seed!r}")
    return clean, resolved


def label_token_counts(trainer) -> list[int]:
    """Per prepared example, how many tokens carry loss (label != -100)."""
    return [sum(1 for t in labels if t != -100) for labels in trainer.train_dataset["labels"]]


# --------------------------------------------------------------------------- output folder


def _check_out_dir(out: Path) -> None:
    """Only replace a folder that is empty or is a previous result of this function."""
    if out.exists():
        if not out.is_dir():
            raise UserError(f"training output {out} exists and is not a folder")
        if any(out.iterdir()) and not (out / RECORD_NAME).is_file():
            raise UserError(
                f"training output folder {out} is not empty and holds no {RECORD_NAME}; "
                "refusing to overwrite it"
            )


def _open_permissions(folder: Path) -> None:
    """mkdtemp makes a private (0700) folder; give the result the usual umask-based modes."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(folder, 0o777 & ~umask)
    for p in folder.iterdir():
        if p.is_file():
            os.chmod(p, 0o666 & ~umask)


def _swap_into_place(staging: Path, out: Path) -> None:
    if out.exists():
        trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, trash / out.name)
        os.replace(staging, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, out)


@contextmanager
def staged_output(out_dir: str | os.PathLike, keep_checkpoints: bool = False) -> Iterator[tuple[Path, Path]]:
    """A training run's output folder, written atomically: yields ``(staging, scratch)``
    folders beside ``out_dir``; the caller saves the result and its record into
    ``staging``, which replaces ``out_dir`` only when the block ends without an error.
    ``scratch`` (the trainer's own files) is removed once the output is in place; with
    ``keep_checkpoints`` it is the run's checkpoint folder (train/checkpoints.py), which
    a failed run that saved a checkpoint leaves for its rerun to resume from, else a fresh
    folder removed either way."""
    out = Path(out_dir).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    _check_out_dir(out)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    if keep_checkpoints:
        scratch = checkpoint_folder(out)
        scratch.mkdir(exist_ok=True)
    else:
        scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.scratch-", dir=out.parent))
    finished = False
    try:
        yield staging, scratch
        _open_permissions(staging)
        _swap_into_place(staging, out)
        finished = True
    finally:
        if finished or not keep_checkpoints or not any(scratch.glob("checkpoint-*")):
            shutil.rmtree(scratch, ignore_errors=True)  # kept only when it holds something to resume
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _library_versions() -> dict[str, str]:
    return {
        name: package_version(name) or "not installed"
        for name in ("torch", "transformers", "peft", "trl", "datasets", "accelerate")
    }


def _canonical_adapter_config(path: Path) -> None:
    """Rewrite PEFT's adapter_config.json in one canonical form.

    PEFT stores ``target_modules`` from a set, so its order (and with it the file's
    hash, and ``adapter_sha256``) changes between identical trainings. Sorting the
    list and the keys makes equal trainings give equal adapter hashes.
    """
    if not path.is_file():
        return
    cfg = json.loads(path.read_text())
    if isinstance(cfg.get("target_modules"), list):
        cfg["target_modules"] = sorted(cfg["target_modules"])
    path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def _finite(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------- entry point


def train_lora_sft(
    base_model: str, examples: list[dict], out_dir: str, settings: dict, seed: int, gpus: int = 0
) -> dict:
    """Fine-tune a LoRA adapter on ``examples`` (loss on the completion only) and save it in ``out_dir``.

    Returns the training record, which is also written to ``out_dir/training_record.json``.
    Raises TrainingSkipped when ``examples`` is empty, UserError for malformed
    examples (naming the index) or bad settings (naming the key), or when the job asked
    for ``gpus`` GPUs and torch sees none.
    """
    started = time.perf_counter()
    clean, _ = _check_inputs(examples, settings, seed)

    with staged_output(out_dir, keep_checkpoints=True) as (staging, scratch):
        try:
            return _train_sft_into(staging, scratch, base_model, clean, settings, seed, started, gpus)
        finally:
            # Drop the model before returning so a caller that generates next gets the memory back.
            gc.collect()
            if "torch" in sys.modules and sys.modules["torch"].cuda.is_available():
                sys.modules["torch"].cuda.empty_cache()


def _train_sft_into(
    staging: Path,
    scratch: Path,
    base_model: str,
    clean: list[dict],
    settings: dict,
    seed: int,
    started: float,
    gpus: int = 0,
) -> dict:
    """Train, and save the adapter and its record into ``staging``."""
    trainer, resolved = build_sft_trainer(base_model, clean, scratch, settings, seed, gpus)
    counts = label_token_counts(trainer)
    n_prepared = len(counts)
    if n_prepared == 0:
        raise UserError(
            f"all {len(clean)} training examples lost their completion to truncation at "
            f"max_length={resolved['max_length']}; raise max_length"
        )
    lengths = [len(ids) for ids in trainer.train_dataset["input_ids"]]
    n_at_max = sum(1 for n in lengths if n >= resolved["max_length"])
    if n_at_max:
        log.warning(
            "%d of %d training examples reached max_length=%d and may have been truncated",
            n_at_max,
            n_prepared,
            resolved["max_length"],
        )

    # A rerun of the same training after a kill resumes from its last checkpoint.
    resume = resume_point(
        scratch,
        resume_key(
            base_model=str(Path(base_model).resolve()) if Path(base_model).exists() else str(base_model),
            examples=clean,
            settings=resolved,
            seed=seed,
            libraries=_library_versions(),
        ),
    )
    train_started = time.perf_counter()
    output = trainer.train(resume_from_checkpoint=resume)
    train_seconds = time.perf_counter() - train_started

    history = [
        {"step": int(e["step"]), "loss": _finite(e["loss"])}
        for e in trainer.state.log_history
        if "loss" in e and "step" in e
    ]
    trainer.model.save_pretrained(str(staging))
    _canonical_adapter_config(staging / "adapter_config.json")
    missing = [name for name in ADAPTER_FILES if not (staging / name).is_file()]
    if missing:
        raise RuntimeError(f"saving the adapter did not write {', '.join(missing)}")
    adapter_files = sorted(p.name for p in staging.iterdir() if p.is_file())
    steps = int(trainer.state.global_step)

    record: dict[str, Any] = {
        "base_model": str(base_model),
        "seed": seed,
        "settings": resolved,
        "n_examples": len(clean),
        "n_train_examples": n_prepared,
        "n_dropped_examples": len(clean) - n_prepared,
        "n_examples_at_max_length": n_at_max,
        "n_label_tokens": int(sum(counts)),
        "n_tokens": int(sum(lengths)),
        "steps": steps,
        "resumed_from_step": int(Path(resume).name.split("-")[-1]) if resume else None,
        "epochs_completed": _finite(trainer.state.epoch),
        "final_train_loss": history[-1]["loss"] if history else None,
        "mean_train_loss": _finite(output.training_loss),
        "loss_history": history,
        "seconds": None,  # filled in below, after saving
        "train_seconds": round(train_seconds, 3),
        "seconds_per_step": round(train_seconds / steps, 3) if steps else None,
        "device": "cuda" if not trainer.args.use_cpu else "cpu",
        "libraries": _library_versions(),
        "runtime": runtime_record(),
        "adapter_files": adapter_files,
        "adapter_sha256": sha256_tree(staging),
    }
    record["seconds"] = round(time.perf_counter() - started, 3)
    write_json(staging / RECORD_NAME, record)
    return record
