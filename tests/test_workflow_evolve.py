"""The EvolveCoder track's whole workflow through Snakemake on recorded answers.

The refinement and pool answers are written here for the exact requests the rules make
(some programs right, some wrong, one that never returns); the later rounds' test
writers replay empty answers, which are refused with their reason. Everything else runs
for real: de-duplication with the packaged MiniLM, pass matrices in the sandbox, the
round filters, GRPO with LoRA on the tiny model for one step per round's data, the
benchmark layer, the tables and figures, the bundle, and its replay without a model.
The tiny model's own EvolveCoder answers are exercised by `make run`.
"""

from __future__ import annotations

import json

import pytest
from workflow_helpers import (
    bundle_and_replay,
    default_config,
    jobs_run,
    run_snakemake,
    unpack_bundle,
    write_config,
)

from selfplay.config import validate_config
from selfplay.records import read_json, read_jsonl, write_jsonl
from selfplay.tracks.evolve import game
from selfplay.tracks.evolve.seeds import shipped_records

pytestmark = pytest.mark.slow
ROOT = "results/evolve/wf"

# The refined question, function and tests of every shipped TACO problem, and the four
# pool programs: right, wrong on some inputs, always wrong, never returning.
FUNCTIONS = ["double", "square", "negate", "halve", "triple"]
RIGHT = {"double": "x * 2", "square": "x * x", "negate": "-x", "halve": "x // 2", "triple": "x * 3"}
NEAR = {"double": "x + 2", "square": "x * 2", "negate": "x", "halve": "x - 1", "triple": "x + x"}


def _refinement(name: str) -> str:
    tests = [f"assert {name}({x}) == {eval(RIGHT[name], {'x': x})}" for x in (0, 1, 2, 3, 5, -4)]
    return json.dumps({"question": f"Write {name}(x) for an integer x.", "tests": tests})


def _pool(name: str) -> list[str]:
    return [
        f"```python\ndef {name}(x):\n    return {RIGHT[name]}\n```",
        f"```python\ndef {name}(x):\n    return {NEAR[name]}\n```",
        f"```python\ndef {name}(x):\n    return 7\n```",
        f"```python\ndef {name}(x):\n    while True:\n        pass\n```",
    ]


def scenario(workdir, model_dir) -> tuple[dict, dict]:
    cfg = default_config()
    cfg["tracks"] = ["evolve"]
    cfg["model"] = {"name": "tiny", "source": "local", "path": str(model_dir)}
    rec_file = workdir / "recordings.jsonl"
    cfg["backend"] = {"name": "replay", "files": [str(rec_file)], "on_missing": "empty"}
    ev = cfg["evolve"]
    ev.update(experiment="wf", rounds=1, ks=[1, 2])
    ev["seeds"] = {"source": "embedded", "sources": ["taco"], "per_source": None}
    ev["matrix"] = {"time_limit": 1.5, "workers": 2}
    ev["grpo"].update(max_steps=1, group_size=2, batch_size=2, max_completion_length=16)
    ev["benchmarks"] = {"models": ["base", "grpo_rounds"], "runs": {"humaneval": ["greedy"]}}
    cfg["evaluation"]["benchmarks"]["humaneval"]["limit"] = 1
    cfg["bundle"] = {"name": "evolvetrip", "include_adapters": False, "report": False}
    filled = validate_config(json.loads(json.dumps(cfg)))  # the requests see the schema's defaults too
    seeds, _ = shipped_records(["taco"])
    names = dict(zip(sorted(s["id"] for s in seeds), FUNCTIONS))
    recs = []
    for seed in seeds:
        name = names[seed["id"]]
        recs.append({"key": game.refine_request(filled, seed).key, "outputs": [_refinement(name)]})
        problem = {"id": seed["id"], "question": f"Write {name}(x) for an integer x.", "entry": name}
        recs.append({"key": game.pool_request(filled, problem, "track", 4).key, "outputs": _pool(name)})
    write_jsonl(rec_file, recs)
    return cfg, names


@pytest.fixture(scope="module")
def evolve_run(tmp_path_factory, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("evolve_workflow")
    cfg, names = scenario(workdir, tiny_model_dir)
    write_config(workdir, cfg)
    proc = run_snakemake(workdir)
    return workdir, cfg, names, proc


def test_every_step_ran(evolve_run):
    *_, proc = evolve_run
    jobs = jobs_run(proc)
    assert jobs["evolve_matrix"] == jobs["evolve_dataset"] == jobs["evolve_grpo"] == 2
    assert jobs["evolve_generate"] == jobs["evolve_suite"] == 1
    assert jobs["evolve_eval_generate"] == 3  # base, grpo_r0, grpo_r1
    assert jobs["evolve_embed"] == jobs["evolve_dedup"] == 1


def test_a_rounds_tests_generated_in_blocks_merge_into_the_one_job_recording(evolve_run, tmp_path):
    """evolve.test_shards: the blocks of a round's adversarial and discriminative requests,
    concatenated in order (evolve_generate_merge's step), are the recording the run's one
    job wrote, record for record (the same keys, prompts, seeds and answers), but for what
    belongs to a job (timings, the replay backend's counts)."""
    from test_plan_pool_shards import comparable

    from selfplay.pipeline import evolve

    workdir, cfg, *_ = evolve_run
    filled = validate_config(json.loads(json.dumps(cfg)))
    root = workdir / ROOT
    inputs = [
        str(root / "round0/suite.jsonl"),
        str(root / "pool/solutions.jsonl"),
        str(root / "round0/matrix.jsonl"),
    ]
    whole = root / "round1/evolve.jsonl"
    assert len(read_jsonl(whole)) >= 4  # two requests for each of several problems
    for shards in (2, 3):
        parts = [str(tmp_path / f"s{shards}_{k}.jsonl") for k in range(shards)]
        for k, part in enumerate(parts):
            evolve.evolve_generate(filled, 1, *inputs, None, part, shard=k, shards=shards)
        assert all(read_jsonl(part) for part in parts)  # every block has requests of its own
        merged = tmp_path / f"merged{shards}.jsonl"
        evolve.merge_shards(parts, str(merged))
        assert comparable(merged) == comparable(whole)


def test_pass_matrices_judged_in_blocks_merge_into_the_one_job_matrices(evolve_run, tmp_path):
    """evolve.matrix.shards: the blocks of a round's pass matrices, concatenated in order
    (evolve_matrix_merge's step), are the rows the run's one job wrote, verdict for verdict;
    a later round's blocks reuse their own problems' columns of the previous round."""
    from selfplay.pipeline import evolve

    workdir, cfg, *_ = evolve_run
    filled = validate_config(json.loads(json.dumps(cfg)))
    root = workdir / ROOT
    pool = str(root / "pool/solutions.jsonl")

    def rows(path):
        return [{k: v for k, v in row.items() if k != "runtime"} for row in read_jsonl(path)]

    for round_, shards in ((0, 2), (1, 3)):
        suite = str(root / f"round{round_}/suite.jsonl")
        previous = str(root / f"round{round_ - 1}/matrix.jsonl") if round_ else None
        parts = [str(tmp_path / f"r{round_}_{k}.jsonl") for k in range(shards)]
        for k, part in enumerate(parts):
            evolve.round_matrices(filled, suite, pool, part, previous_path=previous, shard=k, shards=shards)
        assert all(read_jsonl(part) for part in parts)
        merged = tmp_path / f"r{round_}.jsonl"
        evolve.merge_shards(parts, str(merged))
        whole = root / f"round{round_}/matrix.jsonl"
        assert rows(merged) == rows(whole) and len(rows(whole)) >= shards


def test_matrices_judge_the_pool_in_the_sandbox(evolve_run):
    workdir, _, names, _ = evolve_run
    for m in read_jsonl(workdir / ROOT / "round0/matrix.jsonl"):
        right, near, constant, spin = m["passed"]
        assert all(right) and not any(constant) and not any(spin), names[m["id"]]
        assert not all(near)
        assert all(r.startswith("timeout") for r in m["reasons"][3])
    data = read_jsonl(workdir / ROOT / "round0/dataset.jsonl")
    assert data and all(d["kept"] for d in data)
    assert all(d["perfect_solutions"] == 1 for d in data)


def test_later_rounds_record_why_nothing_was_added(evolve_run):
    workdir, *_ = evolve_run
    gens = read_jsonl(workdir / ROOT / "round1/evolve.jsonl")
    assert {g["meta"]["step"] for g in gens} == {"adversarial", "discriminative"}
    suites = read_jsonl(workdir / ROOT / "round1/suite.jsonl")
    reasons = [r["reason"] for s in suites for r in s["rejected"] if r["round"] == 1]
    assert reasons and set(reasons) == {"parse:empty_output"}


def test_grpo_trains_one_policy_per_round(evolve_run):
    workdir, *_ = evolve_run
    for r in (0, 1):
        record = read_json(workdir / ROOT / f"grpo/r{r}/adapter/training_record.json")
        assert record["trained"] and record["steps"] == 1 and record["n_prompts"] == 5
        rollouts = read_jsonl(workdir / ROOT / f"grpo/r{r}/rollouts.jsonl")
        assert rollouts and all(len(x["outputs"]) == 2 for x in rollouts)


def test_tables_and_figures(evolve_run):
    workdir, *_ = evolve_run
    t2 = (workdir / "results/tables/evolve/table2.csv").read_text().splitlines()
    assert t2[1].startswith("0,#Problems,5,5")
    t3 = (workdir / "results/tables/evolve/table3.md").read_text()
    assert "GRPO on r0" in t3 and "GRPO on r1" in t3 and "1 step(s) on 5 prompt(s)" in t3
    t1 = (workdir / "results/tables/evolve/table1.csv").read_text()
    assert "TACO,5,5,5" in t1
    for fig in (1, 2, 4, 5, 6):
        assert (workdir / f"results/figures/evolve/figure{fig}.png").stat().st_size > 0


@pytest.fixture(scope="module")
def evolve_bundle(evolve_run, tmp_path_factory):
    return bundle_and_replay(evolve_run[0], "evolvetrip", tmp_path_factory)


def test_bundle_holds_the_evolve_run(evolve_bundle, tmp_path):
    workdir, proc, _, _ = evolve_bundle
    assert jobs_run(proc)["bundle"] == 1
    _, kinds = unpack_bundle(workdir, "evolvetrip", tmp_path)
    for rel, kind in [
        (f"{ROOT}/round0/refine.jsonl", "recording"),
        (f"{ROOT}/pool/track.jsonl", "recording"),
        (f"{ROOT}/grpo/r0/rollouts.jsonl", "recording"),
        (f"{ROOT}/round0/matrix.jsonl", "verdict"),
        (f"{ROOT}/grpo/r0/adapter/training_record.json", "training-record"),
        ("results/tables/evolve/table2.csv", "table"),
    ]:
        assert kinds.get(rel) == kind, rel


def test_bundle_replay_reproduces_the_evolve_tables_without_a_model(evolve_bundle):
    workdir, _, out, replay = evolve_bundle
    assert replay.returncode == 0, replay.stdout + replay.stderr + (out / "snakemake.log").read_text()[-5000:]
    tables = read_json(out / "bundle/evolvetrip/bundle.json")["tables"]
    assert "results/tables/evolve/table3.md" in tables
    assert f"REPRODUCED: all {len(tables)} tables are byte-identical" in replay.stdout
    log = (out / "snakemake.log").read_text()
    assert "prepare_model" not in log
    assert "restored_from_bundle" in (out / "work" / ROOT / "seeds/embeddings.json").read_text()
