"""Sharded benchmark generation (issue 19): a cell split into several generation jobs
and merged back scores exactly like one job; the paper configs' cells each fit a job's
time limit; a bad setting stops with one line naming the key."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from workflow_helpers import default_config, jobs_run, plan_workflow, run_snakemake, write_config

from selfplay.config import validate_config
from selfplay.errors import UserError
from selfplay.evaluate.shards import (
    PLANNING_TOKENS_PER_S,
    STARTUP_MIN,
    cell_plan,
    check_shard,
    job_token_budget,
    merge_records,
    shard_count,
    tokens_per_job,
)
from selfplay.pipeline import evaluate as steps
from selfplay.records import read_jsonl, write_jsonl

REPO = Path(__file__).resolve().parents[1]


def replay_config(recordings: Path, **shards: int) -> dict:
    cfg = default_config()
    cfg["backend"] = {"name": "replay", "files": [str(recordings)]}
    for name, n in shards.items():
        cfg["evaluation"]["benchmarks"][name]["shards"] = n
    return validate_config(cfg)


# Benchmarks on their shipped items, each in a mode with several samples or a sandbox run:
# a classification majority vote over 9 samples, HumanEval's code run in the sandbox.
CELLS = [("identifier_swap", "majority", {"limit": None}), ("humaneval", "greedy", {"limit": 7})]


def answers(name: str, item: dict, n: int, k: int) -> list[str]:
    """Recorded answers that differ from item to item (some right, some wrong, some unreadable)."""
    if name == "humaneval":
        right = steps.benchmark(name).reference_answers([item])[0].text
        return [right if k % 3 else f"```python\n{item['prompt']}    return None\n```"] * n
    return [("1" if (k + j) % 3 else "2") if (k + j) % 5 else "no idea" for j in range(n)]


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    """Prepared items and recorded answers for CELLS (keys as eval_request makes them)."""
    folder = tmp_path_factory.mktemp("shards")
    cfg = replay_config(folder / "recordings.jsonl")
    records = []
    for name, mode, settings in CELLS:
        cfg["evaluation"]["benchmarks"][name].update(settings)
        items, skipped = steps.benchmark(name).prepare(None, cfg["evaluation"]["benchmarks"][name], cfg)
        write_jsonl(folder / f"{name}.jsonl", items)
        write_jsonl(folder / f"{name}.skipped.jsonl", skipped)
        assert len(items) >= 4
        for k, item in enumerate(items):
            req = steps.eval_request(cfg, name, mode, "base", item, None)
            records.append({"key": req.key, "outputs": answers(name, item, req.sampling.n, k)})
    write_jsonl(folder / "recordings.jsonl", records)
    return folder


def generate_and_score(folder: Path, name: str, mode: str, shards: int, tag: str) -> dict[str, bytes]:
    cfg = replay_config(folder / "recordings.jsonl", **{name: shards})
    cfg["evaluation"]["benchmarks"][name].update(next(s for b, _, s in CELLS if b == name))
    items, out = str(folder / f"{name}.jsonl"), folder / tag
    out.mkdir()
    if shards == 1:
        steps.generate(cfg, name, mode, "base", items, None, None, str(out / "gen.jsonl"))
    else:
        parts = [str(out / f"{k}.jsonl") for k in range(shards)]
        for k, part in enumerate(parts):
            steps.generate(cfg, name, mode, "base", items, None, None, part, shard=(k, shards))
        assert sum(len(read_jsonl(p)) for p in parts) == len(read_jsonl(items))
        assert all(read_jsonl(p) for p in parts[: len(read_jsonl(items))])
        steps.merge(cfg, name, mode, "base", items, parts, str(out / "gen.jsonl"))
    steps.score(
        cfg,
        name,
        mode,
        items,
        str(out / "gen.jsonl"),
        str(out / "scored.jsonl"),
        str(out / "summary.json"),
        str(folder / f"{name}.skipped.jsonl"),
    )
    return {f: (out / f).read_bytes() for f in ("gen.jsonl", "scored.jsonl", "summary.json")}


def timeless(jsonl: bytes) -> list[dict]:
    """Generation records without what describes the job rather than the answer: the
    wall time of its generate call and the backend's counters."""
    import json

    return [
        {k: v for k, v in json.loads(line).items() if k not in ("seconds", "backend")}
        for line in jsonl.decode().splitlines()
    ]


@pytest.mark.parametrize("name,mode", [(b, m) for b, m, _ in CELLS])
@pytest.mark.parametrize("shards", [3, 9])  # 9: more shards than items, so some are empty
def test_a_sharded_cell_scores_byte_for_byte_like_one_job(cells, name, mode, shards):
    whole = generate_and_score(cells, name, mode, 1, f"{name}-whole-{shards}")
    split = generate_and_score(cells, name, mode, shards, f"{name}-split-{shards}")
    assert split["scored.jsonl"] == whole["scored.jsonl"] and split["summary.json"] == whole["summary.json"]
    assert timeless(split["gen.jsonl"]) == timeless(whole["gen.jsonl"])
    # the answers are not all alike, so a merge in another order would show
    assert len({r["outputs"][0] for r in timeless(whole["gen.jsonl"])}) > 1


