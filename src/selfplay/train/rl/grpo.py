"""GRPO training with TRL's ``GRPOTrainer``: LoRA or full fine-tuning, recorded rollouts.

Input records are conversational prompts plus any columns the reward function needs::

    {"prompt": [{"role": "system", ...}, {"role": "user", ...}], "task": "deduction", "role": "solver", ...}

``task`` and ``role`` are required when ``estimator`` is ``"task_relative_reinforce_pp"``.
The reward function follows TRL's contract: it is called with ``prompts``,
``completions`` (each a one-message assistant list), ``completion_ids`` and every other
column as keyword lists, and returns one float per completion, ``None`` where a
completion cannot be scored (TRL then gives it advantage 0).

What TRL is left to do, and what is added:

- Prompts longer than ``max_prompt_tokens`` (rendered with the chat template and its
  generation header) are dropped before training and counted; TRL 1.16 removed its own
  prompt limit.
- With ``estimator="grpo"`` the advantages are TRL's. With
  ``"task_relative_reinforce_pp"`` a minimal subclass replaces them, after TRL has
  scored a generation batch, by :func:`..advantages.task_relative_advantages` over
  that batch's (task, role) partitions, weighted by completion tokens. The batch is
  one generation: ``batch_size x steps_per_generation`` completions (Absolute Zero
  whitens over its whole training batch, which is one generation there too).
- Every rollout is recorded like every other generation in the project
  (:mod:`selfplay.llm.recording`'s record format, one JSON line per prompt group with
  the group's ``sampling.n`` completions as ``outputs``), so :class:`ReplayBackend` and
  the bundle read it. ``meta`` holds the optimizer step the policy had reached, the
  generation's index, each completion's reward, advantage and token count, and the
  record's other columns. ``sampling.seed`` is derived from the run's seed, the
  generation and the group: it keeps the keys of the same prompt drawn at different
  steps apart. The sampler itself draws from torch's generator, seeded once by TRL
  from ``seed``, so a rollout can be read back but not regenerated from its record.
- The result (adapter, or full model with its tokenizer) is written to a staging
  folder beside ``out_dir`` and renamed into place with ``training_record.json``, as
  the SFT layer does (it shares that layer's helpers).

Checkpoints and resume. Every ``checkpoint_steps`` optimizer steps the trainer saves a
checkpoint (weights being trained, optimizer, scheduler, RNG states, trainer state) into
the run's checkpoint folder beside ``out_dir`` (:mod:`..checkpoints`, as the SFT layer),
and with it the rollouts recorded so far (``rollouts.jsonl``) and the log's counters
(``selfplay_grpo.json``), written before the trainer state that marks the checkpoint
complete. A rerun of the same work (same model, adapter, prompts, settings, reward
function name, device, dtype, process count, library versions: ``resume_key``) resumes
from the last complete checkpoint: the trainer restores its state and skips the batches
already trained on, and the rollout log starts from the saved one and appends, so the
rollouts file and the policy end as an uninterrupted run's. TRL keeps the current
generation's rollouts only in memory and generates afresh after a resume, so a
checkpoint may only fall where a generation has just been used up (see
``GRPOSettings.steps_per_checkpoint_cycle``).

Several processes (``accelerate launch``). TRL gives each process a slice of every
generation batch, generates and scores it there, and gathers the rewards of the whole
batch before its own advantages. The task-relative swap gathers the prompt columns
(task, role) and the completion token counts too, computes the advantages once over
the whole batch (the same on every process) and keeps this process's slice, in TRL's
order (process ``i`` holds rows ``i*n .. (i+1)*n``). The rollout log is gathered the
same way, so every process holds the whole log; only the main process writes the
rollouts, checkpoints' rollout files, the policy and the record.

Which engine for N GPUs: PyTorch FSDP through accelerate (``config/accelerate/``),
because it is part of torch and accelerate, both already required, while DeepSpeed
would be a new dependency with its own CUDA build step in the GPU image. Full
fine-tuning shards the float32 master weights, gradients and AdamW state over the GPUs
(FSDP2, full shard; the weights are gathered whole for saving). LoRA trains a few
million parameters, so it runs as plain data parallel (DDP): every GPU holds the frozen
base model and only the adapter's gradients are averaged.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...containers.runtime import runtime_record
from ...errors import UserError, require_module
from ...llm.base import Backend, GenerationRequest, SamplingParams, normalize_messages
from ...llm.peft_notices import quiet_peft
from ...llm.recording import build_records
from ...records import derive_seed, read_json, read_jsonl, sha256_file, sha256_tree, write_json, write_jsonl
from ..checkpoints import checkpoint_folder, resume_key, resume_point
from ..settings import DTYPES, resolve_for_device
from ..sft import (
    ADAPTER_FILES,
    RECORD_NAME,
    TrainingSkipped,
    _canonical_adapter_config,
    _finite,
    _library_versions,
    load_chat_tokenizer,
    staged_output,
)
from .advantages import task_relative_advantages
from .settings import GRPOSettings, grpo_config_kwargs

log = logging.getLogger(__name__)

ROLLOUT_BACKEND = "trl-grpo"
# Saved into every checkpoint, before the trainer state that marks it complete.
CHECKPOINT_ROLLOUTS = "rollouts.jsonl"
CHECKPOINT_STATE = "selfplay_grpo.json"
PARTITION_COLUMNS = ("task", "role")
_INSTALL_HINT = "pip install -r requirements.txt (torch, transformers, peft, trl, datasets)"

# TRL's per-step metrics kept in the training record, under our names.
STEP_METRICS = {
    "loss": "loss",
    "reward": "reward_mean",
    "reward_std": "reward_std",
    "frac_reward_zero_std": "frac_reward_zero_std",
    "clip_ratio/low_mean": "clip_ratio_low",
    "clip_ratio/high_mean": "clip_ratio_high",
    "clip_ratio/region_mean": "clip_ratio_region",
    "kl": "kl",
    "entropy": "entropy",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
    "completions/mean_length": "completion_mean_tokens",
    "completions/clipped_ratio": "completion_truncated_ratio",
    "step_time": "trl_step_time",
}


# --------------------------------------------------------------------------- input checks


def validate_prompt_records(records: Any, estimator: str) -> list[dict[str, Any]]:
    """Check every record; return copies whose prompt holds only role/content messages.

    Raises UserError naming the index of the first malformed record.
    """
    if not isinstance(records, (list, tuple)):
        raise UserError(f"GRPO prompt records must be a list, got {type(records).__name__}")
    needed = PARTITION_COLUMNS if estimator == "task_relative_reinforce_pp" else ()
    clean = []
    for i, rec in enumerate(records):
        where = f"GRPO prompt record {i}"
        if not isinstance(rec, Mapping) or "prompt" not in rec:
            raise UserError(f"{where}: expected an object with a 'prompt' (a list of chat messages)")
        try:
            prompt = normalize_messages(rec["prompt"])
        except UserError as exc:
            raise UserError(f"{where}: {exc}") from None
        if prompt[-1]["role"] != "user":
            raise UserError(f"{where}: the prompt must end with a user message, not {prompt[-1]['role']!r}")
        for column in needed:
            if not isinstance(rec.get(column), str) or not rec[column]:
                raise UserError(
                    f"{where}: estimator {estimator!r} needs a non-empty string column '{column}'"
                )
        if "completion" in rec or "completion_ids" in rec:
            raise UserError(f"{where}: 'completion' and 'completion_ids' are names TRL reserves for rollouts")
        clean.append({**rec, "prompt": prompt})
    return clean


def prompt_token_count(tokenizer, prompt: list[dict[str, str]]) -> int:
    """Tokens of a prompt as the policy sees it: chat template plus generation header."""
    try:
        text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
    except ValueError as exc:
        raise UserError(f"cannot apply the base model's chat template: {exc}") from exc
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def drop_long_prompts(tokenizer, records: list[dict], max_tokens: int) -> tuple[list[dict], dict[str, int]]:
    """Keep the records whose prompt fits in ``max_tokens``; also return the counts."""
    lengths = [prompt_token_count(tokenizer, rec["prompt"]) for rec in records]
    kept = [rec for rec, n in zip(records, lengths) if n <= max_tokens]
    return kept, {
        "n_prompts": len(records),
        "n_prompts_dropped_too_long": len(records) - len(kept),
        "longest_prompt_tokens": max(lengths, default=0),
    }


# --------------------------------------------------------------------------- rollout records


class TrainerRollouts(Backend):
    """Stands for the generator inside GRPOTrainer in rollout records (``backend`` field).

    It describes what produced the texts; it cannot generate (rollouts exist only
    inside training).
    """

    name = ROLLOUT_BACKEND

    def __init__(self, facts: dict[str, Any]):
        self.facts = dict(facts)

    def generate(self, requests: list[GenerationRequest]) -> list[list[str]]:
        raise UserError(
            "GRPO rollouts are produced inside training and cannot be generated again; replay them"
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **self.facts}


def completion_text(completion: Any) -> str:
    """The text of one TRL completion: a string, or a list of messages (the last one's content)."""
    if isinstance(completion, str):
        return completion
    return str(completion[-1]["content"])


def _plain(value: Any) -> Any:
    """A dataset value as plain JSON (numpy scalars and arrays become Python values)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _reward_or_none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


class RolloutLog:
    """Collects the rollouts of every generation as recording records (see module doc)."""

    def __init__(self, settings: GRPOSettings, backend: TrainerRollouts):
        self.settings = settings
        self.backend = backend
        self.records: list[dict[str, Any]] = []
        self.generations = 0

    def sampling(self, group: int) -> SamplingParams:
        s = self.settings
        return SamplingParams(
            temperature=s.temperature,
            top_p=s.top_p,
            top_k=s.top_k,
            max_new_tokens=s.max_completion_length,
            n=s.group_size,
            seed=derive_seed(s.seed, "grpo-rollout", self.generations, group),
        )

    def add_generation(
        self,
        *,
        step: int,
        inputs: list[dict],
        completions: list,
        rewards: np.ndarray,
        advantages: np.ndarray,
        token_counts: np.ndarray,
        seconds: float,
    ) -> None:
        """Record one scored generation batch (consecutive groups of ``group_size``)."""
        size = self.settings.group_size
        if len(inputs) % size:
            raise RuntimeError(
                f"a generation batch of {len(inputs)} rollouts does not split into groups of {size}"
            )
        requests, outputs, metas = [], [], []
        for group in range(len(inputs) // size):
            rows = range(group * size, (group + 1) * size)
            first = inputs[rows[0]]
            if any(inputs[i]["prompt"] != first["prompt"] for i in rows):
                raise RuntimeError("TRL's generation batch did not hold whole groups of one prompt")
            requests.append(GenerationRequest(first["prompt"], self.sampling(group)))
            outputs.append([completion_text(completions[i]) for i in rows])
            metas.append(
                {
                    "step": step,
                    "generation": self.generations,
                    "group": group,
                    "estimator": self.settings.estimator,
                    "rewards": [_reward_or_none(float(rewards[i])) for i in rows],
                    "advantages": [float(advantages[i]) for i in rows],
                    "completion_tokens": [int(token_counts[i]) for i in rows],
                    "columns": {k: _plain(v) for k, v in first.items() if k != "prompt"},
                }
            )
        self.records.extend(build_records(self.backend, requests, outputs, seconds, metas))
        self.generations += 1

    def save(self, folder: Path, extra: Mapping[str, Any]) -> None:
        """Write the rollouts so far and the log's counters (plus ``extra``) into a checkpoint."""
        write_jsonl(folder / CHECKPOINT_ROLLOUTS, self.records)
        write_json(folder / CHECKPOINT_STATE, {"generations": self.generations, **extra})

    def load(self, folder: Path) -> dict[str, Any]:
        """Continue from the log saved in a checkpoint; return its state (with ``extra``)."""
        state = read_json(folder / CHECKPOINT_STATE)
        records = read_jsonl(folder / CHECKPOINT_ROLLOUTS)
        if len({r["meta"]["generation"] for r in records}) != state["generations"]:
            raise RuntimeError(f"{folder}: the saved rollouts do not hold {state['generations']} generations")
        self.records, self.generations = records, int(state["generations"])
        return state


def is_main_process() -> bool:
    """True in a single process and in the main process of a launched group (rank 0)."""
    return int(os.environ.get("RANK", "0")) == 0


# --------------------------------------------------------------------------- trainer


def combined_rewards(rewards_per_func, weights) -> np.ndarray:
    """TRL's weighted sum over reward functions; NaN where every function returned None."""
    per_func = rewards_per_func.detach().double().cpu().numpy()
    weights = weights.detach().double().cpu().numpy()
    unscorable = np.isnan(per_func).all(axis=1)
    total = np.nansum(per_func * weights[None, :], axis=1)
    total[unscorable] = np.nan
    return total


@functools.cache
def _trainer_class():
    """GRPOTrainer plus rollout recording and the optional task-relative advantages (built on first use,
    so importing this module does not import TRL)."""
    torch = require_module("torch", _INSTALL_HINT)
    trl = require_module("trl", _INSTALL_HINT)
    from accelerate.utils import gather_object

    class SelfplayGRPOTrainer(trl.GRPOTrainer):
        def __init__(self, *args, rollout_log: RolloutLog, **kwargs):
            self.rollout_log = rollout_log
            self._scored: tuple | None = None
            self._generation_seconds = 0.0
            super().__init__(*args, **kwargs)

        def _generate(self, prompts):
            started = time.perf_counter()
            result = super()._generate(prompts)
            self._generation_seconds = time.perf_counter() - started
            return result

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self._scored = (inputs, completions, per_func)
            return per_func

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            if not self.model.training:
                return output
            scored_inputs, completions, per_func = self._scored
            self._scored = None
            # TRL has gathered the rewards of the whole generation batch (every process's slice,
            # in process order); the columns, completions, token counts and advantages are local.
            rewards = combined_rewards(per_func, self.reward_weights)
            local = output["advantages"]
            tokens = output["completion_mask"].sum(dim=1)
            mine = slice(
                self.accelerator.process_index * len(local), (self.accelerator.process_index + 1) * len(local)
            )
            if self.accelerator.num_processes > 1:
                scored_inputs, completions = gather_object(scored_inputs), gather_object(completions)
                tokens = self.accelerator.gather(tokens)
            token_counts = tokens.cpu().numpy()
            if len(scored_inputs) != len(rewards) or len(token_counts) != len(rewards):
                raise RuntimeError(
                    f"gathered {len(scored_inputs)} rollouts and {len(token_counts)} token counts for "
                    f"{len(rewards)} rewards"
                )
            if self.rollout_log.settings.estimator == "task_relative_reinforce_pp":
                whole = task_relative_advantages(
                    rewards,
                    [x["task"] for x in scored_inputs],
                    [x["role"] for x in scored_inputs],
                    token_counts,
                )
                output["advantages"] = torch.as_tensor(whole[mine], dtype=local.dtype, device=local.device)
            else:
                whole = self.accelerator.gather(local) if self.accelerator.num_processes > 1 else local
                whole = whole.detach().double().cpu().numpy()
            self.rollout_log.add_generation(
                step=int(self.state.global_step),
                inputs=scored_inputs,
                completions=completions,
                rewards=rewards,
                advantages=np.asarray(whole, dtype=np.float64),
                token_counts=token_counts,
                seconds=self._generation_seconds,
            )
            return output

        def _save_checkpoint(self, model, trial):
            # The rollouts so far go into the checkpoint before the trainer writes its state,
            # which is what marks a checkpoint complete (train/checkpoints.py).
            if self.args.should_save:
                folder = Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
                folder.mkdir(parents=True, exist_ok=True)
                timer = _find_timer(self)
                self.rollout_log.save(folder, {"step_seconds": {str(k): v for k, v in timer.seconds.items()}})
            super()._save_checkpoint(model, trial)

    return SelfplayGRPOTrainer


@functools.cache
def _step_timer_class():
    transformers = require_module("transformers", _INSTALL_HINT)

    class StepTimer(transformers.TrainerCallback):
        """Wall time of every optimizer step, generation included (keyed by the step number)."""

        def __init__(self):
            self.seconds: dict[int, float] = {}
            self._started = 0.0

        def on_step_begin(self, args, state, control, **kwargs):
            self._started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):
            self.seconds[int(state.global_step)] = round(time.perf_counter() - self._started, 3)

    return StepTimer


