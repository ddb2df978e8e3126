"""Paper 002's pool generation in shards (evolve.pool.shards): one model's answers for
~30k problems do not fit one job's time limit (`selfplay plan` flags it), so each job
answers a contiguous block of the problems and the blocks, concatenated in order, are the
recording one unsharded job writes, record for record: the same keys, prompts, seeds and
answers, in the same order (answers replayed from a recording); only the per-job fields
differ (each record's share of its job's wall time, the replay backend's hit counts)."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from test_config_loading import REPO, dry_run

from selfplay.config import schema as shared_schema
from selfplay.config.defaults import fill_defaults
from selfplay.errors import UserError
from selfplay.pipeline import evolve
from selfplay.records import read_jsonl, write_jsonl

SAMPLING = {"temperature": 0.6, "top_p": 0.95, "max_new_tokens": 64}


def comparable(path):
    """The records without what belongs to the job rather than the request."""
    rows = read_jsonl(path)
    for row in rows:
        row.pop("seconds")
        for stat in ("hits", "misses", "missed_keys", "conflicts"):
            row["backend"].pop(stat)
    return rows


@pytest.fixture()
def cfg(tmp_path):
    root = shared_schema()
    root["properties"]["evolve"] = json.loads(
        resources.files("selfplay.tracks").joinpath("evolve", "schema.json").read_text()
    )
    section = {
        "experiment": "t",
        "seeds": {"sources": ["taco"]},
        "refine": {"sampling": SAMPLING},
        "pool": {"sampling": SAMPLING, "models": [{"name": "track", "samples": 3}]},
        "adversarial": {"sampling": SAMPLING},
        "discriminative": {"sampling": SAMPLING},
    }
    return fill_defaults({"seed": 5, "evolve": section}, root)


def test_pool_blocks_partition_the_problems_in_order():
    items = list(range(10))
    for shards in (1, 3, 4, 10, 12):
        blocks = [evolve.pool_block(items, k, shards) for k in range(shards)]
        assert [x for b in blocks for x in b] == items
        assert max(len(b) for b in blocks) == -(-10 // shards)
    with pytest.raises(UserError, match="shard 3 is not in 0..2"):
        evolve.pool_block(items, 3, 3)


def test_merged_shards_are_the_unsharded_recording(cfg, tmp_path):
    suite = tmp_path / "suite.jsonl"
    write_jsonl(
        suite,
        [
            {
                "id": f"p{i}",
                "question": f"Return {i} plus x.",
                "entry": f"f{i}",
                "tests": [],
                "reason": None if i != 3 else "parse:no_json_object",
            }
            for i in range(7)
        ],
    )
    # a recording that answers every request of the unsharded job (keys learnt from a probe)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    probe = tmp_path / "probe.jsonl"
    evolve.pool_generate(
        {**cfg, "backend": {"name": "replay", "files": [str(empty)], "on_missing": "empty"}},
        str(suite),
        "track",
        3,
        None,
        None,
        str(probe),
    )
    recording = tmp_path / "answers.jsonl"
    write_jsonl(
        recording,
        [
            {"key": r["key"], "outputs": [f"answer {r['key'][:8]} {s}" for s in range(3)]}
            for r in read_jsonl(probe)
        ],
    )
    replay = {**cfg, "backend": {"name": "replay", "files": [str(recording)], "on_missing": "error"}}
    whole = tmp_path / "whole.jsonl"
    evolve.pool_generate(replay, str(suite), "track", 3, None, None, str(whole))
    assert len(read_jsonl(whole)) == 6  # the unusable problem is left out
    for shards in (2, 4, 8):  # 8 > 6 problems: the last blocks are empty
        parts = [tmp_path / f"s{shards}_{k}.jsonl" for k in range(shards)]
        for k, part in enumerate(parts):
            evolve.pool_generate(
                replay, str(suite), "track", 3, None, None, str(part), shard=k, shards=shards
            )
        merged = tmp_path / f"merged{shards}.jsonl"
        evolve.merge_shards([str(p) for p in parts], str(merged))
        assert comparable(merged) == comparable(whole)


def test_the_evolve_paper_plan_shards_the_pool_and_the_rounds_tests_and_merges_them(tmp_path):
    proc = dry_run(tmp_path, "--configfile", str(REPO / "config/papers/evolve.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", proc.stdout, re.M)}
    assert counts["evolve_pool_generate"] == 8 * 32 and counts["evolve_pool_merge"] == 8
    assert "pool/qwen3-32b.shards/31.jsonl" in proc.stdout
    # each of the 3 rounds' test generation in evolve.test_shards = 2 blocks, merged
    assert counts["evolve_generate"] == 3 * 2 and counts["evolve_generate_merge"] == 3
    assert "round3/evolve.shards/1.jsonl" in proc.stdout
    # each of the 4 rounds' pass matrices in evolve.matrix.shards = 4 blocks, merged
    assert counts["evolve_matrix"] == 4 * 4 and counts["evolve_matrix_merge"] == 4
    assert "round0/matrix.shards/3.jsonl" in proc.stdout


@pytest.mark.slow
def test_a_sharded_pool_runs_through_snakemake_and_merges_in_order(tmp_path, tiny_model_dir):
    """The embedded workflow (answers replayed) with evolve.pool.shards = 3: three pool
    jobs, one local merge, and the merged recording answers every usable problem in the
    suite's order, as the scenario's recording says."""
    from test_workflow_evolve import scenario
    from workflow_helpers import jobs_run, run_snakemake, write_config

    cfg, _ = scenario(tmp_path, tiny_model_dir)
    cfg["evolve"]["pool"]["shards"] = 3
    write_config(tmp_path, cfg)
    root = tmp_path / "results/evolve/wf"
    proc = run_snakemake(tmp_path, str(root.relative_to(tmp_path) / "pool/solutions.jsonl"))
    jobs = jobs_run(proc)
    assert jobs["evolve_pool_generate"] == 3 and jobs["evolve_pool_merge"] == 1
    assert sorted(p.name for p in (root / "pool/track.shards").iterdir()) == ["0.jsonl", "1.jsonl", "2.jsonl"]
    usable = [p["id"] for p in read_jsonl(root / "round0/suite.jsonl") if p["reason"] is None]
    merged = read_jsonl(root / "pool/track.jsonl")
    assert [r["meta"]["problem_id"] for r in merged] == usable and len(usable) >= 3
    recorded = {r["key"]: r["outputs"] for r in read_jsonl(tmp_path / "recordings.jsonl")}
    assert all(r["outputs"] == recorded[r["key"]] for r in merged)
    assert [p["id"] for p in read_jsonl(root / "pool/solutions.jsonl")] == usable
