"""GASP's tables and figures from hand-written run files (no model): the yield table,
checkpoint selection, Tables 1-4, the goalpost heatmap and the figures' data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from selfplay.errors import UserError
from selfplay.records import write_json, write_jsonl
from selfplay.report import gasp as report

# --- fixtures ---------------------------------------------------------------------


def candidate(**over):
    row = {
        "iteration": 0,
        "phase": "lemma",
        "attempt": 0,
        "index": 0,
        "parent": "g1",
        "axis": "io",
        "parsed": True,
        "parse_error": None,
        "valid": True,
        "invalid_reason": None,
        "novel": True,
        "max_similarity": 0.2,
        "k": 0,
        "n": 10,
        "in_band": False,
        "accepted": False,
        "reward": -0.5,
        "outcome": "scored",
        "task_id": None,
    }
    row.update(over)
    return row


def teacher_files(
    tmp_path, name, phase, candidates, iteration=0, target=2, ended="attempts_spent", attempts=3
):
    folder = tmp_path / name / f"iter{iteration}" / phase
    folder.mkdir(parents=True)
    write_json(
        folder / "phase.json",
        {
            "iteration": iteration,
            "phase": phase,
            "attempts": attempts,
            "candidates": len(candidates),
            "target": target,
            "accepted": sum(c["accepted"] for c in candidates),
            "ended": ended,
            "updated": True,
        },
    )
    write_jsonl(folder / "candidates.jsonl", candidates)
    return str(folder / "phase.json"), str(folder / "candidates.jsonl")


def answers_file(tmp_path, name, rows, iteration=0, tasks=None):
    """The solver's answers.jsonl; with ``tasks``, also its phase.json (then both paths)."""
    folder = tmp_path / name / f"iter{iteration}" / "solver"
    folder.mkdir(parents=True)
    write_jsonl(folder / "answers.jsonl", rows)
    if tasks is None:
        return str(folder / "answers.jsonl")
    write_json(
        folder / "phase.json",
        {
            "iteration": iteration,
            "phase": "solver",
            "tasks": tasks,
            "answers": len(rows),
            "correct": sum(r["correct"] for r in rows),
        },
    )
    return str(folder / "phase.json"), str(folder / "answers.jsonl")


def metrics_file(tmp_path, name, **values):
    path = tmp_path / "metrics" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(
        path,
        {
            "metric": "pass@k",
            "mode": "sampled",
            "n": 3,
            **{k.replace("pass", "pass@"): v for k, v in values.items()},
        },
    )
    return str(path)


def scored_file(tmp_path, name, passed: dict[str, list[bool]]):
    path = tmp_path / "scored" / f"{name}.scored.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(
        path, [{"id": g, "sample": i, "passed": p} for g, ps in passed.items() for i, p in enumerate(ps)]
    )
    return str(path)


def out(tmp_path, stem, *exts):
    return [str(tmp_path / f"{stem}.{e}") for e in exts]


# --- yield table ------------------------------------------------------------------


def lemma_candidates():
    return [
        candidate(
            parsed=False,
            parse_error="no_fence: missing python block",
            valid=None,
            novel=None,
            k=None,
            reward=-1.0,
            outcome="format_error",
        ),
        candidate(
            index=1,
            valid=False,
            invalid_reason="raises: ZeroDivisionError",
            novel=None,
            k=None,
            outcome="invalid",
        ),
        candidate(
            index=2, valid=False, invalid_reason="raises: KeyError", novel=None, k=None, outcome="invalid"
        ),
        candidate(
            index=3, valid=False, invalid_reason="unsafe: import os", novel=None, k=None, outcome="invalid"
        ),
        candidate(index=4, novel=False, max_similarity=0.97, k=None, outcome="not_novel"),
        candidate(index=5, k=0),
        candidate(index=6, k=4, in_band=True, accepted=True, reward=0.815, task_id="t1"),
        candidate(index=7, k=4, in_band=True, accepted=True, reward=0.815, task_id="t2"),
    ]


