"""What a paper config would submit, and what it costs, from Snakemake's own dry run.

:func:`dry_run` plans the config with ``snakemake -n`` in an empty working directory (as
on a fresh clone) and :func:`parse_plan` reads, per rule, the job count of Snakemake's
"Job stats" table and each job's resources (GPUs, CPUs, minutes). From those:

- GPU-hours and CPU-hours *asked*: per job, its GPUs (CPUs) times its time limit
  (``runtime``); an upper bound, since a job ends when its work does;
- GPU-hours *estimated from tokens* for the benchmark generation cells, whose token
  counts the config fixes: items x samples x ``max_new_tokens`` (the bound) times
  :data:`EXPECTED_FRACTION`, at the planning throughput of
  :data:`selfplay.evaluate.shards.PLANNING_TOKENS_PER_S` (its source is named there);
- the paper's stated budget (:data:`BUDGETS`, each quoted with its section).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

# Share of max_new_tokens an answer uses on average: not measured at paper scale here. Code
# answers of instruction models end far below a 4k-32k limit; 0.5 is a stated guess that
# the table prints beside the upper bound (fraction 1).
EXPECTED_FRACTION = 0.5

# Compute budgets the papers state, in GPU-hours, with the text they come from.
BUDGETS = {
    "seq": (3 * 24 * 4, "paper 000, App. E.4, footnote 5: \"A main run with fine-tuning takes about 3 days "
                        "on 4 NVIDIA L40S GPUs\" (per regime: 288 L40S GPU-hours)"),
    "psv": (24 * 8, "paper 003, Sec. 4 \"Hyperparameters and design choices\": the main experiment (Table 1) "
                    "\"takes around 24 hours on a single machine with 8xL40s GPUs\" (192 L40S GPU-hours)"),
    "sinq": (None, "paper 001 states no compute budget"),
    "evolve": (None, "paper 002 states no compute budget"),
}


@dataclass
class RulePlan:
    rule: str
    jobs: int
    gpu_hours_asked: float = 0.0
    cpu_hours_asked: float = 0.0
    gpus: set = field(default_factory=set)
    gpu_hours_tokens: float | None = None  # (expected) from token counts, where known
    tokens_bound: int | None = None


def dry_run(configfiles: list[str], repo: str | Path, extra: list[str] = ()) -> str:
    """``snakemake -n`` of the workflow in ``repo`` with ``configfiles``, in an empty folder."""
    repo = Path(repo).resolve()
    with tempfile.TemporaryDirectory(prefix="selfplay-plan-") as work:
        cmd = [sys.executable, "-m", "snakemake", "-n", "--snakefile", str(repo / "Snakefile"),
               "--directory", work, "--cores", "1024", "--configfile",
               *[str(Path(c).resolve()) for c in configfiles], *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=repo)
    if proc.returncode != 0:
        lines = [l for l in (proc.stderr + proc.stdout).splitlines() if l.strip()]
        errors = [l for l in lines if "error" in l.lower()]
        raise UserError(f"the dry run failed: {(errors or lines or ['no output'])[-1]}")
    return proc.stdout


def parse_plan(text: str) -> dict[str, RulePlan]:
    """Per rule: its job count (the "Job stats" table) and the resources its jobs ask for."""
    counts: dict[str, int] = {}
    stats = text.split("Job stats:", 1)
    if len(stats) < 2:
        raise UserError("the dry run printed no job table")
    for line in stats[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        if parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    plans = {rule: RulePlan(rule, n) for rule, n in counts.items()}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if not m or m.group(1) not in plans:
            continue
        res = re.search(r"^\s*resources: (.*)$", block, re.M)
        values = dict(re.findall(r"(\w+)=([^,]+)", res.group(1))) if res else {}
        threads = re.search(r"^\s*threads: (\d+)", block, re.M)
        hours = float(values.get("runtime", 0) or 0) / 60
        gpus = int(values.get("gpu", 0) or 0)
        cpus = int(threads.group(1)) if threads else 1
        if gpus and values.get("cpus_per_gpu"):
            cpus = gpus * int(values["cpus_per_gpu"])
        plan = plans[m.group(1)]
        plan.gpus.add(gpus)
        plan.gpu_hours_asked += gpus * hours
        plan.cpu_hours_asked += cpus * hours
    return plans


def token_estimates(cfg: dict, plans: dict[str, RulePlan]) -> str | None:
    """Fill in the benchmark generation rules' token-based GPU-hours; returns the source
    of the throughput used (None where the shard planner is not available)."""
    try:
        from ..evaluate import shards
    except ImportError:
        return None
    for track in [t for t in ("sinq", "seq", "psv", "evolve") if t in cfg and "benchmarks" in cfg[t]]:
        # one job per cell, or per shard of a cell where the benchmark is sharded
        rule = next((r for r in (f"{track}_eval_generate_shard", f"{track}_eval_generate") if r in plans), None)
        if rule is None:
            continue
        tokens = sum(c["tokens"] or 0 for c in shards.cell_plan(cfg, track))
        plans[rule].tokens_bound = tokens
        plans[rule].gpu_hours_tokens = tokens * EXPECTED_FRACTION / shards.PLANNING_TOKENS_PER_S / 3600
    return (f"{shards.PLANNING_TOKENS_PER_S:,} tokens/s per GPU job "
            "(selfplay.evaluate.shards.PLANNING_TOKENS_PER_S: a public vLLM benchmark's A100 figure scaled to L40S)")


def report(configfiles: list[str], cfg: dict, plans: dict[str, RulePlan], throughput: str | None) -> str:
    lines = [f"Plan of {' + '.join(configfiles)}", "",
             f"{'rule':38s} {'jobs':>6s} {'GPUs/job':>8s} {'GPU-h asked':>12s} {'CPU-h asked':>12s} {'GPU-h tokens':>13s}"]
    for p in sorted(plans.values(), key=lambda p: (-p.gpu_hours_asked, -p.jobs, p.rule)):
        g = "/".join(str(x) for x in sorted(p.gpus)) or "-"
        tok = f"{p.gpu_hours_tokens:13.1f}" if p.gpu_hours_tokens is not None else f"{'':13s}"
        lines.append(f"{p.rule:38s} {p.jobs:6d} {g:>8s} {p.gpu_hours_asked:12.1f} {p.cpu_hours_asked:12.1f} {tok}")
    total_jobs = sum(p.jobs for p in plans.values())
    gpu = sum(p.gpu_hours_asked for p in plans.values())
    cpu = sum(p.cpu_hours_asked for p in plans.values())
    lines.append(f"{'total':38s} {total_jobs:6d} {'':8s} {gpu:12.1f} {cpu:12.1f}")
    lines += ["", "GPU-h / CPU-h asked: each job's GPUs (CPUs) x its time limit (resources runtime); an upper bound."]
    if throughput:
        lines.append(f"GPU-h tokens: benchmark cells' items x samples x max_new_tokens x {EXPECTED_FRACTION} "
                     f"(expected share of the limit, a guess) at {throughput}.")
    for track in [t for t in BUDGETS if t in cfg and t in (cfg.get("tracks") or [])]:
        hours, source = BUDGETS[track]
        if hours is None:
            lines.append(f"Budget ({track}): {source}.")
        else:
            lines.append(f"Budget ({track}): {hours} GPU-hours, {source}; asked here: {gpu:.0f} GPU-hours "
                         f"({gpu / hours:.1f}x, an upper bound).")
    return "\n".join(lines)


def plan(configfiles: list[str], repo: str | Path = ".") -> tuple[dict[str, RulePlan], str]:
    from snakemake.common.configfile import load_configfile
    from snakemake.utils import update_config

    cfg: dict = {}
    for path in configfiles:
        update_config(cfg, load_configfile(str(path)))
    plans = parse_plan(dry_run(configfiles, repo))
    throughput = token_estimates(cfg, plans)
    return plans, report(configfiles, cfg, plans, throughput)
