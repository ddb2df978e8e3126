"""Which model an evaluation job loads for a trained policy (paper 002 Table 3 scores
GRPO policies that are fully fine-tuned: the trained folder is the model itself, not a
LoRA adapter over the base model, which is how evaluation used to load every policy)."""

from __future__ import annotations

import pytest

from selfplay.errors import UserError
from selfplay.pipeline import evaluate
from selfplay.pipeline.agents import TRAINING_RECORD, resolve_policy
from selfplay.records import write_json, write_jsonl


def _trained(folder, *files, trained=True, use_adapter=None, finetune="lora"):
    folder.mkdir()
    write_json(
        folder / TRAINING_RECORD, {"trained": trained, "use_adapter": use_adapter, "finetune": finetune}
    )
    for name in files:
        (folder / name).write_text("{}")
    return str(folder)


def test_a_full_model_replaces_the_base_and_an_adapter_goes_over_it(tmp_path):
    full = _trained(tmp_path / "full", "config.json", "model.safetensors", finetune="full")
    lora = _trained(tmp_path / "lora", "adapter_config.json")
    sft = _trained(
        tmp_path / "sft", "adapter_config.json", finetune=None
    )  # SFT records name no finetune: LoRA
    assert resolve_policy("base", full) == (full, None)
    assert resolve_policy("base", lora) == ("base", lora)
    assert resolve_policy("base", sft) == ("base", sft)
    assert resolve_policy("base", None) == ("base", None)
    skipped = _trained(tmp_path / "skipped", trained=False, use_adapter=None)  # nothing to train on: the base
    assert resolve_policy("base", skipped) == ("base", None)
    replayed = _trained(
        tmp_path / "replayed", finetune="full"
    )  # a bundle restores the record, not the weights
    assert resolve_policy("base", replayed) == (replayed, None)
    with pytest.raises(UserError, match="did not finish"):
        resolve_policy("base", str(tmp_path / "nowhere"))


def test_the_evaluation_job_loads_a_fully_fine_tuned_policy_as_its_model(tmp_path, monkeypatch):
    seen = {}

    def fake_generate(cfg, model_dir, requests, metas, out, what):
        seen["model_dir"], seen["adapters"] = model_dir, {r.adapter for r in requests}
        write_jsonl(out, [])

    monkeypatch.setattr(evaluate, "generate_to_file", fake_generate)
    monkeypatch.setattr(evaluate, "items_for", lambda cfg, tag, items, other: items)
    monkeypatch.setattr(
        evaluate,
        "eval_request",
        lambda cfg, name, mode, tag, item, adapter: type("R", (), {"adapter": adapter})(),
    )
    items = tmp_path / "items.jsonl"
    write_jsonl(items, [{"id": "HumanEval/0"}])
    full = _trained(tmp_path / "grpo_r1", "config.json", finetune="full")
    evaluate.generate(
        {}, "humaneval", "direct", "grpo_r1", str(items), "base-model", full, str(tmp_path / "o.jsonl")
    )
    assert seen == {"model_dir": full, "adapters": {None}}
