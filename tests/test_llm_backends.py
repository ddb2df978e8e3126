"""Generation backends: the real tiny model on CPU, plus test doubles for vLLM and an OpenAI server."""

from __future__ import annotations

import copy
import json
import os
import sys
import threading
import types
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from selfplay.errors import MissingToolError, UserError
from selfplay.llm.base import GenerationRequest, SamplingParams, group_by_adapter, recording_key
from selfplay.llm.factory import make_backend


def chat(text: str, system: str | None = None) -> list[dict]:
    msgs = [{"role": "system", "content": system}] if system else []
    return msgs + [{"role": "user", "content": text}]


# --------------------------------------------------------------------------- plain data


def test_sampling_params_normalise_validate_and_key():
    a = SamplingParams(temperature=1, top_p=1, max_new_tokens=16.0, seed=3)
    b = SamplingParams(temperature=1.0, top_p=1.0, max_new_tokens=16, seed=3)
    assert a == b and a.to_dict() == b.to_dict()
    assert a.to_dict() == {
        "temperature": 1.0,
        "top_p": 1.0,
        "top_k": None,
        "presence_penalty": None,
        "max_new_tokens": 16,
        "n": 1,
        "seed": 3,
    }
    msgs = chat("hello")
    key = recording_key(msgs, a)
    assert len(key) == 64 and key == recording_key([dict(m, extra="x") for m in msgs], b)
    assert key != recording_key(msgs, SamplingParams(temperature=1.0, max_new_tokens=16, seed=4))
    # the adapter is not part of the key; the per-round seed is what separates rounds
    assert GenerationRequest(msgs, a, adapter="/x/round1").key == GenerationRequest(msgs, a).key == key
    for bad in (
        {"temperature": -1},
        {"top_p": 0},
        {"n": 0},
        {"max_new_tokens": 0},
        {"top_k": 0},
        {"seed": 1.5},
    ):
        with pytest.raises(UserError):
            SamplingParams(**bad)
    with pytest.raises(UserError):
        GenerationRequest([{"role": "robot", "content": "x"}])
    with pytest.raises(UserError):
        SamplingParams.from_dict({"temprature": 1.0})


def test_group_by_adapter_puts_base_first_and_keeps_order():
    reqs = [GenerationRequest(chat(str(i)), adapter=a) for i, a in enumerate(["B", None, "A", "B", None])]
    assert group_by_adapter(reqs) == [(None, [1, 4]), ("B", [0, 3]), ("A", [2])]


def test_factory_rejects_unknown_backends_and_settings(tmp_path):
    with pytest.raises(UserError, match="unknown generation backend"):
        make_backend({"name": "nope"})
    with pytest.raises(UserError, match="unknown setting"):
        make_backend({"name": "replay", "files": [str(tmp_path / "x.jsonl")], "on_mising": "error"})
    with pytest.raises(UserError, match="missing required"):
        make_backend({"name": "openai", "base_url": "http://127.0.0.1:1/v1"})