def _find_timer(trainer):
    return next(cb for cb in trainer.callback_handler.callbacks if isinstance(cb, _step_timer_class()))


def _device_flags(device: str) -> tuple[bool, bool]:
    """(on_gpu, bf16_supported) for ``device`` ("cpu" or "cuda"), refusing a GPU that is not there."""
    import torch

    if device == "cpu":
        return False, False
    if not torch.cuda.is_available():
        raise UserError("GRPO training device is 'cuda', but torch sees no GPU")
    return True, bool(torch.cuda.is_bf16_supported())


def load_tokenizer(model_dir: str):
    """The policy's tokenizer, with a pad token; refuses a model without a chat template."""
    return load_chat_tokenizer(require_module("transformers", _INSTALL_HINT), model_dir, "GRPO")


def load_policy(model_dir: str, settings: GRPOSettings, adapter: str | None, dtype: str):
    """The model to train and, for a fresh adapter, the PEFT config the trainer wraps it in.

    With ``adapter`` and LoRA, that adapter is trained further (its own rank and
    targets apply, not ``settings.lora``); with ``adapter`` and full fine-tuning, it is
    merged into the weights first.
    """
    torch = require_module("torch", _INSTALL_HINT)
    transformers = require_module("transformers", _INSTALL_HINT)
    peft = require_module("peft", _INSTALL_HINT)
    if adapter is not None and not Path(adapter, "adapter_config.json").is_file():
        raise UserError(f"adapter {adapter!r} is not a PEFT adapter folder (no adapter_config.json)")
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype))
    except OSError as exc:
        raise UserError(f"cannot load base model {model_dir!r} for GRPO training: {exc}") from exc
    if adapter is not None:
        model = peft.PeftModel.from_pretrained(model, adapter, is_trainable=settings.finetune == "lora")
        return (model.merge_and_unload() if settings.finetune == "full" else model), None
    if settings.finetune == "full":
        return model, None
    return model, settings.lora.peft_config(peft)


