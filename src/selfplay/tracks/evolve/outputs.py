"""What an EvolveCoder config (paper 002) builds: its tables and figures, each round's
files, Table 3's benchmark cells and models, and the bundle's parts. rules/evolve.smk
wires these into rules; the logic lives here so it is tested without Snakemake.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import layout
from ...evaluate.settings import track_runs

FIGURES = (1, 2, 4, 5, 6)


@dataclass(frozen=True)
class EvolveOutputs:
    root: str  # results/evolve/<experiment>
    rounds: list[int]  # 0..R
    round_files: dict[int, list[str]]  # round -> its (suite, matrix, dataset) files
    table3_runs: list[tuple[str, str, str]]  # (benchmark, mode, model) of Table 3's cells
    table3_models: list[str]  # Table 3's rows, in run order
    report: list[str]  # what `all` builds for the track


def evolve_outputs(cfg: dict) -> EvolveOutputs:
    ev = cfg["evolve"]
    root = layout.exp_dir(cfg, "evolve")
    rounds = list(range(int(ev["rounds"]) + 1))
    table3_runs = track_runs(ev) if "benchmarks" in ev else []
    report = (
        [f"results/tables/evolve/{t}.{e}" for t in ("table1", "table2", "yield") for e in ("csv", "md")]
        + [f"results/figures/evolve/figure{i}.{e}" for i in FIGURES for e in ("png", "pdf")]
        + ([f"results/tables/evolve/table3.{e}" for e in ("csv", "md")] if table3_runs else [])
    )
    return EvolveOutputs(
        root=root,
        rounds=rounds,
        round_files={
            r: [f"{root}/round{r}/{f}.jsonl" for f in ("suite", "matrix", "dataset")] for r in rounds
        },
        table3_runs=table3_runs,
        table3_models=list(dict.fromkeys(t for _, _, t in table3_runs)),
        report=report,
    )


def bundle_files(cfg: dict, out: EvolveOutputs) -> dict[str, list[str]]:
    """The track's files for a bundle, by part (rules/common.smk's track_bundle_parts adds
    the logs): the seeds, every model's recordings, the rounds' files and the GRPO adapters."""
    root = out.root
    seeds = ("seeds.jsonl", "seeds.skipped.jsonl", "embeddings.npy", "embeddings.json", "dedup.json")
    return {
        "data": [f"{root}/seeds/{f}" for f in seeds] + layout.eval_items_files(cfg, "evolve"),
        "recordings": [f"{root}/round0/refine.jsonl"]
        + [f"{root}/pool/{m['name']}.jsonl" for m in cfg["evolve"]["pool"]["models"]]
        + [f"{root}/round{r}/evolve.jsonl" for r in out.rounds[1:]]
        + [f"{root}/grpo/r{r}/rollouts.jsonl" for r in out.rounds]
        + layout.eval_files(cfg, "evolve", ""),
        "verdicts": [f"{root}/pool/solutions.jsonl"]
        + [p for r in out.rounds for p in out.round_files[r]]
        + layout.eval_files(cfg, "evolve", ".scored"),
        "tables": [p for p in out.report if p.startswith("results/tables/")]
        + [f"results/figures/evolve/figure{i}.csv" for i in FIGURES],
        "figures": [p for p in out.report if p.startswith("results/figures/")],
        "trainsets": [],
        "adapters": [layout.grpo_adapter(cfg, "evolve", r) for r in out.rounds],
    }
