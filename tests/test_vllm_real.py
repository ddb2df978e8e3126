"""The vllm backend with the real vLLM engine (CPU build), compared with the transformers backend.

vLLM lives in its own virtualenv, ``.venv-vllm`` (``scripts/install_vllm.sh``; ``make
install-test`` runs it). These tests run in the main virtualenv and drive the
project's vllm backend through ``.venv-vllm/bin/python tests/vllm_driver.py``
subprocesses, while the transformers side runs here. Both sides use float32 and one
thread: vLLM's greedy tokens equal transformers' exactly in float32, not in bfloat16,
and float results can depend on the thread count.

Without ``.venv-vllm`` the tests fail with a pointer to the install script; set
``SELFPLAY_SKIP_VLLM=1`` to skip them instead. ``SELFPLAY_VLLM_VENV`` names another
virtualenv installed the same way (``SELFPLAY_VLLM_VENV=DIR scripts/install_vllm.sh``).

Two engine processes are started: A (base model only) while the adapter is trained
here, and B (base, adapter, base again, sampling) once it is written, while the
transformers backend generates the reference texts; the waits overlap.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from selfplay.llm.base import GenerationRequest, SamplingParams
from selfplay.llm.factory import make_backend

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
VLLM_VENV = Path(os.environ.get("SELFPLAY_VLLM_VENV") or REPO / ".venv-vllm")
DRIVER = Path(__file__).with_name("vllm_driver.py")
TIMEOUT_S = 600


def chat(text: str, system: str | None = None) -> list[dict]:
    msgs = [{"role": "system", "content": system}] if system else []
    return msgs + [{"role": "user", "content": text}]


PROMPTS = [
    chat("Write one sentence about the sea."),
    chat("What is two plus two? Answer briefly."),
    chat("Name a colour.", system="You are terse."),
    chat("Write a Python function that returns the square of a number."),
    chat("Give me three words that rhyme with cat."),
    chat("Explain recursion to a child in two sentences.", system="You are a patient teacher."),
]
GREEDY = SamplingParams(temperature=0.0, max_new_tokens=32, n=1, seed=0)
# A prompt longer than the engine's context (vllm_config's max_model_len, 2,048 tokens),
# as PySecDB's longest patches are for the paper's 8,192.
OVER_CONTEXT = chat("Is this commit a security fix?\n" + "+ x = compute(x)\n" * 600)
SAMPLED = SamplingParams(temperature=1.0, max_new_tokens=32, n=2, seed=7)

# A few steps on one fixed reply, so that the adapter visibly changes greedy outputs.
TRAIN_EXAMPLES = [
    {
        "prompt": chat(q, system="You are a concise assistant."),
        "completion": [{"role": "assistant", "content": "Ahoy! The answer is always the sea."}],
    }
    for q in ("Name a colour.", "What is your favourite food?", "Where do fish live?", "Say hello.")
]
TRAIN_SETTINGS = {"max_length": 128, "batch_size": 2, "grad_accum": 1, "max_steps": 4, "learning_rate": 2e-3}


def vllm_python() -> Path:
    python = VLLM_VENV / "bin" / "python"
    if python.is_file() and any(VLLM_VENV.glob(".installed-*")):
        return python
    if os.environ.get("SELFPLAY_SKIP_VLLM") == "1":
        pytest.skip("SELFPLAY_SKIP_VLLM=1 and .venv-vllm is not installed")
    pytest.fail(
        ".venv-vllm is missing or incomplete: run scripts/install_vllm.sh (make install-test does), "
        "or set SELFPLAY_SKIP_VLLM=1 to skip the real vLLM tests",
        pytrace=False,
    )


def as_dicts(requests: list[GenerationRequest]) -> list[dict]:
    return [
        {
            "messages": r.messages,
            "sampling": r.sampling.to_dict(),
            "adapter": r.adapter,
            "answer_format": r.answer_format.key_part() if r.answer_format else None,
        }
        for r in requests
    ]


def constrained_requests() -> list[GenerationRequest]:
    """SInQ answers with their skeleton enforced (format-constrained decoding): two of
    Alice's, greedy, and one of Bob's, sampled twice."""
    from selfplay.tracks.sinq.formats import alice_format, bob_format
    from selfplay.tracks.sinq.prompts import alice_messages, bob_messages

    settings = {"constrained": True, "reasoning_chars": 120, "code_chars": 400}
    greedy = SamplingParams(temperature=0.0, max_new_tokens=300, n=1, seed=0)
    out = []
    for name, code in CONSTRAINED_SOURCES.items():
        src = {"code": code, "entry_point": name}
        out.append(
            GenerationRequest(
                alice_messages(code, name, 10), greedy, answer_format=alice_format(src, settings)
            )
        )
    code_p = CONSTRAINED_SOURCES["clip"]
    out.append(
        GenerationRequest(
            bob_messages(code_p, code_p.replace("hi))", "hi + 1))"), "clip"),
            SamplingParams(temperature=1.0, top_p=0.7, max_new_tokens=200, n=2, seed=4),
            answer_format=bob_format({"code_p": code_p, "entry_point": "clip"}, settings),
        )
    )
    return out


CONSTRAINED_SOURCES = {
    "add": "def add(a, b):\n    return a + b\n",
    "clip": "def clip(x, lo, hi):\n    return max(lo, min(x, hi))\n",
}


class EngineRun:
    """One driver process in .venv-vllm, started at once; ``result()`` waits for it."""

    def __init__(
        self,
        workdir: Path,
        backend_cfg: dict,
        calls: list[list[GenerationRequest]],
        raw_calls: list[list[GenerationRequest]] = (),
    ):
        workdir.mkdir(parents=True, exist_ok=True)
        self.request = workdir / "request.json"
        self.output = workdir / "result.json"
        self.log = workdir / "engine.log"
        self.request.write_text(
            json.dumps(
                {
                    "backend": backend_cfg,
                    "calls": [as_dicts(c) for c in calls],
                    "raw_calls": [as_dicts(c) for c in raw_calls],
                }
            )
        )
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [str(vllm_python()), str(DRIVER), str(self.request), str(self.output)],
                cwd=workdir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._result: dict | None = None

    def result(self) -> dict:
        if self._result is None:
            try:
                rc = self.proc.wait(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                pytest.fail(f"the vLLM driver took over {TIMEOUT_S} s; log: {self.log}")
            if rc != 0 or not self.output.is_file():
                tail = self.log.read_text(errors="replace")[-3000:]
                pytest.fail(f"the vLLM driver failed (exit {rc}); log {self.log}:\n{tail}")
            self._result = json.loads(self.output.read_text())
        return self._result

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def vllm_config(model_dir: Path) -> dict:
    return {
        "name": "vllm",
        "model": str(model_dir),
        "dtype": "float32",
        "device": "cpu",
        "threads": 1,
        "cpu_kvcache_gib": 1,
        "max_model_len": 2048,
        "max_lora_rank": 16,
        "seed": 0,
        "use_tqdm": False,
    }


@pytest.fixture(scope="module")
def runs(tiny_model_dir, tmp_path_factory):
    """Everything generated by both backends, computed once for the module."""
    from selfplay.train import train_lora_sft

    vllm_python()  # fail or skip before any work
    tmp = tmp_path_factory.mktemp("vllm_real")
    base = [GenerationRequest(p, GREEDY) for p in PROMPTS]
    sampled = [GenerationRequest(p, SAMPLED) for p in PROMPTS[:4]]
    started = []
    try:
        constrained = constrained_requests()
        mixed = [base[0], GenerationRequest(OVER_CONTEXT, GREEDY), base[1]]
        run_a = EngineRun(
            tmp / "run_a",
            vllm_config(tiny_model_dir),
            [base, sampled, constrained, mixed],
            raw_calls=[mixed],
        )
        started.append(run_a)
        hf = make_backend(
            {
                "name": "transformers",
                "model": str(tiny_model_dir),
                "dtype": "float32",
                "batch_size": 4,
                "threads": 1,
                "progress": False,
            }
        )
        adapter = tmp / "adapter"
        record = train_lora_sft(str(tiny_model_dir), TRAIN_EXAMPLES, str(adapter), TRAIN_SETTINGS, seed=3)
        with_adapter = [GenerationRequest(p, GREEDY, adapter=str(adapter)) for p in PROMPTS]
        run_b = EngineRun(tmp / "run_b", vllm_config(tiny_model_dir), [base, with_adapter, base, sampled])
        started.append(run_b)
        hf_base = hf.generate(base)
        hf_adapter = hf.generate(with_adapter)
        hf_constrained = hf.generate(constrained[:2])
        hf.close()
        yield {
            "a": run_a.result(),
            "b": run_b.result(),
            "hf_base": hf_base,
            "hf_adapter": hf_adapter,
            "hf_constrained": hf_constrained,
            "record": record,
            "adapter": adapter,
        }
    finally:
        for run in started:
            run.stop()


def texts(outputs: list[list[str]]) -> list[str]:
    assert all(len(x) == 1 for x in outputs)
    return [x[0] for x in outputs]


def test_greedy_matches_the_transformers_backend(runs):
    vllm_base = texts(runs["b"]["outputs"][0])
    assert all(t.strip() for t in vllm_base)
    assert len(set(vllm_base)) == len(PROMPTS)  # real answers to different prompts
    assert vllm_base == texts(runs["hf_base"])
    desc, engine = runs["b"]["describe"], runs["b"]["engine"]
    assert desc["device"] == "cpu" and desc["dtype"] == "float32" and desc["name"] == "vllm"
    # the CPU settings reached the engine: in-process core, explicit KV cache size, one thread
    assert engine["core_client"] == "InprocClient"
    assert engine["kv_cache_memory_bytes"] == 1 << 30
    assert engine["torch_threads"] == 1 and engine["model_dtype"] == "torch.float32"


def test_trained_adapter_through_lora_request_matches_transformers_peft(runs):
    base, adapted, base_again = (texts(x) for x in runs["b"]["outputs"][:3])
    assert runs["record"]["steps"] == TRAIN_SETTINGS["max_steps"]
    assert sum(a != b for a, b in zip(adapted, base)) >= len(PROMPTS) // 2
    assert adapted == texts(runs["hf_adapter"])
    assert base_again == base  # the adapter does not leak into later base requests
    assert runs["b"]["describe"]["adapters"] == {str(runs["adapter"]): 1}


def test_seeded_sampling_repeats_across_engine_processes(runs):
    first, second = runs["a"]["outputs"][1], runs["b"]["outputs"][3]
    assert [len(x) for x in first] == [SAMPLED.n] * 4
    assert first == second
    # they are real samples: the n draws of a request differ somewhere, and differ from greedy
    assert any(x[0] != x[1] for x in first)
    greedy = texts(runs["a"]["outputs"][0])
    assert any(x[0] != g for x, g in zip(first, greedy))
    assert runs["a"]["outputs"][0] == runs["b"]["outputs"][0]  # greedy repeats across processes too


def test_answer_formats_are_enforced_by_vllms_structured_outputs(runs):
    """The same llguidance grammar, enforced inside the engine: every answer follows the
    skeleton and parses, and greedy answers equal the transformers backend's."""
    from selfplay.tracks.sinq.parse import parse_alice, parse_bob

    alice, bob = runs["a"]["outputs"][2][:2], runs["a"]["outputs"][2][2]
    for name, texts_ in zip(CONSTRAINED_SOURCES, alice):
        assert parse_alice(texts_[0], name).ok, texts_[0]
    assert len(bob) == 2 and all(parse_bob(t).ok for t in bob), bob
    assert alice == runs["hf_constrained"]


def test_a_prompt_beyond_the_context_is_left_out_and_the_rest_of_its_batch_is_generated(runs):
    """vLLM refuses a prompt longer than its context and the refusal aborts the whole call
    (the raw call); a generation job leaves that request out with a reason and generates
    the others, with the texts they get on their own."""
    error = runs["a"]["raw_errors"][0]
    assert error is not None and "maximum context length is 2048" in error, error
    outputs, unfit = runs["a"]["outputs"][3], runs["a"]["unfit"][3]
    assert unfit[0] is None and unfit[2] is None
    assert unfit[1].startswith("prompt_too_long: ") and "2048-token context" in unfit[1]
    assert outputs[1] == [""]
    greedy = texts(runs["a"]["outputs"][0])
    assert texts([outputs[0], outputs[2]]) == greedy[:2]
    assert runs["a"]["unfit"][0] == [None] * len(PROMPTS)