def build_grpo_trainer(
    model_dir: str,
    records: list[dict],
    reward_fn: Callable,
    settings: GRPOSettings,
    work_dir: str | Path,
    *,
    adapter: str | None = None,
    device: str = "cpu",
    dtype: str = "float32",
):
    """Load the policy and return ``(trainer, facts)``; ``facts`` holds the prompt counts
    and the resolved machine-dependent settings. Records must already be validated."""
    trl = require_module("trl", _INSTALL_HINT)
    datasets = require_module("datasets", _INSTALL_HINT)
    transformers = require_module("transformers", _INSTALL_HINT)

    on_gpu, bf16_ok = _device_flags(device)
    resolved = resolve_for_device(
        {"gradient_checkpointing": settings.gradient_checkpointing, "bf16": settings.bf16},
        on_gpu=on_gpu,
        bf16_supported=bf16_ok,
    )
    tokenizer = load_tokenizer(model_dir)
    kept, counts = drop_long_prompts(tokenizer, records, settings.max_prompt_tokens)
    if counts["n_prompts_dropped_too_long"]:
        log.warning(
            "%d of %d GRPO prompts are longer than max_prompt_tokens=%d and were dropped",
            counts["n_prompts_dropped_too_long"],
            counts["n_prompts"],
            settings.max_prompt_tokens,
        )
    if not kept:
        raise TrainingSkipped(
            f"all {counts['n_prompts']} GRPO prompts are longer than max_prompt_tokens={settings.max_prompt_tokens}"
        )
    # Seed before anything random happens (LoRA init, dropout, shuffling, sampling).
    transformers.set_seed(settings.seed)
    model, peft_config = load_policy(model_dir, settings, adapter, dtype)
    config = trl.GRPOConfig(
        **grpo_config_kwargs(
            settings,
            output_dir=str(work_dir),
            use_cpu=not on_gpu,
            bf16=bool(resolved["bf16"]),
            gradient_checkpointing=bool(resolved["gradient_checkpointing"]),
        )
    )
    backend = TrainerRollouts(
        {
            "model": str(model_dir),
            "initial_adapter": adapter,
            "finetune": settings.finetune,
            "device": device,
            "dtype": dtype,
            "libraries": _library_versions(),
        }
    )
    trainer = _trainer_class()(
        model=model,
        reward_funcs=reward_fn,
        args=config,
        train_dataset=datasets.Dataset.from_list(kept),
        processing_class=tokenizer,
        peft_config=peft_config,
        callbacks=[_step_timer_class()()],
        rollout_log=RolloutLog(settings, backend),
    )
    return trainer, {**counts, "resolved": resolved}


