"""LoRA SFT through TRL + PEFT, on the real SmolLM2-135M-Instruct (no mocks).

Training runs are kept to a handful of optimizer steps on sequences of ~30-70
tokens; on a busy 2-core machine each micro-batch still costs a few seconds.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from selfplay.errors import UserError
from selfplay.train import TrainingSkipped, train_lora_sft
from selfplay.train.sft import RECORD_NAME, build_sft_trainer, label_token_counts

# PEFT's loader reads a renamed transformers attribute; the notice is not about this code.
pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing.*:FutureWarning")

SYSTEM = {"role": "system", "content": "You are a concise assistant."}


def _simple(i: int) -> dict:
    return {
        "prompt": [SYSTEM, {"role": "user", "content": f"Name the colour number {i}."}],
        "completion": [{"role": "assistant", "content": ["Red.", "Green.", "Blue.", "Yellow."][i % 4]}],
    }


# A "difficulty prediction" example: the prompt already holds an assistant turn (the
# solution), and only the second assistant message (the rating) should carry loss.
FIRST_ANSWER = "def add(a, b):\n    return a + b"
FINAL_ANSWER = "Difficulty: 2 out of 10."
TWO_TURN = {
    "prompt": [
        SYSTEM,
        {"role": "user", "content": "Write a function add(a, b)."},
        {"role": "assistant", "content": FIRST_ANSWER},
        {"role": "user", "content": "How hard was that, from 1 to 10?"},
    ],
    "completion": [{"role": "assistant", "content": FINAL_ANSWER}],
}

FAST = {"max_length": 256, "grad_accum": 1, "max_steps": 1}


# --------------------------------------------------------------------------- cheap input checks


def test_empty_examples_skip_training(tmp_path):
    with pytest.raises(TrainingSkipped, match="no training examples"):
        train_lora_sft("unused-model", [], str(tmp_path / "out"), {}, seed=0)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({"completion": [{"role": "assistant", "content": "x"}]}, "missing 'prompt'"),
        ({"prompt": [SYSTEM, {"role": "user", "content": "q"}]}, "missing 'completion'"),
        (
            {"prompt": "just text", "completion": [{"role": "assistant", "content": "x"}]},
            "list of chat messages",
        ),
        ({"prompt": [{"role": "user", "content": "q"}], "completion": []}, "exactly one assistant message"),
        (
            {
                "prompt": [{"role": "user", "content": "q"}],
                "completion": [{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}],
            },
            "exactly one assistant message",
        ),
        (
            {"prompt": [{"role": "user", "content": "q"}], "completion": [{"role": "user", "content": "a"}]},
            "role 'assistant'",
        ),
        (
            {
                "prompt": [{"role": "user", "content": "q"}],
                "completion": [{"role": "assistant", "content": "  "}],
            },
            "non-empty",
        ),
        (
            {
                "prompt": [{"role": "user", "content": ""}],
                "completion": [{"role": "assistant", "content": "a"}],
            },
            "non-empty",
        ),
        (
            {
                "prompt": [{"role": "robot", "content": "q"}],
                "completion": [{"role": "assistant", "content": "a"}],
            },
            "role 'robot'",
        ),
        (
            {
                "prompt": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                "completion": [{"role": "assistant", "content": "b"}],
            },
            "must end with a user message",
        ),
        ("not an object", "expected an object"),
    ],
)
def test_malformed_example_names_its_index(tmp_path, bad, fragment):
    with pytest.raises(UserError) as info:
        train_lora_sft("unused-model", [_simple(0), bad], str(tmp_path / "out"), {}, seed=0)
    message = str(info.value)
    assert "example 1" in message
    assert fragment in message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "settings, key",
    [
        ({"lora_rank": 8}, "lora_rank"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"lora_r": 0}, "lora_r"),
        ({"batch_size": 1.5}, "batch_size"),
        ({"max_steps": 0}, "max_steps"),
        ({"lr_scheduler": "zigzag"}, "lr_scheduler"),
        ({"dtype": "float8"}, "dtype"),
        ({"target_modules": []}, "target_modules"),
        ({"warmup_ratio": 1.0}, "warmup_ratio"),
        ({"gradient_checkpointing": "yes"}, "gradient_checkpointing"),
        ({"epochs": True}, "epochs"),
    ],
)
def test_bad_setting_is_named(tmp_path, settings, key):
    with pytest.raises(UserError, match=key):
        train_lora_sft("unused-model", [_simple(0)], str(tmp_path / "out"), settings, seed=0)


def test_bad_seed_and_foreign_output_folder_are_refused(tmp_path):
    with pytest.raises(UserError, match="seed"):
        train_lora_sft("unused-model", [_simple(0)], str(tmp_path / "out"), {}, seed="7")
    foreign = tmp_path / "precious"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(UserError, match="refusing to overwrite"):
        train_lora_sft("unused-model", [_simple(0)], str(foreign), {}, seed=0)
    assert (foreign / "notes.txt").read_text() == "keep me"


# --------------------------------------------------------------------------- loss mask


@pytest.mark.slow
def test_only_the_final_assistant_message_carries_loss(tiny_model_dir, tmp_path):
    """Inspect the tokenized dataset and the collated batch that the trainer really uses."""
    trainer, resolved = build_sft_trainer(
        str(tiny_model_dir), [TWO_TURN, _simple(1)], tmp_path / "scratch", FAST, 0
    )
    tok = trainer.processing_class
    assert resolved["gradient_checkpointing"] is False and resolved["bf16"] is False  # CPU defaults

    row = trainer.train_dataset[0]
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(len(trainer.train_dataset))])
    labels = batch["labels"][0]
    input_ids = batch["input_ids"][0]
    learned = labels[labels != -100].tolist()

    # The model's raw text and the end-of-sequence token ("<|im_end|>" for this model) are
    # learned, so the model learns to stop. Nothing before the final answer is.
    expected = tok(FINAL_ANSWER, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    assert learned == expected
    assert tok.decode(learned) == FINAL_ANSWER + "<|im_end|>"
    assert len(learned) == label_token_counts(trainer)[0]
    assert sum(1 for t in row["labels"] if t != -100) == len(learned)

    # The masked tokens are exactly the whole prompt, earlier assistant answer included,
    # and the learned tokens form one contiguous block at the end of the real sequence.
    n_real = int(batch["attention_mask"][0].sum())
    first = int((labels != -100).nonzero()[0])
    assert (labels[first:n_real] != -100).all() and (labels[:first] == -100).all()
    prompt_text = tok.decode(input_ids[:first].tolist())
    assert FIRST_ANSWER in prompt_text
    assert prompt_text.endswith("<|im_start|>assistant\n")
    assert FINAL_ANSWER not in prompt_text
    # Padding (the shorter second example is padded to the first one's length) never carries loss.
    second = batch["labels"][1]
    n_real_2 = int(batch["attention_mask"][1].sum())
    assert (second[n_real_2:] == -100).all()
    assert tok.decode(second[second != -100].tolist()) == "Green.<|im_end|>"


# A chat template in the style of DeepSeek-R1's: an assistant turn keeps only what follows
# "</think>". Rendering completions through it would lose the reasoning.
REASONING_STRIPPING_TEMPLATE = (
    "{% for m in messages %}"
    "{% set content = m['content'] %}"
    "{% if m['role'] == 'assistant' and '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}"
    "<|im_start|>{{ m['role'] }}\n{{ content }}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.mark.slow
def test_the_trained_text_is_the_raw_output_even_with_a_reasoning_stripping_template(
    tiny_model_dir, tmp_path
):
    """Paper 000 trains on the reasoning: a template that drops it must not change what is learned."""
    import json
    import shutil

    model = tmp_path / "r1_style_model"
    shutil.copytree(tiny_model_dir, model, ignore=shutil.ignore_patterns("*.safetensors"))
    for weights in Path(tiny_model_dir).glob("*.safetensors"):
        (model / weights.name).symlink_to(weights)
    tok_cfg = json.loads((model / "tokenizer_config.json").read_text())
    tok_cfg["chat_template"] = REASONING_STRIPPING_TEMPLATE
    (model / "tokenizer_config.json").write_text(json.dumps(tok_cfg))
    (model / "chat_template.jinja").unlink(missing_ok=True)

    raw = "<think>\nP doubles x; Q adds x to itself, so they agree.\n</think>\nEquivalent: Yes"
    example = {
        "prompt": [{"role": "user", "content": "Are P and Q equivalent?"}],
        "completion": [{"role": "assistant", "content": raw}],
    }
    trainer, _ = build_sft_trainer(str(model), [example], tmp_path / "scratch", FAST, 0)
    tok = trainer.processing_class
    rendered = tok.apply_chat_template(example["prompt"] + example["completion"], tokenize=False)
    assert "P doubles x" not in rendered  # the template really strips the reasoning
    labels = trainer.data_collator([trainer.train_dataset[0]])["labels"][0]
    assert tok.decode(labels[labels != -100].tolist()) == raw + tok.eos_token


# --------------------------------------------------------------------------- real training


@pytest.fixture(scope="module")
def trained(tiny_model_dir, tmp_path_factory):
    """Four examples, two optimizer steps on padded batches of two."""
    out = tmp_path_factory.mktemp("sft") / "adapter"
    examples = [_simple(i) for i in range(3)] + [TWO_TURN]
    settings = {"max_length": 256, "batch_size": 2, "grad_accum": 1, "max_steps": 2, "learning_rate": 5e-4}
    record = train_lora_sft(str(tiny_model_dir), examples, str(out), settings, seed=11)
    return out, record, examples


@pytest.mark.slow
def test_training_writes_adapter_and_record(trained, tiny_model_dir):
    out, record, examples = trained
    for name in ("adapter_config.json", "adapter_model.safetensors", RECORD_NAME):
        assert (out / name).is_file(), name
    # No staging or scratch folders are left beside the result.
    assert sorted(p.name for p in out.parent.iterdir()) == ["adapter"]

    on_disk = json.loads((out / RECORD_NAME).read_text())
    assert on_disk == record
    assert record["n_examples"] == record["n_train_examples"] == len(examples)
    assert record["n_dropped_examples"] == 0
    assert record["steps"] == 2
    assert record["seed"] == 11
    assert record["base_model"] == str(tiny_model_dir)
    # Each simple completion is a couple of word tokens + "<|im_end|>\n"; the two-turn one a few more.
    assert 4 * 3 <= record["n_label_tokens"] <= 40
    assert record["n_label_tokens"] < record["n_tokens"]
    assert [h["step"] for h in record["loss_history"]] == [1, 2]
    for key in ("final_train_loss", "mean_train_loss"):
        assert math.isfinite(record[key]) and 0 < record[key] < 20
    assert record["seconds"] >= record["train_seconds"] > 0
    assert record["seconds_per_step"] > 0
    assert record["device"] == "cpu"
    assert set(record["libraries"]) >= {"torch", "transformers", "peft", "trl"}
    settings = record["settings"]
    assert settings["lora_r"] == 16 and settings["lora_alpha"] == 32
    assert settings["learning_rate"] == 5e-4 and settings["batch_size"] == 2 and settings["grad_accum"] == 1
    assert settings["gradient_checkpointing"] is False and settings["bf16"] is False
    assert settings["target_modules"] == [
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    ]

    from selfplay.records import sha256_tree

    adapter_only = out.parent / "hash-check"
    adapter_only.mkdir()
    try:
        for name in record["adapter_files"]:
            os.link(out / name, adapter_only / name)
        assert sha256_tree(adapter_only) == record["adapter_sha256"]
    finally:
        for p in adapter_only.iterdir():
            p.unlink()
        adapter_only.rmdir()

    config = json.loads((out / "adapter_config.json").read_text())
    assert config["r"] == 16 and config["peft_type"] == "LORA"
    # Sorted, so that identical trainings in different processes hash alike (PEFT saves a set).
    assert config["target_modules"] == sorted(settings["target_modules"])


@pytest.mark.slow
def test_adapter_loads_and_changes_the_logits(trained, tiny_model_dir):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out, _, _ = trained
    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    text = tok.apply_chat_template(_simple(2)["prompt"], tokenize=False, add_generation_prompt=True)
    ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"]

    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir)).eval()
    with torch.no_grad():
        before = base(input_ids=ids).logits
    tuned = PeftModel.from_pretrained(base, str(out)).eval()
    with torch.no_grad():
        after = tuned(input_ids=ids).logits
        with tuned.disable_adapter():
            disabled = tuned(input_ids=ids).logits
    assert torch.allclose(disabled, before, atol=1e-5)  # same base underneath
    assert (after - before).abs().max().item() > 1e-3


@pytest.mark.slow
def test_retraining_replaces_a_previous_result(tiny_model_dir, tmp_path):
    """A second run into the same folder replaces it; same seed and data -> the same adapter."""
    out = tmp_path / "again"
    examples = [_simple(0)]
    first = train_lora_sft(str(tiny_model_dir), examples, str(out), FAST, seed=5)
    (out / "stale.txt").write_text("left by an earlier run")
    second = train_lora_sft(str(tiny_model_dir), examples, str(out), FAST, seed=5)
    assert not (out / "stale.txt").exists()
    assert second["adapter_sha256"] == first["adapter_sha256"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again"]


def _completion_loss(model, tok, example) -> float:
    """Mean cross-entropy of the completion tokens (the raw text, then end-of-sequence) given
    the templated prompt, computed independently of TRL and of our trainer."""
    import torch

    prompt_ids = tok.apply_chat_template(
        example["prompt"], tokenize=True, add_generation_prompt=True, return_dict=True
    )["input_ids"]
    completion = example["completion"][0]["content"]
    full_ids = list(prompt_ids) + tok(completion, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    ids = torch.tensor([full_ids])
    labels = ids.clone()
    labels[0, : len(prompt_ids)] = -100
    with torch.no_grad():
        return float(model(input_ids=ids, labels=labels).loss)


@pytest.mark.slow
def test_training_lowers_the_loss_of_the_target(tiny_model_dir, tmp_path):
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    example = {
        "prompt": [SYSTEM, {"role": "user", "content": "What is the secret word?"}],
        "completion": [{"role": "assistant", "content": "The secret word is marmalade-42."}],
    }
    settings = {
        "max_length": 128,
        "grad_accum": 1,
        "max_steps": 4,
        "learning_rate": 2e-3,
        "lora_dropout": 0.0,
        "lr_scheduler": "constant",
    }
    record = train_lora_sft(str(tiny_model_dir), [example], str(tmp_path / "learned"), settings, seed=3)
    losses = [h["loss"] for h in record["loss_history"]]
    assert len(losses) == 4
    assert losses[-1] < losses[0]

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir)).eval()
    before = _completion_loss(base, tok, example)
    # LoRA's B matrix starts at zero, so the first logged loss is the base model's loss.
    assert abs(losses[0] - before) < 0.05 * before + 1e-3
    tuned = PeftModel.from_pretrained(base, str(tmp_path / "learned")).eval()
    after = _completion_loss(tuned, tok, example)
    assert after < 0.7 * before, (before, after)


@pytest.mark.slow
def test_completions_truncated_away_are_a_user_error(tiny_model_dir, tmp_path):
    # TRL truncates from the end and drops examples left without a learned token;
    # if that empties the data set the run stops with an actionable message.
    with pytest.raises(UserError, match="raise max_length"):
        train_lora_sft(
            str(tiny_model_dir), [_simple(0), TWO_TURN], str(tmp_path / "out"), {"max_length": 16}, seed=0
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == []
