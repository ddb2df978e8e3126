"""Policy-gradient updates on rollouts recorded by the workflow (issue 20, section 2).

GRPO in ``grpo.py`` generates its own rollouts inside TRL. Self-play tracks (GASP,
Absolute Zero) cannot: a proposal's reward is the pass rate of other samples of the
same policy, run in the sandbox by other jobs. Here the rollouts and their rewards
arrive as files, and one job applies the update to a *policy state folder* and writes
the next one, so a self-play iteration is a chain of ordinary jobs::

    generate (recorded, any backend) -> execute (sandbox) -> score (track) -> update -> next phase

Input. Each rollout record is a generation record (:mod:`selfplay.llm.recording`); the
fields read are

    messages            the prompt (chat messages, ending with a user message)
    outputs             the completions (non-empty strings, one or more)
    meta.rewards        one reward per output: a finite number, or null (unscorable:
                        left out of the update)
    meta.task, meta.role  non-empty strings naming the record's partition; required by
                        ``task_relative_reinforce_pp``, optional for ``grpo``
    meta.truncated      optional, one bool per output: the output was cut at the length
                        limit, so no end-of-sequence token follows it

Anything else in a record is ignored. A completion is trained as the prompt rendered by
the chat template with its generation header, then the output text token for token, then
the end-of-sequence token (as the SFT layer tokenizes). The recording holds texts, not
token ids, so a text whose retokenization differs from the sampled ids is trained on its
retokenization.

Advantages, computed over the whole batch of one update before it is split into
mini-batches or across processes:

- ``task_relative_reinforce_pp`` (Absolute Zero): the completion's reward on every one
  of its tokens, whitened separately inside every (task, role) partition over tokens
  (:func:`.advantages.task_relative_advantages` with the token counts). AZR samples one
  response per prompt; records with several outputs are allowed and each output counts
  as its own sample of the record's partition.
- ``grpo``: every record is one prompt's group, all records hold the same number of
  outputs (>= 2); reward minus the group's mean, scaled by ``scale_rewards``
  (:func:`.advantages.group_relative_advantages`).

Loss: token-level PPO clipped surrogate, averaged over the completion tokens of each
mini-batch (all processes together)::

    ratio_t = exp(logp_t - old_logp_t)
    loss    = -sum_t min(ratio_t A_t, clip(ratio_t, 1 - epsilon_low, 1 + epsilon_high) A_t) / tokens

No KL term and no entropy bonus (Absolute Zero and GASP use none).

Where the old log-probabilities come from. Not from the generating backend (it may
differ in precision and tokenization, and records hold texts). The job computes them
itself from the policy state it starts from, before its first optimizer step; when the
schedule is on-policy that state is the one whose weights generated the rollouts. Each
update takes ``mini_batches x ppo_epochs`` optimizer steps on its batch. With one step,
every token is trained by the policy that scored it: the ratio is exactly 1 (the old
log-probability is the detached new one) and the clip cannot act. With more steps, a
no-grad pass in eval mode (no dropout) over the whole batch before the first step gives
the old log-probabilities, and every step after the first one sees ratios away from 1,
which the clip bounds. A job given several updates recomputes them at the start of each
update, so one job of two updates equals two jobs of one update each.

State folder (written atomically with the SFT layer's ``staged_output``)::

    policy/              the LoRA adapter (adapter_config.json, adapter_model.safetensors)
                         or, for full fine-tuning, the whole model and its tokenizer: what a
                         generation backend loads for the next phase
    optimizer.pt         AdamW state (moments, step counts); engine data_parallel only
    sharded/             engine fsdp only, instead of optimizer.pt: the model's weights and
                         AdamW state, one file per process (torch.distributed.checkpoint:
                         .metadata, __<rank>_0.distcp)
    scheduler.pt         learning-rate scheduler state
    rng.pt               every process's Python, NumPy, torch (and CUDA) generator states
    policy_state.json    format, base model, engine, optimizer steps and updates so far,
                         the processes, the settings that must stay the same from job to job
    training_record.json this job's record

A job reads the previous state folder (or starts from the base model and the settings),
applies its updates, and writes the next folder. The optimizer settings (learning rate,
weight decay, scheduler, finetune, LoRA shape, engine) are carried: a job whose settings
differ from its state's on one of them is refused, naming the key (a state written before
``engine`` existed counts as data_parallel). The process count is not carried: a
data-parallel state holds whole tensors, and DCP reads each process's slice of a sharded
one whatever the count that wrote it; a job whose count differs from its state's draws
fresh random streams instead of restoring them.

Processes. The job runs in one process, or in N started by ``accelerate launch`` (GPUs:
the shipped ``config/accelerate/*.yaml``, directly or through ``selfplay.train.rl.launch``)
or by ``torchrun`` (CPU processes joined with gloo; ``accelerate launch --cpu`` starts only
one); accelerate's ``Accelerator`` joins them. Every process reads the whole batch and
computes the same advantages; each mini-batch's completions are dealt out to the
processes (completion ``i`` to process ``i mod N``), each process accumulates its share in
micro-batches of ``micro_batch_size``, and the loss of each is scaled so that the average
of the processes' gradients is the gradient of the mini-batch's token mean. The setting
``engine`` chooses how the processes hold the model:

- ``data_parallel`` (default): DDP through ``accelerator.prepare``; every process holds
  the whole model and AdamW state, gradients are all-reduced once per mini-batch, and the
  main process saves the optimizer state whole. Launched with ``lora_ddp.yaml`` or
  torchrun; accelerate's FSDP or DeepSpeed launch is refused.
- ``fsdp``: PyTorch FSDP2 (``torch.distributed.fsdp.fully_shard``), full shard over a
  one-dimensional device mesh of all processes, applied by this job: each decoder layer
  one unit, then the root. accelerate's FSDP plugin is not used: it does not run on CPU
  processes (gloo), where the tests run, and the job needs the same sharding under both.
  Weights, gradients (reduce-scattered after every backward pass) and AdamW moments are
  split over the processes; a process with fewer micro-batches than process 0 runs extra
  passes counting zero, since every FSDP pass is a collective. With ``bf16`` the layers
  compute in bfloat16 (FSDP's mixed precision) and reduce gradients in float32. Saving:
  every process writes its shard into ``sharded/`` (DCP), and the weights are gathered
  whole, offloaded to the main process's CPU, to write ``policy/`` as an ordinary model
  folder. Loading: every process loads the whole model from ``policy/`` (or the base),
  shards it, and reads its slice of ``sharded/``. Launched with torchrun, ``lora_ddp.yaml``
  or ``full_fsdp.yaml``: the job turns accelerate's FSDP off for itself (its plugin would
  wrap nothing here, and under it transformers loads the weights on the main process
  only). Full fine-tuning only.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...containers.runtime import runtime_record
from ...errors import UserError, require_module
from ...llm.base import normalize_messages
from ...llm.peft_notices import quiet_peft
from ...records import derive_seed, read_json, read_jsonl, sha256_tree, write_json
from ..settings import (
    _check_float_range,
    _check_positive_int,
    _check_tristate,
    _fail,
    _is_int,
    resolve_for_device,
)
from ..sft import (
    ADAPTER_FILES,
    RECORD_NAME,
    TrainingSkipped,
    _canonical_adapter_config,
    _finite,
    _library_versions,
    load_chat_tokenizer,
    staged_output,
    tokenize_example,
)
from .advantages import group_relative_advantages, task_relative_advantages, weighted_mean_std
from .settings import ESTIMATORS, FINETUNE, SCALE_REWARDS, LoraSettings, settings_record, settings_with_lora

log = logging.getLogger(__name__)

STATE_FORMAT = 1
STATE_FILE = "policy_state.json"
POLICY_DIR = "policy"
OPTIMIZER_FILE = "optimizer.pt"
SCHEDULER_FILE = "scheduler.pt"
RNG_FILE = "rng.pt"
SHARDED_DIR = "sharded"
SCHEDULERS = ("constant", "constant_with_warmup", "linear", "cosine")
ENGINES = ("data_parallel", "fsdp")
# Settings the optimizer state and the saved policy depend on: a job must use its state's.
CARRIED = (
    "engine",
    "finetune",
    "lora",
    "learning_rate",
    "weight_decay",
    "lr_scheduler",
    "warmup_steps",
    "total_steps",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
)
# What a state folder written before a carried setting existed holds for it.
CARRIED_BEFORE = {"engine": "data_parallel"}
OLD_LOGPROBS = (
    "computed by this job from the policy state it starts each update from, before that update's first optimizer "
    "step (the generating weights when the schedule is on-policy); ratio exactly 1 when an update takes one step"
)
_INSTALL_HINT = "pip install -r requirements.txt (torch, transformers, peft, accelerate)"


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class RecordedUpdateSettings:
    """Every knob of an update on recorded rollouts; build it with :meth:`from_dict`."""

    # Absolute Zero's estimator (GASP builds on it); "grpo" for tracks with groups.
    estimator: str = "task_relative_reinforce_pp"
    # "grpo" only: divide by the group's spread (standard GRPO), the batch's, or nothing.
    scale_rewards: str = "group"
    # Paper 004 (GASP), hyperparameters: lr 1e-6.
    learning_rate: float = 1e-6
    # PPO clip range: not stated by paper 004; 0.2 either side, the usual PPO value and
    # the default of the verl trainer Absolute Zero runs on.
    epsilon_low: float = 0.2
    epsilon_high: float = 0.2
    # Optimizer steps per update = mini_batches x ppo_epochs. Not stated by paper 004; one
    # step (on-policy, ratio 1) unless a config asks for more.
    mini_batches: int = 1
    ppo_epochs: int = 1
    # Completions per forward/backward pass on one process (memory, not maths).
    micro_batch_size: int = 4
    max_grad_norm: float = 1.0
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    lr_scheduler: str = "constant"
    warmup_steps: int = 0
    # Needed by "linear" and "cosine": the optimizer steps the whole run will take.
    total_steps: int | None = None
    # Paper 004 trains a 7B policy's own weights; a CPU config sets "lora".
    finetune: str = "full"
    lora: LoraSettings = field(default_factory=LoraSettings)
    seed: int = 0
    gradient_checkpointing: bool | str = "auto"
    bf16: bool | str = "auto"
    # How the update spreads over its processes: "data_parallel" (every process holds the
    # whole model and optimizer state) or "fsdp" (PyTorch FSDP2, full shard: weights,
    # gradients and AdamW moments split over the processes; full fine-tuning only).
    engine: str = "data_parallel"

    def __post_init__(self) -> None:
        for key in ("mini_batches", "ppo_epochs", "micro_batch_size"):
            object.__setattr__(self, key, _check_positive_int(key, getattr(self, key)))
        for key, low, high, low_open in (
            ("learning_rate", 0.0, 1.0, True),
            ("epsilon_low", 0.0, 0.999999, True),
            ("epsilon_high", 0.0, None, True),
            ("max_grad_norm", 0.0, None, False),
            ("weight_decay", 0.0, None, False),
            ("adam_beta1", 0.0, 0.999999, False),
            ("adam_beta2", 0.0, 0.999999, False),
            ("adam_epsilon", 0.0, 1.0, True),
        ):
            object.__setattr__(
                self, key, _check_float_range(key, getattr(self, key), low, high, low_open=low_open)
            )
        for key, choices in (
            ("estimator", ESTIMATORS),
            ("scale_rewards", SCALE_REWARDS),
            ("finetune", FINETUNE),
            ("lr_scheduler", SCHEDULERS),
            ("engine", ENGINES),
        ):
            if getattr(self, key) not in choices:
                _fail(key, getattr(self, key), f"one of {', '.join(choices)}")
        if not _is_int(self.warmup_steps) or self.warmup_steps < 0:
            _fail("warmup_steps", self.warmup_steps, "an integer >= 0")
        object.__setattr__(self, "warmup_steps", int(self.warmup_steps))
        if self.total_steps is not None:
            object.__setattr__(self, "total_steps", _check_positive_int("total_steps", self.total_steps))
        if self.lr_scheduler in ("linear", "cosine") and self.total_steps is None:
            _fail(
                "total_steps",
                None,
                f"the run's total optimizer steps (lr_scheduler {self.lr_scheduler!r} decays over them)",
            )
        if not isinstance(self.lora, LoraSettings):
            _fail("lora", self.lora, "LoRA settings")
        if self.engine == "fsdp" and self.finetune == "lora":
            _fail(
                "engine",
                self.engine,
                '"data_parallel" beside finetune "lora" (an adapter is small enough for every process '
                "to hold whole; the fsdp engine shards full fine-tuning only)",
            )
        if not _is_int(self.seed) or not 0 <= self.seed < 2**32:
            _fail("seed", self.seed, "an integer in [0, 2**32)")
        object.__setattr__(self, "seed", int(self.seed))
        for key in ("gradient_checkpointing", "bf16"):
            object.__setattr__(self, key, _check_tristate(key, getattr(self, key)))

    @property
    def steps_per_update(self) -> int:
        return self.mini_batches * self.ppo_epochs

    @property
    def clipping_acts(self) -> bool:
        """True when some optimizer step of an update trains on tokens scored before an earlier step."""
        return self.steps_per_update > 1

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None) -> RecordedUpdateSettings:
        section = section if section is not None else {}
        settings = settings_with_lora(cls, section, "recorded-update")
        if settings.estimator != "grpo" and "scale_rewards" in section:
            _fail(
                "scale_rewards",
                section["scale_rewards"],
                'no value unless estimator is "grpo" (the task-relative estimator always whitens)',
            )
        return settings

    def to_record(self) -> dict[str, Any]:
        record = settings_record(self)
        record["steps_per_update"] = self.steps_per_update
        record["clipping_acts"] = self.clipping_acts
        return record


# --------------------------------------------------------------------------- input


@dataclass(frozen=True)
class Completion:
    """One output of one rollout record, as trained on."""

    record: int
    output: int
    prompt: list[dict[str, str]]
    text: str
    reward: float | None
    task: str | None
    role: str | None
    truncated: bool


def _label(meta: Mapping, key: str, where: str, required: bool) -> str | None:
    value = meta.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        need = "needs" if required else "may only hold"
        raise UserError(f"{where}: the estimator {need} a non-empty string meta.{key}, got {value!r:.60}")
    return value


def _per_output(meta: Mapping, key: str, n: int, where: str) -> list:
    values = meta.get(key)
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise UserError(
            f"{where}: meta.{key} must be a list with one entry per output ({n}), got {values!r:.60}"
        )
    return list(values)


def validate_rollout_records(records: Any, estimator: str) -> list[Completion]:
    """Check every record (module doc) and return its completions in order.

    Raises UserError naming the index of the first malformed record.
    """
    if estimator not in ESTIMATORS:
        raise UserError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    if not isinstance(records, (list, tuple)):
        raise UserError(f"rollout records must be a list, got {type(records).__name__}")
    completions: list[Completion] = []
    group = None
    for i, rec in enumerate(records):
        where = f"rollout record {i}"
        if not isinstance(rec, Mapping):
            raise UserError(f"{where}: expected an object with messages, outputs and meta")
        try:
            prompt = normalize_messages(rec.get("messages"))
        except UserError as exc:
            raise UserError(f"{where}: messages: {exc}") from None
        if prompt[-1]["role"] != "user":
            raise UserError(f"{where}: the messages must end with a user message, not {prompt[-1]['role']!r}")
        outputs = rec.get("outputs")
        if not isinstance(outputs, (list, tuple)) or not outputs:
            raise UserError(f"{where}: 'outputs' must be a non-empty list of completion texts")
        for j, text in enumerate(outputs):
            if not isinstance(text, str):
                raise UserError(f"{where}: output {j} is not a string")
        meta = rec.get("meta")
        if not isinstance(meta, Mapping):
            raise UserError(f"{where}: 'meta' must be an object holding 'rewards' (and 'task', 'role')")
        rewards = _per_output(meta, "rewards", len(outputs), where)
        for j, r in enumerate(rewards):
            if r is not None and (
                isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r)
            ):
                raise UserError(f"{where}: meta.rewards[{j}] = {r!r:.40} is not a finite number or null")
        truncated = [False] * len(outputs)
        if "truncated" in meta:
            truncated = _per_output(meta, "truncated", len(outputs), where)
        for j, t in enumerate(truncated):
            if not isinstance(t, bool):
                raise UserError(f"{where}: meta.truncated[{j}] = {t!r:.40} is not true or false")
            if t and not outputs[j]:
                raise UserError(f"{where}: output {j} is empty and truncated, so it has no token to train on")
        required = estimator == "task_relative_reinforce_pp"
        task, role = _label(meta, "task", where, required), _label(meta, "role", where, required)
        if (task is None) != (role is None):
            raise UserError(f"{where}: meta.task and meta.role come together (both or neither)")
        if estimator == "grpo":
            if len(outputs) < 2:
                raise UserError(
                    f"{where}: estimator 'grpo' needs a group of >= 2 outputs per record, got {len(outputs)}"
                )
            if group is not None and len(outputs) != group:
                raise UserError(
                    f"{where}: estimator 'grpo' needs groups of one size; {len(outputs)} outputs here, "
                    f"{group} in record 0"
                )
            group = len(outputs)
        for j, text in enumerate(outputs):
            completions.append(
                Completion(
                    i,
                    j,
                    prompt,
                    text,
                    None if rewards[j] is None else float(rewards[j]),
                    task,
                    role,
                    truncated[j],
                )
            )
    return completions


def tokenize_completion(tokenizer, completion: Completion) -> dict[str, list[int]]:
    """``input_ids`` and ``completion_mask`` (1 on the completion's tokens) of one completion."""
    example = tokenize_example(
        tokenizer,
        {"prompt": completion.prompt, "completion": [{"role": "assistant", "content": completion.text}]},
    )
    if completion.truncated:  # cut at the length limit: the model never wrote the end token
        example = {key: values[:-1] for key, values in example.items()}
    return example


def _partition_name(c: Completion) -> str:
    return "all" if c.task is None else f"{c.task}/{c.role}"


def batch_advantages(
    completions: Sequence[Completion], token_counts: Sequence[int], settings: RecordedUpdateSettings
) -> tuple[np.ndarray, dict[str, dict[str, Any]]]:
    """One advantage per completion (NaN reward: 0), over the whole batch, and statistics
    per (task, role) partition."""
    rewards = np.array([np.nan if c.reward is None else c.reward for c in completions], dtype=np.float64)
    counts = np.asarray(token_counts, dtype=np.float64)
    if settings.estimator == "task_relative_reinforce_pp":
        advantages = task_relative_advantages(
            rewards, [c.task for c in completions], [c.role for c in completions], counts
        )
    else:
        group = len(completions) // len({c.record for c in completions})
        advantages = group_relative_advantages(rewards, group, settings.scale_rewards)
    stats: dict[str, dict[str, Any]] = {}
    names = [_partition_name(c) for c in completions]
    for name in dict.fromkeys(names):
        idx = np.array([k for k, n in enumerate(names) if n == name])
        scored = idx[~np.isnan(rewards[idx])]
        reward_mean, reward_std = weighted_mean_std(rewards[scored], counts[scored])
        adv_mean, adv_std = weighted_mean_std(advantages[scored], counts[scored])
        stats[name] = {
            "completions": int(idx.size),
            "unscorable": int(idx.size - scored.size),
            "tokens": int(counts[scored].sum()),
            "reward_token_mean": _finite(reward_mean),
            "reward_token_std": _finite(reward_std),
            "advantage_token_mean": _finite(adv_mean),
            "advantage_token_std": _finite(adv_std),
            "advantage_min": _finite(advantages[scored].min()) if scored.size else None,
            "advantage_max": _finite(advantages[scored].max()) if scored.size else None,
        }
    return advantages, stats


# --------------------------------------------------------------------------- the maths


# Positions whose logits are taken to float32 at once: a paper-scale vocabulary (152k) over a
# 32k-token sequence would otherwise need a ~20 GB float32 copy.
LOGPROB_CHUNK = 1024


def token_logprobs(model, input_ids, attention_mask, first: int = 0):
    """log p(token t | tokens before t) for t = first+1..T-1, shape [B, T-1-first], in float32.

    ``first``: the first position whose prediction counts (the earliest completion of the
    batch starts at first+1). The LM head runs only from there on (``logits_to_keep``): a
    prompt's positions need hidden states but no logits, and on the tiny default the head
    over a teacher's long prompt was a fifth of an update's compute."""
    import torch

    keep = input_ids.shape[1] - first
    logits = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=keep).logits[:, :-1]
    targets = input_ids[:, first + 1 :].unsqueeze(-1)
    pieces = []
    for start in range(0, logits.shape[1], LOGPROB_CHUNK):
        part = logits[:, start : start + LOGPROB_CHUNK].float()
        chosen = part.gather(-1, targets[:, start : start + LOGPROB_CHUNK]).squeeze(-1)
        pieces.append(chosen - part.logsumexp(dim=-1))
    return torch.cat(pieces, dim=1)


