"""What a SInQ config (paper 001) builds: its tables and figures, the benchmark tables'
layouts and the runs Figures 3 and 4 draw, where the config's evaluation has them.
rules/sinq.smk wires these into rules; the logic lives here so it is tested without
Snakemake.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import layout
from ...evaluate.layout import column_label, table_layout
from ...evaluate.settings import track_runs
from .evaluation import FIGURE3, FIGURE4, TABLES

# the intrinsic tables and figure, built by every SInQ run
GAME_REPORTS = [
    "results/tables/sinq/table1.csv",
    "results/tables/sinq/table1.md",
    "results/tables/sinq/yield.csv",
    "results/tables/sinq/yield.md",
    "results/figures/sinq/figure2.png",
    "results/figures/sinq/figure2.pdf",
]


@dataclass(frozen=True)
class SinqOutputs:
    layouts: dict[str, tuple]  # benchmark table name -> (rows, columns, cells), tables with a row only
    figure3_runs: list[tuple[str, str, str]]  # (benchmark, mode, model) of Figure 3's bars
    figure3_labels: dict[str, str]  # "<model>|<mode>" -> bar label
    figure4_runs: list[tuple[str, str, str]]  # Figure 4's: empty unless a served model is among them
    figure4_labels: dict[str, str]  # "<model>|<mode>" -> bar label
    eval_reports: list[str]  # the benchmark tables and figures the config's runs allow
    reports: list[str]  # what `all` builds for the track


def sinq_outputs(cfg: dict) -> SinqOutputs:
    section = cfg["sinq"]["benchmarks"]
    runs = track_runs(cfg["sinq"])
    other = {m["tag"]: m for m in section["other_models"]}
    # The tables and Figure 3 compare the base model with the trained Bob (the paper's
    # gpt-4o-mini and sinq-gpt-4o-mini); the served reasoning models are Figure 4's alone.
    own = [r for r in runs if r[2] not in other]
    layouts = {name: table_layout(own, spec["benchmarks"]) for name, spec in TABLES.items()}
    layouts = {name: lay for name, lay in layouts.items() if lay[0]}
    eval_reports = [f"results/tables/sinq/{n}.{ext}" for n in layouts for ext in ("csv", "md")]
    figure3_runs = [r for r in own if r[0] == FIGURE3["benchmark"]]
    if FIGURE3["benchmark"] in section["runs"]:
        eval_reports += [f"results/figures/sinq/figure3.{ext}" for ext in ("png", "pdf")]
    figure4_runs = [r for r in runs if r[0] == FIGURE4["benchmark"]]
    if not any(t in other for _, _, t in figure4_runs):
        figure4_runs = []
    if figure4_runs:
        eval_reports += [f"results/figures/sinq/figure4.{ext}" for ext in ("png", "pdf")]
    figure4_labels = {
        f"{t}|{m}": (other[t]["model"] + (" CoT" if m == "cot" else "") if t in other else column_label(m, t))
        for _, m, t in figure4_runs
    }
    return SinqOutputs(
        layouts=layouts,
        figure3_runs=figure3_runs,
        figure3_labels={f"{t}|{m}": column_label(m, t) for _, m, t in figure3_runs},
        figure4_runs=figure4_runs,
        figure4_labels=figure4_labels,
        eval_reports=eval_reports,
        reports=GAME_REPORTS + eval_reports,
    )


def bundle_files(cfg: dict, out: SinqOutputs) -> dict[str, list[str]]:
    """The track's files for a bundle, by part (rules/common.smk's track_bundle_parts adds
    the training sets, adapters and logs)."""
    dataset = cfg["sinq"]["sources"]["dataset"]
    stages = layout.stages(cfg, "sinq")
    return {
        "data": sorted({f"resources/data/sinq/{dataset}_{layout.stage_split(s)}.jsonl" for s in stages})
        + layout.eval_items_files(cfg, "sinq"),
        "recordings": [
            p
            for s in stages
            for folder in ["alice"] + [f"bob_{who}" for who in layout.whos_of(s)]
            for p in layout.shard_files(cfg, "sinq", s, folder)
        ]
        + layout.eval_files(cfg, "sinq", ""),
        "verdicts": [
            p
            for s in stages
            for p in layout.candidates(cfg, "sinq", s)
            + [q for who in layout.whos_of(s) for q in layout.labeled(cfg, "sinq", s, who)]
        ]
        + layout.eval_files(cfg, "sinq", ".scored"),
        # compared byte for byte by `selfplay bundle replay`; figures are kept as they are
        "tables": [p for p in GAME_REPORTS if p.endswith((".csv", ".md"))]
        + ["results/tables/sinq/yield_reasons.csv", "results/figures/sinq/figure2.csv"]
        + [p for p in out.eval_reports if not p.endswith((".png", ".pdf"))]
        + (
            ["results/figures/sinq/figure3.csv"]
            if FIGURE3["benchmark"] in cfg["sinq"]["benchmarks"]["runs"]
            else []
        )
        + (["results/figures/sinq/figure4.csv"] if out.figure4_runs else []),
        "figures": [p for p in out.reports if p.endswith((".png", ".pdf"))],
    }
