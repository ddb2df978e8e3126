"""Each rule function's signature is read once (selfplay.plan.signatures), so Snakemake's
per-job evaluation of input, params, log and resource functions inspects nothing.

Checked on the real workflow: a dry run of the default config through Snakemake's own
command line, with ``inspect.signature`` as Snakemake's helper calls it recorded; no
function of the Snakefile, the rules files or the library may be inspected per job.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from selfplay.plan.signatures import cache_signatures, rule_functions

REPO = Path(__file__).resolve().parents[1]

# A dry run through snakemake.cli.main with every signature Snakemake's get_function_params
# asks for recorded (the function's source file), then the list printed.
DRY_RUN = r"""
import inspect, json, sys
import snakemake.common as common
from snakemake.cli import main

seen = []
real = inspect.signature


class Recording:
    def __getattr__(self, name):
        return getattr(inspect, name)

    @staticmethod
    def signature(func, *args, **kwargs):
        seen.append(getattr(getattr(func, "__code__", None), "co_filename", repr(func)))
        return real(func, *args, **kwargs)


common.inspect = Recording()
try:
    main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
print("SIGNATURES " + json.dumps({"code": code, "seen": seen}))
"""


class Resource:
    def __init__(self, evaluator):
        self._evaluator = evaluator


def test_each_function_gets_its_own_parameters_and_snakemake_reads_them():
    from snakemake.common import get_function_params

    def by_wildcards(wildcards):
        return []

    def by_attempt(wildcards, attempt):
        return attempt

    params = lambda w, input: input  # noqa: E731
    rule = SimpleNamespace(
        input=["a.txt", by_wildcards],
        params=[params, 3],
        log=["log.txt"],
        resources={"mem_mb": Resource(by_attempt), "gpu": Resource(None)},
    )
    assert list(rule_functions(rule)) == [by_wildcards, params, by_attempt]
    assert cache_signatures([rule]) == 3
    assert cache_signatures([rule]) == 0  # already given
    for func, names in (
        (by_wildcards, ["wildcards"]),
        (params, ["w", "input"]),
        (by_attempt, ["wildcards", "attempt"]),
    ):
        assert list(get_function_params(func)) == names
        assert get_function_params(func) == inspect.signature(func).parameters


def test_a_function_without_attributes_is_left_to_snakemake():
    rule = SimpleNamespace(input=[len], params=[], log=[], resources=None)  # a builtin
    assert cache_signatures([rule]) == 0


@pytest.mark.slow  # a dry run of the default config (~15 s)
def test_a_dry_run_inspects_no_rule_function(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            DRY_RUN,
            "-n",
            "--cores",
            "1",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(REPO / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("SIGNATURES ")]
    assert line, proc.stderr[-3000:]
    got = json.loads(line[0][len("SIGNATURES ") :])
    assert got["code"] == 0, proc.stderr[-3000:]
    assert "gasp_update" in proc.stdout  # the plan has the jobs whose functions are checked
    ours = [f for f in got["seen"] if f.startswith(str(REPO)) and "/.venv" not in f]
    assert ours == []
