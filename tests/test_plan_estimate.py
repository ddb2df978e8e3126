"""`selfplay plan` on each paper config: the job counts are snakemake -n's, the GPU- and
CPU-hours follow from each job's resources, and the paper's budget is quoted (issue 19)."""

from __future__ import annotations

import re

import pytest
from test_config_loading import REPO, dry_run

from selfplay.cli import main
from selfplay.plan.estimate import parse_plan

PAPERS = [pytest.param("evolve", id="evolve")] + [
    pytest.param(p, id=p, marks=pytest.mark.slow) for p in ("sinq", "seq", "psv")]


@pytest.mark.parametrize("paper", PAPERS)
def test_selfplay_plan_prints_snakemakes_job_counts_and_estimates(paper, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["plan", "--configfile", f"config/papers/{paper}.yaml"]) == 0
    out = capsys.readouterr().out
    rows = {m.group(1): (int(m.group(2)), float(m.group(3)), float(m.group(4)))
            for m in re.finditer(r"^(\w+)\s+(\d+)\s+[\d/-]+\s+([\d.]+)\s+([\d.]+)", out, re.M)}
    reference = dry_run(tmp_path, "--configfile", str(REPO / f"config/papers/{paper}.yaml"))
    assert reference.returncode == 0
    expected = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", reference.stdout, re.M)}
    total = re.search(r"^total\s+(\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
    assert {rule: n for rule, (n, _, _) in rows.items()} == {r: n for r, n in expected.items() if r != "total"}
    assert int(total.group(1)) == expected["total"] and float(total.group(2)) > 0 and float(total.group(3)) > 0
    if paper in ("seq", "psv"):
        assert re.search(r"Budget \((seq|psv)\): (288|192) GPU-hours, paper 00[03]", out)
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