def test_yield_counts_each_stage_of_a_teacher_phase_and_the_solver_forms(tmp_path):
    lemma = teacher_files(tmp_path, "gasp", "lemma", lemma_candidates(), target=2, ended="target_reached")
    lift = teacher_files(tmp_path, "gasp", "lift", [candidate(phase="lift", k=10)], target=2)
    answers = answers_file(
        tmp_path,
        "gasp",
        [
            {
                "iteration": 0,
                "task_id": "t1",
                "kind": "lemma",
                "form": "deduction",
                "format_ok": True,
                "correct": True,
                "reason": None,
                "reward": 1.0,
            },
            {
                "iteration": 0,
                "task_id": "t2",
                "kind": "lemma",
                "form": "deduction",
                "format_ok": False,
                "correct": False,
                "reason": "format",
                "reward": -1.0,
            },
            {
                "iteration": 0,
                "task_id": "t1",
                "kind": "lemma",
                "form": "induction",
                "format_ok": True,
                "correct": False,
                "reason": "wrong",
                "reward": -0.5,
            },
        ],
        tasks=2,
    )
    frame = report.yield_table({"gasp s0": [answers, lift, lemma]}, *out(tmp_path, "y", "csv", "md"))
    assert list(frame["phase"]) == ["lemma", "lift", "solver", "solver"]
    row = frame.iloc[0]
    assert (row["proposed"], row["parsed"], row["valid"], row["novel"], row["scored"]) == (8, 7, 4, 3, 3)
    assert row["invalid (why)"] == "raises:2, unsafe:1"
    assert row["parse errors"] == "no_fence:1"
    assert row["pass-rate histogram (k=0..N)"] == "1 0 0 0 2 0 0 0 0 0 0"
    assert (row["in band"], row["accepted"], row["target M"], row["ended"]) == (2, 2, 2, "target_reached")
    assert row["mean reward"] == round((-1.0 - 0.5 * 5 + 2 * 0.815) / 8, 4)
    lift_row = frame.iloc[1]
    assert (
        lift_row["pass-rate histogram (k=0..N)"] == "0 0 0 0 0 0 0 0 0 0 1"
        and lift_row["ended"] == "attempts_spent"
    )
    induction, deduction = frame.iloc[2], frame.iloc[3]
    assert induction["form"] == "induction" and deduction["form"] == "deduction"
    assert (
        deduction["answered"],
        deduction["format ok"],
        deduction["correct"],
        deduction["mean reward"],
    ) == (2, 1, 1, 0.0)
    assert deduction["tasks"] == 2 and pd.isna(frame.iloc[0]["tasks"])
    md = (tmp_path / "y.md").read_text()
    assert "raises:2, unsafe:1" in md and "target_reached" in md


def test_yield_says_novelty_na_when_nothing_was_checked_and_solver_na_when_nothing_was_accepted(tmp_path):
    unchecked = [candidate(novel=None, max_similarity=None, k=2, reward=-0.5)]
    lemma = teacher_files(tmp_path, "norej", "lemma", unchecked)
    empty = answers_file(tmp_path, "norej", [], iteration=3)
    frame = report.yield_table({"no_rejection s0": [lemma, (empty,)]}, *out(tmp_path, "y", "csv", "md"))
    assert frame.iloc[0]["novel"] is None
    solver = frame[frame["phase"] == "solver"].iloc[0]
    assert solver["iteration"] == 3 and solver["answered"] == 0
    md = (tmp_path / "y.md").read_text()
    assert "novel n/a" in md and "solver n/a" in md


def test_yield_is_byte_identical_whatever_order_the_runs_come_in(tmp_path):
    a = teacher_files(tmp_path, "a", "lemma", lemma_candidates())
    b = teacher_files(tmp_path, "b", "lift", [candidate(phase="lift", k=1, reward=1.0)])
    report.yield_table({"gasp s0": [a], "gasp s1": [b]}, *out(tmp_path, "one", "csv", "md"))
    report.yield_table({"gasp s1": [b], "gasp s0": [a]}, *out(tmp_path, "two", "csv", "md"))
    assert (tmp_path / "one.csv").read_bytes() == (tmp_path / "two.csv").read_bytes()
    assert (tmp_path / "one.md").read_bytes() == (tmp_path / "two.md").read_bytes()


def test_yield_refuses_unknown_files_and_entries_that_mix_or_miss_their_files(tmp_path):
    phase, candidates = teacher_files(tmp_path, "a", "lemma", [candidate()])
    with pytest.raises(UserError, match="candidates.jsonl"):
        report.yield_table({"r": [(phase,)]}, *out(tmp_path, "y", "csv", "md"))
    answers = answers_file(tmp_path, "a", [])
    with pytest.raises(UserError, match="in one entry"):
        report.yield_table({"r": [(answers, candidates)]}, *out(tmp_path, "y", "csv", "md"))
    with pytest.raises(UserError, match="not one of"):
        report.yield_table({"r": [str(tmp_path / "x.txt")]}, *out(tmp_path, "y", "csv", "md"))


# --- checkpoint selection and Tables 1-3 --------------------------------------------


def make_metrics(tmp_path):
    """gasp: 2 seeds x iterations 2, 4, 6; azr and base: one checkpoint each."""
    spec = {
        ("gasp", 0, 2): dict(pass1=0.10, pass20=0.30),
        ("gasp", 0, 4): dict(pass1=0.20, pass20=0.32),
        ("gasp", 0, 6): dict(pass1=0.15, pass20=0.34),
        ("gasp", 1, 2): dict(pass1=0.18, pass20=0.31),
        ("gasp", 1, 4): dict(pass1=0.12, pass20=0.31),
        ("gasp", 1, 6): dict(pass1=0.11, pass20=0.30),
        ("azr", 0, 0): dict(pass1=0.17, pass20=0.31),
        ("base", 0, 0): dict(pass1=0.13, pass20=0.29),
    }
    return {key: metrics_file(tmp_path, f"{key[0]}_{key[1]}_{key[2]}", **v) for key, v in spec.items()}


def test_selection_takes_the_best_value_the_earliest_on_a_tie_and_the_last_without_values(tmp_path):
    metrics = make_metrics(tmp_path)
    assert report.select_checkpoints(metrics, "pass@20") == {
        ("azr", 0): 0,
        ("base", 0): 0,
        ("gasp", 0): 6,
        ("gasp", 1): 2,
    }
    assert report.select_checkpoints(metrics, "pass@1")[("gasp", 0)] == 4
    # pass@5 is in no file: the last checkpoint stands in
    assert report.select_checkpoints(metrics, "pass@5")[("gasp", 1)] == 6
    with pytest.raises(UserError, match="pass@k"):
        report.select_checkpoints(metrics, "best")


def test_table1_means_over_seeds_of_the_selected_checkpoints_with_the_papers_numbers_beside(tmp_path):
    metrics = make_metrics(tmp_path)
    meta = {
        "gasp": {},
        "azr": {},
        "base": {"label": "SmolLM2-135M"},
        "real_rl": {"real_data_training": True, "real_data_guidance": False},
    }
    frame = report.table1(metrics, meta, *out(tmp_path, "t1", "csv", "md"))
    gasp = frame[frame["method"] == "gasp"].iloc[0]
    # pass@20 selects iteration 6 (seed 0) and 2 (seed 1, tie with 4: the earliest)
    assert gasp["checkpoints"] == "s0:6; s1:2"
    assert gasp["pass@1"] == pytest.approx(16.5) and gasp["pass@20"] == pytest.approx(32.5)
    assert gasp["pass@20 std"] == pytest.approx(math.sqrt(2 * 1.5**2), abs=1e-4)
    assert gasp["paper pass@20"] == 33.69 and gasp["paper pass@1 std"] == 0.68
    md = (tmp_path / "t1.md").read_text()
    azr_line = next(line for line in md.splitlines() if line.startswith("| AZR"))
    assert "±" not in azr_line.split("|")[4] and "17.00" in azr_line and "17.49" in azr_line
    assert "| SmolLM2-135M" in md and "| —" in md
    real_line = next(line for line in md.splitlines() if line.startswith("| Real-data RL"))
    assert "n/a" in real_line and "18.91 ± 1.40" in real_line and "✓" in real_line
    assert "iterations [2, 4] tie on pass@20; the earliest is taken" in md
    assert "real_rl: not evaluated" in md


def test_table2_reports_both_selection_rules_and_is_byte_identical_for_any_key_order(tmp_path):
    metrics = make_metrics(tmp_path)
    frame = report.table2(metrics, *out(tmp_path, "t2", "csv", "md"))
    assert list(frame["method"]) == ["gasp", "azr", "base"]
    gasp = frame.iloc[0]
    # pass@1 selects iteration 4 (seed 0) and 2 (seed 1)
    assert gasp["sel pass@1: checkpoints"] == "s0:4; s1:2"
    assert gasp["sel pass@1: pass@1"] == pytest.approx(19.0) and gasp["sel pass@1: pass@20"] == pytest.approx(
        31.5
    )
    assert gasp["sel pass@20: pass@1"] == pytest.approx(16.5)
    assert gasp["sel pass@1: paper pass@1"] == 19.10
    report.table2(dict(reversed(list(metrics.items()))), *out(tmp_path, "t2b", "csv", "md"))
    assert (tmp_path / "t2.csv").read_bytes() == (tmp_path / "t2b.csv").read_bytes()
    assert (tmp_path / "t2.md").read_bytes() == (tmp_path / "t2b.md").read_bytes()


def test_table3_reads_greedy_pass1_at_the_selected_checkpoints_and_says_what_is_missing(tmp_path):
    metrics = make_metrics(tmp_path)
    selected = report.select_checkpoints(metrics, "pass@20")
    greedy = {}
    for (m, s), it in selected.items():
        for bench, v in (("livecodebench", 0.2 + 0.1 * s), ("humaneval_plus", 0.5), ("mbpp_plus", 0.4)):
            if (m, bench) == ("base", "mbpp_plus"):
                continue
            greedy[(m, s, it, bench)] = metrics_file(tmp_path, f"g_{m}_{s}_{it}_{bench}", pass1=v)
    # an unselected checkpoint must not count
    greedy[("gasp", 0, 2, "livecodebench")] = metrics_file(tmp_path, "g_unselected", pass1=0.9)
    frame = report.table3(greedy, selected, *out(tmp_path, "t3", "csv", "md"))
    gasp = frame[frame["method"] == "gasp"].iloc[0]
    assert gasp["LCB v5"] == pytest.approx(25.0) and gasp["HumanEval+"] == pytest.approx(50.0)
    assert gasp["paper LCB v5"] == 19.75
    base = frame[frame["method"] == "base"].iloc[0]
    assert pd.isna(base["MBPP+"])
    md = (tmp_path / "t3.md").read_text()
    assert "base seed 0 iteration 0 on mbpp_plus" in md


# --- goalposts ---------------------------------------------------------------------


def goalposts(tmp_path):
    F, T = False, True
    runs = {
        ("gasp", 0, 2): {"g1": [F, F], "g2": [F, T], "g3": [F, F]},
        ("gasp", 0, 4): {"g1": [T, F], "g2": [F, F], "g3": [F, F]},
        ("gasp", 1, 2): {"g1": [F, F], "g2": [F, F], "g3": [F, F]},
        ("gasp", 1, 4): {"g1": [F, F], "g2": [F, F], "g3": [T, T]},
        ("onestep_hard", 0, 2): {"g1": [F, F], "g2": [F, F], "g3": [F, F]},
    }
    return {key: scored_file(tmp_path, "_".join(map(str, key)), v) for key, v in runs.items()}


