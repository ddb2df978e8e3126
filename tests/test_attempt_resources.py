"""A retry of a job killed for time or memory asks for more (issue 19).

The rules' resources come from config ``resources.<kind>``; runtime and mem_mb grow with
Snakemake's ``attempt`` by ``resources.retry.factor`` (capped by ``resources.retry.max``).
Checked on the real workflow: the rules are loaded by Snakemake's own API from a paper
config, and each rule's resources are expanded by Snakemake for attempts 1, 2 and 3, as
the SLURM executor does when the profile's ``retries`` resubmits a job.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import plan_workflow

from selfplay.cluster.attempts import attempt_scaled, scaled_amount
from selfplay.config import validate_config
from selfplay.errors import UserError

REPO = Path(__file__).resolve().parents[1]

# Loads the workflow with Snakemake's API (no jobs run) and prints, per rule and attempt,
# the resources Snakemake would submit.
EXPAND = r"""
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings
from snakemake.iocontainers import Wildcards

repo, workdir, rules, configfiles = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3].split(","), sys.argv[4:]
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    wf_api = api.workflow(resource_settings=ResourceSettings(cores=2), snakefile=repo / "Snakefile", workdir=workdir,
                          config_settings=ConfigSettings(configfiles=[Path(f) for f in configfiles]))
    wf = wf_api._workflow
    out = {}
    for name in rules:
        rule = wf.get_rule(name)
        wildcards = Wildcards(fromdict={w: "1" for w in rule.wildcard_names})
        out[name] = {str(a): {k: v for k, v in rule.expand_resources(wildcards, [], a).items()
                              if k in ("runtime", "mem_mb", "gpu", "cpus_per_gpu")} for a in (1, 2, 3)}
print("RESOURCES " + json.dumps(out))
"""


def planned(tmp_path: Path, rules: list[str], *configfiles: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", EXPAND, str(REPO), str(tmp_path), ",".join(rules), *configfiles],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESOURCES ")]
    assert proc.returncode == 0 and line, proc.stderr[-3000:]
    return json.loads(line[0][len("RESOURCES ") :])


def test_scaled_amount_grows_rounds_up_and_caps():
    assert [scaled_amount(720, a, 1.5) for a in (1, 2, 3)] == [720, 1080, 1620]
    assert scaled_amount(1000, 2, 1.25) == 1250 and scaled_amount(999, 2, 1.001) == 1000  # rounded up
    assert [scaled_amount(720, a, 2.0, cap=1000) for a in (1, 2, 3)] == [720, 1000, 1000]
    assert scaled_amount(720, 1, 2.0, cap=100) == 720  # a cap never shrinks what attempt 1 asks for
    kind = attempt_scaled(
        {"gpu": 1, "runtime": 60, "mem_mb": 1000, "slurm_partition": "gpu"},
        {"factor": 2.0, "scaled": ["runtime", "mem_mb"], "max": {"mem_mb": 3000}},
    )
    assert kind["gpu"] == 1 and kind["slurm_partition"] == "gpu"  # not scaled: passed through
    assert [kind["runtime"](None, a) for a in (1, 2, 3)] == [60, 120, 240]
    assert [kind["mem_mb"](None, a) for a in (1, 2, 3)] == [1000, 2000, 3000]
    same = attempt_scaled({"runtime": 60}, {"factor": 1.0, "scaled": ["runtime"], "max": {}})
    assert same == {"runtime": 60}  # factor 1: the plain value, as before


@pytest.mark.slow
def test_the_workflow_asks_for_more_on_each_attempt(tmp_path):
    """Paper 002 (EvolveCoder): its GRPO job (kind train: 128000 MB, 1440 min) and its
    benchmark generation job (kind generate: 64000 MB, 720 min), with the default factor
    1.5 and then with a cap set in an overlay."""
    rules = ["evolve_grpo", "evolve_eval_generate"]
    got = planned(tmp_path / "a", rules, str(REPO / "config/papers/evolve.yaml"))
    assert got["evolve_grpo"]["1"] == {"gpu": 1, "cpus_per_gpu": 8, "mem_mb": 128000, "runtime": 1440}
    assert got["evolve_grpo"]["2"] == {"gpu": 1, "cpus_per_gpu": 8, "mem_mb": 192000, "runtime": 2160}
    assert got["evolve_grpo"]["3"]["runtime"] == 3240 and got["evolve_grpo"]["3"]["mem_mb"] == 288000
    assert [got["evolve_eval_generate"][a]["runtime"] for a in "123"] == [720, 1080, 1620]

    overlay = tmp_path / "cap.yaml"
    overlay.write_text(
        yaml.safe_dump({"resources": {"retry": {"factor": 2, "max": {"runtime": 2880, "mem_mb": 200000}}}})
    )
    capped = planned(tmp_path / "b", rules, str(REPO / "config/papers/evolve.yaml"), str(overlay))
    assert [capped["evolve_grpo"][a]["runtime"] for a in "123"] == [1440, 2880, 2880]
    assert [capped["evolve_grpo"][a]["mem_mb"] for a in "123"] == [128000, 200000, 200000]


@pytest.mark.parametrize(
    "factor, message",
    [
        (0.5, "config key resources.retry.factor: 0.5 is less than the minimum of 1"),
        ("twice", "config key resources.retry.factor: 'twice' is not of type 'number'"),
    ],
)
def test_a_bad_factor_is_one_line_naming_the_key(factor, message):
    cfg = yaml.safe_load((REPO / "config/papers/evolve.yaml").read_text())
    cfg["resources"]["retry"] = {"factor": factor}
    with pytest.raises(UserError) as err:
        validate_config(cfg)
    assert str(err.value) == message


@pytest.mark.slow
def test_a_bad_factor_stops_the_plan_with_one_line(tmp_path):
    proc = plan_workflow(
        tmp_path,
        "--configfile",
        str(REPO / "config/papers/evolve.yaml"),
        "--config",
        "resources={'retry': {'factor': 0.5}}",
        cores="1",
    )
    assert proc.returncode != 0
    errors = [x for x in (proc.stderr + proc.stdout).splitlines() if "resources.retry.factor" in x]
    assert errors == [
        "Configuration error: config key resources.retry.factor: 0.5 is less than the minimum of 1"
    ]
    assert "Traceback" not in proc.stderr


def test_the_slurm_profile_resubmits():
    """The scaling only matters where a failed job is resubmitted: the SLURM profile does."""
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    assert int(profile["retries"]) >= 1
