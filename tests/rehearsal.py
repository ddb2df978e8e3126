"""Dress rehearsals of the paper configs (issue 19): shared machinery.

A rehearsal runs a paper config with its shipped overlay (config/rehearsals/<paper>.yaml,
checked by selfplay.config.rehearsal) end to end: vLLM's CPU build, the paper's trainers,
sharding and benchmark adapters, every table and figure (Snakemake's default target, rule
`all`), submitted through `--executor slurm --profile tests/slurm/profile` to the real
one-node SLURM cluster the tests start (fixture `cluster`, tests/conftest.py, one per
session). How to write one for a paper::

    import pytest
    from rehearsal import rehearse

    pytestmark = [pytest.mark.slow, pytest.mark.rehearsal]

    @pytest.fixture(scope="module")
    def run(cluster, tmp_path_factory, tiny_model_dir):
        return rehearse(cluster, tmp_path_factory.mktemp("rehearsal_psv"), ["psv.yaml"], ["psv.yaml"],
                        extra={"psv.some_key": "why this paper must change it"},
                        fixtures={"resources/downloads/psv/x.json": "tests/psv_fixtures/x.json"},
                        model_dir=tiny_model_dir)

    def test_every_table_and_figure_is_built(run, record_property):
        run.record(record_property)              # wall time and job count into the JUnit XML
        assert run.missing == []                 # every report of rule `all` exists
        assert "results/tables/psv/table1.md" in run.targets
        assert run.jobs["train_alice"] == 2      # run.jobs: Snakemake's job stats

`rehearse` fails the test with the end of Snakemake's log when the run fails (that is a
defect of the paper path, or of the overlay); `run.wall` is the run's seconds, printed as
`[rehearsal] <paper>: ...` (run pytest with -s to see it) and kept in the JUnit XML
by `run.record(record_property)`. Run the rehearsals alone with
`.venv/bin/python -m pytest -m rehearsal` (docs/rehearsals.md).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from conftest import CACHE
from snakemake.utils import update_config
from test_vllm_real import vllm_python
from workflow_helpers import REPO, jobs_run, snakemake_argv

from selfplay.config.rehearsal import Change, check_overlay

PAPERS = REPO / "config" / "papers"
OVERLAYS = REPO / "config" / "rehearsals"
PROFILE = REPO / "tests" / "slurm" / "profile"
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+)")
# The address the overlays give models served elsewhere; a test swaps in its own server's.
LOCAL_SERVER = "http://127.0.0.1:8000/v1"  # the overlays' served models (a test double of the public APIs)
LOCAL_VLLM_SERVER = "http://127.0.0.1:8001/v1"  # a self-served model (a real vLLM server in the test)
# What the run needs from the repository at the same relative paths (the overlays name
# fixtures relative to the repository root, the run happens in a temporary folder).
LINKED = ("tests/eval_fixtures",)
# Where overlays name a tiny randomly initialised model of a paper model's family
# (selfplay.llm.tiny_random): `source: local, path: resources/tiny-models/<family>`, a
# folder relative to the run's directory that `python -m selfplay.llm.tiny_random <family>
# resources/tiny-models/<family>` writes; the tests write it once into the test cache.
TINY_MODELS = "resources/tiny-models"
TINY_CACHE = CACHE / "tiny-models"


@dataclass
class Rehearsal:
    paper: str
    workdir: Path
    proc: subprocess.CompletedProcess
    wall: float
    changes: list[Change]
    overlay: dict
    targets: list[str] = field(default_factory=list)

    @property
    def output(self) -> str:
        return self.proc.stdout + self.proc.stderr

    @property
    def jobs(self) -> dict[str, int]:
        """Snakemake's job stats: rule -> jobs run."""
        return jobs_run(self.proc)

    @property
    def slurm_jobs(self) -> dict[str, str]:
        """Snakemake job id -> SLURM job id, one per job submitted with sbatch."""
        return {m.group(1): m.group(2) for m in SUBMITTED.finditer(self.output)}

    def record(self, record_property) -> None:
        """Wall time and job counts into pytest's report (record_property)."""
        record_property(f"rehearsal_{self.paper}_wall_s", round(self.wall, 1))
        record_property(f"rehearsal_{self.paper}_jobs", sum(self.jobs.values()))
        record_property(f"rehearsal_{self.paper}_sbatch_jobs", len(self.slurm_jobs))

    @property
    def missing(self) -> list[str]:
        """The run's targets (every table and figure of the paper) that do not exist."""
        return [t for t in self.targets if not (self.workdir / t).exists()]


def snakemake_command(workdir: Path, configfiles: list[Path], *args: str) -> list[str]:
    """Snakemake from vLLM's virtualenv (the jobs run the same interpreter), through SLURM."""
    config = ("--configfile", *map(str, configfiles))
    slurm = ("--executor", "slurm", "--profile", str(PROFILE))
    return snakemake_argv(workdir, *config, *slurm, *args, python=str(vllm_python()))