def test_table4_counts_goalposts_solved_once_per_seed_and_their_union(tmp_path):
    frame = report.table4(goalposts(tmp_path), *out(tmp_path, "t4", "csv", "md"))
    gasp = frame[frame["method"] == "gasp"].iloc[0]
    assert (gasp["per seed"], gasp["union"], gasp["solved ids"]) == ("2 / 1", 3, "g1 g2 g3")
    assert (gasp["paper per seed"], gasp["paper union"]) == ("6 / 3 / 3", 11)
    hard = frame[frame["method"] == "onestep_hard"].iloc[0]
    assert (hard["per seed"], hard["union"]) == ("0", 0)
    md = (tmp_path / "t4.md").read_text()
    assert "n = 2 samples" in md and "Out of 3 goalposts" in md


def test_heatmap_marks_a_cell_solved_when_any_seed_solves_it(tmp_path):
    scored = goalposts(tmp_path)
    scored[("gasp_real_rl", 0, 2)] = scored_file(
        tmp_path, "joint", {"g1": [True, False], "g4": [False, False]}
    )
    # Figure 5: a panel each for GASP and GASP + Real-data RL (the paper's caption)
    frame = report.goalpost_heatmap(
        scored, ["gasp", "gasp_real_rl"], *out(tmp_path, "f5", "png", "pdf", "csv")
    )
    gasp = frame[frame["method"] == "gasp"]
    cell = {(g, it): s for g, it, s in zip(gasp["goalpost"], gasp["iteration"], gasp["solved"])}
    assert cell == {
        ("g1", 2): False,
        ("g1", 4): True,
        ("g2", 2): True,
        ("g2", 4): False,
        ("g3", 2): False,
        ("g3", 4): True,
    }
    assert set(gasp[gasp["seeds solving"] > 0]["goalpost"]) == {"g1", "g2", "g3"}
    joint = frame[frame["method"] == "gasp_real_rl"]
    assert list(zip(joint["goalpost"], joint["solved"], joint["shown"])) == [
        ("g1", True, True),
        ("g4", False, False),
    ]
    for ext in ("png", "pdf", "csv"):
        assert (tmp_path / f"f5.{ext}").stat().st_size > 0
    assert set(pd.read_csv(tmp_path / "f5.csv")["method"]) == {"gasp", "gasp_real_rl"}
    # nothing solved: the figure is still made, and the csv says every cell is unsolved
    empty = report.goalpost_heatmap(scored, ["onestep_hard"], *out(tmp_path, "f14", "png", "pdf", "csv"))
    assert not empty["shown"].any() and (tmp_path / "f14.png").exists()


# --- figures -------------------------------------------------------------------------


def test_passk_figure_draws_mean_and_std_over_seeds_at_the_selected_checkpoints(tmp_path):
    metrics = {
        ("gasp", 0, 2): metrics_file(tmp_path, "a", pass1=0.1, pass2=0.2, pass20=0.5),
        ("gasp", 0, 4): metrics_file(tmp_path, "b", pass1=0.3, pass2=0.4, pass20=0.4),
        ("gasp", 1, 2): metrics_file(tmp_path, "c", pass1=0.2, pass2=0.3, pass20=0.6),
        ("base", 0, 0): metrics_file(tmp_path, "d", pass1=0.05, pass2=0.1, pass20=None),
    }
    frame = report.passk_figure(
        metrics, ["gasp", "base"], "pass@20", *out(tmp_path, "f4", "png", "pdf", "csv")
    )
    gasp = frame[frame["method"] == "gasp"].set_index("k")
    assert gasp.loc[1, "mean"] == pytest.approx(15.0) and gasp.loc[1, "checkpoints"] == "s0:2; s1:2"
    assert gasp.loc[20, "std"] == pytest.approx(math.sqrt(50.0), abs=1e-4)
    base = frame[frame["method"] == "base"]
    assert list(base["k"]) == [1, 2] and base["std"].isna().all()
    by_pass1 = report.passk_figure(metrics, ["gasp"], "pass@1", *out(tmp_path, "f8", "png", "pdf", "csv"))
    assert by_pass1.set_index("k").loc[1, "checkpoints"] == "s0:4; s1:2"
    assert pd.read_csv(tmp_path / "f4.csv").shape[0] == len(frame)