def clipped_token_loss(logp, old_logp, advantages, epsilon_low: float, epsilon_high: float):
    """Per-token PPO loss ``-min(r A, clip(r, 1-eps_low, 1+eps_high) A)``, the ratio, and
    where the clip is active (the clipped term was the smaller one, so the token gives no
    gradient)."""
    import torch

    ratio = torch.exp(logp - old_logp)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1.0 - epsilon_low, 1.0 + epsilon_high) * advantages
    return -torch.minimum(unclipped, clipped), ratio, clipped < unclipped


# --------------------------------------------------------------------------- state folder


def _torch_load(path: Path):
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)


def read_state(folder: str | Path) -> dict[str, Any]:
    """The ``policy_state.json`` of a state folder, refusing a folder that is not one."""
    path = Path(folder, STATE_FILE)
    if not path.is_file():
        raise UserError(f"previous policy state {str(folder)!r} is not a state folder (no {STATE_FILE})")
    state = read_json(path)
    if state.get("format") != STATE_FORMAT:
        raise UserError(
            f"previous policy state {str(folder)!r} has format {state.get('format')!r}, "
            f"this code reads format {STATE_FORMAT}"
        )
    return state


def _check_carried(state: Mapping[str, Any], settings: RecordedUpdateSettings, folder: str | Path) -> None:
    mine = settings.to_record()
    for key in CARRIED:
        theirs = state["settings"].get(key, CARRIED_BEFORE.get(key))
        if theirs != mine[key]:
            raise UserError(
                f"recorded-update setting '{key}' = {mine[key]!r} differs from "
                f"{theirs!r} in the previous policy state {str(folder)!r}; the "
                "optimizer state is carried with it"
            )