# --------------------------------------------------------------------------- output


def step_history(log_history: list[dict], step_seconds: Mapping[int, float]) -> list[dict[str, Any]]:
    """One entry per optimizer step from TRL's log (logged every step), under our names."""
    history = []
    for entry in log_history:
        if "loss" not in entry or "step" not in entry:
            continue
        step = int(entry["step"])
        row: dict[str, Any] = {"step": step, "seconds": step_seconds.get(step)}
        for theirs, ours in STEP_METRICS.items():
            if theirs in entry:
                row[ours] = _finite(entry[theirs])
        history.append(row)
    return history


def _save_policy(trainer, tokenizer, staging: Path, finetune: str) -> tuple[list[str], str] | None:
    """Write the adapter (LoRA) or the whole model and tokenizer (full); return (files, sha256),
    None in a process other than the main one (which writes nothing)."""
    if getattr(trainer, "is_fsdp_enabled", False):
        # The weights are sharded: every process takes part in gathering them whole; the main
        # one writes them (with the tokenizer, and the trainer's arguments, which are dropped).
        trainer.save_model(str(staging))
        if not trainer.args.should_save:
            return None
        (staging / "training_args.bin").unlink(missing_ok=True)
        if finetune == "lora":
            _canonical_adapter_config(staging / "adapter_config.json")
            for extra in [p for p in staging.iterdir() if p.is_file() and p.name not in ADAPTER_FILES]:
                extra.unlink()
        files = sorted(p.name for p in staging.iterdir() if p.is_file())
        return files, sha256_tree(staging)
    if not trainer.args.should_save:
        return None
    if finetune == "lora":
        trainer.model.save_pretrained(str(staging))
        _canonical_adapter_config(staging / "adapter_config.json")
        missing = [name for name in ADAPTER_FILES if not (staging / name).is_file()]
        if missing:
            raise RuntimeError(f"saving the adapter did not write {', '.join(missing)}")
    else:
        trainer.model.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
    files = sorted(p.name for p in staging.iterdir() if p.is_file())
    return files, sha256_tree(staging)