def test_pass20_over_training_gives_each_seed_and_the_mean_per_iteration(tmp_path):
    metrics = make_metrics(tmp_path)
    frame = report.pass20_over_training(metrics, ["gasp"], *out(tmp_path, "f7", "png", "pdf", "csv"))
    mean = frame[frame["seed"] == "mean"].set_index("iteration")
    assert mean.loc[2, "pass@20"] == pytest.approx(30.5) and mean.loc[6, "pass@20"] == pytest.approx(32.0)
    assert len(frame[frame["seed"] == "0"]) == 3 and (tmp_path / "f7.pdf").exists()


def test_dissimilarity_figure_keeps_runs_apart_and_leaves_gaps_where_nothing_was_compared(tmp_path):
    def diss(name, values):
        paths = []
        for it, (lemma, lift) in enumerate(values):
            path = tmp_path / name / f"iter{it}" / "dissimilarity.json"
            path.parent.mkdir(parents=True)
            write_json(path, {"iteration": it, "lemma": lemma, "lift": lift})
            paths.append(str(path))
        return paths

    runs = {
        "gasp s0": diss("a", [(None, None), (0.61, 0.55), (0.58, None)]),
        "no_rejection s0": diss("b", [(None, None), (0.4, 0.3), (0.1, 0.05)]),
    }
    frame = report.dissimilarity_figure(runs, *out(tmp_path, "f10", "png", "pdf", "csv"))
    assert list(frame["run"]) == ["gasp s0"] * 3 + ["no_rejection s0"] * 3
    assert frame.iloc[2]["lemma"] == 0.58 and pd.isna(frame.iloc[2]["lift"])
    assert (tmp_path / "f10.png").stat().st_size > 0


def test_reward_figure_values_are_the_papers_at_n_10(tmp_path):
    frame = report.reward_figure(
        ["lemma", "lift", "onestep_medium", "onestep_hard"], 10, *out(tmp_path, "f3", "png", "pdf", "csv")
    )
    counts = frame[frame["kind"] == "count"]
    value = {(s, int(k)): r for s, k, r in zip(counts["schedule"], counts["k"], counts["reward"])}
    # the note's table: k -> lemma / lift / one-step medium
    for k, lemma, lift, medium in [
        (1, -0.5, 1.0, 0.077),
        (2, -0.5, 0.693, 0.625),
        (3, 0.418, 0.313, 1.0),
        (4, 0.815, 0.104, 0.698),
        (5, 1.0, 0.025, 0.254),
        (6, 0.815, -0.5, -0.5),
        (7, 0.418, -0.5, -0.5),
        (0, -0.5, -0.5, -0.5),
        (9, -0.5, -0.5, -0.5),
    ]:
        assert value[("lemma", k)] == pytest.approx(lemma, abs=1e-3)
        assert value[("lift", k)] == pytest.approx(lift, abs=1e-3)
        assert value[("onestep_medium", k)] == pytest.approx(medium, abs=1e-3)
    curve = frame[(frame["kind"] == "curve") & (frame["schedule"] == "lemma")]
    assert len(curve) == report.CURVE_POINTS + 1
    assert curve[curve["p"] == 0.5]["reward"].iloc[0] == pytest.approx(1.0)
    assert curve[curve["p"] == 0.25]["reward"].iloc[0] == -0.5  # outside the band [0.3, 0.7]
    assert (tmp_path / "f3.pdf").stat().st_size > 0
    with pytest.raises(UserError, match="unknown reward schedule"):
        report.reward_figure(["nope"], 10, *out(tmp_path, "x", "png", "pdf", "csv"))