def _rng_state() -> dict[str, Any]:
    import torch

    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: Mapping[str, Any]) -> None:
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _activation_checkpointing(model) -> bool:
    """Whether the model recomputes activations in its backward pass: transformers 5 names
    it ``is_activation_checkpointing``; the old ``is_gradient_checkpointing`` (deprecated
    there) is read only from a model that lacks the new name."""
    if hasattr(model, "is_activation_checkpointing"):
        return bool(model.is_activation_checkpointing)
    return bool(getattr(model, "is_gradient_checkpointing", False))


def _load_policy(base_model: str, settings: RecordedUpdateSettings, previous: Path | None, dtype: str):
    torch = require_module("torch", _INSTALL_HINT)
    transformers = require_module("transformers", _INSTALL_HINT)
    peft = require_module("peft", _INSTALL_HINT)
    source = (
        str(previous / POLICY_DIR) if previous is not None and settings.finetune == "full" else base_model
    )
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype))
    except OSError as exc:
        raise UserError(f"cannot load the policy from {source!r}: {exc}") from exc
    if settings.finetune == "full":
        return model
    if previous is not None:
        with quiet_peft():
            return peft.PeftModel.from_pretrained(model, str(previous / POLICY_DIR), is_trainable=True)
    with quiet_peft():
        return peft.get_peft_model(model, settings.lora.peft_config(peft))


