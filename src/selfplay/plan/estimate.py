"""What a paper config would submit, and what it costs, from Snakemake's own dry run.

:func:`dry_run` plans the config with ``snakemake -n`` in an empty working directory (as
on a fresh clone) and :func:`parse_plan` reads, per rule, the job count of Snakemake's
"Job stats" table and each job's resources (GPUs, CPUs, minutes). From those:

- GPU-hours and CPU-hours *asked*: per job, its GPUs (CPUs) times its time limit
  (``runtime``); an upper bound, since a job ends when its work does;
- GPU-hours *estimated from tokens* for generation rules, whose token counts follow from
  the config (and, where a step's inputs are made by the run, from the paper's counts):
  each job's bound prompts x samples x ``max_new_tokens`` (:mod:`selfplay.plan.tokens`)
  times :data:`EXPECTED_FRACTION`, at that job's vLLM rate
  (:func:`selfplay.plan.tokens.tokens_per_s`, public measurements, source named there),
  and the jobs whose expected time exceeds their time limit;
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
    "seq": (
        3 * 24 * 4,
        'paper 000, App. E.4, footnote 5: "A main run with fine-tuning takes about 3 days '
        'on 4 NVIDIA L40S GPUs" (per regime: 288 L40S GPU-hours)',
    ),
    "psv": (
        24 * 8,
        'paper 003, Sec. 4 "Hyperparameters and design choices": the main experiment (Table 1) '
        '"takes around 24 hours on a single machine with 8xL40s GPUs" (192 L40S GPU-hours)',
    ),
    "sinq": (None, "paper 001 states no compute budget"),
    "evolve": (None, "paper 002 states no compute budget"),
    "gasp": (
        None,
        "paper 004 states no GPU-hours: App. D, 4x H100 for training and 1x H100 for evaluation, "
        "~50 iterations per run, 'truncated due to compute constraints' (Fig. 7)",
    ),
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
    over_limit: int = 0  # jobs whose expected time exceeds their time limit
    cpu_hours_work: float | None = None  # CPU-hours from the work's size and a measured rate
    detail: list = field(default_factory=list)  # per job: (wildcards, gpus, hours asked)
    basis: str = ""  # how the tokens were counted and at what rate


def dry_run(configfiles: list[str], repo: str | Path, extra: list[str] = ()) -> str:
    """``snakemake -n`` of the workflow in ``repo`` with ``configfiles``, in an empty folder."""
    repo = Path(repo).resolve()
    with tempfile.TemporaryDirectory(prefix="selfplay-plan-") as work:
        cmd = [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--snakefile",
            str(repo / "Snakefile"),
            "--directory",
            work,
            "--cores",
            "1024",
            "--configfile",
            *[str(Path(c).resolve()) for c in configfiles],
            *extra,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=repo)
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line.lower()]
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
        wild = re.search(r"^\s*wildcards: (.*)$", block, re.M)
        plan.detail.append((dict(re.findall(r"(\w+)=([^,]+)", wild.group(1))) if wild else {}, gpus, hours))
        plan.gpus.add(gpus)
        plan.gpu_hours_asked += gpus * hours
        plan.cpu_hours_asked += cpus * hours
    return plans


def _job_model(cfg: dict, rule: str, wildcards: dict) -> tuple[dict, str, int]:
    """(model spec, resources kind, tensor-parallel size) of one generation job."""
    from .serving import pool_backend, tensor_parallel

    if rule == "evolve_pool_generate":
        name = wildcards["pmodel"]
        spec = cfg["model"] if name == "track" else cfg["evolve"]["models"][name]
        return spec, "generate", tensor_parallel(pool_backend(cfg, name))
    if rule in ("evolve_refine", "evolve_generate"):
        return cfg["evolve"].get("generator") or cfg["model"], "generate", tensor_parallel(cfg["backend"])
    if rule == "seq_translate_generate":
        tr = cfg["seq"]["translate"]
        return tr["model"], "translate", tensor_parallel({**cfg["backend"], **(tr.get("backend") or {})})
    return cfg["model"], "generate", tensor_parallel(cfg["backend"])


def token_estimates(cfg: dict, plans: dict[str, RulePlan], workdir: str = ".") -> list[str]:
    """Fill in each generation rule's token bound and expected GPU-hours (the tokens'
    share :data:`EXPECTED_FRACTION` at :func:`selfplay.plan.tokens.tokens_per_s`), and
    count the jobs whose expected time exceeds their time limit; returns the notes."""
    from .tokens import (
        MATRIX_CELLS_PER_S_PER_WORKER,
        expected_job_tokens,
        job_tokens,
        matrix_cells,
        tokens_per_s,
    )

    counted = dict(job_tokens(cfg))
    expected_of = expected_job_tokens(cfg)
    notes = []
    cells = {}
    try:
        from ..evaluate import shards  # the benchmark layer's per-cell token counts
    except ImportError:
        shards = None
    if shards is not None:
        for track in [t for t in ("sinq", "seq", "psv", "evolve") if t in cfg and "benchmarks" in cfg[t]]:
            for rule in (f"{track}_eval_generate_shard", f"{track}_eval_generate"):
                if rule in plans:
                    tokens = sum(c["tokens"] or 0 for c in shards.cell_plan(cfg, track))
                    jobs = plans[rule].jobs
                    cells[rule] = tokens
                    counted[rule] = (
                        lambda w, t=tokens, j=jobs: t // j,
                        "benchmark cells' items x samples x max_new_tokens, spread over the jobs",
                    )
                    break
    for rule, (per_job, how) in counted.items():
        plan = plans.get(rule)
        if plan is None or not plan.detail:
            continue
        bound = expected_h = 0.0
        rates: dict[str, None] = {}
        for wildcards, gpus, hours in plan.detail:
            spec, kind, tp = _job_model(cfg, rule, wildcards)
            gpu = ((cfg.get("resources") or {}).get(kind) or {}).get("gpu_model") or None
            rate, where = tokens_per_s(spec, gpu, tp, workdir)
            rates[f"{rate:,.0f} tokens/s for {where}"] = None
            tokens = per_job(wildcards)
            bound += tokens
            likely = expected_of[rule][0](wildcards) if rule in expected_of else tokens
            job_h = likely * EXPECTED_FRACTION / rate / 3600
            expected_h += job_h * max(gpus, 1)
            if hours and job_h > hours:
                plan.over_limit += 1
        # the dry run lists each job once; the job table may count more (none here)
        plan.tokens_bound = int(bound * plan.jobs / len(plan.detail))
        plan.gpu_hours_tokens = expected_h * plan.jobs / len(plan.detail)
        plan.basis = f"{how}; {', '.join(rates)}"
        expected = f"; expected: {expected_of[rule][1]}" if rule in expected_of else ""
        notes.append(f"  {rule}: {plan.tokens_bound:,} tokens at most ({how}){expected}; {', '.join(rates)}")
    cells_of = matrix_cells(cfg)
    plan = plans.get("evolve_matrix")
    if cells_of and plan and plan.detail:
        rate, source = MATRIX_CELLS_PER_S_PER_WORKER
        workers = int(cfg["evolve"]["matrix"]["workers"])
        cells = core_h = 0.0
        for wildcards, _, hours in plan.detail:
            n = cells_of(wildcards)
            cells += n
            core_h += n / rate / 3600
            if hours and n / rate / workers / 3600 > hours:
                plan.over_limit += 1
        plan.cpu_hours_work = core_h * plan.jobs / len(plan.detail)
        notes.append(
            f"  evolve_matrix: {int(cells):,} cells (paper 002 Table 1's problems, in evolve.matrix.shards blocks, x pool solutions x "
            f"new tests per round) at {rate:.1f} cells/s per worker ({source}), {workers} workers a job"
        )
    return notes


def checkpoint_notes(cfg: dict) -> list[str]:
    """The jobs a dry run cannot list: those a Snakemake checkpoint decides (GASP's Table 3
    evaluates each run's selected checkpoint greedily, once its sampled scores pick it)."""
    if "gasp" not in (cfg.get("tracks") or []):
        return []
    from .tokens import job_tokens

    g = cfg["gasp"]
    runs = len(g["methods"]) * len(g["seeds"])  # one selection per method and seed
    greedy = g["evaluation"]["greedy"]
    per_job, _ = job_tokens(cfg)["gasp_eval_generate"]
    tokens = runs * sum(per_job({"bench": b, "mode": greedy["mode"]}) for b in greedy["benchmarks"])
    n = runs * len(greedy["benchmarks"])
    return [
        f"  not listed: {n} more gasp_eval_generate jobs and as many scoring jobs ({runs} runs x "
        f"{len(greedy['benchmarks'])} greedy benchmarks, Table 3: {tokens:,} tokens at most), added once each "
        "run's checkpoint rule gasp_selection has picked the checkpoint they evaluate"
    ]


def report(configfiles: list[str], cfg: dict, plans: dict[str, RulePlan], notes: list[str]) -> str:
    lines = [
        f"Plan of {' + '.join(configfiles)}",
        "",
        f"{'rule':38s} {'jobs':>6s} {'GPUs/job':>8s} {'GPU-h asked':>12s} {'CPU-h asked':>12s} {'GPU-h tokens':>13s}"
        f" {'over limit':>10s} {'CPU-h work':>10s}",
    ]
    for p in sorted(plans.values(), key=lambda p: (-p.gpu_hours_asked, -p.jobs, p.rule)):
        g = "/".join(str(x) for x in sorted(p.gpus)) or "-"
        tok = f"{p.gpu_hours_tokens:13.1f}" if p.gpu_hours_tokens is not None else f"{'':13s}"
        estimated = p.gpu_hours_tokens is not None or p.cpu_hours_work is not None
        over = f"{p.over_limit:10d}" if estimated else f"{'':10s}"
        work = f"{p.cpu_hours_work:10.1f}" if p.cpu_hours_work is not None else ""
        lines.append(
            f"{p.rule:38s} {p.jobs:6d} {g:>8s} {p.gpu_hours_asked:12.1f} {p.cpu_hours_asked:12.1f} {tok} {over} "
            f"{work}".rstrip()
        )
    total_jobs = sum(p.jobs for p in plans.values())
    gpu = sum(p.gpu_hours_asked for p in plans.values())
    cpu = sum(p.cpu_hours_asked for p in plans.values())
    tok_total = sum(p.gpu_hours_tokens or 0 for p in plans.values())
    lines.append(f"{'total':38s} {total_jobs:6d} {'':8s} {gpu:12.1f} {cpu:12.1f} {tok_total:13.1f}")
    lines += [
        "",
        "GPU-h / CPU-h asked: each job's GPUs (CPUs) x its time limit (resources runtime); an upper bound.",
        f"GPU-h tokens: each generation job's token bound (its prompts as the paper counted them where it "
        f"did, marked 'expected' below) x {EXPECTED_FRACTION} (the share of max_new_tokens "
        "an answer is expected to use: a guess) / its vLLM rate (selfplay.plan.tokens: public A100 80GB "
        "measurements of 7B-32B models, https://www.morphllm.com/vllm-benchmarks, scaled by the parameters "
        "per GPU and the GPU's memory bandwidth), x its GPUs; rules without a token count (training, "
        "GRPO's rollouts, CPU jobs) are left out. CPU-h work: the pass matrices' cells at a rate measured "
        "here. over limit: jobs whose expected time exceeds their runtime.",
        *notes,
    ]
    for track in [t for t in BUDGETS if t in cfg and t in (cfg.get("tracks") or [])]:
        hours, source = BUDGETS[track]
        if hours is None:
            lines.append(f"Budget ({track}): {source}.")
        else:
            lines.append(
                f"Budget ({track}): {hours} GPU-hours, {source}; here: {tok_total:.0f} GPU-hours of "
                f"generation from token counts ({tok_total / hours:.2f}x; training not included), "
                f"{gpu:.0f} GPU-hours asked ({gpu / hours:.1f}x, an upper bound)."
            )
    return "\n".join(lines)


def plan(configfiles: list[str], repo: str | Path = ".") -> tuple[dict[str, RulePlan], str]:
    from snakemake.common.configfile import load_configfile
    from snakemake.utils import update_config

    cfg: dict = {}
    for path in configfiles:
        if not Path(path).is_file():
            raise UserError(f"--configfile {path}: no such file")
        update_config(cfg, load_configfile(str(path)))
    plans = parse_plan(dry_run(configfiles, repo))
    cfg = _prepared(cfg)
    notes = token_estimates(cfg, plans) + checkpoint_notes(cfg)
    return plans, report(configfiles, cfg, plans, notes)


def _prepared(cfg: dict) -> dict:
    """The config with the schema's defaults, as the workflow sees it."""
    from ..config import prepare_config

    model = cfg.get("model") or {}
    folder = model.get("path") if model.get("source") == "local" else f"resources/models/{model.get('name')}"
    return prepare_config(cfg, folder)
