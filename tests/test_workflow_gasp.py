"""The GASP track's whole workflow through Snakemake with the real tiny model.

Everything is real: SmolLM2-135M proposes (format-constrained) and tries its own
proposals, the sandbox validates them under two seeds and judges the tries, the packaged
MiniLM checks novelty, LoRA updates on the recorded rollouts chain the policy states,
the benchmark layer scores the checkpoint, and every GASP table and figure is made.
Then the run is bundled and replayed without a model: every table byte for byte.
"""

from __future__ import annotations

import pytest
from workflow_helpers import (
    bundle_and_replay,
    default_config,
    jobs_run,
    run_snakemake,
    unpack_bundle,
    write_config,
)

from selfplay.records import read_json, read_jsonl

pytestmark = pytest.mark.slow
ROOT = "results/gasp/wf"
RUN = f"{ROOT}/gasp/s0/iter1"


@pytest.fixture(scope="module")
def gasp_run(tmp_path_factory, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("gasp_workflow")
    cfg = default_config()
    cfg["tracks"] = ["gasp"]
    cfg["model"] = {"name": "tiny", "source": "local", "path": str(tiny_model_dir)}
    g = cfg["gasp"]
    # two checkpoints, so that Table 3's selection has a choice to make
    g.update(experiment="wf", iterations=2, eval_every=1)
    g["teacher"].update(candidates_per_attempt=3, target_accepted=1, max_attempts=1)
    g["evaluation"]["greedy"]["benchmarks"] = ["livecodebench"]
    for name in ("livecodebench", "gasp_goalposts"):
        cfg["evaluation"]["benchmarks"][name].update(limit=1, max_new_tokens=48)
    cfg["evaluation"]["modes"]["gasp_sampled"].update(samples=2, pass_at_k=[1, 2])
    cfg["bundle"] = {"name": "gasptrip", "include_adapters": False, "report": False}
    write_config(workdir, cfg)
    proc = run_snakemake(workdir)
    return workdir, cfg, proc


def test_every_phase_ran_and_updated_the_policy(gasp_run):
    workdir, cfg, proc = gasp_run
    jobs = jobs_run(proc)
    assert jobs["gasp_teacher_phase"] == 4 and jobs["gasp_solver_phase"] == 2 and jobs["gasp_update"] == 6
    lemma = read_json(workdir / RUN / "lemma/phase.json")
    assert lemma["candidates"] == 3 and lemma["attempts"] == 1
    assert lemma["ended"] in ("target_reached", "attempts_spent")
    rows = read_jsonl(workdir / RUN / "lemma/candidates.jsonl")
    # every candidate has an outcome and the reward that outcome gives
    for row in rows:
        assert row["outcome"] in ("format_error", "invalid", "not_novel", "scored")
        if row["outcome"] == "format_error":
            assert row["reward"] == -1.0
        elif row["outcome"] != "scored" or not row["in_band"]:
            assert row["reward"] == -0.5
    # the lemma phase updated the policy on its rollouts: a LoRA state after one step
    state = read_json(workdir / RUN / "lemma/state/policy_state.json")
    assert state["finetune"] == "lora"
    record = read_json(workdir / RUN / "lemma/state/training_record.json")
    assert record["updates"][0]["partitions"]["lemma/teacher"]["completions"] == 3


def test_table3_evaluates_only_the_selected_checkpoint_greedily(gasp_run):
    """The paper's Table 3 reports greedy pass@1 at each seed's checkpoint with the best
    sampled pass@20 (here pass@2, the largest k of 2 samples): of the run's two evaluated
    checkpoints only the one its selection names is evaluated greedily, beside the base."""
    workdir, cfg, proc = gasp_run
    selection = read_json(workdir / ROOT / "gasp/s0/selection.json")
    values = {
        t: read_json(workdir / ROOT / f"eval/livecodebench/{t}/gasp_sampled.json").get("pass@2")
        for t in ("ck_gasp_s0_i1", "ck_gasp_s0_i2")
    }
    assert selection["rule"] == "pass@2" and selection["values"] == values
    best = max(v for v in values.values())
    assert selection["tag"] == next(t for t, v in values.items() if v == best)
    greedy = sorted(p.parent.name for p in (workdir / ROOT / "eval/livecodebench").glob("*/greedy.jsonl"))
    assert greedy == sorted(["base", selection["tag"]])
    assert jobs_run(proc)["gasp_selection"] == 1
    table3 = (workdir / "results/tables/gasp/table3.csv").read_text()
    assert f"s0:{selection['iteration']}" in table3


def test_the_tables_and_figures_are_made(gasp_run):
    workdir, *_ = gasp_run
    for t in ("table1", "table2", "table3", "table4", "yield"):
        assert (workdir / f"results/tables/gasp/{t}.md").stat().st_size > 0
    for fig in (3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14):
        assert (workdir / f"results/figures/gasp/figure{fig}.png").stat().st_size > 0
    yields = (workdir / "results/tables/gasp/yield.csv").read_text()
    assert "lemma" in yields and "solver" in yields
    table1 = (workdir / "results/tables/gasp/table1.md").read_text()
    assert "GASP" in table1 and "base" in table1


@pytest.fixture(scope="module")
def gasp_bundle(gasp_run, tmp_path_factory):
    return bundle_and_replay(gasp_run[0], "gasptrip", tmp_path_factory)


def test_bundle_holds_the_gasp_run(gasp_bundle, tmp_path):
    workdir, proc, _, _ = gasp_bundle
    assert jobs_run(proc)["bundle"] == 1
    _, kinds = unpack_bundle(workdir, "gasptrip", tmp_path)
    selected = read_json(workdir / ROOT / "gasp/s0/selection.json")["tag"]
    for rel, kind in [
        (f"{RUN}/lemma/teacher.jsonl", "recording"),
        (f"{RUN}/lemma/student.jsonl", "recording"),
        (f"{RUN}/lemma/candidates.jsonl", "verdict"),
        (f"{RUN}/solver/answers.jsonl", "verdict"),
        (f"{RUN}/lemma/state/training_record.json", "training-record"),
        (f"{ROOT}/eval/livecodebench/base/greedy.jsonl", "recording"),
        (f"{ROOT}/eval/livecodebench/{selected}/greedy.jsonl", "recording"),
        (f"{ROOT}/eval/livecodebench/{selected}/greedy.scored.jsonl", "verdict"),
        ("results/tables/gasp/yield.csv", "table"),
    ]:
        assert kinds.get(rel) == kind, rel


def test_bundle_replay_reproduces_the_gasp_tables_without_a_model(gasp_bundle):
    workdir, _, out, replay = gasp_bundle
    assert replay.returncode == 0, replay.stdout + replay.stderr + (out / "snakemake.log").read_text()[-5000:]
    tables = read_json(out / "bundle/gasptrip/bundle.json")["tables"]
    assert "results/tables/gasp/table1.md" in tables and "results/tables/gasp/yield.md" in tables
    assert f"REPRODUCED: all {len(tables)} tables are byte-identical" in replay.stdout
    assert "prepare_model" not in (out / "snakemake.log").read_text()