def rehearse(
    cluster,
    workdir: Path,
    papers: list[str],
    overlays: list[str],
    *,
    extra: dict[str, str] | None = None,
    replace: dict[str, str] | None = None,
    fixtures: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    model_dir: Path | None = None,
    targets: list[str] | None = None,
    also: list[str] = (),
    timeout: int = 3000,
) -> Rehearsal:
    """Run config/papers/<papers...> + config/rehearsals/<overlays...> to rule `all` on SLURM.

    extra: per-paper keys the overlay may change beyond the kinds of
    selfplay.config.rehearsal, each with its reason. replace: text substitutions in the
    overlay before it is used (e.g. LOCAL_SERVER -> a test server's address). fixtures:
    run-relative path -> repository file copied there before the run (a download the
    paper's rule would fetch, already in place). A tiny random model the overlay names
    (TINY_MODELS) is written (cached) and linked in. model_dir: the prepared tiny model,
    linked at resources/models/<name> for each model the overlay converts from the PyPI
    wheel, so rule prepare_model has nothing to do.
    targets: instead of rule `all`; also: paper outputs beyond rule `all` (built too).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    over, changes, written = {}, [], []
    for overlay in overlays:
        text = (OVERLAYS / overlay).read_text()
        for old, new in (replace or {}).items():
            text = text.replace(old, new)
        this = yaml.safe_load(text)
        changes += check_overlay(this, extra, name=f"config/rehearsals/{overlay}")
        update_config(over, this)
        written.append(workdir / f"rehearsal_{overlay}")
        written[-1].write_text(text)
    for rel in LINKED:
        link = workdir / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(REPO / rel)
    for rel, src in (fixtures or {}).items():
        dest = workdir / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not (
            dest.exists() and dest.read_bytes() == (REPO / src).read_bytes()
        ):  # a later step keeps its mtime
            shutil.copyfile(REPO / src, dest)
    for spec in _model_specs(over):  # the tiny random models of a family, at their documented path
        family = _tiny_family(spec)
        if family:
            from selfplay.llm.tiny_random import ensure_tiny_model

            dest = workdir / spec["path"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            if not dest.exists():
                dest.symlink_to(ensure_tiny_model(family, TINY_CACHE / family), target_is_directory=True)
    if model_dir is not None:  # every model the overlay converts from the PyPI wheel
        names = [spec["name"] for spec in _model_specs(over) if spec.get("source") == "pypi-smollm2"]
        for name in names:
            dest = workdir / "resources" / "models" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            if not dest.exists():
                dest.symlink_to(model_dir, target_is_directory=True)
    configfiles = [PAPERS / p for p in papers] + written
    run_env = cluster.client_env()
    run_env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    run_env.update(env or {})
    asked = list(targets or (["all"] if also else [])) + list(also)
    t0 = time.monotonic()
    proc = subprocess.run(
        snakemake_command(workdir, configfiles, *asked),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=run_env,
    )
    wall = time.monotonic() - t0
    wanted = list(targets or all_inputs(proc.stdout + proc.stderr)) + list(also)
    run = Rehearsal(
        "+".join(o.removesuffix(".yaml") for o in overlays), workdir, proc, wall, changes, over, wanted
    )
    summary = (
        f"[rehearsal] {run.paper}: {wall:.0f} s wall, {sum(run.jobs.values())} jobs "
        f"({len(run.slurm_jobs)} through sbatch), exit {proc.returncode}"
    )
    print("\n" + summary)
    if proc.returncode != 0:
        raise AssertionError(f"{summary}\n{run.output[-15000:]}")
    if not targets and not run.targets:
        raise AssertionError(f"{summary}: rule all's inputs are not in Snakemake's output")
    return run


def _tiny_family(spec: dict) -> str | None:
    """The family of a tiny random model named as the overlays name it (source: local,
    path: resources/tiny-models/<family>), else None."""
    path = str(spec.get("path") or "")
    if spec.get("source") == "local" and path.startswith(TINY_MODELS + "/"):
        return path[len(TINY_MODELS) + 1 :].strip("/")
    return None


def _model_specs(tree):
    """Every `model` mapping in a config tree."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == "model" and isinstance(value, dict):
                yield value
            else:
                yield from _model_specs(value)


def all_inputs(output: str) -> list[str]:
    """The inputs of rule `all` (every table and figure the config builds), as Snakemake
    printed them when it ran the rule."""
    found = re.search(r"^localrule all:\n(?:\s+\w+: .*\n)*?\s+input: (.*)$", output, re.M)
    return [p.strip() for p in found.group(1).split(",")] if found else []