def test_shards_take_interleaved_items_with_seeds_of_their_own(cells):
    cfg = replay_config(cells / "recordings.jsonl", identifier_swap=3)
    items = read_jsonl(cells / "identifier_swap.jsonl")
    for k in range(3):
        out = cells / f"interleaved{k}.jsonl"
        steps.generate(
            cfg,
            "identifier_swap",
            "majority",
            "base",
            str(cells / "identifier_swap.jsonl"),
            None,
            None,
            str(out),
            shard=(k, 3),
        )
        records = read_jsonl(out)
        assert [r["meta"]["item"] for r in records] == [i["id"] for i in items[k::3]]
        # each request is the unsharded job's: its seed comes from the item, not the shard
        assert [r["sampling"]["seed"] for r in records] == [
            steps.eval_request(cfg, "identifier_swap", "majority", "base", i, None).sampling.seed
            for i in items[k::3]
        ]


def test_a_merge_refuses_shards_that_do_not_answer_the_items_once():
    rec = lambda i: {"meta": {"item": i}, "outputs": [i]}  # noqa: E731
    assert merge_records([[rec("b")], [rec("a"), rec("c")]], ["a", "b", "c"], "x") == [
        rec("a"),
        rec("b"),
        rec("c"),
    ]
    with pytest.raises(UserError, match="1 missing, e.g. c"):
        merge_records([[rec("a")], [rec("b")]], ["a", "b", "c"], "x")
    with pytest.raises(UserError, match="answered twice"):
        merge_records([[rec("a"), rec("b")], [rec("b"), rec("c")]], ["a", "b", "c"], "x")
    with pytest.raises(UserError, match="1 unknown, e.g. z"):
        merge_records([[rec("a"), rec("b"), rec("z")], [rec("c")]], ["a", "b", "c"], "x")


def test_a_shard_of_another_split_is_refused(cells):
    cfg = replay_config(cells / "recordings.jsonl", identifier_swap=3)
    check_shard(cfg, "identifier_swap", 2, 3)
    with pytest.raises(UserError, match=r"evaluation\.benchmarks\.identifier_swap\.shards is 3"):
        check_shard(cfg, "identifier_swap", 0, 4)
    with pytest.raises(UserError, match="outside"):
        check_shard(cfg, "identifier_swap", 3, 3)
    parts = [str(cells / f"gone{k}.jsonl") for k in range(2)]
    with pytest.raises(UserError, match="2 shard files"):
        steps.merge(
            cfg,
            "identifier_swap",
            "majority",
            "base",
            str(cells / "identifier_swap.jsonl"),
            parts,
            str(cells / "never.jsonl"),
        )


@pytest.mark.parametrize(
    "bad,message",
    [
        (0, "0 is less than the minimum of 1"),
        ("two", "'two' is not of type"),
        (1.5, "1.5 is not of type"),
        (True, "True is not of type"),
    ],
)
def test_a_bad_shard_setting_fails_with_one_line_naming_the_key(bad, message):
    cfg = default_config()
    cfg["evaluation"]["benchmarks"]["codexglue"]["shards"] = bad
    with pytest.raises(UserError) as err:
        validate_config(cfg)
    assert str(err.value).startswith("config key evaluation.benchmarks.codexglue.shards: ")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_default_keeps_one_job_per_cell():
    cfg = validate_config(default_config())
    assert {name: shard_count(cfg, name) for name in cfg["evaluation"]["benchmarks"]} == dict.fromkeys(
        cfg["evaluation"]["benchmarks"], 1
    )


# --- the paper configs' plans -----------------------------------------------------------

PAPERS = {
    "sinq": ("config/papers/sinq.yaml",),
    "seq": ("config/papers/seq.yaml",),
    "seq_e1": ("config/papers/seq.yaml", "config/papers/seq_e1.yaml"),
}


def paper_config(files: tuple[str, ...]) -> dict:
    from snakemake.common.configfile import load_configfile
    from snakemake.utils import update_config

    cfg: dict = {}
    for f in files:
        update_config(cfg, load_configfile(str(REPO / f)))
    return validate_config(cfg)


