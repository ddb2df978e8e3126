"""vLLM's CPU build with seeded requests whose prompts exceed one step's token budget.

With chunked prefill on (vLLM's default), a step that runs out of its token budget
(4,096) prefills the last request in part, discards the token sampled for it and rewinds
that request's seeded generator; CPU generators cannot be rewound, and the job died with
"RuntimeError: CPU Generator does not use offset". Paper 002's rehearsal hit it at its
first long batch (the round-1 test writer: 18 prompts of ~500 tokens). The CPU backend
turns chunked prefill off (selfplay.llm.vllm_backend's module doc).
"""

from __future__ import annotations

import pytest

from selfplay.llm.vllm_backend import engine_args


def test_the_cpu_engine_prefills_every_prompt_whole():
    assert engine_args("m", device="cpu", max_model_len=40960)["enable_chunked_prefill"] is False
    assert "enable_chunked_prefill" not in engine_args("m", device="cuda")  # a GPU keeps vLLM's default
    # engine_kwargs still has the last word
    assert engine_args("m", device="cpu", engine_kwargs={"enable_chunked_prefill": True})[
        "enable_chunked_prefill"
    ]


@pytest.mark.slow
def test_a_seeded_batch_longer_than_one_step_generates_on_the_cpu_build(tmp_path):
    """The real engine: 12 seeded requests of ~600 prompt tokens each (over 4,096 together)."""
    import json
    import subprocess

    from conftest import CACHE
    from test_vllm_real import vllm_python

    from selfplay.llm.tiny_random import ensure_tiny_model

    model = ensure_tiny_model("qwen3", CACHE / "tiny-models" / "qwen3")
    script = f"""
import json
from selfplay.llm.base import GenerationRequest, SamplingParams
from selfplay.llm.vllm_backend import VLLMBackend
b = VLLMBackend({str(model)!r}, device="cpu", threads=1, dtype="float32", max_model_len=40960, enable_lora=False,
                use_tqdm=False)
words = " ".join(f"word{{i}}" for i in range(300))
reqs = [GenerationRequest([{{"role": "user", "content": f"{{k}} {{words}}"}}],
                          SamplingParams(temperature=0.6, top_p=0.95, max_new_tokens=4, seed=k)) for k in range(12)]
print("RESULT " + json.dumps([len(o) for o in b.generate(reqs)]))
"""
    proc = subprocess.run([str(vllm_python()), "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    assert json.loads(line[len("RESULT ") :]) == [1] * 12
