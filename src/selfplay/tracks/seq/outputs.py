"""What the Haskell track (paper 000) builds for a config: its tables' and figures' paths,
the benchmark cells each reads, and which of the optional tables and figures the config's
evaluation runs allow. rules/seq.smk wires these into rules; the logic lives here so it
is tested without Snakemake.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import layout
from ...evaluate import model_tags
from ...evaluate.settings import track_runs
from .evaluation import (
    BASE_VS_TRAINED,
    CODEGEN,
    EQUIBENCH_FIGURES,
    ROUND_FIGURES,
    TABLE7_CATEGORIES,
    table7_rows,
)

# The translation to Haskell does not depend on the regime: E1-E3 reuse E0's.
TRANSLATE_DIR = "results/seq/translate"
# Figure 19 compares the two regimes whose P was set to match yields (App. F, H.4.4).
YIELD_MATCHED = ("e2", "e3")


@dataclass(frozen=True)
class SeqOutputs:
    tables: str  # results/tables/seq/<experiment>: the regimes E0-E3 side by side
    figures: str
    attempts: int  # proof attempts per candidate
    dataset: str
    final_alice: str  # the final Alice's model tag (alice_r<R>)
    codegen: list[str]  # Table 3's benchmarks: the Haskell code generation ones the config runs
    first_mode: dict[str, str]  # benchmark -> the first mode it runs in (the mode its tables read)
    base_vs_trained: dict[str, dict]  # Tables 4-5: name -> spec, where base and Bob are both run
    equibench: bool  # Figures 4-5: EquiBench is run with base and Bob
    round_figures: dict[str, str]  # benchmark -> figure name, where every round's Alice is run
    codegen_files: dict[str, str]  # Table 3's cells: "<bench>_<agent>" -> metrics file
    regime_runs: list[str]  # Tables 7-8 and Figure 19's columns: the regimes' experiments
    translator: dict  # the translation model's spec
    reports: list[str]  # what `all` builds for the track
    table7_rows: list[dict]
    table7_inputs: dict[str, str]  # "<experiment>|<bench>|<mode>|<model>" -> metrics file
    regime_table6: list[str]  # each regime's Table 6 (CSV)
    figure19_runs: list[str]  # Figure 19's lines: the yield-matched E2 and E3 (all regimes without them)

    def round_inputs(self, cfg: dict, bench: str) -> dict[str, str]:
        """A per-round figure's inputs: round<k> -> round k's Alice's metrics file."""
        return {
            f"round{r}": layout.eval_summary(
                cfg, "seq", bench, self.first_mode[bench], model_tags.alice_round(r)
            )
            for r in range(1, layout.n_rounds(cfg, "seq") + 1)
        }


def round_figure_name(experiment: str, bench: str) -> str:
    """Paper 000's number of a per-round figure of Alice (App. H), or alice_rounds_<bench>."""
    number = ROUND_FIGURES.get(experiment, {}).get(bench)
    return f"figure{number}" if number is not None else f"alice_rounds_{bench}"