def planned_jobs(files: tuple[str, ...], tmp_path: Path) -> tuple[dict[str, int], str]:
    done = plan_workflow(tmp_path, "--configfile", *[str(REPO / f) for f in files])
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", done.stdout, re.M)}
    return counts, done.stdout


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_cell_fits_a_generation_job_and_the_plan_has_its_shards(paper, tmp_path):
    """Each cell's largest job generates at most what one job can within
    resources.generate.runtime at the planning throughput (evaluate/shards.py), and the
    plan has one generation job per shard of every cell, one merge per sharded cell."""
    files = PAPERS[paper]
    cfg = paper_config(files)
    track = cfg["tracks"][0]
    runtime = cfg["resources"]["generate"]["runtime"]
    budget = job_token_budget(runtime)
    assert budget == PLANNING_TOKENS_PER_S * (runtime - STARTUP_MIN) * 60
    plan = cell_plan(cfg, track)
    assert plan and all(c["items"] for c in plan)
    too_big = [c for c in plan if c["tokens_per_job"] > budget]
    assert not too_big, f"cells over {budget:,} tokens a job: {too_big}"
    # without shards some cell would not fit: the check is not true by construction
    assert any(tokens_per_job(c["items"], c["samples"], c["max_new_tokens"], 1) > budget for c in plan)
    jobs, text = planned_jobs(files, tmp_path)
    assert jobs.get(f"{track}_eval_generate", 0) == sum(1 for c in plan if c["shards"] == 1)
    assert jobs.get(f"{track}_eval_generate_shard", 0) == sum(c["shards"] for c in plan if c["shards"] > 1)
    assert jobs.get(f"{track}_eval_merge", 0) == sum(1 for c in plan if c["shards"] > 1)
    # every shard of every sharded cell is planned, and nothing else
    planned = set(re.findall(r"results/\w+/\w+/eval/(\w+)/(\w+)/(\w+)\.shards(\d+)/(\d+)\.jsonl", text))
    assert planned == {
        (c["benchmark"], c["model"], c["mode"], str(c["shards"]), str(k))
        for c in plan
        if c["shards"] > 1
        for k in range(c["shards"])
    }


def test_the_paper_000_cell_of_the_issue_is_split():
    """Paper 000's CodeXGLUE cell: 2,732 functions x 16 samples x 4,096 tokens, ~179M
    tokens, was one job of 240 minutes."""
    cfg = paper_config(PAPERS["seq"])
    cell = next(c for c in cell_plan(cfg, "seq") if c["benchmark"] == "codexglue" and c["model"] == "base")
    assert cell["tokens"] == 2732 * 16 * 4096 and cell["shards"] > 1
    assert cell["tokens_per_job"] <= job_token_budget(cfg["resources"]["generate"]["runtime"])


# --- a real workflow run -------------------------------------------------------------------


@pytest.mark.slow
def test_the_workflow_scores_a_sharded_cell_like_one_job(cells, tmp_path):
    """Snakemake runs the cells unsharded and sharded (replayed answers): the shard jobs,
    the local merge, then the same scoring; the scores are equal byte for byte, and so
    are the metrics but for the verifier canary's timings."""
    targets = [
        f"results/sinq/shardtest/eval/{b}/base/{m}{kind}"
        for b, m, _ in CELLS
        for kind in (".scored.jsonl", ".json")
    ]
    outputs = {}
    for shards in (1, 3):
        cfg = default_config()
        cfg["tracks"] = ["sinq"]
        cfg["sinq"]["experiment"] = "shardtest"
        cfg["sinq"]["benchmarks"] = {"models": ["base"], "runs": {b: [m] for b, m, _ in CELLS}}
        cfg["backend"] = {"name": "replay", "files": [str(cells / "recordings.jsonl")]}
        for name, _, settings in CELLS:
            cfg["evaluation"]["benchmarks"][name].update(settings, shards=shards)
        workdir = tmp_path / f"shards{shards}"
        write_config(workdir, copy.deepcopy(cfg))
        jobs = jobs_run(run_snakemake(workdir, *targets))
        if shards == 1:
            assert jobs["sinq_eval_generate"] == len(CELLS) and "sinq_eval_merge" not in jobs
        else:
            assert jobs["sinq_eval_generate_shard"] == 3 * len(CELLS) and jobs["sinq_eval_merge"] == len(
                CELLS
            )
            assert "sinq_eval_generate" not in jobs
        outputs[shards] = {t: (workdir / t).read_bytes() for t in targets}
    scored = [t for t in targets if t.endswith(".scored.jsonl")]
    assert {t: outputs[3][t] for t in scored} == {t: outputs[1][t] for t in scored}
    # the metrics too, but for the verifier canary's wall times, which differ between any two runs
    metrics = [t for t in targets if t.endswith(".json")]
    assert {t: untimed(outputs[3][t]) for t in metrics} == {t: untimed(outputs[1][t]) for t in metrics}


def untimed(summary: bytes) -> dict:
    import json

    data = json.loads(summary)
    for canary in data["runtime"].get("canaries", []):
        canary.pop("seconds")
        for check in canary["inputs"]:
            check.pop("seconds")
    return data