def _save_policy(model, tokenizer, folder: Path, finetune: str, state_dict=None) -> list[str]:
    folder.mkdir()
    if state_dict is None:
        model.save_pretrained(str(folder))
    else:  # the weights gathered whole from the FSDP shards
        model.save_pretrained(str(folder), state_dict=state_dict)
    if finetune == "lora":
        _canonical_adapter_config(folder / "adapter_config.json")
        missing = [name for name in ADAPTER_FILES if not (folder / name).is_file()]
        if missing:
            raise RuntimeError(f"saving the adapter did not write {', '.join(missing)}")
    else:
        tokenizer.save_pretrained(str(folder))
    return sorted(p.name for p in folder.iterdir() if p.is_file())


# --------------------------------------------------------------------------- FSDP


def _own_process_group(on_gpu: bool) -> bool:
    """Start a one-process group when the job runs alone (FSDP needs one to build its
    mesh); False when the launcher's group is already there."""
    import torch.distributed as dist

    if dist.is_initialized():
        return False
    if on_gpu:
        import torch

        dist.init_process_group(
            "nccl", store=dist.HashStore(), rank=0, world_size=1, device_id=torch.device("cuda", 0)
        )
    else:
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    return True


@contextmanager
def _without_accelerate_fsdp():
    """Started by ``accelerate launch`` with an FSDP config (``full_fsdp.yaml``), the job
    takes the processes as plain ones: accelerate's FSDP plugin (which needs a GPU to be
    built) stays off, and transformers loads the weights on every process instead of on
    the main one only (the others would get empty meta tensors for accelerate to fill when
    it wraps the model). The fsdp engine shards the model itself."""
    key = "ACCELERATE_USE_FSDP"
    before = os.environ.get(key)
    os.environ[key] = "false"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before


