"""A minimal client for OpenAI-compatible ``/chat/completions`` servers (stdlib urllib only).

One HTTP request per GenerationRequest, sent from a small thread pool
(``concurrency``); results come back in request order. The body carries
``model, messages, n, temperature, top_p, max_tokens, seed`` and, when set,
``presence_penalty`` and ``top_k`` (``top_k`` is a vLLM extension; the OpenAI API
itself rejects it, so leave it None against such servers). ``seed`` is
:func:`selfplay.llm.base.request_seed`, as for the other backends. With
``reasoning_model`` (OpenAI's o1 and o3-mini) the budget goes as
``max_completion_tokens`` and no temperature, top_p, presence_penalty or top_k is
sent: those models refuse ``max_tokens`` and any sampling setting but their own.

Adapters: a vLLM server started with ``--enable-lora --lora-modules NAME=PATH``
serves each LoRA adapter as a model called NAME, so a request's adapter is sent as
the ``model`` field. By default NAME is the adapter directory's base name; pass
``adapters: {path_or_basename: served_name}`` to map it otherwise. Requests
without an adapter use ``model``.

The API key, if any, is read from the environment variable named by
``api_key_env`` (never from the config itself) and sent as a Bearer token.

Context: the client cannot count a served model's tokens, so it learns that a request is
too long from the server's refusal (HTTP 400 naming the context length: OpenAI's
``context_length_exceeded``, vLLM's and DeepSeek's "maximum context length is N tokens").
A vLLM server refuses a prompt that fits when the prompt plus ``max_tokens`` does not,
where the vLLM engine in a job generates up to the context's end. So, as the engine does,
a refused request whose prompt leaves room is sent again with the room left as its budget
(the prompt's length from the refusal, or from vLLM's ``/tokenize``); one whose prompt
leaves none, or whose length the server does not say, is not generated and
:meth:`OpenAIBackend.generate_or_refuse` gives its reason (its record keeps it, and the
evaluation leaves it out of the cell, as for a prompt over an engine's context).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import UserError
from .base import Backend, GenerationRequest, check_requests, context_overflow

RETRY_STATUS = {408, 429, 500, 502, 503, 504}
log = logging.getLogger(__name__)


class ContextRefused(Exception):
    """The server refused a request for its length (HTTP 400 naming the context)."""


def is_context_refusal(status: int, detail: str) -> bool:
    """Whether an HTTP error is a server's refusal of a request too long for its context."""
    text = detail.lower()
    return status == 400 and ("context_length_exceeded" in text or "maximum context length" in text)


def lengths_from_refusal(detail: str) -> tuple[int, int] | None:
    """(context, prompt tokens) from a refusal that says both, the prompt's exactly (vLLM:
    "... your prompt contains K input tokens"; OpenAI and DeepSeek: "(K in the messages,
    ..."); None when it does not ("at least K" is a count cut short)."""
    context = re.search(r"maximum context length is (\d+) tokens", detail)
    prompt = re.search(r"prompt contains (\d+) input tokens", detail) or re.search(
        r"\((\d+) in the messages", detail
    )
    if not context or not prompt:
        return None
    return int(context.group(1)), int(prompt.group(1))


def refusal_message(detail: str) -> str:
    """The server's own words from an error body (its JSON ``error.message`` where it
    has one), on one line."""
    try:
        error = json.loads(detail).get("error")
        text = error.get("message") if isinstance(error, dict) else str(error)
    except (ValueError, AttributeError):
        text = detail
    return re.sub(r"\s+", " ", str(text)).strip()[:300]


