"""What the SInQ and GASP configs build (selfplay.tracks.<track>.outputs, formerly Python
at the top of their rules files): the paper configs' evaluated tags, filter inputs and
tables, and the optional figures left out where the evaluation runs lack their models."""

from __future__ import annotations

import copy

import pytest
from test_config_loading import load_as_snakemake

from selfplay.config import prepare_config
from selfplay.tracks.gasp import layout as gasp_layout
from selfplay.tracks.gasp.outputs import bundle_files as gasp_bundle
from selfplay.tracks.gasp.outputs import gasp_outputs
from selfplay.tracks.gasp.outputs import phase_jobs as gasp_phase_jobs
from selfplay.tracks.gasp.outputs import selected_bundle_files as gasp_selected_bundle
from selfplay.tracks.sinq.outputs import bundle_files as sinq_bundle
from selfplay.tracks.sinq.outputs import sinq_outputs


def paper(name: str) -> dict:
    cfg = load_as_snakemake((f"config/papers/{name}.yaml",))
    prepare_config(cfg, "unused")
    return cfg


@pytest.fixture(scope="module")
def gasp_cfg():
    return paper("gasp")


@pytest.fixture(scope="module")
def sinq_cfg():
    return paper("sinq")


def test_gasp_evaluates_each_methods_checkpoints_on_its_own_schedule(gasp_cfg):
    cfg = copy.deepcopy(gasp_cfg)
    g = cfg["gasp"]
    g["methods"], g["seeds"] = ["gasp", "real_rl"], [0, 1]
    g["iterations"], g["eval_every"] = 5, 2
    g["overrides"] = {"real_rl": {"iterations": 3, "eval_every": 5}}
    out = gasp_outputs(cfg)
    assert out.tags == ["base", "azr"] + [
        "ck_gasp_s0_i2",
        "ck_gasp_s0_i4",
        "ck_gasp_s0_i5",
        "ck_gasp_s1_i2",
        "ck_gasp_s1_i4",
        "ck_gasp_s1_i5",
        "ck_real_rl_s0_i3",
        "ck_real_rl_s1_i3",
    ]
    # sampled and goalposts at every tag; greedy (Table 3) at base and AZR, and at each run's
    # selected checkpoint once its selection file names it
    greedy = len(g["evaluation"]["greedy"]["benchmarks"])
    assert len(out.evals) == len(out.tags) * 2 + 2 * greedy
    assert {t for b, _, t in out.evals if b == "humaneval_plus"} == {"base", "azr"}
    assert out.run_tags[("gasp", 1)] == ["ck_gasp_s1_i2", "ck_gasp_s1_i4", "ck_gasp_s1_i5"]
    assert out.selections[("real_rl", 0)] == f"{out.root}/real_rl/s0/selection.json"
    assert len(out.selections) == len(out.runs) == 4
    assert out.selected_evals(["ck_gasp_s0_i4"]) == [(b, md, "ck_gasp_s0_i4") for b, md in out.greedy]
    assert out.iters[("real_rl", 1)] == range(1, 4)
    assert (
        len(out.phase_dirs)
        == len(set(out.phase_dirs))
        == 2 * (5 * len(gasp_layout.phase_order("gasp")) + 3 * len(gasp_layout.phase_order("real_rl")))
    )


def test_gasp_counts_every_phase_job_of_the_runs_and_the_final_rl_filter(gasp_cfg):
    out = gasp_outputs(gasp_cfg)
    final = gasp_cfg["gasp"]["goalposts"]["filter"]["final_rl"]
    assert gasp_phase_jobs(gasp_cfg, out) == len(out.phase_dirs) + final["iterations"] * len(final["seeds"])
    assert gasp_phase_jobs(gasp_cfg, out) == 6014  # the paper plan's: 2,436 teacher, 1,434 solver, 2,144 real
    no_filter = copy.deepcopy(gasp_cfg)
    no_filter["gasp"]["goalposts"]["filter"]["final_rl"] = None
    assert gasp_phase_jobs(no_filter, gasp_outputs(no_filter)) == len(out.phase_dirs)