def _shard_model(model, on_gpu: bool, bf16: bool) -> int:
    """FSDP2, full shard, over all processes: each decoder layer (the model's
    ``_no_split_modules``) its own unit, then the rest (embeddings, final norm, output
    layer) under the root. With ``bf16`` the layers compute in bfloat16 and gradients are
    reduced in float32; the sharded master weights stay in the load dtype. Returns the
    number of layer units."""
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    mesh = init_device_mesh("cuda" if on_gpu else "cpu", (dist.get_world_size(),))
    options: dict[str, Any] = {"mesh": mesh}
    if bf16:
        options["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    names = set(getattr(model, "_no_split_modules", None) or ())
    layers = [m for m in model.modules() if type(m).__name__ in names]
    for layer in layers:
        fully_shard(layer, **options)
    fully_shard(model, **options)
    return len(layers)


def _load_sharded(model, optimizer, folder: Path) -> None:
    """This process's shard of the model and AdamW state from a DCP folder written by any
    number of processes (DCP reads each shard's slice of the saved tensors)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    if not (folder / ".metadata").is_file():
        raise UserError(f"previous policy state: {str(folder)!r} is not a sharded checkpoint (no .metadata)")
    # get_state_dict gives AdamW its moment tensors (zeros, one step at rate 0) for DCP to fill.
    model_state, optimizer_state = get_state_dict(model, optimizer)
    state = {"model": model_state, "optimizer": optimizer_state}
    dcp.load(state, checkpoint_id=str(folder))
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])


def _save_sharded(model, optimizer, folder: Path) -> None:
    """Every process writes its shard of the model and AdamW state (collective)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model_state, optimizer_state = get_state_dict(model, optimizer)
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=str(folder))


def _gather_full_weights(model) -> dict:
    """The whole model's weights on the main process's CPU, {} on the others (collective).
    A tied weight (output layer = embeddings) is kept under its first name only: gathered,
    the two names hold separate copies, which ``save_pretrained`` would write twice."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    weights = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    first: dict[int, str] = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        if first.setdefault(id(param), name) != name:
            weights.pop(name, None)
    return weights


# --------------------------------------------------------------------------- one update


def _pad(examples: list[dict], advantages: list[float], pad_id: int, device):
    """Right-padded tensors of a micro-batch: ids, attention mask, the completion mask and
    the advantage of every predicted token from the batch's first completion token on
    (shifted by one, as the log-probs are), and that first predicted position
    (:func:`token_logprobs`'s ``first``)."""
    import torch

    width = max(len(e["input_ids"]) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(examples), width), dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.float32)
    for k, e in enumerate(examples):
        n = len(e["input_ids"])
        ids[k, :n] = torch.tensor(e["input_ids"])
        attention[k, :n] = 1
        mask[k, :n] = torch.tensor(e["completion_mask"], dtype=torch.float32)
    shifted = mask[:, 1:]
    counted = shifted.any(dim=0).nonzero()
    first = int(counted[0]) if len(counted) else 0  # nothing to score: the whole sequence
    adv = torch.tensor(advantages, dtype=torch.float32)[:, None].expand(-1, width - 1 - first)
    return ids.to(device), attention.to(device), shifted[:, first:].to(device), adv.to(device), first


def _split(indices: list[int], parts: int) -> list[list[int]]:
    return [list(map(int, part)) for part in np.array_split(np.asarray(indices, dtype=np.int64), parts)]


