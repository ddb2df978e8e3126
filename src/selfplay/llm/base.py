"""The one interface every generation backend implements.

A caller builds :class:`GenerationRequest` objects (chat messages, sampling
settings, optionally a LoRA adapter directory) and hands a list of them to
``Backend.generate``; it gets back, for each request in the same order, a list of
``sampling.n`` texts.

Seeds. ``SamplingParams.seed`` is the caller's seed (usually one per round). The
backends do not feed it to the sampler unchanged: :func:`request_seed` mixes it
with the request's :func:`recording_key`, so two different prompts that share a
round seed still draw independent random streams, while the very same request
always draws the same stream.
"""

from __future__ import annotations

import abc
import hashlib
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import UserError
from ..records import canonical_json, derive_seed
from .answer_format import AnswerFormat

ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. ``temperature == 0`` means greedy decoding.

    ``top_k=None`` and ``top_p=1.0`` switch those filters off. ``presence_penalty``
    follows the OpenAI/vLLM meaning: subtract it once from the logit of every token
    that already occurs in the text generated so far (the prompt does not count).
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = None
    presence_penalty: float | None = None
    max_new_tokens: int = 512
    n: int = 1
    seed: int = 0

    @classmethod
    def from_config(cls, section: dict, n: int, seed: int) -> SamplingParams:
        """From a config ``sampling`` mapping (temperature, top_p, top_k, presence_penalty,
        max_new_tokens), with ``n`` samples and ``seed``."""
        return cls(
            temperature=float(section["temperature"]),
            top_p=float(section["top_p"]),
            top_k=section.get("top_k"),
            presence_penalty=section.get("presence_penalty"),
            max_new_tokens=int(section["max_new_tokens"]),
            n=n,
            seed=seed,
        )

    def __post_init__(self) -> None:
        # Normalise number types so that 1 and 1.0 produce the same recording key.
        def as_float(name: str) -> float:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise UserError(f"sampling.{name} must be a finite number, got {value!r}")
            return float(value)

        def as_int(name: str) -> int:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
                raise UserError(f"sampling.{name} must be an integer, got {value!r}")
            return int(value)

        object.__setattr__(self, "temperature", as_float("temperature"))
        object.__setattr__(self, "top_p", as_float("top_p"))
        if self.top_k is not None:
            object.__setattr__(self, "top_k", as_int("top_k"))
        if self.presence_penalty is not None:
            object.__setattr__(self, "presence_penalty", as_float("presence_penalty"))
        object.__setattr__(self, "max_new_tokens", as_int("max_new_tokens"))
        object.__setattr__(self, "n", as_int("n"))
        object.__setattr__(self, "seed", as_int("seed"))

        if self.temperature < 0:
            raise UserError(f"sampling.temperature must be >= 0, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise UserError(f"sampling.top_p must be in (0, 1], got {self.top_p}")
        if self.top_k is not None and self.top_k < 1:
            raise UserError(f"sampling.top_k must be >= 1 or None, got {self.top_k}")
        if self.max_new_tokens < 1:
            raise UserError(f"sampling.max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.n < 1:
            raise UserError(f"sampling.n must be >= 1, got {self.n}")
        if self.seed < 0:
            raise UserError(f"sampling.seed must be >= 0, got {self.seed}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SamplingParams:
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UserError(f"unknown sampling setting(s) {unknown}; known: {sorted(known)}")
        return cls(**data)


def normalize_messages(messages: Any) -> list[dict[str, str]]:
    """Check a chat and reduce every message to exactly ``{"role", "content"}``."""
    if not isinstance(messages, (list, tuple)) or not messages:
        raise UserError("a generation request needs a non-empty list of chat messages")
    out = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or "role" not in msg or "content" not in msg:
            raise UserError(f"message {i} must be a dict with 'role' and 'content', got {msg!r:.120}")
        if msg["role"] not in ROLES:
            raise UserError(f"message {i} has role {msg['role']!r}; expected one of {ROLES}")
        if not isinstance(msg["content"], str):
            raise UserError(f"message {i} content must be a string")
        out.append({"role": msg["role"], "content": msg["content"]})
    return out


def recording_key(messages: Any, sampling: SamplingParams, answer_format: AnswerFormat | None = None) -> str:
    """sha256 hex of the canonical JSON of ``{"messages": ..., "sampling": ...}``, plus
    ``"answer_format"`` (its name and whole grammar) when the request is format-constrained,
    so an unconstrained request's key is what it always was.

    Only ``role`` and ``content`` of each message count. The adapter is deliberately
    not part of the key, so a recording made with an adapter at one path can be
    replayed on a machine where the adapter lives elsewhere (or not at all); callers
    put a per-round seed into ``sampling`` to keep rounds that use different
    adapters on the same prompt apart.
    """
    payload = {"messages": normalize_messages(messages), "sampling": sampling.to_dict()}
    if answer_format is not None:
        payload["answer_format"] = answer_format.key_part()
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def request_seed(messages: Any, sampling: SamplingParams, answer_format: AnswerFormat | None = None) -> int:
    """The 31-bit seed a backend gives the sampler for one request (see module doc)."""
    return derive_seed(sampling.seed, recording_key(messages, sampling, answer_format))


@dataclass
class GenerationRequest:
    """One chat to continue ``sampling.n`` times, optionally with a LoRA adapter on top
    and an answer format the backend enforces (``answer_format``)."""

    messages: list[dict[str, str]]
    sampling: SamplingParams = field(default_factory=SamplingParams)
    adapter: str | None = None
    answer_format: AnswerFormat | None = None

    def __post_init__(self) -> None:
        self.messages = normalize_messages(self.messages)
        if isinstance(self.sampling, dict):
            self.sampling = SamplingParams.from_dict(self.sampling)
        if not isinstance(self.sampling, SamplingParams):
            raise UserError(f"sampling must be SamplingParams or a dict, got {type(self.sampling).__name__}")
        if self.adapter is not None:
            self.adapter = str(self.adapter)
        self.answer_format = AnswerFormat.from_dict(self.answer_format)

    @property
    def key(self) -> str:
        return recording_key(self.messages, self.sampling, self.answer_format)

    @property
    def seed(self) -> int:
        return request_seed(self.messages, self.sampling, self.answer_format)

    def last_user_text(self, limit: int = 80) -> str:
        for msg in reversed(self.messages):
            if msg["role"] == "user":
                text = " ".join(msg["content"].split())
                return text if len(text) <= limit else text[:limit] + "..."
        return ""


class Backend(abc.ABC):
    """A text generator. Subclasses set ``name`` and implement ``generate``/``describe``."""

    name: str = "abstract"

    @abc.abstractmethod
    def generate(self, requests: list[GenerationRequest]) -> list[list[str]]:
        """For each request (same order) a list of ``request.sampling.n`` texts."""

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """What produced the texts: backend name, model, library versions, dtype, device..."""

    def unfit(self, request: GenerationRequest) -> str | None:
        """Why ``request`` cannot be sent to the model at all (its prompt leaves no room in
        the model's context), or None. Such a request is not generated: its record keeps
        ``sampling.n`` empty texts and this reason (llm/recording.py), so one over-long
        prompt neither aborts its batch nor is mistaken for an answer. Backends that do
        not know their model's context (a served API) say None and let the server answer."""
        return None

    def generate_or_refuse(
        self, requests: list[GenerationRequest]
    ) -> tuple[list[list[str]], list[str | None]]:
        """(outputs, refusals): :meth:`generate`, for a backend that learns only by asking
        that a request does not fit (a served model's server refuses it): such a request
        gets ``sampling.n`` empty texts and the reason, like :meth:`unfit`'s, and the others
        are generated. Backends that check beforehand refuse nothing here."""
        return self.generate(requests), [None] * len(requests)

    def close(self) -> None:  # noqa: B027 (a default that backends without resources keep)
        """Release models, connections, memory. Safe to call more than once."""

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def prompt_token_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """The token ids of a chat as the model reads it: its chat template with the assistant's
    turn opened, tokenised without adding special tokens again. A tokenizer without a chat
    template (a base model) is a UserError."""
    try:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except ValueError as exc:
        raise UserError(f"cannot apply the model's chat template ({exc})") from exc
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def context_overflow(prompt_tokens: int, max_model_len: int) -> str | None:
    """The reason a prompt of ``prompt_tokens`` leaves no room to generate in a context of
    ``max_model_len`` tokens (None when at least one token fits)."""
    if prompt_tokens < max_model_len:
        return None
    return (
        f"prompt_too_long: {prompt_tokens} prompt tokens leave no room in the {max_model_len}-token context"
    )


def group_by_adapter(requests: list[GenerationRequest]) -> list[tuple[str | None, list[int]]]:
    """Indices of the requests per adapter: base model (None) first, then adapters in order of first use."""
    groups: dict[str | None, list[int]] = {}
    for i, req in enumerate(requests):
        groups.setdefault(req.adapter, []).append(i)
    order = sorted(groups, key=lambda a: (a is not None, groups[a][0]))
    return [(a, groups[a]) for a in order]


def check_requests(requests: Any) -> list[GenerationRequest]:
    if not isinstance(requests, (list, tuple)):
        raise UserError("generate() takes a list of GenerationRequest")
    for i, req in enumerate(requests):
        if not isinstance(req, GenerationRequest):
            raise UserError(f"request {i} is a {type(req).__name__}, not a GenerationRequest")
    return list(requests)