def test_sampler_rules_on_synthetic_logits():
    """The per-row sampler alone (no model): penalty, greedy, top-k/top-p, seeding, active rows."""
    import torch

    from selfplay.llm.transformers_backend import _build_sampler_class, _Row

    RowSampler = _build_sampler_class()

    def rows(*sps, seed=7):
        return [_Row(0, 0, [1], sp, seed + i, 8) for i, sp in enumerate(sps)]

    vocab = 50
    logits = torch.zeros(3, vocab)
    logits[:, 5] = 3.0
    logits[:, 6] = 2.9

    def pick(sampler, generated, active=None):
        active = list(range(len(generated))) if active is None else active
        return sampler(logits[: len(active)].clone(), active, generated).tolist()

    greedy = SamplingParams(temperature=0)
    penalised = SamplingParams(temperature=0, presence_penalty=0.5)
    k1 = SamplingParams(temperature=5.0, top_k=1)
    s = RowSampler(rows(greedy, penalised, k1))
    # token 5 is already generated: the penalty moves the greedy choice of row 1 to token 6
    assert pick(s, [[5], [5], [5]]) == [5, 6, 5]
    # only the active rows are decoded, each with its own settings
    assert pick(s, [[5], [5], [5]], active=[1]) == [6]
    assert pick(s, [[5], [5], [5]], active=[0, 2]) == [5, 5]
    # no penalty before anything is generated
    assert pick(RowSampler(rows(penalised)), [[]]) == [5]
    # top_p so small that only the best token is left
    assert pick(RowSampler(rows(SamplingParams(temperature=3.0, top_p=0.01))), [[]]) == [5]

    hot = SamplingParams(temperature=50.0)
    nucleus = SamplingParams(temperature=50.0, top_p=0.5)
    first = [pick(RowSampler(rows(hot, nucleus, seed=s)), [[], []]) for s in range(20)]
    again = [pick(RowSampler(rows(hot, nucleus, seed=s)), [[], []]) for s in range(20)]
    assert first == again  # same seeds, same draws
    assert len({tuple(x) for x in first}) > 5  # a hot distribution really samples
    # nucleus of a flat-ish distribution keeps about half of the tokens
    assert len({x[1] for x in first}) <= vocab // 2 + 1


# --------------------------------------------------------------------------- real tiny model


@pytest.fixture(scope="module")
def backend(tiny_model_dir):
    # One thread: on 2 cores shared with other workers, two torch threads are several
    # times slower than one (OpenMP threads wait on each other while a core is taken).
    b = make_backend(
        {
            "name": "transformers",
            "model": str(tiny_model_dir),
            "dtype": "float32",
            "batch_size": 4,
            "threads": 1,
            "progress": False,
        }
    )
    yield b
    b.close()


@pytest.fixture(scope="module")
def adapter_dir(backend, tmp_path_factory):
    """A real PEFT LoRA adapter (r=4 on q_proj, v_proj) with random, non-zero weights."""
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    base = copy.deepcopy(backend._base)
    cfg = LoraConfig(
        r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], init_lora_weights=False, task_type="CAUSAL_LM"
    )
    with warnings.catch_warnings():  # a transformers deprecation notice raised inside peft
        warnings.simplefilter("ignore", FutureWarning)
        peft_model = get_peft_model(base, cfg)
    out = tmp_path_factory.mktemp("adapter") / "round1"
    peft_model.save_pretrained(out)
    del peft_model, base
    return out


PROMPTS = [
    chat("Write one sentence about the sea."),
    chat("What is two plus two? Answer briefly, please, in a few words."),
    chat("Name a color.", system="You are terse."),
]


@pytest.mark.slow
def test_batched_sampling_order_n_and_determinism(backend):
    sp = SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=8, n=2, seed=11)
    short = SamplingParams(temperature=0.9, top_k=40, max_new_tokens=3, n=2, seed=11)
    reqs = [
        GenerationRequest(PROMPTS[0], sp),
        GenerationRequest(PROMPTS[1], sp),
        GenerationRequest(PROMPTS[2], short),
    ]
    first = backend.generate(reqs)
    assert [len(x) for x in first] == [2, 2, 2]
    assert all(isinstance(t, str) and t.strip() for x in first for t in x)
    assert any(x[0] != x[1] for x in first)  # n samples are separate draws
    assert all(len(backend.tokenizer(t, add_special_tokens=False)["input_ids"]) <= 4 for t in first[2])
    # rerun with the requests in reverse order: same texts, mapped back to the right requests
    again = backend.generate(list(reversed(reqs)))
    assert list(reversed(again)) == first
    # another round seed gives other samples
    other = backend.generate(
        [
            GenerationRequest(
                PROMPTS[0], SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=8, n=2, seed=12)
            )
        ]
    )
    assert other[0] != first[0]
    assert backend.stats["generated_tokens"] > 0