class OpenAIBackend(Backend):
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        adapters: dict[str, str] | None = None,
        timeout: float = 600.0,
        retries: int = 2,
        concurrency: int = 4,
        reasoning_model: bool = False,
    ):
        if not base_url or not str(base_url).startswith(("http://", "https://")):
            raise UserError(f"openai backend: base_url must be an http(s) URL, got {base_url!r}")
        if not model:
            raise UserError("openai backend: 'model' is required")
        self.base_url = str(base_url).rstrip("/")
        self.model = str(model)
        self.api_key_env = api_key_env
        self.adapters = dict(adapters or {})
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.concurrency = max(1, int(concurrency))
        if not isinstance(reasoning_model, bool):
            raise UserError(f"openai backend: reasoning_model must be true or false, got {reasoning_model!r}")
        self.reasoning_model = reasoning_model
        self.requests_sent = 0

    def model_for(self, adapter: str | None) -> str:
        """The ``model`` field for a request: the base model or the adapter's served name."""
        if adapter is None:
            return self.model
        if adapter in self.adapters:
            return self.adapters[adapter]
        base = Path(adapter).name
        return self.adapters.get(base, base)

    def body_for(self, req: GenerationRequest) -> dict[str, Any]:
        sp = req.sampling
        body: dict[str, Any] = {"model": self.model_for(req.adapter), "messages": req.messages, "n": sp.n}
        if self.reasoning_model:
            body.update(max_completion_tokens=sp.max_new_tokens, seed=req.seed)
            return body
        body.update(temperature=sp.temperature, top_p=sp.top_p, max_tokens=sp.max_new_tokens, seed=req.seed)
        if sp.presence_penalty is not None:
            body["presence_penalty"] = sp.presence_penalty
        if sp.top_k is not None:
            body["top_k"] = sp.top_k
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/chat/completions"
        data = json.dumps(body).encode("utf-8")
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
            req = urllib.request.Request(url, data=data, headers=self._headers(), method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:2000]
                if is_context_refusal(exc.code, detail):
                    raise ContextRefused(detail) from None
                last = f"HTTP {exc.code}: {detail[:300]}"
                if exc.code not in RETRY_STATUS:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = f"{exc.__class__.__name__}: {getattr(exc, 'reason', exc)}"
            except json.JSONDecodeError as exc:
                last = f"reply is not JSON ({exc.msg})"
                break
        raise UserError(f"openai backend: POST {url} (model {body['model']!r}) failed: {last}")

    def _lengths(self, req: GenerationRequest, detail: str) -> tuple[int, int] | None:
        """(context, prompt tokens) of ``req`` on the server: from its refusal, or from
        vLLM's ``/tokenize`` (the chat as the server renders it); None when unknown."""
        lengths = lengths_from_refusal(detail)
        if lengths is not None:
            return lengths
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        body = json.dumps({"model": self.model_for(req.adapter), "messages": req.messages}).encode("utf-8")
        request = urllib.request.Request(
            f"{root}/tokenize", data=body, headers=self._headers(), method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                reply = json.loads(resp.read().decode("utf-8"))
            return int(reply["max_model_len"]), int(reply["count"])
        except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError, KeyError, TypeError):
            return None  # not a vLLM server (or an old one): the prompt's length is unknown

    def _fitted(self, req: GenerationRequest) -> tuple[list[str], str | None]:
        """(texts, None), or (n empty texts, why) for a request the server refuses for its
        length; a prompt that leaves room is asked again with that room as its budget."""
        body = self.body_for(req)
        try:
            return self._one(req, body), None
        except ContextRefused as refusal:
            detail = str(refusal)
        budget_key = "max_completion_tokens" if self.reasoning_model else "max_tokens"
        lengths = self._lengths(req, detail)
        if lengths is not None:
            context, prompt = lengths
            over = context_overflow(prompt, context)
            if over is not None:
                return [""] * req.sampling.n, over
            if context - prompt < int(body[budget_key]):
                log.warning(
                    "openai backend: the %d-token context leaves %d of the %d tokens asked after a "
                    "%d-token prompt; generating those",
                    context,
                    context - prompt,
                    body[budget_key],
                    prompt,
                )
                try:
                    return self._one(req, {**body, budget_key: context - prompt}), None
                except ContextRefused as again:
                    detail = str(again)
        return [""] * req.sampling.n, f"prompt_too_long: the server refused it: {refusal_message(detail)}"

    def _one(self, req: GenerationRequest, body: dict[str, Any] | None = None) -> list[str]:
        reply = self._post(body or self.body_for(req))
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not isinstance(choices, list):
            raise UserError(f"openai backend: reply has no 'choices': {str(reply)[:200]}")
        choices = sorted(choices, key=lambda c: c.get("index", 0))
        texts = [((c.get("message") or {}).get("content") or "") for c in choices]
        if len(texts) != req.sampling.n:
            raise UserError(
                f"openai backend: server returned {len(texts)} choices for n={req.sampling.n} "
                f"(model {self.model_for(req.adapter)!r}); does it support 'n'?"
            )
        return texts

    def generate_or_refuse(
        self, requests: list[GenerationRequest]
    ) -> tuple[list[list[str]], list[str | None]]:
        requests = check_requests(requests)
        if not requests:
            return [], []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(requests))) as pool:
            results = list(pool.map(self._fitted, requests))
        self.requests_sent += len(requests)
        return [texts for texts, _ in results], [why for _, why in results]

    def generate(self, requests: list[GenerationRequest]) -> list[list[str]]:
        """Every request's texts; a request the server refuses for its length is an error
        here (a generation job goes through :meth:`generate_or_refuse` and records it)."""
        outputs, refused = self.generate_or_refuse(requests)
        for why in refused:
            if why is not None:
                raise UserError(f"openai backend ({self.base_url}, model {self.model!r}): {why}")
        return outputs

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "base_url": self.base_url,
            "model": self.model,
            "adapters": dict(self.adapters),
            "api_key_env": self.api_key_env,
            **({"reasoning_model": True} if self.reasoning_model else {}),  # recorded only where used
        }
