"""`selfplay plan` on each paper config: the job counts are snakemake -n's, the GPU- and
CPU-hours follow from each job's resources, and the paper's budget is quoted (issue 19)."""

from __future__ import annotations

import re

import pytest
from test_config_loading import REPO, dry_run

from selfplay.cli import main
from selfplay.plan.estimate import parse_plan

PAPERS = [pytest.param("evolve", id="evolve")] + [
    pytest.param(p, id=p, marks=pytest.mark.slow) for p in ("sinq", "seq", "psv", "gasp")
]


@pytest.mark.parametrize("paper", PAPERS)
def test_selfplay_plan_prints_snakemakes_job_counts_and_estimates(paper, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["plan", "--configfile", f"config/papers/{paper}.yaml"]) == 0
    out = capsys.readouterr().out
    rows = {
        m.group(1): (int(m.group(2)), float(m.group(3)), float(m.group(4)))
        for m in re.finditer(r"^(\w+)\s+(\d+)\s+[\d/-]+\s+([\d.]+)\s+([\d.]+)", out, re.M)
    }
    reference = dry_run(tmp_path, "--configfile", str(REPO / f"config/papers/{paper}.yaml"))
    assert reference.returncode == 0
    expected = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", reference.stdout, re.M)}
    total = re.search(r"^total\s+(\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert {rule: n for rule, (n, _, _) in rows.items()} == {
        r: n for r, n in expected.items() if r != "total"
    }
    assert (
        int(total.group(1)) == expected["total"] and float(total.group(2)) > 0 and float(total.group(3)) > 0
    )
    # no generation job is expected to outrun its time limit (the "over limit" column)
    header = next(line for line in out.splitlines() if line.startswith("rule "))
    end = header.index("over limit") + len("over limit")
    over = {
        rule: int(line[end - 10 : end])
        for rule in rows
        for line in out.splitlines()
        if line.startswith(f"{rule} ") and line[end - 10 : end].strip()
    }
    assert over and over == {rule: 0 for rule in over}, over
    if paper in ("seq", "psv"):
        assert re.search(r"Budget \((seq|psv)\): (288|192) GPU-hours, paper 00[03]", out)
    elif paper == "gasp":
        assert "Budget (gasp): paper 004 states no GPU-hours" in out
    else:
        assert f"Budget ({paper}): paper 00" in out and "states no compute budget" in out


def test_gpu_hours_asked_follow_each_jobs_gpus_and_time_limit():
    text = """Job stats:
job      count
-----  -------
a            2
b            1
total        3

rule a:
    output: x
    resources: tmpdir=/tmp, gpu=2, cpus_per_gpu=8, runtime=90, mem_mb=1000
rule a:
    output: y
    resources: tmpdir=/tmp, gpu=1, cpus_per_gpu=8, runtime=60
localrule b:
    output: z
    threads: 4
    resources: tmpdir=/tmp, runtime=30
"""
    plans = parse_plan(text)
    assert plans["a"].jobs == 2 and plans["a"].gpus == {1, 2}
    assert plans["a"].gpu_hours_asked == pytest.approx(2 * 1.5 + 1 * 1.0)
    assert plans["a"].cpu_hours_asked == pytest.approx(16 * 1.5 + 8 * 1.0)
    assert plans["b"].gpu_hours_asked == 0 and plans["b"].cpu_hours_asked == pytest.approx(4 * 0.5)


def test_vllm_rates_follow_the_public_anchors_and_the_gpus_bandwidth():
    from selfplay.plan.tokens import ANCHORS, tokens_per_s

    r7 = {"name": "r1-7b", "source": "hf", "path": "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"}
    q32 = {"name": "q32", "source": "hf", "path": "Qwen/Qwen3-32B"}
    assert tokens_per_s(r7, "a100_80gb")[0] == pytest.approx(ANCHORS[0][1])
    assert tokens_per_s(r7, "l40s")[0] == pytest.approx(3363 * 864 / 2039)  # ~1,425 tokens/s
    assert tokens_per_s(q32, None)[0] == pytest.approx(577 * 32.8 / 32.8)
    # split over 2 GPUs: 16.4B per GPU, between the 14.8B and 32.8B anchors
    assert 577 < tokens_per_s(q32, None, tp=2)[0] < 3004
    # a mixture of experts runs at the speed of its active parameters
    moe = {"name": "moe", "source": "hf", "path": "Qwen/Qwen3-30B-A3B"}
    assert tokens_per_s(moe, None)[0] == pytest.approx(ANCHORS[0][1])


