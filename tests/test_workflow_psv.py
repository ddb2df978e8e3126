"""The PSV track's whole workflow on recorded (hand-written) solver answers.

Iteration 0's solver answers are written here (some verify, some do not); every other
request replays as an empty answer. Everything after generation runs for real: real
Dafny 2.3 checks the shipped problems, screens and verifies every sample, RFT trains
theta_1 with LoRA on the tiny model from the verified solutions, the proposer's (empty)
answers are refused with their reason, and the tables, figures, bundle and its replay
without a model are made. The real model's own PSV answers are exercised by `make run`.
"""

from __future__ import annotations

import json

import pytest
import yaml
from workflow_helpers import (
    bundle_and_replay,
    default_config,
    jobs_run,
    run_snakemake,
    unpack_bundle,
    write_config,
)

from selfplay.dafny.runner import dafny_available
from selfplay.data.dafny_problems import load_problems
from selfplay.records import read_json, read_jsonl, write_jsonl
from selfplay.tracks.psv.game import solve_request

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not dafny_available(),
        reason=("Dafny 2.3 and z3 4.8.5 are missing (scripts/install_system_test.sh installs them)"),
    ),
]
RUN = "results/psv/wf/transfer"

# iteration 0's two samples per seed problem: a verified body or a wrong one
GOOD = {
    "AddOne": "{\n  y := x + 1;\n}\n",
    "DoubleValue": "{\n  y := x + x;\n}\n",
    "Negate": "{\n  y := 0 - x;\n}\n",
    "MinOfTwo": "{\n  if a <= b {\n    m := a;\n  } else {\n    m := b;\n  }\n}\n",
}
BAD = {"AddOne": "{\n  y := x;\n}\n", "MinOfTwo": "{\n  m := a;\n}\n", "Negate": "{\n  assume false;\n}\n"}
SAMPLES = {
    "AddOne": ("good", "bad"),
    "DoubleValue": ("good", "good"),
    "MinOfTwo": ("bad", "bad"),
    "Negate": ("bad", "good"),
}
CLASSES = {"AddOne": "MEDIUM", "DoubleValue": "EASY", "MinOfTwo": "IMPOSSIBLE", "Negate": "MEDIUM"}


def scenario(workdir, model_dir) -> dict:
    cfg = default_config()
    cfg["tracks"] = ["psv"]
    cfg["model"] = {"name": "tiny", "source": "local", "path": str(model_dir)}
    rec_file = workdir / "recordings.jsonl"
    cfg["backend"] = {"name": "replay", "files": [str(rec_file)], "on_missing": "empty"}
    psv = cfg["psv"]
    psv.update(experiment="wf", iterations=2)
    psv["problem_sets"]["eval"]["count"] = 2
    psv["solve"]["samples"] = 2
    psv["propose"]["budget"] = 2
    psv["evaluation"].update(samples=2, ks=[1, 2])
    psv["training"] = {
        "solver": {
            "lora_r": 4,
            "lora_alpha": 8,
            "max_steps": 1,
            "batch_size": 1,
            "grad_accum": 1,
            "max_length": 512,
        }
    }
    cfg["bundle"] = {"name": "psvtrip", "include_adapters": False, "report": False}
    seed = [p for p in load_problems("seed") if p["difficulty"] == "trivial"]
    assert {p["target"] for p in seed} == set(SAMPLES)
    recs = []
    for p in seed:
        req = solve_request(
            cfg, p, "base/seed1", 2, psv["solve"]["sampling"], None, psv["solve"]["answer_format"]
        )
        bodies = [(GOOD if kind == "good" else BAD)[p["target"]] for kind in SAMPLES[p["target"]]]
        # psv.solve.completion: body (the default): the answer is the body; the spec is put in front
        recs.append({"key": req.key, "outputs": [f"```dafny\n{b}```" for b in bodies]})
    write_jsonl(rec_file, recs)
    return cfg