@pytest.mark.slow
def test_a_batch_prefills_each_prompt_once_and_their_common_beginning_once(backend):
    """A request's n samples are prefilled once (the prompt runs for one row and its cache
    is copied), and the common beginning of a batch's prompts runs once for all of them;
    the texts are those of rows prefilled one by one (batches of one row)."""
    system = "You answer questions about numbers. Keep every answer short and plain. " * 3
    reqs = [
        GenerationRequest(
            chat("Name an even number.", system=system),
            SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=8, n=3, seed=5),
        ),
        GenerationRequest(
            chat("Is seven a prime number?", system=system), SamplingParams(temperature=0.0, max_new_tokens=6)
        ),
        GenerationRequest(
            chat("What is ten minus four?", system=system), SamplingParams(temperature=0.0, max_new_tokens=6)
        ),
    ]
    lengths = [len(backend._prompt_ids(r)) for r in reqs]
    common = len(os.path.commonprefix([backend._prompt_ids(r) for r in reqs]))
    assert common > 40 and min(lengths) > common
    runs = {}
    batch_size = backend.batch_size
    try:
        for name, size, share in (
            ("shared", 8, True),
            ("unshared", 8, False),
            ("one by one", 1, True),
        ):
            backend.batch_size, backend.share_prefill = size, share
            before = dict(backend.stats)
            runs[name] = backend.generate(reqs)
            runs[name + " stats"] = {
                k: backend.stats[k] - before[k]
                for k in ("rows", "batches", "prefilled_rows", "prefilled_tokens")
            }
    finally:
        backend.batch_size, backend.share_prefill = batch_size, True
    rows = 3 + 1 + 1
    assert runs["shared stats"] == {
        "rows": rows,
        "batches": 1,
        "prefilled_rows": 3,
        "prefilled_tokens": common + sum(lengths) - 3 * common,
    }
    assert runs["unshared stats"] == {
        "rows": rows,
        "batches": 1,
        "prefilled_rows": rows,
        "prefilled_tokens": 3 * lengths[0] + lengths[1] + lengths[2],
    }
    assert runs["one by one stats"] == {
        "rows": rows,
        "batches": rows,
        "prefilled_rows": rows,
        "prefilled_tokens": 3 * lengths[0] + lengths[1] + lengths[2],
    }
    assert runs["shared"] == runs["unshared"] == runs["one by one"]
    assert len(set(runs["shared"][0])) > 1  # three separate draws from one prefill


@pytest.mark.slow
def test_decoding_into_a_reserved_cache_gives_the_texts_of_transformers_cache(backend):
    """The cache allocated once per batch (kv_cache.py) against transformers' DynamicCache
    on a batch with a shared beginning, padding, shared samples and rows leaving early:
    the same texts, sampled and greedy."""
    system = "You answer questions about numbers. Keep every answer short and plain. " * 2
    reqs = [
        GenerationRequest(
            chat("Count from one to five.", system=system),
            SamplingParams(temperature=0.9, top_p=0.95, max_new_tokens=14, n=3, seed=2),
        ),
        GenerationRequest(
            chat("Is nine odd?", system=system), SamplingParams(temperature=0.0, max_new_tokens=3)
        ),
        GenerationRequest(
            chat("Name three prime numbers below twenty, please.", system=system),
            SamplingParams(temperature=0.0, max_new_tokens=20),
        ),
    ]
    texts = {}
    try:
        for reserve in (True, False):
            backend.reserve_cache = reserve
            texts[reserve] = backend.generate(reqs)
    finally:
        backend.reserve_cache = True
    assert texts[True] == texts[False]
    assert len(set(texts[True][0])) > 1 and all(texts[True][2])


@pytest.mark.slow
def test_own_decoding_loop_matches_transformers_generate(backend):
    """Greedy text from our loop (one batch; the 3-token row leaves it early, the others go
    on with their cache rows) equals transformers' own ``generate`` on each prompt alone."""
    import torch

    budgets = [12, 3, 12]
    reqs = [
        GenerationRequest(p, SamplingParams(temperature=0, max_new_tokens=b))
        for p, b in zip(PROMPTS, budgets)
    ]
    ours = [x[0] for x in backend.generate(reqs)]
    for req, budget, text in zip(reqs, budgets, ours):
        ids = torch.tensor([backend._prompt_ids(req)])
        with torch.inference_mode():
            out = backend._base.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=budget,
                eos_token_id=sorted(backend.stop_ids),
                pad_token_id=backend.pad_id,
            )
        assert text == backend.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
    assert (
        len(backend.tokenizer(ours[1], add_special_tokens=False)["input_ids"])
        <= 3
        < len(backend.tokenizer(ours[0], add_special_tokens=False)["input_ids"])
    )