def test_gasp_tags_name_their_checkpoint_and_azr_its_own_model(gasp_cfg):
    out = gasp_outputs(gasp_cfg)
    root = f"results/gasp/{gasp_cfg['gasp']['experiment']}"
    assert out.tag_adapter("ck_gasp_s1_i2") == gasp_layout.checkpoint(root, "gasp", 1, 2)
    assert out.tag_adapter("azr") == [] and out.tag_model("azr") == out.azr
    assert out.tag_adapter("base") is None and out.tag_adapter("grpo_r1") is None
    assert out.tag_model("ck_gasp_s1_i2") is None
    no_azr = copy.deepcopy(gasp_cfg)
    no_azr["gasp"]["azr_checkpoint"] = None
    out = gasp_outputs(no_azr)
    assert "azr" not in out.tags and out.tag_adapter("azr") is None


def test_gasp_goalpost_filter_reads_each_filter_models_scores(gasp_cfg):
    out = gasp_outputs(gasp_cfg)
    filt = gasp_cfg["gasp"]["goalposts"]["filter"]
    tags = [t for t, _ in out.filter_runs]
    for name in filt["models"]:
        assert any(t == name or t.startswith(f"ck_{name}_s") for t in tags)
    for t, scored in out.filter_runs:
        assert scored.endswith(f"/eval/{filt['benchmark']}/{t}/{filt['mode']}.scored.jsonl")


def test_gasp_bundle_parts(gasp_cfg):
    out = gasp_outputs(gasp_cfg)
    parts = gasp_bundle(gasp_cfg, out)
    solver = next(d for d in out.phase_dirs if gasp_layout.answers_phase(d))
    teacher = next(d for d in out.phase_dirs if not gasp_layout.answers_phase(d))
    assert (
        f"{solver}/answers.jsonl" in parts["verdicts"]
        and f"{solver}/teacher.jsonl" not in parts["recordings"]
    )
    assert (
        f"{teacher}/candidates.jsonl" in parts["verdicts"]
        and f"{teacher}/teacher.jsonl" in parts["recordings"]
    )
    assert parts["adapters"] == [f"{d}/state" for d in out.phase_dirs]
    # a selected checkpoint's greedy files are bundled only with the selection
    selected = "ck_gasp_s0_i48"
    assert not [f for f in parts["recordings"] + parts["verdicts"] if f"/{selected}/greedy" in f]
    later = gasp_selected_bundle(gasp_cfg, out, [selected])
    benches = gasp_cfg["gasp"]["evaluation"]["greedy"]["benchmarks"]
    assert later["recordings"] == [f"{out.root}/eval/{b}/{selected}/greedy.jsonl" for b in benches]
    assert later["verdicts"] == [f"{out.root}/eval/{b}/{selected}/greedy.scored.jsonl" for b in benches]


def test_sinq_paper_config_builds_every_benchmark_table_and_both_figures(sinq_cfg):
    out = sinq_outputs(sinq_cfg)
    assert set(out.layouts) == {"table2", "table3", "table4"}
    assert (
        "results/figures/sinq/figure3.png" in out.reports
        and "results/figures/sinq/figure4.png" in out.reports
    )
    assert (
        out.figure4_labels["o1|cot"] == "o1-2024-12-17 CoT"
        and out.figure4_labels["bob|greedy"] == "Trained Bob"
    )
    assert out.figure3_labels["base|cot"] == "Base CoT"
    parts = sinq_bundle(sinq_cfg, out)
    assert "results/figures/sinq/figure4.csv" in parts["tables"]
    # Table 2 and Figure 3 are the base model against the trained Bob, with and without
    # CoT (the paper's 4 columns); the served reasoning models are Figure 4's alone
    rows, columns, _ = out.layouts["table2"]
    assert len(columns) == 4 and {t for _, _, t in out.figure3_runs} == {"base", "bob"}
    assert sorted(out.figure3_labels) == ["base|cot", "base|greedy", "bob|cot", "bob|greedy"]
    assert {t for _, _, t in out.figure4_runs} >= {"o1", "o3_mini", "r1", "r1_distill_llama70b"}