def run_update(
    accelerator,
    model,
    optimizer,
    scheduler,
    examples: list[dict],
    advantages: np.ndarray,
    settings: RecordedUpdateSettings,
    pad_id: int,
    step: int,
    sharded: bool = False,
) -> list[dict[str, Any]]:
    """Apply ``mini_batches x ppo_epochs`` optimizer steps on one batch; return one row per step.

    ``sharded``: the model is wrapped by FSDP (:func:`_shard_model`), whose every forward
    and backward pass is a collective; a process with fewer micro-batches than process 0
    runs extra passes on its first micro-batch whose loss counts zero."""
    import torch

    world, rank = accelerator.num_processes, accelerator.process_index
    trained = list(range(len(examples)))
    mini_batches = _split(trained, settings.mini_batches)
    for m, part in enumerate(mini_batches):
        if len(part) < world:
            raise UserError(
                f"recorded-update setting 'mini_batches' = {settings.mini_batches}: mini-batch {m} holds "
                f"{len(part)} completions, fewer than the {world} processes"
            )
    # This process's micro-batches of every mini-batch (the same in every epoch).
    plan = [
        [mine[s : s + settings.micro_batch_size] for s in range(0, len(mine), settings.micro_batch_size)]
        for mine in (part[rank::world] for part in mini_batches)
    ]
    passes = [len(micro) for micro in plan]
    if sharded:  # process 0 holds the most completions of every mini-batch
        passes = [math.ceil(len(part[0::world]) / settings.micro_batch_size) for part in mini_batches]
    tensors = {}

    def batch(m: int, k: int):
        if (m, k) not in tensors:
            chosen = plan[m][k]
            tensors[(m, k)] = _pad(
                [examples[i] for i in chosen],
                [float(advantages[i]) for i in chosen],
                pad_id,
                accelerator.device,
            )
        return tensors[(m, k)]

    old: dict[tuple[int, int], Any] = {}
    if settings.steps_per_update > 1:  # the starting policy's log-probs, before the first step
        model.eval()
        with torch.no_grad():
            for m in range(len(plan)):
                for k in range(passes[m]):
                    ids, attention, _, _, first = batch(m, min(k, len(plan[m]) - 1))
                    logp = token_logprobs(model, ids, attention, first)
                    if k < len(plan[m]):  # else an extra pass (sharded), kept only for its collectives
                        old[(m, k)] = logp
    model.train()
    # The optimizer's parameters, not model.parameters(): after a forward pass FSDP leaves
    # the root's weights gathered, and the module then names the whole tensors, not the
    # shards that receive the gradients.
    params = [p for group in optimizer.param_groups for p in group["params"]]
    rows = []
    for epoch in range(settings.ppo_epochs):
        for m, micro in enumerate(plan):
            started = time.perf_counter()
            tokens = sum(sum(examples[i]["completion_mask"]) for i in mini_batches[m])
            sums = torch.zeros(
                3, dtype=torch.float64, device=accelerator.device
            )  # loss, clipped, outside the range
            ratio_max = torch.zeros((), dtype=torch.float64, device=accelerator.device)
            for k in range(passes[m]):
                extra = k >= len(micro)
                ids, attention, mask, adv, first = batch(m, 0 if extra else k)
                # DDP reduces gradients on the last micro-batch only; FSDP reduce-scatters
                # them after every backward pass into the sharded gradients.
                sync = accelerator.no_sync(model) if not sharded and k < len(micro) - 1 else nullcontext()
                with sync:
                    logp = token_logprobs(model, ids, attention, first)
                    reference = old[(m, 0 if extra else k)] if old else logp.detach()
                    per_token, ratio, clipped = clipped_token_loss(
                        logp, reference, adv, settings.epsilon_low, settings.epsilon_high
                    )
                    local = (per_token * mask).sum()
                    # DDP and FSDP average gradients over processes: scale so the average is
                    # the token mean.
                    accelerator.backward(local * (0.0 if extra else world / tokens))
                if extra:
                    continue
                outside = ((ratio < 1 - settings.epsilon_low) | (ratio > 1 + settings.epsilon_high)).float()
                sums += torch.stack(
                    [
                        local.detach().double(),
                        (clipped.float() * mask).sum().double(),
                        (outside * mask).sum().double(),
                    ]
                )
                deviation = ((ratio.detach() - 1).abs() * mask).max().double()
                ratio_max = torch.maximum(ratio_max, deviation)
            if sharded:  # the norm over all shards (a replicated DTensor)
                grad_norm = torch.nn.utils.clip_grad_norm_(params, settings.max_grad_norm or float("inf"))
                grad_norm = grad_norm.full_tensor() if hasattr(grad_norm, "full_tensor") else grad_norm
            else:
                grad_norm = accelerator.clip_grad_norm_(params, settings.max_grad_norm or float("inf"))
            lr = scheduler.get_last_lr()[0]
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            totals = accelerator.reduce(sums, reduction="sum")
            ratio_max = accelerator.reduce(ratio_max, reduction="max")
            rows.append(
                {
                    "step": step,
                    "epoch": epoch,
                    "mini_batch": m,
                    "completions": len(mini_batches[m]),
                    "tokens": tokens,
                    "loss": _finite(totals[0].item() / tokens),
                    "grad_norm": _finite(grad_norm.item() if hasattr(grad_norm, "item") else grad_norm),
                    "learning_rate": lr,
                    "clipped_fraction": totals[1].item() / tokens,
                    "ratio_outside_fraction": totals[2].item() / tokens,
                    "ratio_max_deviation": ratio_max.item(),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
    return rows


# --------------------------------------------------------------------------- the job


def _check_call(
    base_model: Any, batches: Any, settings: Any, out_state: Any, previous_state: Any, device: Any, dtype: Any
) -> RecordedUpdateSettings:
    from ..settings import DTYPES

    if not isinstance(base_model, (str, Path)):
        raise UserError(f"recorded update: base_model must be a path, got {type(base_model).__name__}")
    if not isinstance(batches, (list, tuple)) or not all(isinstance(b, (list, tuple)) for b in batches):
        raise UserError("recorded update: batches must be a list of updates, each a list of rollout records")
    if device not in ("cpu", "cuda"):
        raise UserError(f"recorded update: device must be 'cpu' or 'cuda', got {device!r}")
    if dtype not in DTYPES:
        raise UserError(f"recorded update: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if previous_state is not None and Path(previous_state).resolve() == Path(out_state).resolve():
        raise UserError(
            f"recorded update: the next policy state {str(out_state)!r} cannot replace the one it reads"
        )
    return (
        settings
        if isinstance(settings, RecordedUpdateSettings)
        else RecordedUpdateSettings.from_dict(settings)
    )


def update_on_recorded(
    base_model: str | Path,
    batches: Sequence[Sequence[Mapping[str, Any]]],
    settings: RecordedUpdateSettings | Mapping[str, Any] | None,
    out_state: str | Path,
    *,
    previous_state: str | Path | None = None,
    device: str = "cpu",
    dtype: str = "float32",
) -> dict[str, Any]:
    """Apply one update per batch of rollout records, in order, to the policy in
    ``previous_state`` (or a fresh one from ``base_model`` and ``settings``); write the
    next state folder at ``out_state`` (module doc) and return the training record.

    UserError (one line, naming the record index or the setting) for bad input;
    TrainingSkipped when no batch holds a scorable completion.
    """
    started = time.perf_counter()
    settings = _check_call(base_model, batches, settings, out_state, previous_state, device, dtype)
    checked = []
    for b, records in enumerate(batches):
        try:
            checked.append(validate_rollout_records(records, settings.estimator))
        except UserError as exc:
            raise UserError(f"update {b}: {exc}") from None
    previous = Path(previous_state) if previous_state is not None else None
    state = read_state(previous) if previous is not None else None
    if state is not None:
        _check_carried(state, settings, previous)
    if not any(c.reward is not None for batch in checked for c in batch):
        raise TrainingSkipped("no scorable completion in any batch: nothing to update, no state written")

    torch = require_module("torch", _INSTALL_HINT)
    require_module("transformers", _INSTALL_HINT)
    accelerate = require_module("accelerate", _INSTALL_HINT)
    if device == "cuda" and not torch.cuda.is_available():
        raise UserError("recorded update: device is 'cuda', but torch sees no GPU")
    on_gpu = device == "cuda"
    resolved = resolve_for_device(
        {"gradient_checkpointing": settings.gradient_checkpointing, "bf16": settings.bf16},
        on_gpu=on_gpu,
        bf16_supported=on_gpu and torch.cuda.is_bf16_supported(),
    )
    fsdp = settings.engine == "fsdp"
    with _without_accelerate_fsdp() if fsdp else nullcontext():
        # Under FSDP, bf16 is FSDP's own mixed precision (_shard_model), not accelerate's autocast.
        accelerator = accelerate.Accelerator(
            cpu=not on_gpu, mixed_precision="bf16" if resolved["bf16"] and not fsdp else "no"
        )
        _check_launcher(str(accelerator.distributed_type).rsplit(".", 1)[-1], settings.engine)
        own_group = _own_process_group(on_gpu) if fsdp else False
        try:
            return _run_job(
                accelerator,
                settings,
                resolved,
                base_model,
                previous,
                state,
                checked,
                out_state,
                device,
                dtype,
                started,
            )
        finally:
            if own_group:
                import torch.distributed as dist

                dist.destroy_process_group()


def _check_launcher(kind: str, engine: str) -> None:
    """The launcher starts the processes; the ``engine`` setting decides how they share
    the model (the fsdp engine runs with accelerate's FSDP turned off,
    :func:`_without_accelerate_fsdp`); DeepSpeed and the rest are refused."""
    if kind in ("NO", "MULTI_CPU", "MULTI_GPU"):
        return
    if kind == "FSDP":
        raise UserError(
            "recorded update launched with accelerate's FSDP config, but the recorded-update setting "
            "'engine' is 'data_parallel': set engine: fsdp, or launch with config/accelerate/lora_ddp.yaml"
        )
    raise UserError(
        f"recorded update launched with {kind}, which it does not drive: start plain processes "
        "(torchrun, or accelerate launch with config/accelerate/lora_ddp.yaml) and choose the sharding "
        "with the recorded-update setting 'engine' (data_parallel or fsdp)"
    )


def _run_job(
    accelerator,
    settings: RecordedUpdateSettings,
    resolved: dict[str, Any],
    base_model: str | Path,
    previous: Path | None,
    state: dict[str, Any] | None,
    checked: list[list[Completion]],
    out_state: str | Path,
    device: str,
    dtype: str,
    started: float,
) -> dict[str, Any]:
    torch = require_module("torch", _INSTALL_HINT)
    transformers = require_module("transformers", _INSTALL_HINT)
    accelerate = require_module("accelerate", _INSTALL_HINT)
    fsdp = settings.engine == "fsdp"
    on_gpu = device == "cuda"
    world, rank = accelerator.num_processes, accelerator.process_index
    if fsdp and state is not None and not (previous / SHARDED_DIR).is_dir():
        raise UserError(
            f"previous policy state {str(previous)!r} says engine 'fsdp' but holds no {SHARDED_DIR}/ folder"
        )

    tokenizer = load_chat_tokenizer(
        transformers,
        str(previous / POLICY_DIR)
        if previous is not None and settings.finetune == "full"
        else str(base_model),
        "recorded-update",
    )
    prepared = []
    for batch in checked:
        examples = [tokenize_completion(tokenizer, c) for c in batch]
        advantages, stats = batch_advantages(batch, [sum(e["completion_mask"]) for e in examples], settings)
        scored = [k for k, c in enumerate(batch) if c.reward is not None]  # unscorable ones are left out
        prepared.append(([examples[k] for k in scored], advantages[scored], stats, len(batch)))

    # Seed before anything random happens (a fresh adapter's initialisation); a carried
    # state's generators are restored after loading, which may draw from them.
    transformers.set_seed(settings.seed)
    model = _load_policy(str(base_model), settings, previous, dtype)
    if resolved["gradient_checkpointing"]:
        if hasattr(model, "activation_checkpointing_enable"):  # transformers 5's name
            model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    shard_units = _shard_model(model, on_gpu, bool(resolved["bf16"])) + 1 if fsdp else None
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        params,
        lr=settings.learning_rate,
        weight_decay=settings.weight_decay,
        betas=(settings.adam_beta1, settings.adam_beta2),
        eps=settings.adam_epsilon,
    )
    scheduler = transformers.get_scheduler(
        settings.lr_scheduler,
        optimizer,
        num_warmup_steps=settings.warmup_steps,
        num_training_steps=settings.total_steps,
    )
    step, updates_before, rng_restored = 0, 0, False
    if state is not None:
        if fsdp:
            _load_sharded(model, optimizer, previous / SHARDED_DIR)
        else:
            optimizer.load_state_dict(_torch_load(previous / OPTIMIZER_FILE))
        scheduler.load_state_dict(_torch_load(previous / SCHEDULER_FILE))
        step, updates_before = int(state["step"]), int(state["updates"])
        rng = _torch_load(previous / RNG_FILE)
        if len(rng) == world:
            _set_rng_state(rng[rank])
            rng_restored = True
        else:  # another process count: every process gets its own fresh stream
            transformers.set_seed(derive_seed(settings.seed, "recorded-update", step, rank) % 2**32)
    if not fsdp:
        model = accelerator.prepare(model)

    history, summaries = [], []
    train_started = time.perf_counter()
    for b, (examples, advantages, stats, n_completions) in enumerate(prepared):
        rows = (
            run_update(
                accelerator,
                model,
                optimizer,
                scheduler,
                examples,
                advantages,
                settings,
                tokenizer.pad_token_id,
                step,
                sharded=fsdp,
            )
            if examples
            else []
        )
        step += len(rows)
        history.extend({"update": updates_before + b, **row} for row in rows)
        summaries.append(
            {
                "update": updates_before + b,
                "completions": n_completions,
                "trained": len(examples),
                "tokens": int(sum(sum(e["completion_mask"]) for e in examples)),
                "partitions": stats,
            }
        )
    train_seconds = time.perf_counter() - train_started
    rng_states = accelerate.utils.gather_object([_rng_state()])
    full_weights = _gather_full_weights(model) if fsdp else None

    record: dict[str, Any] = {}
    main = accelerator.is_main_process
    with staged_output(out_state) if main else nullcontext((None, None)) as (staging, _scratch):
        if fsdp:  # every process writes its shard into the main process's staging folder
            staging = Path(accelerate.utils.broadcast_object_list([str(staging) if main else None])[0])
            _save_sharded(model, optimizer, staging / SHARDED_DIR)
            accelerator.wait_for_everyone()
        if main:
            unwrapped = accelerator.unwrap_model(model)
            files = _save_policy(unwrapped, tokenizer, staging / POLICY_DIR, settings.finetune, full_weights)
            if not fsdp:
                torch.save(optimizer.state_dict(), staging / OPTIMIZER_FILE)
            torch.save(scheduler.state_dict(), staging / SCHEDULER_FILE)
            torch.save(list(rng_states), staging / RNG_FILE)
            carried = settings.to_record()
            write_json(
                staging / STATE_FILE,
                {
                    "format": STATE_FORMAT,
                    "base_model": str(base_model),
                    "finetune": settings.finetune,
                    "engine": settings.engine,
                    "step": step,
                    "updates": updates_before + len(prepared),
                    "jobs": (int(state["jobs"]) if state else 0) + 1,
                    "processes": world,
                    "settings": {key: carried[key] for key in CARRIED},
                },
            )
            record = {
                "base_model": str(base_model),
                "previous_state": None if previous is None else str(previous),
                "previous_policy_sha256": None if previous is None else sha256_tree(previous / POLICY_DIR),
                "estimator": settings.estimator,
                "settings": settings.to_record(),
                "resolved": resolved,
                "engine": settings.engine,
                "fsdp_units": shard_units,
                "mixed_precision": (
                    ("fsdp: bfloat16 compute, float32 gradient reduction" if fsdp else "autocast bfloat16")
                    if resolved["bf16"]
                    else None
                ),
                "activation_checkpointing": _activation_checkpointing(unwrapped),
                "old_logprobs": OLD_LOGPROBS,
                "clipping_acts": settings.clipping_acts,
                "kl": None,
                "step_before": step - len(history),
                "step": step,
                "updates": summaries,
                "history": history,
                "tokens": sum(u["tokens"] for u in summaries),
                "processes": world,
                "rng_restored": rng_restored,
                "train_seconds": round(train_seconds, 3),
                "device": device,
                "dtype": dtype,
                "libraries": _library_versions(),
                "runtime": runtime_record(),
                "policy_files": files,
                "policy_sha256": sha256_tree(staging / POLICY_DIR),
            }
            record["seconds"] = round(time.perf_counter() - started, 3)
            write_json(staging / RECORD_NAME, record)
    accelerator.wait_for_everyone()
    return record


def update_from_files(
    base_model: str | Path,
    updates: Sequence[Sequence[str | Path]],
    settings: RecordedUpdateSettings | Mapping[str, Any] | None,
    out_state: str | Path,
    *,
    previous_state: str | Path | None = None,
    device: str = "cpu",
    dtype: str = "float32",
) -> dict[str, Any]:
    """:func:`update_on_recorded` on JSONL files: ``updates`` holds, per update, the rollout
    files whose records (concatenated in order) form its batch. Callable through
    ``selfplay.train.rl.launch`` (``"selfplay.train.rl.recorded:update_from_files"``)."""
    if isinstance(updates, (str, Path)) or not all(isinstance(u, (list, tuple)) for u in updates):
        raise UserError("recorded update: 'updates' must be a list of updates, each a list of rollout files")
    batches = []
    for files in updates:
        batch = []
        for path in files:
            if not Path(path).is_file():
                raise UserError(f"recorded update: rollout file {str(path)!r} does not exist")
            batch.extend(read_jsonl(path))
        batches.append(batch)
    return update_on_recorded(
        base_model, batches, settings, out_state, previous_state=previous_state, device=device, dtype=dtype
    )


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="One job of policy-gradient updates on recorded rollouts "
        "(run it under `accelerate launch` for several processes)."
    )
    ap.add_argument("--base-model", required=True)
    ap.add_argument(
        "--update",
        action="append",
        required=True,
        metavar="JSONL[,JSONL...]",
        help="the rollout records of one update (repeat for several updates, in order)",
    )
    ap.add_argument("--settings", help="a JSON file with the settings (module doc)")
    ap.add_argument("--previous-state")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--dtype", default="float32")
    args = ap.parse_args(argv)
    settings = json.loads(Path(args.settings).read_text()) if args.settings else {}
    try:
        update_from_files(
            args.base_model,
            [spec.split(",") for spec in args.update],
            settings,
            args.out,
            previous_state=args.previous_state,
            device=args.device,
            dtype=args.dtype,
        )
    except (UserError, TrainingSkipped) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()  # else gloo's threads may abort the interpreter at exit
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
