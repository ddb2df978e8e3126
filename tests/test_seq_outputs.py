"""What the Haskell track builds for a config (selfplay.tracks.seq.outputs, formerly the
top of rules/seq.smk): the paper config's tables and figures, and the optional ones left
out where the config's evaluation runs lack a model they compare."""

from __future__ import annotations

import copy

import pytest
from test_config_loading import load_as_snakemake

from selfplay.config import prepare_config
from selfplay.tracks.seq.outputs import bundle_files, round_figure_name, seq_outputs


@pytest.fixture(scope="module")
def paper_cfg():
    cfg = load_as_snakemake(("config/papers/seq.yaml",))
    prepare_config(cfg, "unused")
    return cfg


def test_the_paper_config_builds_every_e0_table_and_figure(paper_cfg):
    out = seq_outputs(paper_cfg)
    tables = [
        f"results/tables/seq/e0/{t}.md"
        for t in ("table2", "table6", "data_yield", "table3", "table4", "table5")
    ]
    figures = [f"results/figures/seq/e0/figure{n}.png" for n in (3, 6, 7, 4, 5, 8, 9)]
    assert sorted(out.reports) == sorted(tables + figures)
    assert out.final_alice == "alice_r7"
    assert out.round_figures == {"humaneval_hs": "figure8", "mbpp_hs": "figure9"}
    assert out.codegen_files["mbpp_hs_alice"] == "results/seq/e0/eval/mbpp_hs/alice_r7/sampled.json"
    assert out.round_inputs(paper_cfg, "mbpp_hs") == {
        f"round{r}": f"results/seq/e0/eval/mbpp_hs/alice_r{r}/sampled.json" for r in range(1, 8)
    }


def test_table7_reads_each_regimes_own_run(paper_cfg):
    out = seq_outputs(paper_cfg)
    assert out.regime_runs == ["e0", "e1", "e2", "e3"]
    assert (
        out.table7_inputs["e2|humaneval_hs|sampled|bob"]
        == "results/seq/e2/eval/humaneval_hs/bob/sampled.json"
    )
    assert out.regime_table6 == [f"results/tables/seq/{e}/table6.csv" for e in ("e0", "e1", "e2", "e3")]
    assert out.figure19_runs == ["e2", "e3"]  # H.4.4: E2 vs E3, the yield-matched regimes
    from selfplay.evaluate.benchmarks.equibench import CATEGORIES

    cats = [r["group"] for r in out.table7_rows if r["benchmark"] == "equibench" and r["metric"] == "f1"]
    assert cats == ["OJ_A", "OJ_V", "OJ_VA", "STOKE", "TVM", "DCE"] and set(cats) == set(
        CATEGORIES
    )  # paper's rows
    cfg = copy.deepcopy(paper_cfg)
    cfg["seq"]["regimes"]["experiments"] = ["e0", "e1"]
    assert seq_outputs(cfg).figure19_runs == ["e0", "e1"]


def test_a_comparison_needs_both_its_models(paper_cfg):
    cfg = copy.deepcopy(paper_cfg)
    runs = cfg["seq"]["benchmarks"]["runs"]
    runs["pysecdb"] = {"modes": list(runs["pysecdb"]), "models": ["bob"]}
    runs["equibench"] = {"modes": list(runs["equibench"]), "models": ["base"]}
    out = seq_outputs(cfg)
    assert "table4" not in out.base_vs_trained and "table5" in out.base_vs_trained
    assert not out.equibench
    assert not any("figure4" in p or "figure5" in p or "table4" in p for p in out.reports)


def test_other_experiments_name_their_round_figures_after_the_benchmark():
    assert round_figure_name("e1", "mbpp_hs") == "figure11"
    assert round_figure_name("mine", "mbpp_hs") == "alice_rounds_mbpp_hs"
    assert round_figure_name("e0", "haskell_mini") == "alice_rounds_haskell_mini"


def test_the_bundle_pairs_each_table_with_its_csv(paper_cfg):
    out = seq_outputs(paper_cfg)
    parts = bundle_files(paper_cfg, out)
    assert "results/tables/seq/e0/table3.csv" in parts["tables"]
    assert "results/figures/seq/e0/figure8.csv" in parts["tables"]
    assert parts["figures"] == [p for p in out.reports if p.endswith(".png")]
    # proof attempts 1..K, the trained Bob only in the evaluation stages
    assert "results/seq/e0/round1/proof_gen1/shard0.jsonl" in parts["recordings"]
    assert "results/seq/e0/round1/bob_trained/shard0.jsonl" not in parts["recordings"]
    assert "results/seq/e0/eval_test/labeled_trained/shard0.jsonl" in parts["verdicts"]