def test_the_evolve_plan_flags_unsharded_jobs_that_cannot_finish_within_their_time_limit(
    monkeypatch, capsys, tmp_path
):
    """Paper 002 at one job per step: a pool model's 30,437 problems x 8 samples x up to
    32,768 tokens in one 12-hour job is far beyond any GPU's rate, and so are a round's
    adversarial and discriminative answers (~12.5 h) and a round's pass matrices (~29 h of
    16 sandboxes): the plan says so per rule, and the paper config's blocks (32 per pool
    model, 2 per round's tests, 4 per round's matrices) bring every job within its limit."""
    monkeypatch.chdir(REPO)
    one_job = tmp_path / "one_job.yaml"
    # the local stand-in generator (not the paper's served one) in one job per round's tests
    one_job.write_text(
        "evolve: {pool: {shards: 1}, test_shards: 1, matrix: {shards: 1}, generator_served: null}\n"
    )
    blocks = tmp_path / "blocks.yaml"
    blocks.write_text("evolve: {generator_served: null}\n")
    row = r"^evolve_pool_generate\s+(\d+)\s+1/2\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+(\d+)$"
    tests_row = r"^evolve_generate\s+(\d+)\s+1\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\d+)$"
    matrix_row = r"^evolve_matrix\s+(\d+)\s+0\s+[\d.]+\s+[\d.]+\s+(\d+)\s+([\d.]+)$"
    assert main(["plan", "--configfile", "config/papers/evolve.yaml", str(one_job)]) == 0
    out = capsys.readouterr().out
    jobs, asked, tokens, over = re.search(row, out, re.M).groups()
    assert int(jobs) == 8 and int(over) == 8 and float(tokens) > 10 * float(asked)
    assert "30,437 seed problems after de-duplication" in out
    jobs, test_tokens, over = re.search(tests_row, out, re.M).groups()
    assert (int(jobs), int(over)) == (3, 3)
    jobs, over, matrix_work = re.search(matrix_row, out, re.M).groups()
    assert int(jobs) == 4 and int(over) == 4  # round 0's 20 tests take ~15 h, each later round's 40 ~29 h
    assert main(["plan", "--configfile", "config/papers/evolve.yaml", str(blocks)]) == 0
    out = capsys.readouterr().out
    jobs, asked, sharded_tokens, over = re.search(row, out, re.M).groups()
    assert int(jobs) == 8 * 32 and int(over) == 0
    assert float(sharded_tokens) == pytest.approx(float(tokens), rel=0.01)  # the same work, in blocks
    jobs, sharded_tokens, over = re.search(tests_row, out, re.M).groups()
    assert (int(jobs), int(over)) == (3 * 2, 0) and float(sharded_tokens) == pytest.approx(
        float(test_tokens), rel=0.01
    )
    # the pass matrices' CPU work: 30,437 problems x 64 solutions x (20 tests, then 40 new ones a round)
    cells = 30437 * 64 * (20 + 3 * 40)
    jobs, over, work = re.search(matrix_row, out, re.M).groups()
    assert (int(jobs), int(over)) == (4 * 4, 0)
    assert (
        float(work)
        == pytest.approx(cells / 46.4 / 3600, rel=0.01)
        == pytest.approx(float(matrix_work), rel=0.01)
    )
    assert "bench/results/pass_matrix.md" in out and "16 workers a job" in out
    # the paper's generator is GPT-4.1-mini behind an API: its jobs are local clients, no GPU-hours
    assert main(["plan", "--configfile", "config/papers/evolve.yaml"]) == 0
    out = capsys.readouterr().out
    for rule in ("evolve_refine", "evolve_generate"):
        (line,) = [x for x in out.splitlines() if x.startswith(f"{rule} ")]
        assert re.match(rf"^{rule}\s+\d+\s+0\s+0\.0\s+0\.0$", line), line  # no GPU, nothing asked