def test_our_unguided_run_stands_beside_the_papers_azr_row_and_says_so(tmp_path):
    metrics = {
        ("unguided", 0, 2): metrics_file(tmp_path, "u0", pass1=0.1, pass20=0.2),
        ("unguided", 1, 2): metrics_file(tmp_path, "u1", pass1=0.3, pass20=0.4),
    }
    frame = report.table1(metrics, {"unguided": {}}, *out(tmp_path, "t1", "csv", "md"))
    row = frame.iloc[0]
    assert (row["paper pass@1"], row["paper pass@20"], row["pass@1"]) == (17.49, 31.15, pytest.approx(20.0))
    assert (row["real_data_training"], row["real_data_guidance"]) == (False, False)
    assert "its paper column shows the paper's AZR row" in (tmp_path / "t1.md").read_text()


def test_pass20_over_training_has_no_mean_where_a_seed_was_not_evaluated(tmp_path):
    metrics = {
        ("gasp", 0, 2): metrics_file(tmp_path, "a", pass20=0.3),
        ("gasp", 1, 2): metrics_file(tmp_path, "b", pass20=0.5),
        ("gasp", 0, 4): metrics_file(tmp_path, "c", pass20=0.4),
    }
    frame = report.pass20_over_training(metrics, ["gasp"], *out(tmp_path, "f7", "png", "pdf", "csv"))
    mean = frame[frame["seed"] == "mean"].set_index("iteration")
    assert mean.loc[2, "pass@20"] == pytest.approx(40.0) and pd.isna(mean.loc[4, "pass@20"])
    assert list(frame[(frame["seed"] == "0")]["iteration"]) == [2, 4]


def test_a_smaller_k_stands_in_for_pass20_when_the_mode_draws_fewer_samples_and_the_tables_say_so(tmp_path):
    metrics = {
        ("gasp", 0, 2): metrics_file(tmp_path, "a", pass1=0.1, pass4=0.3),
        ("gasp", 0, 4): metrics_file(tmp_path, "b", pass1=0.2, pass4=0.25),
    }
    t1 = report.table1(metrics, {"gasp": {}}, *out(tmp_path, "t1", "csv", "md"), rule="pass@4")
    assert t1.iloc[0]["checkpoints"] == "s0:2" and t1.iloc[0]["pass@4"] == pytest.approx(30.0)
    assert t1.iloc[0]["paper pass@20"] == 33.69
    t2 = report.table2(metrics, *out(tmp_path, "t2", "csv", "md"))  # pass@4: the largest k every file has
    row = t2.iloc[0]
    assert (row["sel pass@1: checkpoints"], row["sel pass@4: checkpoints"]) == ("s0:4", "s0:2")
    assert row["sel pass@1: paper pass@20"] == 33.63 and row["sel pass@4: paper pass@1"] == 18.26
    for name in ("t1.md", "t2.md"):
        assert "pass@4 stands in for the paper's pass@20" in (tmp_path / name).read_text()


def test_keys_handed_over_as_strings_select_the_same_checkpoints(tmp_path):
    metrics = make_metrics(tmp_path)
    as_text = {(m, str(s), str(i)): p for (m, s, i), p in metrics.items()}
    assert report.select_checkpoints(as_text, "pass@20") == report.select_checkpoints(metrics, "pass@20")
    report.table1(as_text, {"gasp": {}}, *out(tmp_path, "a", "csv", "md"))
    report.table1(metrics, {"gasp": {}}, *out(tmp_path, "b", "csv", "md"))
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
