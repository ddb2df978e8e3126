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
import urllib.error
import urllib.request

import pytest
from vllm_server import served

from selfplay.errors import UserError
from selfplay.llm.base import GenerationRequest, SamplingParams, prompt_token_ids
from selfplay.llm.factory import make_backend
from selfplay.llm.recording import generate_and_record, generate_fitting
from selfplay.records import read_jsonl

pytestmark = pytest.mark.slow

CONTEXT = 256
COUNTING = [{"role": "user", "content": "Count: " + " ".join(str(i) for i in range(60))}]
TOO_LONG = [{"role": "user", "content": "word " * 300}]


@pytest.fixture(scope="module")
def server(tiny_model_dir, tmp_path_factory):
    with served(
        tiny_model_dir, "tiny", CONTEXT, tmp_path_factory.mktemp("vllm_server") / "server.log"
    ) as url:
        yield url


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
