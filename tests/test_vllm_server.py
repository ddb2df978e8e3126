"""The openai backend against a real vLLM OpenAI-compatible server (the CPU build in
.venv-vllm, the tiny model, a 256-token context), as paper 001's Figure 4 models are
served (`vllm serve` on a host the client reaches).

A vLLM server refuses a request whose prompt plus ``max_tokens`` exceeds its context
(HTTP 400), where the vLLM engine in a job generates up to the context's end. A generation
job must neither fail on such a request nor lose the rest of its batch: a prompt that
leaves room is generated with the room left (as the engine would), and a prompt over the
context is recorded as not generated, with the reason the engine's check gives.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from test_vllm_real import vllm_python

from selfplay.errors import UserError
from selfplay.llm.base import GenerationRequest, SamplingParams, prompt_token_ids
from selfplay.llm.factory import make_backend
from selfplay.llm.recording import generate_and_record, generate_fitting
from selfplay.records import read_jsonl

pytestmark = pytest.mark.slow

CONTEXT = 256
COUNTING = [{"role": "user", "content": "Count: " + " ".join(str(i) for i in range(60))}]
TOO_LONG = [{"role": "user", "content": "word " * 300}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tiny_model_dir, tmp_path_factory):
    python = vllm_python()
    port = free_port()
    log = tmp_path_factory.mktemp("vllm_server") / "server.log"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    cmd = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(tiny_model_dir),
        "--served-model-name",
        "tiny",
        "--dtype",
        "float32",
        "--max-model-len",
        str(CONTEXT),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--seed",
        "0",
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the vLLM server exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5) as resp:
                    if json.loads(resp.read())["data"][0]["id"] == "tiny":
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the vLLM server did not start within 600 s: {log.read_text()[-2000:]}")
            time.sleep(2)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def hf(tiny_model_dir):
    import transformers

    return transformers.AutoTokenizer.from_pretrained(str(tiny_model_dir))


def greedy(max_new_tokens: int) -> SamplingParams:
    return SamplingParams(temperature=0.0, top_p=1.0, max_new_tokens=max_new_tokens, n=1, seed=3)


def post(url: str, body: dict) -> tuple[int, str]:
    req = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_server_refuses_a_prompt_plus_budget_over_its_context(server, hf):
    prompt = len(prompt_token_ids(hf, COUNTING))
    assert 20 + prompt < CONTEXT < 200 + prompt  # fits with 20 tokens asked, not with 200
    status, text = post(server, {"model": "tiny", "messages": COUNTING, "max_tokens": 200, "temperature": 0})
    assert status == 400 and f"maximum context length is {CONTEXT} tokens" in text, text


def test_a_job_generates_what_fits_and_records_what_cannot(server, hf, tmp_path):
    backend = make_backend(
        {"name": "openai", "base_url": server, "model": "tiny", "api_key_env": None, "retries": 0}
    )
    requests = [
        GenerationRequest(COUNTING, greedy(20)),
        GenerationRequest(COUNTING, greedy(200)),  # the server refuses it as asked
        GenerationRequest(TOO_LONG, greedy(20)),
    ]
    outputs, unfit = generate_fitting(backend, requests)
    assert unfit[:2] == [None, None]
    long_prompt = len(prompt_token_ids(hf, TOO_LONG))
    assert long_prompt > CONTEXT
    assert (
        unfit[2]
        == f"prompt_too_long: {long_prompt} prompt tokens leave no room in the {CONTEXT}-token context"
    )
    assert outputs[2] == [""]
    # greedy: the budget cut to the context's end continues the 20-token answer
    short, cut = outputs[0][0], outputs[1][0]
    assert short and cut.startswith(short) and len(cut) > len(short)
    room = CONTEXT - len(prompt_token_ids(hf, COUNTING))
    assert len(hf(cut, add_special_tokens=False)["input_ids"]) <= room
    # a plain generate() call names the refusal instead of returning empty texts
    with pytest.raises(UserError, match="prompt_too_long: .* leave no room in the 256-token context"):
        backend.generate([requests[2]])
    # the job's records keep the reason; a replay of them gives the same
    records = generate_and_record(backend, requests, tmp_path / "rec.jsonl")
    assert [r.get("unfit") for r in records] == unfit
    assert [r["outputs"] for r in read_jsonl(tmp_path / "rec.jsonl")] == outputs
    replay = make_backend({"name": "replay", "files": [str(tmp_path / "rec.jsonl")], "on_missing": "error"})
    assert generate_fitting(replay, requests) == (outputs, unfit)
