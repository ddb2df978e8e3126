"""Settings for GRPO training: defaults, validation, and the TRL ``GRPOConfig`` they become.

A config section is a plain mapping; :meth:`GRPOSettings.from_dict` merges it over
the defaults, refuses unknown keys and bad values with a one-line UserError naming
the key, and returns a frozen dataclass. The defaults are paper 002's (EvolveCoder,
section 4.1) where the paper gives a value; where it does not, the comment says so
and why the value was chosen.

Batch sizes count completions, not prompts (TRL's convention): with ``group_size`` 8
and ``batch_size`` 8, one micro-batch holds one prompt's group.

When does clipping act? The clipped objective compares the policy being trained with
the policy that generated the rollouts. TRL generates a fresh batch every
``steps_per_generation x num_iterations`` micro-batches and steps the optimizer every
``grad_accum`` micro-batches. If every generation is used up before the next
optimizer step (``grad_accum`` a multiple of ``steps_per_generation x
num_iterations``), every micro-batch is scored by the policy that generated it: the
ratio is exactly 1 and ``epsilon_low`` / ``epsilon_high`` never clip anything (TRL
then does not even compute the old log-probabilities). The defaults avoid that:
two optimizer steps per generation. A config that sets the clip values explicitly
on such a schedule is refused; a schedule that cannot clip under the default clip
values is allowed with a warning, and the training record says ``clipping_acts:
false``.

Where rollouts come from (``rollout_engine``). ``"transformers"`` (the default) samples
them with the policy's own ``generate`` inside the trainer. ``"vllm"`` hands them to
vLLM through TRL (``use_vllm``), which pushes the policy's weights into the engine
before each generation. ``vllm_mode`` picks how: ``"colocate"`` starts the engine inside
the training process on the same GPU (``vllm_gpu_memory_utilization`` is the share of
that GPU vLLM takes for its weights and KV cache; ``vllm_sleep_mode`` lets it free that
memory while the policy trains); ``"server"`` talks to an engine started separately with
``trl vllm-serve`` on GPUs of its own (``vllm_server_url``). Paper 002's config uses
colocate: its 4B policy and 32k-token rollouts fit one H200 together, while server mode
needs a second GPU for the engine (docs/rl-vllm-rollouts.md says why and what was
measured). The engine's context is ``max_prompt_tokens + max_completion_length``.
``vllm_importance_sampling`` keeps TRL's correction for the engine's sampling
probabilities differing from the trainer's (TRL's default; the paper does not say).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import UserError
from ..checkpoints import save_args
from ..settings import (
    DEFAULT_TARGET_MODULES,
    SCHEDULERS,
    _check_float_range,
    _check_positive_int,
    _check_tristate,
    _fail,
    _is_int,
    checkpointing_kwargs,
)

log = logging.getLogger(__name__)

ESTIMATORS = ("grpo", "task_relative_reinforce_pp")
# TRL loss types that use the hard epsilon_low / epsilon_high clip this layer is about;
# the soft-gated ones (cispo, sapo, vespo, luspo) read the epsilons differently.
LOSS_TYPES = ("dapo", "grpo", "dr_grpo", "bnpo")
SCALE_REWARDS = ("group", "batch", "none")
FINETUNE = ("full", "lora")
ROLLOUT_ENGINES = ("transformers", "vllm")
VLLM_MODES = ("colocate", "server")
# Settings that mean something only with rollout_engine "vllm", and the mode each needs
# (None: either mode).
VLLM_KEYS = {
    "vllm_mode": None,
    "vllm_gpu_memory_utilization": "colocate",
    "vllm_sleep_mode": "colocate",
    "vllm_server_url": "server",
    "vllm_importance_sampling": None,
}
# KV cache of vLLM's CPU build when it generates GRPO's rollouts (GiB; a CPU run's rollouts are short).
CPU_KV_CACHE_GIB = 1
# The dtype a GRPO job keeps the policy's weights (and so its AdamW state) in. On a GPU TRL
# computes in bf16 where supported; the master weights stay float32, since an update at
# paper 002's lr 1e-6 is lost in bfloat16 weights. The plan's memory check uses the same.
MASTER_DTYPE = "float32"


@dataclass(frozen=True)
class LoraSettings:
    """The LoRA adapter trained when ``finetune`` is ``"lora"`` (defaults as the SFT layer's)."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: tuple[str, ...] | str = tuple(DEFAULT_TARGET_MODULES)

    def __post_init__(self) -> None:
        _check_positive_int("lora.r", self.r)
        _check_positive_int("lora.alpha", self.alpha)
        _check_float_range("lora.dropout", self.dropout, 0.0, 0.9)
        modules = self.target_modules
        if modules != "all-linear":
            if (
                isinstance(modules, str)
                or not isinstance(modules, (list, tuple))
                or not modules
                or not all(isinstance(m, str) and m.strip() for m in modules)
            ):
                _fail("lora.target_modules", modules, 'a non-empty list of module names, or "all-linear"')
            object.__setattr__(self, "target_modules", tuple(m.strip() for m in modules))
        object.__setattr__(self, "r", int(self.r))
        object.__setattr__(self, "alpha", int(self.alpha))
        object.__setattr__(self, "dropout", float(self.dropout))

    def peft_config(self, peft: Any) -> Any:
        """The ``peft.LoraConfig`` these settings describe (a causal LM's adapter, no bias)."""
        modules = self.target_modules if isinstance(self.target_modules, str) else list(self.target_modules)
        return peft.LoraConfig(
            r=self.r,
            lora_alpha=self.alpha,
            lora_dropout=self.dropout,
            target_modules=modules,
            bias="none",
            task_type="CAUSAL_LM",
        )

    @classmethod
    def from_dict(cls, section: Any) -> LoraSettings:
        if not isinstance(section, Mapping):
            _fail("lora", section, "a mapping with r, alpha, dropout, target_modules")
        _refuse_unknown("lora.", section, cls)
        return cls(**section)


@dataclass(frozen=True)
class GRPOSettings:
    """Every knob of one GRPO run; build it with :meth:`from_dict` from a config section."""

    # Rollouts per prompt ("group size of 8"): paper 002 section 4.1.
    group_size: int = 8
    # Sampling of rollouts, "temperature 0.6 and top-p 0.95": paper 002 section 4.1.
    temperature: float = 0.6
    top_p: float = 0.95
    # No top-k filter: paper 002 section 4.1 names only temperature and top-p.
    top_k: int | None = None
    # "learning rate of 1x10^-6": paper 002 section 4.1.
    learning_rate: float = 1e-6
    # "upper and lower clipping ratios of the actor to 0.30 and 0.20": paper 002 section 4.1.
    epsilon_low: float = 0.2
    epsilon_high: float = 0.3
    # KL coefficient: paper 002 section 4.1 names no KL term, so none (TRL's default too).
    beta: float = 0.0
    # Not stated in paper 002 section 4.1: TRL's default, a token-level mean over the
    # accumulated batch (no per-sequence length normalisation).
    loss_type: str = "dapo"
    # Standard GRPO divides by the group's spread; paper 002 section 4.1 says only "GRPO".
    # Used by estimator "grpo" only.
    scale_rewards: str = "group"
    # Schedule, not stated in paper 002 section 4.1. Chosen so that its clip values can
    # act: each generation feeds 2 optimizer steps (see the module docstring).
    num_iterations: int = 1
    steps_per_generation: int = 2
    # Completions per micro-batch (one prompt's group) and micro-batches per optimizer step.
    batch_size: int = 8
    grad_accum: int = 1
    epochs: int = 1
    max_steps: int = -1
    # "maximum prompt length of 4,096 tokens": paper 002 section 4.1. TRL 1.16 has no
    # prompt limit; longer prompts are dropped before training and counted.
    max_prompt_tokens: int = 4096
    # "maximum response length of 32,768 tokens": paper 002 section 4.1.
    max_completion_length: int = 32768
    # Paper 002 section 4.1 trains Qwen3-4B's own weights (nothing suggests an adapter;
    # lr 1e-6 is a full fine-tuning rate). A CPU config sets "lora".
    finetune: str = "full"
    lora: LoraSettings = field(default_factory=LoraSettings)
    # Not stated in paper 002 section 4.1: the learning rate stays at 1e-6 throughout.
    lr_scheduler: str = "constant"
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    seed: int = 0
    # "grpo": TRL's group-relative advantages (paper 002). "task_relative_reinforce_pp":
    # Absolute Zero's, over the (task, role) partitions of each generation batch.
    estimator: str = "grpo"
    # "auto": on only where a GPU is used, as for SFT (see ..settings).
    gradient_checkpointing: bool | str = "auto"
    bf16: bool | str = "auto"
    # Optimizer steps between two checkpoints a killed run resumes from (0: none), as the SFT
    # layer's. A checkpoint can only fall where a generation has been used up (TRL regenerates
    # the rollouts when it resumes), so a value set explicitly must be a multiple of
    # `steps_per_checkpoint_cycle`; the default is rounded up to one.
    checkpoint_steps: int = 50
    # Rollouts from the policy's own generate ("transformers") or from vLLM through TRL
    # ("vllm"); see the module docstring. Paper 002 does not say what generated them.
    rollout_engine: str = "transformers"
    vllm_mode: str = "colocate"
    # TRL's default share; paper 002's config sets what its 4B policy needs.
    vllm_gpu_memory_utilization: float = 0.3
    vllm_sleep_mode: bool = False
    # Server mode only, and then required: e.g. "http://gpu-node-1:8000".
    vllm_server_url: str | None = None
    vllm_importance_sampling: bool = True

    def __post_init__(self) -> None:
        for key in (
            "group_size",
            "num_iterations",
            "steps_per_generation",
            "batch_size",
            "grad_accum",
            "epochs",
            "max_prompt_tokens",
            "max_completion_length",
        ):
            object.__setattr__(self, key, _check_positive_int(key, getattr(self, key)))
        if self.group_size < 2:
            _fail("group_size", self.group_size, "an integer >= 2 (a group needs two rollouts to compare)")
        self._set_float("temperature", 0.0, None, low_open=True)
        self._set_float("top_p", 0.0, 1.0, low_open=True)
        if self.top_k is not None:
            object.__setattr__(self, "top_k", _check_positive_int("top_k", self.top_k))
        self._set_float("learning_rate", 0.0, 1.0, low_open=True)
        self._set_float("epsilon_low", 0.0, 1.0, low_open=True)
        if self.epsilon_low >= 1.0:
            _fail("epsilon_low", self.epsilon_low, "a number in (0, 1)")
        self._set_float("epsilon_high", 0.0, None, low_open=True)
        self._set_float("beta", 0.0, None)
        self._set_float("weight_decay", 0.0, None)
        self._set_float("max_grad_norm", 0.0, None)
        self._check_choice("loss_type", LOSS_TYPES)
        self._check_choice("scale_rewards", SCALE_REWARDS)
        self._check_choice("finetune", FINETUNE)
        self._check_choice("estimator", ESTIMATORS)
        self._check_choice("lr_scheduler", SCHEDULERS)
        if not isinstance(self.lora, LoraSettings):
            _fail("lora", self.lora, "LoRA settings")
        if not _is_int(self.max_steps) or self.max_steps == 0 or self.max_steps < -1:
            _fail("max_steps", self.max_steps, "-1 (train for `epochs`) or an integer >= 1")
        object.__setattr__(self, "max_steps", int(self.max_steps))
        if not _is_int(self.seed) or not 0 <= self.seed < 2**32:
            _fail("seed", self.seed, "an integer in [0, 2**32)")
        object.__setattr__(self, "seed", int(self.seed))
        object.__setattr__(
            self,
            "gradient_checkpointing",
            _check_tristate("gradient_checkpointing", self.gradient_checkpointing),
        )
        object.__setattr__(self, "bf16", _check_tristate("bf16", self.bf16))
        if not _is_int(self.checkpoint_steps) or self.checkpoint_steps < 0:
            _fail("checkpoint_steps", self.checkpoint_steps, "an integer >= 0 (0: no checkpoints)")
        object.__setattr__(self, "checkpoint_steps", int(self.checkpoint_steps))
        self._check_rollout_engine()
        generation_batch = self.batch_size * self.steps_per_generation
        if generation_batch % self.group_size:
            _fail(
                "batch_size",
                self.batch_size,
                f"batch_size x steps_per_generation ({self.batch_size} x {self.steps_per_generation} = "
                f"{generation_batch}) to be a multiple of group_size ({self.group_size}), so every generation "
                "holds whole groups",
            )

    def _check_rollout_engine(self) -> None:
        self._check_choice("rollout_engine", ROLLOUT_ENGINES)
        self._check_choice("vllm_mode", VLLM_MODES)
        self._set_float("vllm_gpu_memory_utilization", 0.0, 1.0, low_open=True)
        for key in ("vllm_sleep_mode", "vllm_importance_sampling"):
            if not isinstance(getattr(self, key), bool):
                _fail(key, getattr(self, key), "true or false")
        url = self.vllm_server_url
        if url is not None and (
            not isinstance(url, str)
            or not url.startswith(("http://", "https://"))
            or len(url.split("://", 1)[1].strip("/")) == 0
        ):
            _fail("vllm_server_url", url, "an http:// or https:// address of a `trl vllm-serve` server")
        if self.rollout_engine == "vllm" and self.vllm_mode == "server" and url is None:
            _fail(
                "vllm_server_url",
                url,
                'the address of the `trl vllm-serve` server when vllm_mode is "server"',
            )

    def _set_float(self, key: str, low: float, high: float | None, *, low_open: bool = False) -> None:
        object.__setattr__(
            self, key, _check_float_range(key, getattr(self, key), low, high, low_open=low_open)
        )

    def _check_choice(self, key: str, choices: tuple[str, ...]) -> None:
        if getattr(self, key) not in choices:
            _fail(key, getattr(self, key), f"one of {', '.join(choices)}")

    # ------------------------------------------------------------------ derived facts

    @property
    def generation_interval(self) -> int:
        """Micro-batches between two generations (each generation is used this often)."""
        return self.steps_per_generation * self.num_iterations

    @property
    def clipping_acts(self) -> bool:
        """True when some micro-batch is trained after an optimizer step since it was generated."""
        return self.grad_accum % self.generation_interval != 0

    @property
    def prompts_per_step(self) -> float:
        """Distinct prompts behind one optimizer step (before ``num_iterations`` reuse)."""
        return self.batch_size * self.grad_accum / self.group_size

    @property
    def steps_per_checkpoint_cycle(self) -> int:
        """Optimizer steps after which a generation has just been used up and the next step
        starts a fresh one: the only places a checkpoint can resume exactly."""
        micro = math.lcm(self.grad_accum, self.generation_interval)
        return micro // self.grad_accum

    @property
    def checkpoint_interval(self) -> int:
        """``checkpoint_steps`` rounded up to a whole number of checkpoint cycles (0: none)."""
        if self.checkpoint_steps == 0:
            return 0
        cycle = self.steps_per_checkpoint_cycle
        return -(-self.checkpoint_steps // cycle) * cycle

    def clipping_message(self) -> str:
        return (
            f"clip values epsilon_low={self.epsilon_low} / epsilon_high={self.epsilon_high} cannot act: with "
            f"grad_accum={self.grad_accum}, steps_per_generation={self.steps_per_generation} and "
            f"num_iterations={self.num_iterations} every rollout is trained on by the policy that generated it "
            "(ratio 1); set steps_per_generation or num_iterations so that their product does not divide "
            "grad_accum (e.g. steps_per_generation > grad_accum)"
        )

    # ------------------------------------------------------------------ building

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None) -> GRPOSettings:
        """Merge ``section`` over the defaults; refuse unknown keys, bad values, and clip
        values set explicitly on a schedule where they cannot act."""
        section = section if section is not None else {}
        settings = settings_with_lora(cls, section, "GRPO training")
        for key, mode in VLLM_KEYS.items():
            if key not in section:
                continue
            if settings.rollout_engine != "vllm":
                _fail(key, section[key], 'no value unless rollout_engine is "vllm"')
            if mode is not None and settings.vllm_mode != mode:
                _fail(key, section[key], f'no value unless vllm_mode is "{mode}"')
        if settings.estimator != "grpo" and "scale_rewards" in section:
            _fail(
                "scale_rewards",
                section["scale_rewards"],
                'no value unless estimator is "grpo" (the task-relative estimator always whitens)',
            )
        if "checkpoint_steps" in section and settings.checkpoint_interval != settings.checkpoint_steps:
            _fail(
                "checkpoint_steps",
                settings.checkpoint_steps,
                f"a multiple of {settings.steps_per_checkpoint_cycle} (a checkpoint must fall where a generation "
                f"is used up: grad_accum={settings.grad_accum}, steps_per_generation={settings.steps_per_generation}, "
                f"num_iterations={settings.num_iterations})",
            )
        if not settings.clipping_acts:
            if {"epsilon_low", "epsilon_high"} & set(section):
                raise UserError(
                    f"training setting 'epsilon_low'/'epsilon_high': {settings.clipping_message()}"
                )
        return settings

    def to_record(self) -> dict[str, Any]:
        """Plain JSON-able dict of every setting, plus the derived schedule facts."""
        record = settings_record(self)
        if self.rollout_engine != "vllm":
            for key in VLLM_KEYS:
                record.pop(key)
        record["clipping_acts"] = self.clipping_acts
        record["checkpoint_interval"] = self.checkpoint_interval
        return record


def settings_with_lora(cls: type, section: Mapping[str, Any], what: str):
    """``cls`` (a settings dataclass with ``finetune`` and ``lora`` fields) built from a
    config ``section``: a mapping of known keys only, ``lora`` only beside LoRA
    fine-tuning (and checked as :class:`LoraSettings`); each value is checked by the class."""
    if not isinstance(section, Mapping):
        raise UserError(f"{what} settings must be a mapping, got {type(section).__name__}")
    _refuse_unknown("", section, cls)
    values = dict(section)
    if "lora" in values:
        if values.get("finetune", cls.finetune) == "full":
            _fail("lora", values["lora"], 'no LoRA settings unless finetune is "lora"')
        values["lora"] = LoraSettings.from_dict(values["lora"])
    return cls(**values)


def settings_record(settings) -> dict[str, Any]:
    """A settings dataclass with ``finetune`` and ``lora`` fields as plain JSON: LoRA's
    target modules as a list (or its one string), no LoRA settings beside full fine-tuning."""
    record = dataclasses.asdict(settings)
    modules = record["lora"]["target_modules"]
    record["lora"]["target_modules"] = modules if isinstance(modules, str) else list(modules)
    if settings.finetune != "lora":
        record["lora"] = None
    return record


def _refuse_unknown(prefix: str, section: Mapping[str, Any], cls: type) -> None:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(section) - known)
    if unknown:
        raise UserError(
            f"unknown training setting(s) {', '.join(repr(prefix + str(k)) for k in unknown)}; "
            f"known settings: {', '.join(prefix + k for k in sorted(known))}"
        )


