"""PSV's tables and figures from hand-written score and solution files."""

from __future__ import annotations

import pandas as pd

from selfplay.records import write_jsonl
from selfplay.report import psv as report


def scores_file(path, counts):
    write_jsonl(
        path,
        [{"problem_id": f"p{i}", "n": n, "c": c, "answer_format": None} for i, (n, c) in enumerate(counts)],
    )
    return str(path)


def test_pass_at_k_cells_and_na_for_k_above_n(tmp_path):
    s = report.scores_of(scores_file(tmp_path / "s.jsonl", [(4, 1), (4, 0)]), [1, 2, 8])
    assert s["passk"][1] == 12.5 and s["passk"][8] is None and s["decoding"] == "free"
    assert abs(s["passk"][2] - 100 * (1 - 3 / 6) / 2) < 1e-9


def test_the_better_method_is_bold_only_when_the_paired_test_says_so(tmp_path):
    scores = {}
    good = {1: [(10, 6), (10, 5)], 2: [(10, 7), (10, 6)], 3: [(10, 6), (10, 6)]}
    bad = {1: [(10, 1), (10, 0)], 2: [(10, 2), (10, 1)], 3: [(10, 1), (10, 1)]}
    for seed in (1, 2, 3):
        scores[("s", "psv", seed, 2, "e")] = scores_file(tmp_path / f"psv{seed}.jsonl", good[seed])
        scores[("s", "rft", seed, 2, "e")] = scores_file(tmp_path / f"rft{seed}.jsonl", bad[seed])
        scores[("s", "base", seed, 0, "e")] = scores_file(tmp_path / f"base{seed}.jsonl", bad[seed])
    frame = report.results_frame(scores, [1, 20])
    groups = {"s": {"methods": {"base": 0, "rft": 2, "psv": 2}, "eval_sets": ["e"]}}
    out = report.method_table(frame, groups, [1, 20], "T", str(tmp_path / "t.csv"), str(tmp_path / "t.md"))
    md = (tmp_path / "t.md").read_text()
    psv_line = next(line for line in md.splitlines() if "| psv " in line)
    rft_line = next(line for line in md.splitlines() if "| rft " in line)
    assert "**" in psv_line and "**" not in rft_line
    assert "n/a" in psv_line  # pass@20 from 10 samples
    psv_row = out[out.method == "psv"].iloc[0]
    assert psv_row["e pass@1 seeds"] == 3 and psv_row["e pass@1"] > 50 and psv_row["e pass@1 std"] > 0
    assert pd.isna(psv_row["e pass@20"])


def test_one_seed_is_never_bold(tmp_path):
    scores = {
        ("s", "psv", 1, 1, "e"): scores_file(tmp_path / "a.jsonl", [(2, 2)]),
        ("s", "base", 1, 0, "e"): scores_file(tmp_path / "b.jsonl", [(2, 0)]),
    }
    frame = report.results_frame(scores, [1])
    report.method_table(
        frame,
        {"s": {"methods": {"base": 0, "psv": 1}, "eval_sets": ["e"]}},
        [1],
        "T",
        str(tmp_path / "t.csv"),
        str(tmp_path / "t.md"),
    )
    md = (tmp_path / "t.md").read_text()
    assert "**" not in md and "100.00" in md and "0.00" in md