def _release_memory() -> None:
    gc.collect()
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_available():
        sys.modules["torch"].cuda.empty_cache()


def _check_call(
    model_dir: Any, reward_fn: Any, settings: Any, recordings_path: Any, device: Any, dtype: Any
) -> GRPOSettings:
    if not callable(reward_fn):
        raise UserError(f"GRPO reward function must be callable, got {type(reward_fn).__name__}")
    if not isinstance(model_dir, (str, Path)):
        raise UserError(f"GRPO model_dir must be a path, got {type(model_dir).__name__}")
    if recordings_path is None:
        raise UserError("GRPO training needs recordings_path: every rollout is recorded")
    if device not in ("cpu", "cuda"):
        raise UserError(f"GRPO training device must be 'cpu' or 'cuda', got {device!r}")
    if dtype not in DTYPES:
        raise UserError(f"GRPO training dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    settings = settings if isinstance(settings, GRPOSettings) else GRPOSettings.from_dict(settings)
    if not settings.clipping_acts:  # the training record says so too (clipping_acts: false)
        log.warning("GRPO settings: %s", settings.clipping_message())
    return settings


def _work_key(
    model_dir: str,
    records: list[dict],
    reward_fn: Callable,
    settings: GRPOSettings,
    adapter: str | None,
    device: str,
    dtype: str,
    processes: int,
) -> str:
    """What a checkpoint is only valid for (see the module doc)."""

    def where(path: str | None) -> str | None:
        return str(Path(path).resolve()) if path is not None and Path(path).exists() else path

    return resume_key(
        base_model=where(model_dir),
        adapter=where(adapter),
        adapter_sha256=sha256_tree(Path(adapter)) if adapter else None,
        records=records,
        reward=getattr(reward_fn, "__name__", type(reward_fn).__name__),
        settings=settings.to_record(),
        device=device,
        dtype=dtype,
        processes=processes,
        libraries=_library_versions(),
    )


def _train_into(
    staging: Path,
    scratch: Path,
    model_dir: str,
    records: list[dict],
    reward_fn: Callable,
    settings: GRPOSettings,
    recordings_path: str | Path,
    adapter: str | None,
    device: str,
    dtype: str,
) -> dict[str, Any] | None:
    """Train, write the rollouts and the policy into ``staging``; return the record (without
    total seconds), None in a process other than the main one."""
    trainer, facts = build_grpo_trainer(
        model_dir, records, reward_fn, settings, scratch, adapter=adapter, device=device, dtype=dtype
    )
    try:
        timer = _find_timer(trainer)
        resume = None
        if settings.checkpoint_interval:
            key = _work_key(
                model_dir,
                records,
                reward_fn,
                settings,
                adapter,
                device,
                dtype,
                trainer.accelerator.num_processes,
            )
            with trainer.accelerator.main_process_first():  # the main one clears stale checkpoints first
                resume = resume_point(scratch, key)
        if resume is not None:
            state = trainer.rollout_log.load(Path(resume))
            timer.seconds.update({int(k): v for k, v in state.get("step_seconds", {}).items()})
        train_started = time.perf_counter()
        output = trainer.train(resume_from_checkpoint=resume)
        train_seconds = time.perf_counter() - train_started
        rollouts = trainer.rollout_log.records
        saved_policy = _save_policy(trainer, trainer.processing_class, staging, settings.finetune)
        if saved_policy is None:
            return None
        files, digest = saved_policy
        write_jsonl(recordings_path, rollouts)
        steps = int(trainer.state.global_step)
        saved = "adapter" if settings.finetune == "lora" else "model"
        return {
            "base_model": model_dir,
            "initial_adapter": adapter,
            "finetune": settings.finetune,
            "estimator": settings.estimator,
            "seed": settings.seed,
            "settings": settings.to_record(),
            "resolved": facts["resolved"],
            "clipping_acts": settings.clipping_acts,
            "n_prompts": facts["n_prompts"],
            "n_prompts_dropped_too_long": facts["n_prompts_dropped_too_long"],
            "longest_prompt_tokens": facts["longest_prompt_tokens"],
            "steps": steps,
            "resumed_from_step": int(Path(resume).name.split("-")[-1]) if resume else None,
            "processes": int(trainer.accelerator.num_processes),
            "generations": trainer.rollout_log.generations,
            "n_rollouts": sum(len(r["outputs"]) for r in rollouts),
            "rollouts_file": str(recordings_path),
            "rollouts_sha256": sha256_file(recordings_path),
            "mean_train_loss": _finite(output.training_loss),
            "history": step_history(trainer.state.log_history, timer.seconds),
            "train_seconds": round(train_seconds, 3),
            "seconds_per_step": round(train_seconds / steps, 3) if steps else None,
            "device": device,
            "dtype": dtype,
            "libraries": _library_versions(),
            "runtime": runtime_record(),
            # As the SFT record names them for an adapter; "model_*" for full fine-tuning.
            f"{saved}_files": files,
            f"{saved}_sha256": digest,
        }
    finally:
        # Drop the model before returning so a caller that generates next gets the memory back.
        del trainer
        _release_memory()


def train_grpo(
    model_dir: str | Path,
    prompt_records: list[dict],
    reward_fn: Callable,
    settings: GRPOSettings | Mapping[str, Any] | None,
    out_dir: str | Path,
    *,
    recordings_path: str | Path,
    adapter: str | None = None,
    device: str = "cpu",
    dtype: str = "float32",
) -> dict[str, Any] | None:
    """Train the policy in ``model_dir`` with GRPO on ``prompt_records``; save it in ``out_dir``.

    ``settings`` is a :class:`GRPOSettings` or its config mapping. Rollouts are written
    to ``recordings_path`` (JSONL, atomic); the LoRA adapter (or, for full fine-tuning,
    the model and tokenizer) and ``training_record.json`` to ``out_dir``, atomically.
    Checkpoints every ``settings.checkpoint_steps`` optimizer steps; a rerun of the same
    work after a kill resumes from the last one (module doc). Under ``accelerate launch``
    every process calls this; only the main one writes, and the others return None.
    Returns the training record. Raises TrainingSkipped when no prompt is left to train
    on, UserError for malformed records (naming the index) or settings (naming the key).
    """
    started = time.perf_counter()
    settings = _check_call(model_dir, reward_fn, settings, recordings_path, device, dtype)
    records = validate_prompt_records(prompt_records, settings.estimator)
    if not records:
        raise TrainingSkipped("no GRPO prompts: nothing to train on, no policy written")
    if not settings.clipping_acts:
        log.warning("GRPO: %s", settings.clipping_message())

    with _output_folders(out_dir) as (staging, scratch):
        with quiet_peft():
            record = _train_into(
                staging,
                scratch,
                str(model_dir),
                records,
                reward_fn,
                settings,
                recordings_path,
                adapter,
                device,
                dtype,
            )
        if record is None:
            return None
        record["seconds"] = round(time.perf_counter() - started, 3)
        write_json(staging / RECORD_NAME, record)
    return record


@contextlib.contextmanager
def _output_folders(out_dir: str | Path) -> Iterator[tuple[Path, Path]]:
    """``(staging, scratch)``: the main process's are the SFT layer's (staged output, checkpoint
    folder kept for a rerun); another process writes nothing of the output, so its staging is
    a throwaway folder, and it shares the main one's checkpoint folder (FSDP saves a shard
    of the optimizer from every process)."""
    if is_main_process():
        with staged_output(out_dir, keep_checkpoints=True) as folders:
            yield folders
        return
    with tempfile.TemporaryDirectory(prefix="grpo-rank-") as throwaway:
        scratch = checkpoint_folder(out_dir)
        scratch.mkdir(parents=True, exist_ok=True)
        yield Path(throwaway), scratch