def grpo_config_kwargs(
    settings: GRPOSettings, *, output_dir: str, use_cpu: bool, bf16: bool, gradient_checkpointing: bool
) -> dict[str, Any]:
    """Keyword arguments for ``trl.GRPOConfig`` (names checked against trl 1.16).

    ``bf16`` and ``gradient_checkpointing`` are the resolved (machine-dependent) values.
    Checkpoints go to ``output_dir`` (the run's checkpoint folder); everything that writes
    or reports elsewhere (hub, trackers) is off: the caller saves the result itself.
    """
    return {
        "output_dir": output_dir,
        "seed": settings.seed,
        "data_seed": settings.seed,
        "use_cpu": use_cpu,
        "bf16": bf16,
        "fp16": False,
        **checkpointing_kwargs(gradient_checkpointing),
        "num_generations": settings.group_size,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": settings.top_k or 0,  # TRL: 0 switches top-k off
        "max_completion_length": settings.max_completion_length,
        "learning_rate": settings.learning_rate,
        "lr_scheduler_type": settings.lr_scheduler,
        "weight_decay": settings.weight_decay,
        "max_grad_norm": settings.max_grad_norm,
        "epsilon": settings.epsilon_low,
        "epsilon_high": settings.epsilon_high,
        "beta": settings.beta,
        "loss_type": settings.loss_type,
        "scale_rewards": settings.scale_rewards,
        "num_iterations": settings.num_iterations,
        "steps_per_generation": settings.steps_per_generation,
        "per_device_train_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.grad_accum,
        "num_train_epochs": settings.epochs,
        "max_steps": settings.max_steps,
        "logging_steps": 1,
        "logging_strategy": "steps",
        # checkpoints every `checkpoint_interval` steps into output_dir, for a rerun to resume from
        **save_args(settings.checkpoint_interval),
        "eval_strategy": "no",
        "report_to": "none",
        "push_to_hub": False,
        "disable_tqdm": True,
        "log_completions": False,
        "remove_unused_columns": False,
        "dataloader_num_workers": 0,
        "dataloader_pin_memory": not use_cpu,
        **vllm_config_kwargs(settings, use_cpu=use_cpu),
    }