def seq_outputs(cfg: dict) -> SeqOutputs:
    seq = cfg["seq"]
    experiment = seq["experiment"]
    rounds = layout.n_rounds(cfg, "seq")
    runs = track_runs(seq)
    tables = f"results/tables/seq/{experiment}"
    figures = f"results/figures/seq/{experiment}"
    final_alice = model_tags.alice_round(rounds)

    first_mode: dict[str, str] = {}
    for bench, mode, _ in runs:
        first_mode.setdefault(bench, mode)
    has = {(b, t) for b, _, t in runs}
    codegen = [b for b in CODEGEN if b in seq["benchmarks"]["runs"]]
    base_vs_trained = {
        name: spec
        for name, spec in BASE_VS_TRAINED.items()
        if {(spec["benchmark"], model_tags.BASE), (spec["benchmark"], model_tags.BOB)} <= has
    }
    equibench = {("equibench", model_tags.BASE), ("equibench", model_tags.BOB)} <= has
    round_benches = [
        b for b in codegen if all((b, model_tags.alice_round(r)) in has for r in range(1, rounds + 1))
    ]
    round_figures = {b: round_figure_name(experiment, b) for b in round_benches}
    agents = {"base": model_tags.BASE, "alice": final_alice, "bob": model_tags.BOB}
    codegen_files = {
        f"{b}_{a}": layout.eval_summary(cfg, "seq", b, first_mode[b], tag)
        for b in codegen
        for a, tag in agents.items()
    }

    reports = [f"{tables}/{t}.md" for t in ("table2", "table6", "data_yield")] + [
        f"{figures}/figure{n}.png" for n in (3, 6, 7)
    ]
    if codegen:
        reports.append(f"{tables}/table3.md")
    reports += [f"{tables}/{n}.md" for n in base_vs_trained]
    reports += [f"{figures}/{n}.png" for n in (EQUIBENCH_FIGURES if equibench else {})]
    reports += [f"{figures}/{n}.png" for n in round_figures.values()]

    regime_runs = seq["regimes"]["experiments"] or [experiment]
    figure19_runs = (
        [e for e in regime_runs if e in YIELD_MATCHED]
        if set(YIELD_MATCHED) <= set(regime_runs)
        else regime_runs
    )
    rows = table7_rows(runs, final_alice, list(TABLE7_CATEGORIES))
    table7_inputs = {
        f"{e}|{r['benchmark']}|{r['mode']}|{r['model']}": layout.eval_summary(
            cfg, "seq", r["benchmark"], r["mode"], r["model"], experiment=e
        )
        for e in regime_runs
        for r in rows
    }
    return SeqOutputs(
        tables=tables,
        figures=figures,
        attempts=int(seq["proof"]["attempts"]),
        dataset=seq["sources"]["dataset"],
        final_alice=final_alice,
        codegen=codegen,
        first_mode=first_mode,
        base_vs_trained=base_vs_trained,
        equibench=equibench,
        round_figures=round_figures,
        codegen_files=codegen_files,
        regime_runs=regime_runs,
        # a setting of its own (the paper: DeepSeek-R1-Distill-Llama-70B)
        translator=seq["translate"]["model"] or cfg["model"],
        reports=reports,
        table7_rows=rows,
        table7_inputs=table7_inputs,
        regime_table6=[f"results/tables/seq/{e}/table6.csv" for e in regime_runs],
        figure19_runs=figure19_runs,
    )


def bundle_files(cfg: dict, out: SeqOutputs) -> dict[str, list[str]]:
    """The track's files for a bundle, by part (the parts every track has are added by
    rules/common.smk's track_bundle_parts)."""
    stages = layout.stages(cfg, "seq")
    attempts = range(1, out.attempts + 1)

    def shards(folders_of) -> list[str]:
        return [p for s in stages for f in folders_of(s) for p in layout.shard_files(cfg, "seq", s, f)]

    tables = [p for p in out.reports if p.endswith(".md")]
    figures = [p for p in out.reports if p.endswith(".png")]
    return {
        "data": [
            f"resources/data/seq/{out.dataset}_{split}{kind}.jsonl"
            for split in ("train", "test")
            for kind in ("", ".rejected")
        ]
        + layout.eval_items_files(cfg, "seq"),
        "recordings": [f"{TRANSLATE_DIR}/generations.jsonl"]
        + shards(
            lambda s: (
                ["alice"] + [f"proof_gen{a}" for a in attempts] + [f"bob_{w}" for w in layout.whos_of(s)]
            )
        )
        + layout.eval_files(cfg, "seq", ""),
        "verdicts": [f"{TRANSLATE_DIR}/translated.jsonl"]
        + shards(
            lambda s: (
                ["checked"]
                + [f"proof_check{a}" for a in attempts]
                + ["candidates"]
                + [f"labeled_{w}" for w in layout.whos_of(s)]
            )
        )
        + layout.eval_files(cfg, "seq", ".scored"),
        # each Markdown table's CSV twin and each figure's data are compared byte for byte too
        "tables": tables
        + [p[: -len(".md")] + ".csv" for p in tables]
        + [p[: -len(".png")] + ".csv" for p in figures],
        "figures": figures,
    }