def test_sinq_figure4_needs_a_served_model(sinq_cfg):
    cfg = copy.deepcopy(sinq_cfg)
    cfg["sinq"]["benchmarks"]["other_models"] = []
    runs = cfg["sinq"]["benchmarks"]["runs"]
    for name, spec in list(runs.items()):
        if isinstance(spec, dict):  # per-benchmark model lists may name the removed models
            runs[name] = spec["modes"]
    out = sinq_outputs(cfg)
    assert out.figure4_runs == [] and not any("figure4" in p for p in out.reports)
    assert "figure4.csv" not in " ".join(sinq_bundle(cfg, out)["tables"])


def test_the_bundle_takes_each_tracks_parts_in_order_then_the_shared_check_once():
    from selfplay.bundle.pack import merge_parts

    tracks = [{"data": ["a", "shared"], "tables": ["t1"]}, {"data": ["b"], "log_dirs": ["logs/x"]}]
    shared = {"data": ["shared", "c", "c"], "log_dirs": ["logs/eval"], "recordings": ["r"]}
    assert merge_parts(tracks, shared) == {
        "data": ["a", "shared", "b", "c"],
        "tables": ["t1"],
        "log_dirs": ["logs/x", "logs/eval"],
        "recordings": ["r"],
    }
    assert merge_parts(tracks, {}) == {"data": ["a", "shared", "b"], "tables": ["t1"], "log_dirs": ["logs/x"]}


def test_psv_bundle_holds_table1s_runs_and_only_redistributable_sets():
    from selfplay.tracks.psv import layout as psv_layout

    cfg = paper("psv")
    parts = psv_layout.bundle_files(cfg)
    sets = cfg["psv"]["problem_sets"]
    shared = [n for n, v in sets.items() if v["source"] == "embedded" or v.get("redistribute")]
    assert parts["data"] == [psv_layout.problem_set(cfg, n) for n in shared]
    assert not any("dafny2verus" in p for p in parts["data"])  # no licence: never bundled
    assert parts["trainsets"] == sorted(set(parts["trainsets"])) and parts["adapters"]
    assert all(p.endswith("/train_solver.jsonl") for p in parts["trainsets"])
    solves = [p for p in parts["recordings"] if p.endswith("/solve.jsonl")]
    assert [p.replace("/solve.jsonl", "/solutions.jsonl") for p in solves] == [
        p for p in parts["verdicts"] if p.endswith("/solutions.jsonl")
    ]
    assert parts["figures"] == [p for p in psv_layout.REPORT if p.startswith("results/figures/")]


def test_evolve_table3_only_where_the_config_evaluates_and_one_adapter_per_round():
    from selfplay.tracks.evolve.outputs import bundle_files as evolve_bundle
    from selfplay.tracks.evolve.outputs import evolve_outputs

    cfg = paper("evolve")
    out = evolve_outputs(cfg)
    rounds = int(cfg["evolve"]["rounds"])
    assert out.rounds == list(range(rounds + 1))
    assert "results/tables/evolve/table3.md" in out.report
    assert out.table3_models[0] == "base" and f"grpo_r{rounds}" in out.table3_models
    parts = evolve_bundle(cfg, out)
    root = f"results/evolve/{cfg['evolve']['experiment']}"
    assert parts["adapters"] == [f"{root}/grpo/r{r}/adapter" for r in range(rounds + 1)]
    assert f"{root}/round{rounds}/dataset.jsonl" in parts["verdicts"]
    assert f"{root}/round0/evolve.jsonl" not in parts["recordings"]  # round 0 refines, it does not evolve
    no_eval = copy.deepcopy(cfg)
    del no_eval["evolve"]["benchmarks"]
    assert not any("table3" in p for p in evolve_outputs(no_eval).report)