def vllm_config_kwargs(settings: GRPOSettings, *, use_cpu: bool) -> dict[str, Any]:
    """The ``trl.GRPOConfig`` keywords that send rollouts through vLLM (none for the
    transformers engine, so TRL's defaults stay untouched there). On CPU (vLLM's CPU
    build) sleep mode is off: there is no GPU memory to free, and vLLM refuses it there;
    and the CPU build is prepared for the engine the trainer starts from these keywords
    (:func:`.vllm_cpu.prepare_cpu_engine`: weights TRL can push, a 1 GiB KV cache)."""
    if settings.rollout_engine != "vllm":
        return {}
    if use_cpu:
        from .vllm_cpu import prepare_cpu_engine

        prepare_cpu_engine(CPU_KV_CACHE_GIB)
    kwargs: dict[str, Any] = {
        "use_vllm": True,
        "vllm_mode": settings.vllm_mode,
        # The engine's context: the longest prompt kept plus the longest completion.
        "vllm_max_model_length": settings.max_prompt_tokens + settings.max_completion_length,
        "vllm_importance_sampling_correction": settings.vllm_importance_sampling,
    }
    if settings.vllm_mode == "colocate":
        kwargs["vllm_gpu_memory_utilization"] = settings.vllm_gpu_memory_utilization
        kwargs["vllm_enable_sleep_mode"] = settings.vllm_sleep_mode and not use_cpu
    else:
        kwargs["vllm_server_base_url"] = settings.vllm_server_url.rstrip("/")
    return kwargs