@pytest.mark.slow
def test_adapter_changes_output_and_mixed_requests_are_grouped(backend, adapter_dir):
    greedy = SamplingParams(temperature=0, max_new_tokens=8, n=2, seed=1)
    base_reqs = [GenerationRequest(p, greedy) for p in PROMPTS[:2]]
    ad_reqs = [GenerationRequest(p, greedy, adapter=str(adapter_dir)) for p in PROMPTS[:2]]
    base_only = backend.generate(base_reqs)  # before any adapter is loaded
    adapter_only = backend.generate(ad_reqs)
    assert all(x[0] == x[1] for x in base_only + adapter_only)  # greedy: n identical copies
    assert adapter_only != base_only
    mixed = backend.generate([ad_reqs[0], base_reqs[0], ad_reqs[1], base_reqs[1]])
    assert mixed == [adapter_only[0], base_only[0], adapter_only[1], base_only[1]]
    desc = backend.describe()
    assert str(adapter_dir.resolve()) in desc["adapters_loaded"].values()
    assert desc["name"] == "transformers" and desc["dtype"] == "float32" and "torch" in desc["versions"]


def _second_adapter(base_model, out):
    """Another real adapter (other seed, other target modules) beside ``adapter_dir``."""
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(1)
    cfg = LoraConfig(r=4, lora_alpha=8, target_modules=["o_proj", "down_proj"], init_lora_weights=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        get_peft_model(copy.deepcopy(base_model), cfg).save_pretrained(out)
    return out


@pytest.mark.slow
def test_a_merged_adapter_decodes_as_one_beside_the_weights(tiny_model_dir, adapter_dir, tmp_path):
    """merge_adapter (on with float32): the adapter merged into the weights gives the texts
    of the adapter run beside them; a base request or another adapter afterwards gets the
    stored base weights back exactly (reloaded, nothing subtracted)."""
    import torch

    settings = {"name": "transformers", "model": str(tiny_model_dir), "threads": 1, "progress": False}
    merged, beside = make_backend(settings), make_backend({**settings, "merge_adapter": False})
    try:
        assert merged.merge_adapter and not beside.merge_adapter
        stored = {k: v.clone() for k, v in merged._base.state_dict().items()}
        second = _second_adapter(merged._base, tmp_path / "second")
        greedy = SamplingParams(temperature=0, max_new_tokens=8, seed=1)
        first_reqs = [GenerationRequest(p, greedy, adapter=str(adapter_dir)) for p in PROMPTS]
        second_reqs = [GenerationRequest(p, greedy, adapter=str(second)) for p in PROMPTS]
        base_reqs = [GenerationRequest(p, greedy) for p in PROMPTS]
        assert merged.generate(first_reqs) == beside.generate(first_reqs)
        changed = [k for k, v in merged._base.state_dict().items() if not torch.equal(v, stored[k])]
        assert changed and all("q_proj" in k or "v_proj" in k for k in changed)  # merged, in place
        assert merged.generate(second_reqs) == beside.generate(second_reqs)
        assert merged.generate(base_reqs) == beside.generate(base_reqs)
        assert all(torch.equal(v, stored[k]) for k, v in merged._base.state_dict().items())
        assert merged.describe()["merge_adapter"] is True
    finally:
        merged.close()
        beside.close()


@pytest.mark.slow
def test_an_adapter_that_fails_to_merge_leaves_the_stored_weights(backend, adapter_dir, tmp_path):
    """PEFT wraps the layers before it reads the adapter's weights: a broken weights file
    fails the request, and the next base request still decodes with the stored model."""
    import shutil

    from safetensors import SafetensorError

    broken = tmp_path / "broken"
    shutil.copytree(adapter_dir, broken)
    for weights in broken.glob("adapter_model.*"):
        weights.write_bytes(b"not a weights file")
    greedy = SamplingParams(temperature=0, max_new_tokens=6, seed=1)
    base = [GenerationRequest(PROMPTS[0], greedy)]
    before = backend.generate(base)
    with pytest.raises(SafetensorError):
        backend.generate([GenerationRequest(PROMPTS[0], greedy, adapter=str(broken))])
    assert not any("lora" in name for name in backend._base.state_dict())
    assert backend.generate(base) == before


def test_merging_an_adapter_into_half_precision_weights_is_refused(tmp_path):
    with pytest.raises(UserError, match="merge_adapter needs float32"):
        make_backend(
            {"name": "transformers", "model": str(tmp_path), "dtype": "bfloat16", "merge_adapter": True}
        )


@pytest.mark.slow
def test_a_job_without_adapters_never_imports_peft(tiny_model_dir):
    """A generation job's record names peft's version without importing peft, which a job
    without adapters does not need (about 120 jobs of the default load the model)."""
    import subprocess
    from importlib import metadata

    script = (
        "import sys, json\n"
        "from selfplay.llm.transformers_backend import TransformersBackend\n"
        "from selfplay.llm.base import GenerationRequest, SamplingParams\n"
        f"b = TransformersBackend({str(tiny_model_dir)!r}, threads=1, progress=False)\n"
        "b.generate([GenerationRequest([{'role': 'user', 'content': 'hi'}], "
        "SamplingParams(temperature=0, max_new_tokens=2))])\n"
        "print(json.dumps([b.describe()['versions']['peft'], 'peft' in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [metadata.version("peft"), False]


@pytest.mark.slow
def test_record_then_replay_real_model(backend, adapter_dir, tmp_path):
    from selfplay.llm.recording import generate_and_record
    from selfplay.records import read_jsonl, sha256_tree

    sp = SamplingParams(temperature=0.7, max_new_tokens=6, n=2, seed=5)
    reqs = [GenerationRequest(PROMPTS[2], sp), GenerationRequest(PROMPTS[2], sp, adapter=str(adapter_dir))]
    out = tmp_path / "rec" / "gen.jsonl"
    records = generate_and_record(backend, reqs, out, meta={"round": 1})
    assert read_jsonl(out) == records
    assert records[0]["adapter_sha256"] is None and records[1]["adapter_sha256"] == sha256_tree(adapter_dir)
    assert records[0]["backend"]["name"] == "transformers" and records[0]["meta"] == {"round": 1}
    # same key for both (the adapter is not in the key): a real pipeline separates rounds by seed.
    assert records[0]["key"] == records[1]["key"]
    replay = make_backend({"name": "replay", "files": [str(out)]})
    # the first record wins for a duplicated key; the conflicting second one is counted
    assert replay.generate(reqs[:1]) == [records[0]["outputs"]]
    assert replay.describe()["conflicts"] == (1 if records[0]["outputs"] != records[1]["outputs"] else 0)


def test_a_prompt_beyond_the_context_is_left_out_of_its_batch_with_a_reason(tiny_model_dir, tmp_path):
    """Counted with the model's tokenizer and chat template against ``max_model_len``: the
    over-long request is recorded unfit (no engine call fails), the others are generated."""
    from selfplay.llm.recording import generate_and_record

    settings = {"name": "transformers", "model": str(tiny_model_dir), "threads": 1, "progress": False}
    small = make_backend({**settings, "max_model_len": 64})
    try:
        greedy = SamplingParams(temperature=0.0, max_new_tokens=4, n=1, seed=0)
        short, long_ = chat("Name a color."), chat("Name a color. " * 40)
        assert small.unfit(GenerationRequest(short, greedy)) is None
        reason = small.unfit(GenerationRequest(long_, greedy))
        assert reason is not None and reason.startswith("prompt_too_long: ") and "64-token context" in reason
        with pytest.raises(UserError, match="does not fit"):  # what a job met before
            small.generate([GenerationRequest(long_, greedy)])
        records = generate_and_record(
            small, [GenerationRequest(short, greedy), GenerationRequest(long_, greedy)], tmp_path / "g.jsonl"
        )
        assert records[1]["unfit"] == reason and records[1]["outputs"] == [""]
        assert records[0]["outputs"] == small.generate([GenerationRequest(short, greedy)])[0]
        assert records[0]["outputs"][0].strip()
    finally:
        small.close()


# --------------------------------------------------------------------------- vLLM


def test_vllm_missing_gives_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` fail even where it is installed
    with pytest.raises(MissingToolError, match="GPU environment/container.*pip install vllm"):
        make_backend({"name": "vllm", "model": "some/model"})


def _fake_vllm_modules():
    """Test double for the vllm package: records the calls our backend makes."""
    calls = {"init": None, "chat": []}

    class FakeSamplingParams:
        def __init__(self, **kw):
            self.kw = kw

    class FakeLoRARequest:
        def __init__(self, lora_name, lora_int_id, lora_path):
            self.args = (lora_name, lora_int_id, lora_path)

    class FakeLLM:
        def __init__(self, **kw):
            calls["init"] = kw

        def chat(self, messages, sampling_params=None, use_tqdm=True, lora_request=None):
            calls["chat"].append({"messages": messages, "params": sampling_params, "lora": lora_request})
            tag = lora_request.args[0] if lora_request else "base"
            return [
                types.SimpleNamespace(
                    outputs=[
                        types.SimpleNamespace(text=f"{tag}:{conv[-1]['content']}:{j}")
                        for j in range(p.kw["n"])
                    ]
                )
                for conv, p in zip(messages, sampling_params)
            ]

    vllm = types.ModuleType("vllm")
    vllm.__version__ = "fake"
    vllm.LLM = FakeLLM
    vllm.SamplingParams = FakeSamplingParams
    lora = types.ModuleType("vllm.lora")
    request = types.ModuleType("vllm.lora.request")
    request.LoRARequest = FakeLoRARequest
    return {"vllm": vllm, "vllm.lora": lora, "vllm.lora.request": request}, calls


def test_vllm_request_translation_with_test_double(monkeypatch):
    modules, calls = _fake_vllm_modules()
    for name, mod in modules.items():
        monkeypatch.setitem(sys.modules, name, mod)
    b = make_backend(
        {
            "name": "vllm",
            "model": "org/model",
            "max_lora_rank": 16,
            "gpu_memory_utilization": 0.5,
            "max_model_len": 4096,
        }
    )
    assert calls["init"] == {
        "model": "org/model",
        "dtype": "auto",
        "seed": 0,
        "gpu_memory_utilization": 0.5,
        "max_model_len": 4096,
        "enable_lora": True,
        "max_lora_rank": 16,
        "max_loras": 1,
        "structured_outputs_config": {"backend": "guidance"},
    }
    sp = SamplingParams(temperature=0.8, top_p=0.9, max_new_tokens=32, n=2, seed=4)
    sp2 = SamplingParams(temperature=0, top_k=5, presence_penalty=0.3, max_new_tokens=7, n=1, seed=4)
    reqs = [
        GenerationRequest(chat("a"), sp, adapter="/ad/r1"),
        GenerationRequest(chat("b"), sp2),
        GenerationRequest(chat("c"), sp, adapter="/ad/r1"),
    ]
    out = b.generate(reqs)
    assert out == [["adapter1:a:0", "adapter1:a:1"], ["base:b:0"], ["adapter1:c:0", "adapter1:c:1"]]
    base_call, lora_call = calls["chat"]
    assert base_call["lora"] is None and base_call["messages"] == [chat("b")]
    assert base_call["params"][0].kw == {
        "n": 1,
        "temperature": 0.0,
        "top_p": 1.0,
        "top_k": 5,
        "presence_penalty": 0.3,
        "max_tokens": 7,
        "seed": reqs[1].seed,
    }
    assert lora_call["lora"].args == ("adapter1", 1, "/ad/r1")
    assert lora_call["messages"] == [chat("a"), chat("c")]
    assert lora_call["params"][0].kw == {
        "n": 2,
        "temperature": 0.8,
        "top_p": 0.9,
        "top_k": -1,
        "presence_penalty": 0.0,
        "max_tokens": 32,
        "seed": reqs[0].seed,
    }
    assert reqs[0].seed != reqs[2].seed  # same round seed, different prompts -> different sampler seeds
    assert b.describe()["versions"] == {"vllm": "fake"}


# --------------------------------------------------------------------------- OpenAI-compatible HTTP


class FakeChatServer:
    """Test double for an OpenAI-compatible server on 127.0.0.1 (records what it receives)."""

    def __init__(self):
        self.bodies: list[dict] = []
        self.headers: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                outer.headers.append(dict(self.headers))
                refusal = outer.context_refusal(body)
                if refusal is not None:
                    self.send_response(400)
                    self.end_headers()
                    self.wfile.write(json.dumps({"error": refusal}).encode())
                    return
                if self.path != "/v1/chat/completions" or body["model"] == "broken":
                    self.send_response(400 if body.get("model") == "broken" else 404)
                    self.end_headers()
                    self.wfile.write(b'{"error": "bad request"}')
                    return
                last = body["messages"][-1]["content"]
                choices = [
                    {"index": i, "message": {"role": "assistant", "content": f"{body['model']}|{last}|{i}"}}
                    for i in reversed(range(body["n"]))
                ]  # out of order on purpose
                data = json.dumps({"choices": choices}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    # A served model with a 100-token context, one token a word, in the way OpenAI's API
    # refuses a long request (its numbers, code context_length_exceeded), and a server that
    # refuses with that code and no numbers; neither has vLLM's /tokenize.
    CONTEXT = 100

    def context_refusal(self, body: dict) -> dict | None:
        if body.get("model") not in ("ctx-openai", "ctx-bare"):
            return None
        prompt = sum(len(m["content"].split()) for m in body["messages"])
        budget = body.get("max_tokens") or body.get("max_completion_tokens")
        if prompt + budget <= self.CONTEXT:
            return None
        if body["model"] == "ctx-bare":
            return {"message": "Input is too long for this model.", "code": "context_length_exceeded"}
        return {
            "message": f"This model's maximum context length is {self.CONTEXT} tokens. However, you "
            f"requested {prompt + budget} tokens ({prompt} in the messages, {budget} in the completion). "
            "Please reduce the length of the messages or completion.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake_server():
    srv = FakeChatServer()
    yield srv
    srv.close()


def test_openai_backend_against_test_double_server(fake_server, monkeypatch):
    monkeypatch.setenv("SELFPLAY_TEST_KEY", "sekrit")
    b = make_backend(
        {
            "name": "openai",
            "base_url": fake_server.url,
            "model": "base-model",
            "api_key_env": "SELFPLAY_TEST_KEY",
            "adapters": {"/x/round2": "r2"},
            "retries": 0,
        }
    )
    sp = SamplingParams(temperature=0.5, top_p=0.9, max_new_tokens=20, n=3, seed=9, presence_penalty=0.1)
    reqs = [
        GenerationRequest(chat("one"), sp),
        GenerationRequest(chat("two"), sp, adapter="/runs/round1"),
        GenerationRequest(chat("three"), SamplingParams(temperature=0, top_k=3), adapter="/x/round2"),
    ]
    out = b.generate(reqs)
    assert out == [
        [f"base-model|one|{i}" for i in range(3)],
        [f"round1|two|{i}" for i in range(3)],
        ["r2|three|0"],
    ]
    bodies = {body["messages"][-1]["content"]: body for body in fake_server.bodies}
    assert bodies["one"] == {
        "model": "base-model",
        "messages": chat("one"),
        "n": 3,
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 20,
        "seed": reqs[0].seed,
        "presence_penalty": 0.1,
    }
    assert bodies["three"]["top_k"] == 3 and "presence_penalty" not in bodies["three"]
    assert all(h.get("Authorization") == "Bearer sekrit" for h in fake_server.headers)
    assert b.describe()["base_url"] == fake_server.url


def test_openai_reasoning_models_get_max_completion_tokens_and_no_sampling_settings(fake_server):
    # o1 and o3-mini refuse max_tokens, temperature and top_p (HTTP 400, not retried)
    b = make_backend(
        {
            "name": "openai",
            "base_url": fake_server.url,
            "model": "o3-mini",
            "retries": 0,
            "reasoning_model": True,
        }
    )
    sp = SamplingParams(temperature=0.0, top_p=0.95, top_k=20, max_new_tokens=4096, presence_penalty=1.5)
    assert b.generate([GenerationRequest(chat("q"), sp)]) == [["o3-mini|q|0"]]
    (body,) = fake_server.bodies
    assert set(body) == {"model", "messages", "n", "max_completion_tokens", "seed"}
    assert body["max_completion_tokens"] == 4096
    assert b.describe()["reasoning_model"] is True
    assert (
        "reasoning_model"
        not in make_backend({"name": "openai", "base_url": fake_server.url, "model": "m"}).describe()
    )
    with pytest.raises(UserError, match="reasoning_model must be true or false"):
        make_backend({"name": "openai", "base_url": fake_server.url, "model": "m", "reasoning_model": "yes"})


def test_a_served_reasoning_model_reaches_the_backend_as_one():
    from selfplay.pipeline.evaluate import other_backend_config

    cfg = {"backend": {"name": "vllm"}, "model": {"name": "x"}}
    other = {
        "tag": "o1",
        "model": "o1-2024-12-17",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "K",
    }
    assert "reasoning_model" not in other_backend_config(cfg, other)["backend"]
    assert other_backend_config(cfg, {**other, "reasoning": True})["backend"]["reasoning_model"] is True


def test_a_request_a_server_refuses_for_its_length_is_cut_to_the_room_left_or_recorded(fake_server):
    """OpenAI's refusal names the context and the prompt's tokens: a prompt that leaves
    room is asked again with that room as its budget; one that leaves none, or a refusal
    without numbers, is not generated and its reason is given; the batch's other requests
    are generated either way (the real vLLM server: tests/test_vllm_server.py)."""
    from selfplay.llm.recording import generate_fitting

    b = make_backend({"name": "openai", "base_url": fake_server.url, "model": "ctx-openai", "retries": 0})
    words = lambda n: chat(" ".join(["w"] * n))  # noqa: E731
    requests = [
        GenerationRequest(words(10), SamplingParams(max_new_tokens=20)),  # fits
        GenerationRequest(words(70), SamplingParams(max_new_tokens=50)),  # 30 tokens of room
        GenerationRequest(words(120), SamplingParams(max_new_tokens=5)),  # over the context
    ]
    outputs, unfit = generate_fitting(b, requests)
    assert unfit == [None, None, "prompt_too_long: 120 prompt tokens leave no room in the 100-token context"]
    assert outputs[0] and outputs[1] and outputs[2] == [""]
    budgets = sorted(
        (len(body["messages"][-1]["content"].split()), body["max_tokens"]) for body in fake_server.bodies
    )
    assert budgets == [(10, 20), (70, 30), (70, 50), (120, 5)], budgets  # asked again with the room left
    bare = make_backend({"name": "openai", "base_url": fake_server.url, "model": "ctx-bare", "retries": 0})
    outputs, unfit = generate_fitting(bare, requests[:2])
    assert outputs == [outputs[0], [""]] and unfit == [
        None,
        "prompt_too_long: the server refused it: Input is too long for this model.",
    ]
    with pytest.raises(UserError, match="Input is too long for this model"):
        bare.generate(requests[1:2])


def test_openai_backend_http_errors_are_user_errors(fake_server):
    b = make_backend({"name": "openai", "base_url": fake_server.url, "model": "broken", "retries": 0})
    with pytest.raises(UserError, match="HTTP 400"):
        b.generate([GenerationRequest(chat("x"))])
    dead = make_backend(
        {"name": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "retries": 0, "timeout": 2}
    )
    with pytest.raises(UserError, match="failed"):
        dead.generate([GenerationRequest(chat("x"))])
