"""Paper 000's extrinsic evaluation (Sec. 5.2-5.4, App. H): which benchmarks make which
table or figure. Models: the base model, the trained Bob, the final Alice (alice_r<R>),
and every round's Alice (alice_r1..alice_rR) for the per-round figures.
"""

# Table 3 and the per-round figures: Haskell code generation (MultiPL-E; the default's
# shipped problems).
CODEGEN = ("humaneval_hs", "mbpp_hs", "haskell_mini")
# Tables 4 and 5: one classification benchmark each, base vs trained Bob.
BASE_VS_TRAINED = {
    "table4": {"benchmark": "pysecdb", "title": "Haskell track Table 4: PySecDB vulnerability detection"},
    "table5": {"benchmark": "codexglue", "title": "Haskell track Table 5: CodeXGLUE defect detection"},
}
CLASSIFICATION_METRICS = ["accuracy", "precision", "recall", "f1"]
# Figures 4 and 5: EquiBench per category, base vs trained Bob.
EQUIBENCH_FIGURES = {
    "figure4": {"metric": "accuracy", "title": "Haskell track Figure 4: EquiBench accuracy by category"},
    "figure5": {"metric": "f1", "title": "Haskell track Figure 5: EquiBench F1 by category"},
}
# Paper 000's numbers of the per-round figures of Alice, by regime (App. H):
# experiment -> {benchmark: figure number}; other experiments get alice_rounds_<bench>.
ROUND_FIGURES = {
    "e0": {"humaneval_hs": 8, "mbpp_hs": 9},
    "e1": {"humaneval_hs": 10, "mbpp_hs": 11},
    "e2": {"humaneval_hs": 13, "mbpp_hs": 14},
    "e3": {"humaneval_hs": 16, "mbpp_hs": 17},
}


# Table 7's EquiBench rows, in the paper's order (the algorithmic categories first).
TABLE7_CATEGORIES = ("OJ_A", "OJ_V", "OJ_VA", "STOKE", "TVM", "DCE")


def table7_rows(runs: list[tuple[str, str, str]], final_alice: str, categories: list[str]) -> list[dict]:
    """Table 7's rows from a run's (benchmark, mode, model) list: each row names the
    benchmark, model, metric and group (category) of its cell; benchmarks the run does
    not evaluate are left out."""
    from ...evaluate.registry import benchmark

    have = {(b, t) for b, _, t in runs}
    mode = {}
    for b, m, _ in runs:
        mode.setdefault(b, m)
    rows = []
    for b in CODEGEN:
        for agent, tag in (("Bob", "bob"), ("Alice", final_alice)):
            if (b, tag) in have:
                rows.append(
                    {
                        "label": f"{benchmark(b).title} ({agent})",
                        "benchmark": b,
                        "mode": mode[b],
                        "model": tag,
                        "metric": "pass@1",
                        "group": None,
                    }
                )
    if ("equibench", "bob") in have:
        for cat in categories:
            for metric, short in (("accuracy", "Acc"), ("f1", "F1")):
                rows.append(
                    {
                        "label": f"EquiBench ({cat}) {short}",
                        "benchmark": "equibench",
                        "mode": mode["equibench"],
                        "model": "bob",
                        "metric": metric,
                        "group": cat,
                    }
                )
    for b in ("pysecdb", "codexglue"):
        if (b, "bob") in have:
            for metric, short in (("accuracy", "Acc"), ("f1", "F1")):
                rows.append(
                    {
                        "label": f"{benchmark(b).title} {short}",
                        "benchmark": b,
                        "mode": mode[b],
                        "model": "bob",
                        "metric": metric,
                        "group": None,
                    }
                )
    return rows
