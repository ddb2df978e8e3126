"""Jobs that run sandboxed programs ask the cluster for one CPU per sandbox worker.

Paper 002's pass matrix ran 16 sandbox workers in a job that asked SLURM for 2 CPUs;
time limits are wall-clock, so correct solutions could time out under that load. The
plan now asks for the workers' CPUs (and the pool never runs more programs than the job
has CPUs: tests/test_sandbox_job_isolation.py).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def planned_blocks(configfile: str, rule: str) -> list[str]:
    """The dry run's job blocks of ``rule`` for a config planned in the checkout."""
    done = subprocess.run(
        [SNAKEMAKE, "-n", "--cores", "64", "--configfile", configfile],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [
        b
        for b in re.split(r"\n(?=\[[^\]]+\]\nrule |rule )", done.stdout)
        if re.match(rf"(\[[^\]]+\]\n)?rule {rule}:", b)
    ]


def planned_threads(configfile: str, rule: str) -> set[int]:
    """The threads each planned job of ``rule`` asks for (1 where the plan names none)."""
    found = set()
    for block in planned_blocks(configfile, rule):
        threads = re.search(r"^\s+threads: (\d+)$", block, re.M)
        found.add(int(threads.group(1)) if threads else 1)
    return found


def test_the_pass_matrix_asks_for_a_cpu_per_worker():
    workers = yaml.safe_load((REPO / "config/papers/evolve.yaml").read_text())["evolve"]["matrix"]["workers"]
    assert workers > 2
    assert planned_threads("config/papers/evolve.yaml", "evolve_matrix") == {workers}


def test_psv_re_verification_jobs_declare_the_verifiers_memory():
    """The training-set jobs verify their examples again; without a memory request SLURM
    gives ~1 GB and Verus running out of it silently dropped training examples."""
    verify = yaml.safe_load((REPO / "config/papers/psv.yaml").read_text())["resources"]["verify"]
    assert planned_blocks("config/papers/psv.yaml", "psv_trainset")
    for rule in ("psv_trainset", "psv_t6_trainset"):  # Table 6 is planned only where configured
        for block in planned_blocks("config/papers/psv.yaml", rule):
            assert f"mem_mb={verify['mem_mb']}" in block, (rule, block)


def test_models_served_elsewhere_are_http_clients_that_hold_no_gpu():
    """Paper 001's Figure 4 models are public APIs or a server you start: their generation
    jobs are local HTTP clients (no GPU, not submitted), the track's own models GPU jobs."""
    clients = planned_blocks("config/papers/sinq.yaml", "sinq_eval_generate_client")
    tags = {
        m["tag"]
        for m in yaml.safe_load((REPO / "config/papers/sinq.yaml").read_text())["sinq"]["benchmarks"][
            "other_models"
        ]
    }
    assert clients and {re.search(r"model=(\w+)", b).group(1) for b in clients} == tags
    assert all("gpu=" not in b and "mem_mb=" not in b for b in clients)
    own = planned_blocks("config/papers/sinq.yaml", "sinq_eval_generate")
    assert own and not {re.search(r"model=(\w+)", b).group(1) for b in own} & tags


def test_the_client_rule_is_local():
    from selfplay.evaluate.model_tags import wildcard_patterns

    pattern = wildcard_patterns(["o1"], r"[a-z][a-z0-9_]*")
    assert re.fullmatch(pattern["client"] + "/x", "o1/x")
    assert re.fullmatch(pattern["own"] + "/x", "o1_mini/x") and not re.fullmatch(
        pattern["own"] + "/x", "o1/x"
    )
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(cores=1),
            config_settings=ConfigSettings(configfiles=[REPO / "config/papers/sinq.yaml"]),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )._workflow
        local = set(workflow._localrules)
    assert "sinq_eval_generate_client" in local and "sinq_eval_generate" not in local