def test_the_psv_plan_grows_each_pool_by_the_papers_share_of_unique_valid_proposals():
    """X_t is the seed set plus the unique valid proposals of every earlier iteration: at
    most t x B, and by paper 003 App. H about 5.4% of B an iteration, which the plan
    expects; a method that proposes nothing keeps the seed set."""
    from test_config_loading import load_as_snakemake

    from selfplay.config import prepare_config
    from selfplay.plan.tokens import PSV_UNIQUE_VALID, expected_job_tokens, job_tokens

    cfg = load_as_snakemake(("config/papers/psv.yaml",))
    prepare_config(cfg, "unused")
    bound, _ = job_tokens(cfg)["psv_solve"]
    expected, how = expected_job_tokens(cfg)["psv_solve"]
    per_problem = 10 * 2048  # k_trn x max_new_tokens
    job = {"setting": "transfer", "method": "psv", "rseed": "1", "t": "4"}  # Dafny2Verus seeds: 271
    assert bound(job) == (271 + 4 * 10000) * per_problem
    assert PSV_UNIQUE_VALID[0] == 0.054 and expected(job) == (271 + 2160) * per_problem
    assert expected({**job, "t": "0"}) == bound({**job, "t": "0"}) == 271 * per_problem
    big = {**job, "method": "psv_b32k", "setting": "ttt_mbpp"}  # 32k proposals an iteration; MBPP: 78
    assert expected(big) == (78 + 6912) * per_problem and bound(big) == (78 + 128000) * per_problem
    for name in ("rft", "base", "fewshot"):
        assert bound({**job, "method": name}) == expected({**job, "method": name}) == 271 * per_problem
    assert "App. H" in how and "5.4%" in how


def test_a_config_the_workflow_refuses_is_one_line_from_selfplay_plan(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(REPO)
    small = tmp_path / "small_gpu.yaml"
    small.write_text("resources: {train: {gpu_model: l40s}}\n")
    assert main(["plan", "--configfile", "config/papers/evolve.yaml", str(small)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(
        "selfplay: error: the dry run failed: Resources error: resources.train: rule evolve_grpo"
    )
    assert main(["plan", "--configfile", str(tmp_path / "missing.yaml")]) == 2
    assert capsys.readouterr().err.strip().endswith("missing.yaml: no such file")


def test_the_gasp_plan_names_the_greedy_jobs_its_selection_checkpoints_add():
    """A dry run cannot list the jobs a Snakemake checkpoint decides: GASP's Table 3
    evaluates each run's selected checkpoint greedily; the plan counts them in a note."""
    from test_config_loading import load_as_snakemake

    from selfplay.config import prepare_config
    from selfplay.plan.estimate import checkpoint_notes

    cfg = load_as_snakemake(("config/papers/gasp.yaml",))
    prepare_config(cfg, "unused")
    g = cfg["gasp"]
    runs, benches = len(g["methods"]) * len(g["seeds"]), g["evaluation"]["greedy"]["benchmarks"]
    assert (runs, len(benches)) == (24, 3)
    (note,) = checkpoint_notes(cfg)
    # LCB v5 216, HumanEval+ 164, MBPP+ 378 items, one greedy answer of at most 4,096 tokens
    tokens = runs * (216 + 164 + 378) * 4096
    assert f"{runs * 3} more gasp_eval_generate jobs" in note and f"{tokens:,} tokens at most" in note
    assert "gasp_selection" in note
    cfg["tracks"] = ["evolve"]
    assert checkpoint_notes(cfg) == []