def test_yield_counts_classes_samples_and_proposals(tmp_path):
    sols = tmp_path / "sol.jsonl"
    write_jsonl(
        sols,
        [
            {
                "problem_id": "a",
                "difficulty": "EASY",
                "n": 2,
                "c": 2,
                "samples": [{"parsed": True, "verified": True, "reason": None}] * 2,
            },
            {
                "problem_id": "b",
                "difficulty": "IMPOSSIBLE",
                "n": 2,
                "c": 0,
                "samples": [
                    {"parsed": True, "verified": False, "reason": "dafny:failed"},
                    {"parsed": False, "verified": False, "reason": "parse:no_code_block"},
                ],
            },
        ],
    )
    props = tmp_path / "props.jsonl"
    write_jsonl(
        props,
        [
            {"parsed": True, "unique": True, "valid": True, "reason": None},
            {"parsed": True, "unique": False, "valid": False, "reason": "duplicate:name"},
            {"parsed": False, "unique": False, "valid": False, "reason": "parse:empty_output"},
        ],
    )
    frame = report.yield_table(
        {("s", "psv", 1): {0: {"solutions": str(sols), "proposals": str(props)}}},
        str(tmp_path / "y.csv"),
        str(tmp_path / "y.md"),
        str(tmp_path / "r.csv"),
    )
    row = frame.iloc[0]
    assert (row["easy"], row["impossible"], row["verified samples"], row["parsed samples"]) == (1, 1, 2, 3)
    assert (row["proposed"], row["parsed"], row["unique"], row["spec-valid"]) == (3, 2, 1, 1)
    reasons = (tmp_path / "r.csv").read_text()
    assert "proposal,duplicate:name,1" in reasons and "solution,dafny:failed,1" in reasons


def test_figures_are_written_with_their_data(tmp_path):
    scores = {
        ("s", "base", 1, 0, "e"): scores_file(tmp_path / "b.jsonl", [(2, 0)]),
        ("s", "psv", 1, 1, "e"): scores_file(tmp_path / "p1.jsonl", [(2, 1)]),
        ("s", "psv", 1, 2, "e"): scores_file(tmp_path / "p2.jsonl", [(2, 2)]),
    }
    frame = report.results_frame(scores, [1, 2])
    data = report.figure1(
        frame,
        {"s": ["e"]},
        ["psv"],
        str(tmp_path / "f1.png"),
        str(tmp_path / "f1.pdf"),
        str(tmp_path / "f1.csv"),
    )
    assert sorted(data[data.method == "psv"]["model"]) == [1, 2]
    data4 = report.figure4(
        frame,
        {"s": ["e"]},
        "psv",
        [1, 2],
        str(tmp_path / "f4.png"),
        str(tmp_path / "f4.pdf"),
        str(tmp_path / "f4.csv"),
    )
    assert set(data4["model"]) == {0, 1, 2}  # iteration 0 is the base model
    for name in ("f1.png", "f1.pdf", "f4.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_table6_without_models_says_it_is_paper_scale_only(tmp_path):
    cfg = {
        "psv": {
            "experiment": "x",
            "evaluation": {"samples": 2},
            "table6": {"models": [], "conditions": {}, "method": "psv", "eval_sets": [], "ks": [1, 10]},
        }
    }
    report.table6_of(cfg, str(tmp_path / "t6.csv"), str(tmp_path / "t6.md"))
    assert "Paper scale only" in (tmp_path / "t6.md").read_text()


def test_figures_5_and_6_need_only_their_own_runs(tmp_path, monkeypatch):
    """Rule psv_figures gives figures 5 and 6 only their own methods' scores as inputs; the
    figure used to read Table 1's too, so on a cluster it failed whenever it ran before
    Table 1's last evaluation (found by the PSV rehearsal: FileNotFoundError on
    transfer/psv/seed1/model2)."""
    from test_config_loading import load_as_snakemake

    from selfplay.tracks.psv import layout

    cfg = load_as_snakemake(["config/papers/psv.yaml"])
    monkeypatch.chdir(tmp_path)
    for figure in ("figure5", "figure6"):
        for path in layout.score_files(cfg, list(cfg["psv"]["figures"][figure])).values():
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            scores_file(tmp_path / path, [(2, 1)])
        data = report.figure_of(cfg, figure, f"{figure}.png", f"{figure}.pdf", f"{figure}.csv")
        assert len(data) and (tmp_path / f"{figure}.png").stat().st_size > 0
    table1 = layout.score_files(cfg, list(cfg["psv"]["tables"]["table1"]))
    assert any(not (tmp_path / p).exists() for p in table1.values())  # Table 1's runs were never there
