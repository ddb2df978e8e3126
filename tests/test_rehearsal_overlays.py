"""The rehearsal overlays (config/rehearsals/*.yaml, issue 19) and their checker.

Each shipped overlay touches only model, count, device, experiment and fixture keys
(selfplay.config.rehearsal), and the paper config with it on top is a valid config; the
checker refuses a key that is a setting of the paper's, naming it. The rehearsals
themselves (the runs) are tests/test_rehearsal_<paper>.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_config_loading import load_as_snakemake

from selfplay.config import prepare_config
from selfplay.config.rehearsal import check_overlay, classify, leaves
from selfplay.errors import UserError

REPO = Path(__file__).resolve().parents[1]
OVERLAYS = REPO / "config" / "rehearsals"
# the paper config files -> the rehearsal overlays laid over them (a regime: the E0 files first)
SHIPPED = {
    ("sinq.yaml",): ("sinq.yaml",),
    ("seq.yaml",): ("seq.yaml",),
    ("seq.yaml", "seq_e1.yaml"): ("seq.yaml", "seq_e1.yaml"),
    ("seq.yaml", "seq_e2.yaml"): ("seq.yaml", "seq_e2.yaml"),
    ("seq.yaml", "seq_e3.yaml"): ("seq.yaml", "seq_e3.yaml"),
}
IDS = ["+".join(Path(p).stem for p in papers) for papers in SHIPPED]


# (papers 002 and 003 check theirs, with their per-paper allowances, in their rehearsals' tests)
@pytest.mark.parametrize("overlay", sorted({o for overlays in SHIPPED.values() for o in overlays}))
def test_each_shipped_overlay_changes_only_allowed_kinds_of_keys(overlay):
    over = yaml.safe_load((OVERLAYS / overlay).read_text())
    kinds = {c.kind for c in check_overlay(over, name=overlay)}
    if "model" in over:  # a paper's own overlay, not a regime's
        assert "count" in kinds and "device" in kinds
        # papers 000 and 001 use Qwen2-family models: the tiny random model of that family,
        # at the run-relative folder tests/rehearsal.py (and a user) writes it to
        assert over["model"] == {
            "name": "tiny-qwen2",
            "source": "local",
            "path": "resources/tiny-models/qwen2",
        }


@pytest.mark.parametrize("papers", SHIPPED, ids=IDS)
def test_each_paper_config_with_its_overlay_is_a_valid_config(papers):
    paper_files = tuple(f"config/papers/{p}" for p in papers)
    files = (*paper_files, *(f"config/rehearsals/{o}" for o in SHIPPED[papers]))
    cfg = prepare_config(load_as_snakemake(files), "resources/tiny-models/qwen2")
    paper = load_as_snakemake(paper_files)
    over = load_as_snakemake(tuple(f"config/rehearsals/{o}" for o in SHIPPED[papers]))
    # what the overlay does not name is the paper's, e.g. the engine and the LoRA settings
    assert cfg["backend"]["name"] == paper["backend"]["name"] == "vllm"
    assert cfg["backend"]["max_lora_rank"] == paper["backend"]["max_lora_rank"]
    for track in paper["tracks"]:
        train = cfg[track]["training"]["alice"]
        assert train["lora_r"] == paper[track]["training"]["alice"]["lora_r"]
        assert train["target_modules"] == paper[track]["training"]["alice"]["target_modules"]
        assert cfg[track]["experiment"] == over[track]["experiment"] != paper[track]["experiment"]


@pytest.mark.parametrize(
    "key, kind",
    [
        ("model", "model"),
        ("seq.translate.model", "model"),
        ("sinq.benchmarks.other_models", "model"),
        ("sinq.rounds", "count"),
        ("sinq.bob.samples", "count"),
        ("evaluation.modes.majority.samples", "count"),
        ("sinq.alice.sampling.max_new_tokens", "count"),
        ("evaluation.benchmarks.pysecdb.limit", "count"),
        ("backend.device", "device"),
        ("sinq.training.alice.dtype", "device"),
        ("resources.generate.gpu", "device"),
        ("seq.translate.backend.engine_kwargs.tensor_parallel_size", "device"),
        ("sinq.verify.workers", "device"),
        ("sinq.experiment", "experiment"),
        ("evaluation.benchmarks.pysecdb.path", "data"),
        ("sinq.sources.dataset", "data"),
        # the paper's own settings
        ("backend.name", None),
        ("sinq.training.alice.lora_r", None),
        ("sinq.alice.sampling.temperature", None),
        ("sinq.curriculum.hard_threshold", None),
        ("evaluation.modes.cot.cot", None),
        ("seq.game.seq_probability", None),
        ("sinq.training.alice.learning_rate", None),
        ("evaluation.check.benchmarks", None),
    ],
)
def test_keys_are_classified_by_kind(key, kind):
    assert classify(key).kind == kind


def test_a_paper_setting_in_an_overlay_is_refused_naming_the_key():
    with pytest.raises(UserError, match=r"demo: key sinq\.training\.alice\.lora_r is not a model"):
        check_overlay({"sinq": {"rounds": 1, "training": {"alice": {"lora_r": 4}}}}, name="demo")
    with pytest.raises(UserError, match=r"key backend\.name .* and 1 more"):
        check_overlay({"backend": {"name": "transformers", "max_lora_rank": 4}})
    with pytest.raises(UserError, match="non-empty mapping"):
        check_overlay({})
    # a per-paper allowance names the key and says why
    changes = check_overlay({"backend": {"max_lora_rank": 4}}, extra={"backend.max_lora_rank": "why"})
    assert [(c.key, c.kind, c.reason) for c in changes] == [("backend.max_lora_rank", "extra", "why")]


def test_a_model_mapping_is_one_leaf():
    assert leaves({"model": {"name": "x", "source": "hf"}, "sinq": {"bob": {"samples": 2}}}) == [
        "model",
        "sinq.bob.samples",
    ]
