"""Runs the project's vllm backend in .venv-vllm for tests/test_vllm_real.py.

The test suite runs in the main virtualenv, which has no vLLM; it writes a request
file and starts this script with ``.venv-vllm/bin/python``:

    .venv-vllm/bin/python tests/vllm_driver.py REQUEST.json RESULT.json

REQUEST.json: ``{"backend": <config for selfplay.llm.factory.make_backend>,
"calls": [[<request>, ...], ...]}`` where a request is ``{"messages": [...],
"sampling": {<SamplingParams fields>}, "adapter": <dir or null>, "answer_format": <{name,
grammar} or absent>}``. Every inner list
is one ``generate()`` call on the same backend, in order.

Each call goes through ``generate_fitting`` (what a generation job runs: requests whose
prompt does not fit the engine's context are left out, with a reason); an optional
``"raw_calls"`` list is sent to ``generate()`` itself, and its errors are reported.

RESULT.json: ``{"outputs": [<outputs per call>], "unfit": [<reasons per call>],
"raw_errors": [<error text or null per raw call>], "describe": ..., "engine": {facts
read back from the running engine}, "seconds": {...}}``.
"""

from __future__ import annotations

import json
import sys
import time


def engine_facts(backend) -> dict:
    """What the engine really runs with, read back from it (not from our own settings)."""
    import torch

    engine = backend.llm.llm_engine
    return {
        "core_client": type(engine.engine_core).__name__,
        "kv_cache_memory_bytes": engine.vllm_config.cache_config.kv_cache_memory_bytes,
        "model_dtype": str(engine.vllm_config.model_config.dtype),
        "torch_threads": torch.get_num_threads(),
    }


def main(request_path: str, result_path: str) -> None:
    from selfplay.llm.base import GenerationRequest
    from selfplay.llm.factory import make_backend
    from selfplay.llm.recording import generate_fitting

    with open(request_path, encoding="utf-8") as fh:
        request = json.load(fh)

    def requests(call: list[dict]) -> list[GenerationRequest]:
        return [
            GenerationRequest(r["messages"], r["sampling"], r.get("adapter"), r.get("answer_format"))
            for r in call
        ]

    started = time.perf_counter()
    backend = make_backend(request["backend"])
    ready = time.perf_counter()
    outputs, unfit, call_seconds, raw_errors = [], [], [], []
    for call in request["calls"]:
        t0 = time.perf_counter()
        texts, reasons = generate_fitting(backend, requests(call))
        outputs.append(texts)
        unfit.append(reasons)
        call_seconds.append(round(time.perf_counter() - t0, 2))
    for call in request.get("raw_calls", []):
        try:
            backend.generate(requests(call))
            raw_errors.append(None)
        except Exception as exc:  # what the engine itself does with the call
            raw_errors.append(f"{type(exc).__name__}: {exc}")
    result = {
        "outputs": outputs,
        "unfit": unfit,
        "raw_errors": raw_errors,
        "describe": backend.describe(),
        "engine": engine_facts(backend),
        "seconds": {"start": round(ready - started, 2), "calls": call_seconds},
    }
    backend.close()
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)


# vLLM's engine start-up needs this guard in a script (it fails without one).
if __name__ == "__main__":
    main(*sys.argv[1:3])