@pytest.fixture(scope="module")
def psv_run(tmp_path_factory, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("psv_workflow")
    cfg = scenario(workdir, tiny_model_dir)
    write_config(workdir, cfg)
    proc = run_snakemake(workdir)
    return workdir, cfg, proc


def test_every_step_ran(psv_run):
    _, _, proc = psv_run
    jobs = jobs_run(proc)
    # solving: base at iteration 0, then rft and psv at iteration 1; proposals only for psv
    assert jobs["psv_solve"] == 3 and jobs["psv_propose"] == 1 and jobs["psv_grow_pool"] == 1
    # theta_1 is shared by rft and psv (same training set), theta_2 is each method's own
    assert jobs["psv_train_solver"] == 3
    # base, fewshot, theta_1, and theta_2 of rft and of psv
    assert jobs["psv_eval_generate"] == 5 and jobs["psv_problem_set"] == 2


def test_samples_are_verified_by_real_dafny_and_classed_by_pass_rate(psv_run):
    workdir, _, _ = psv_run
    rows = {r["name"]: r for r in read_jsonl(workdir / RUN / "base/seed1/iter0/solutions.jsonl")}
    by_target = {r["spec"].split("(")[0].split()[-1]: r for r in rows.values()}
    for target, kinds in SAMPLES.items():
        row = by_target[target]
        assert [s["verified"] for s in row["samples"]] == [k == "good" for k in kinds], target
        assert row["difficulty"] == CLASSES[target]
    negate = by_target["Negate"]["samples"][0]
    assert negate["reason"].startswith("screen:") and "assume" in negate["reason"]
    double = by_target["DoubleValue"]
    # the model wrote the body; the spec + body is what Dafny verified
    assert double["samples"][0]["answer"] == GOOD["DoubleValue"]
    assert double["samples"][0]["solution"] == double["spec"] + GOOD["DoubleValue"]


def test_rft_trains_theta1_on_one_verified_solution_per_problem(psv_run):
    workdir, _, _ = psv_run
    train = read_jsonl(workdir / RUN / "base/seed1/model1/train_solver.jsonl")
    assert len(train) == 3 and all(r["verified"] for r in train)
    record = read_json(workdir / RUN / "base/seed1/model1/adapter/training_record.json")
    assert record["trained"] and record["n_examples"] == 3
    # iteration 1 solved with theta_1; its answers replay empty, so theta_2 has nothing to learn
    solve1 = read_jsonl(workdir / RUN / "psv/seed1/iter1/solve.jsonl")
    assert all(g["meta"]["adapter_dir"].endswith("base/seed1/model1/adapter") for g in solve1)
    assert read_json(workdir / RUN / "psv/seed1/model2/adapter/training_record.json")["trained"] is False


def test_proposals_are_refused_with_reasons_and_the_pool_keeps_the_seed_set(psv_run):
    workdir, _, _ = psv_run
    proposals = read_jsonl(workdir / RUN / "psv/seed1/iter0/proposals.jsonl")
    assert len(proposals) == 2 and all(p["reason"] == "parse:empty_output" for p in proposals)
    gens = read_jsonl(workdir / RUN / "psv/seed1/iter0/propose.jsonl")
    assert {g["meta"]["target"] for g in gens} <= {"EASY", "MEDIUM", "HARD", "IMPOSSIBLE"}
    assert all("Problem 1: " in g["messages"][-1]["content"] for g in gens)  # labelled examples
    assert len(read_jsonl(workdir / RUN / "psv/seed1/iter1/pool.jsonl")) == 4


def test_tables_and_figures(psv_run):
    workdir, _, _ = psv_run
    yield_rows = (workdir / "results/tables/psv/yield.csv").read_text().splitlines()
    header = yield_rows[0].split(",")
    psv0 = dict(zip(header, next(r for r in yield_rows if r.startswith("transfer,psv,1,0,")).split(",")))
    assert (psv0["pool"], psv0["easy"], psv0["medium"], psv0["impossible"]) == ("4", "1", "2", "1")
    assert (psv0["verified samples"], psv0["proposed"], psv0["parsed"]) == ("4", "2", "0")
    table1 = (workdir / "results/tables/psv/table1.md").read_text()
    for method in ("base", "fewshot", "rft", "psv"):
        assert f"| {method} " in table1
    assert "0.00" in table1  # replayed-empty evaluation answers verify nothing
    for fig in ("figure1", "figure4"):
        assert (workdir / f"results/figures/psv/{fig}.png").stat().st_size > 0
    fewshot = read_jsonl(workdir / RUN / "fewshot/seed1/model0/eval_eval/generations.jsonl")
    assert fewshot and all(
        g["meta"]["exemplars"] == 3 for g in fewshot
    )  # the base model's verified solutions
    # shown as they were written: bodies, in the body format's prompt
    assert all(m["content"].startswith("```dafny\n{") for g in fewshot for m in g["messages"][2::2])


def test_a_changed_setting_reruns_only_what_uses_it(psv_run):
    workdir, cfg, _ = psv_run
    assert "Nothing to be done" in run_snakemake(workdir, "-n").stdout
    changed = json.loads(json.dumps(cfg))
    changed["psv"]["evaluation"]["ks"] = [1]
    write_config(workdir, changed)
    try:
        jobs = jobs_run(run_snakemake(workdir, "-n"))
    finally:
        write_config(workdir, cfg)
    assert set(jobs) - {"total", "all"} == {"psv_method_table", "psv_figures"}


@pytest.fixture(scope="module")
def psv_bundle(psv_run, tmp_path_factory):
    return bundle_and_replay(psv_run[0], "psvtrip", tmp_path_factory)


def test_bundle_holds_the_psv_run(psv_bundle, tmp_path):
    workdir, proc, _, _ = psv_bundle
    assert jobs_run(proc)["bundle"] == 1
    root, kinds = unpack_bundle(workdir, "psvtrip", tmp_path)
    for rel, kind in [
        (f"{RUN}/base/seed1/iter0/solve.jsonl", "recording"),
        (f"{RUN}/psv/seed1/iter0/propose.jsonl", "recording"),
        (f"{RUN}/base/seed1/model0/eval_eval/generations.jsonl", "recording"),
        (f"{RUN}/base/seed1/iter0/solutions.jsonl", "verdict"),
        (f"{RUN}/psv/seed1/iter0/proposals.jsonl", "verdict"),
        (f"{RUN}/base/seed1/model1/train_solver.jsonl", "trainset"),
        (f"{RUN}/base/seed1/model1/adapter/training_record.json", "training-record"),
        ("results/psv/wf/problems/seed.jsonl", "input-data"),
        ("results/tables/psv/table1.csv", "table"),
        ("results/figures/psv/figure1.png", "figure"),
    ]:
        assert kinds.get(rel) == kind, rel
    assert yaml.safe_load((root / "config.yaml").read_text())["psv"]["experiment"] == "wf"


def test_bundle_replay_reproduces_the_psv_tables_without_a_model(psv_bundle):
    workdir, _, out, replay = psv_bundle
    assert replay.returncode == 0, replay.stdout + replay.stderr + (out / "snakemake.log").read_text()[-5000:]
    tables = read_json(out / "bundle/psvtrip/bundle.json")["tables"]
    assert "results/tables/psv/table1.md" in tables and "results/tables/psv/yield.csv" in tables
    assert f"REPRODUCED: all {len(tables)} tables are byte-identical" in replay.stdout
    for table in tables:
        assert (out / "work" / table).read_bytes() == (workdir / table).read_bytes(), table
    assert "prepare_model" not in (out / "snakemake.log").read_text()


def test_problem_sets_carry_specs_only(psv_run):
    """Reference solutions prove the shipped specs solvable when the set is prepared; they
    never enter a problem set, so no prompt and no training set can contain one."""
    workdir, _, _ = psv_run
    references = {p["id"]: p["solution"] for p in load_problems()}
    for name in ("seed", "eval"):
        rows = read_jsonl(workdir / f"results/psv/wf/problems/{name}.jsonl")
        assert rows and all(set(r) == {"id", "name", "target", "spec", "set", "origin"} for r in rows)
        for r in rows:
            body = references[r["id"]][len(r["spec"]) :]  # a reference solution is its spec plus a body
            assert body.strip() and not any(body in str(v) for v in r.values())
