"""EvolveCoder's round tables and figures (paper 002, Sec. 3), from each round's suite,
pass matrix and filtered dataset:

- Table 2: per round, problems kept and their mean number of kept tests, overall and per
  source;
- Figure 4: pass@k of the candidate pool under each round's kept tests (every pool
  solution of every kept problem, k from config ``evolve.ks``);
- Figure 5: per round and method (adversarial, discriminative), the tests generated and
  how many the round's filter keeps;
- Figure 6: pass@k of each candidate model on the final round's kept tests;
- the yield table: beyond the paper, how many answers were read, why tests were
  rejected, and how many kept tests the seed's reference solution fails (wrong tests
  the paper never looks for).

A round's files are ``(suite, matrix, dataset)`` paths; every function reads what it
needs and writes csv + md (tables) or png + pdf + csv (figures).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pandas as pd

from ..evaluate import model_tags
from ..records import read_jsonl
from ..tracks.evolve.rounds import METHODS, method_counts, pool_pass_at_k
from ..tracks.evolve.seeds import LABELS, SOURCES
from .figures import finish_figure, pyplot
from .tables import write_table

Round = tuple[str, str, str]  # (suite, matrix, dataset) files of one round


def _load(files: Round) -> tuple[dict, dict, list[dict]]:
    suite, matrix, dataset = files
    return (
        {p["id"]: p for p in read_jsonl(suite)},
        {m["id"]: m for m in read_jsonl(matrix)},
        read_jsonl(dataset),
    )


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100.0 * x, 2)


def table2(rounds: Sequence[Round], sources: Sequence[str], csv_path: str, md_path: str) -> pd.DataFrame:
    columns = ["Overall"] + [LABELS.get(s, s) for s in sources]
    rows = []
    for r, files in enumerate(rounds):
        _, _, dataset = _load(files)
        kept = [d for d in dataset if d["kept"]]
        per = {"Overall": kept, **{LABELS.get(s, s): [d for d in kept if d["source"] == s] for s in sources}}
        rows.append({"Round": r, "Metric": "#Problems", **{c: len(per[c]) for c in columns}})
        rows.append(
            {
                "Round": r,
                "Metric": "#Avg. Tests",
                **{
                    c: (round(sum(len(d["tests"]) for d in per[c]) / len(per[c]), 2) if per[c] else None)
                    for c in columns
                },
            }
        )
    frame = pd.DataFrame(rows, columns=["Round", "Metric", *columns], dtype=object)  # counts stay integers
    shown = frame.where(frame.notna(), "n/a")
    notes = [
        "A problem counts in a round when the end-of-round filter keeps it (at least evolve.filter.min_tests "
        "kept tests, at most evolve.filter.max_perfect_solutions solutions passing all of them).",
        "n/a: no problem of that source was kept in that round.",
    ]
    write_table(
        frame,
        csv_path,
        md_path,
        "EvolveCoder Table 2: problems and mean tests per round",
        notes,
        md_frame=shown,
    )
    return frame


def figure4(rounds: Sequence[Round], ks: Sequence[int], png: str, pdf: str, csv: str) -> pd.DataFrame:
    rows = []
    for r, files in enumerate(rounds):
        _, matrices, dataset = _load(files)
        problems = [(matrices[d["id"]]["passed"], d["tests"]) for d in dataset if d["kept"]]
        for k, value in pool_pass_at_k(problems, ks).items():
            rows.append({"round": r, "k": k, "pass_at_k": _pct(value), "problems": len(problems)})
    frame = pd.DataFrame(rows, columns=["round", "k", "pass_at_k", "problems"])
    frame.to_csv(csv, index=False)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    drawn = []
    for k in ks:
        part = frame[(frame["k"] == k) & frame["pass_at_k"].notna()]
        if len(part):
            ax.plot(part["round"], part["pass_at_k"], marker="o", label=f"Pass@{k}")
            drawn.append(k)
    ax.set_xlabel("Round")
    ax.set_ylabel("Pass@k of the candidate pool (%)")
    ax.set_xticks(range(len(rounds)))
    if drawn:
        ax.legend()
    ax.set_title("Difficulty across rounds")
    finish_figure(fig, png, pdf, empty=[] if drawn else ["no round kept a problem"])
    return frame


def figure5(rounds: Sequence[Round], png: str, pdf: str, csv: str) -> pd.DataFrame:
    from ..tracks.evolve.rounds import RoundEntry

    rows = []
    for r, files in enumerate(rounds[1:], start=1):
        suites, _, dataset = _load(files)
        totals = {m: {"generated": 0, "retained": 0} for m in METHODS}
        for d in dataset:
            entry = RoundEntry(d["kept"], d["reason"], d["tests"], {}, d["perfect_solutions"])
            for m, c in method_counts(suites[d["id"]]["tests"], entry, r).items():
                totals[m]["generated"] += c["generated"]
                totals[m]["retained"] += c["retained"]
        for m in METHODS:
            g, k = totals[m]["generated"], totals[m]["retained"]
            rows.append(
                {
                    "round": r,
                    "method": m,
                    "generated": g,
                    "retained": k,
                    "retention": round(100.0 * k / g, 2) if g else None,
                }
            )
    frame = pd.DataFrame(rows, columns=["round", "method", "generated", "retained", "retention"])
    frame.to_csv(csv, index=False)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(METHODS), figsize=(8, 3.5), sharey=True)
    for ax, m in zip(axes, METHODS):
        part = frame[frame["method"] == m]
        ax.bar(part["round"] - 0.2, part["generated"], width=0.4, label="generated")
        ax.bar(part["round"] + 0.2, part["retained"], width=0.4, label="retained")
        ax.set_title(f"Method {METHODS.index(m) + 1} ({m})")
        ax.set_xlabel("Round")
    axes[0].set_ylabel("Tests")
    axes[0].legend()
    finish_figure(
        fig, png, pdf, empty=[] if len(frame) and frame["generated"].sum() else ["no tests generated"]
    )
    return frame


def figure6(final: Round, ks: Sequence[int], png: str, pdf: str, csv: str) -> pd.DataFrame:
    _, matrices, dataset = _load(final)
    kept = [d for d in dataset if d["kept"]]
    models = sorted({m for d in kept for m in matrices[d["id"]]["models"]})
    rows = []
    for model in models:
        problems = [(matrices[d["id"]]["passed"], d["tests"]) for d in kept]

        def members(i, model=model):
            return [s for s, name in enumerate(matrices[kept[i]["id"]]["models"]) if name == model]

        for k, value in pool_pass_at_k(problems, ks, members_of=members).items():
            rows.append({"model": model, "k": k, "pass_at_k": _pct(value)})
    frame = pd.DataFrame(rows, columns=["model", "k", "pass_at_k"])
    frame.to_csv(csv, index=False)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4, 1.5 * len(models) + 2), 3.5))
    width = 0.8 / max(len(ks), 1)
    for j, k in enumerate(ks):
        part = frame[frame["k"] == k]
        ax.bar(
            [i + j * width for i in range(len(part))],
            part["pass_at_k"].fillna(0),
            width=width,
            label=f"Pass@{k}",
        )
    ax.set_xticks([i + width * (len(ks) - 1) / 2 for i in range(len(models))])
    ax.set_xticklabels(models, rotation=20)
    ax.set_ylabel("Pass@k on the final suite (%)")
    ax.legend()
    finish_figure(fig, png, pdf, empty=[] if kept else ["the final round kept no problem"])
    return frame


def yield_table(rounds: Sequence[Round], csv_path: str, md_path: str) -> pd.DataFrame:
    """Beyond the paper: per round, tests generated and rejected (with the commonest
    reasons), malformed tests, and tests the seed's reference solution fails."""
    rows = []
    for r, files in enumerate(rounds):
        suites, matrices, dataset = _load(files)
        reasons = Counter(
            x["reason"] for p in suites.values() for x in p.get("rejected", []) if x["round"] == r
        )
        made = sum(1 for p in suites.values() for t in p["tests"] if t["round"] == r)
        malformed = ref_checked = ref_failed = 0
        for m in matrices.values():
            tests = suites[m["id"]]["tests"]
            for t, why in enumerate(m["malformed"]):
                if tests[t]["round"] != r:
                    continue
                malformed += why is not None
                if why is None and m["reference"] is not None:
                    ref_checked += 1
                    ref_failed += not m["reference"][t]
        rows.append(
            {
                "round": r,
                "tests accepted": made,
                "tests rejected": sum(reasons.values()),
                "top rejection reasons": ", ".join(f"{k} {v}" for k, v in reasons.most_common(3)) or "-",
                "malformed": malformed,
                "checked against reference": ref_checked,
                "failed by reference": ref_failed,
                "problems kept": sum(d["kept"] for d in dataset),
                "problems": len(dataset),
            }
        )
    frame = pd.DataFrame(rows)
    notes = [
        "tests accepted: asserts read from the round's answers that call the problem's function and are new; "
        "rejected: with the reason. Malformed: arguments or expected value could not be evaluated.",
        "Reference: the seed's own solution, where it defines the function the tests call, run on the round's "
        "tests; a test it fails is likely wrong (the paper does not check this).",
    ]
    write_table(frame, csv_path, md_path, "EvolveCoder: yield per round", notes)
    return frame


def final_counts(final_dataset: str, sources: Sequence[str] = SOURCES) -> dict[str, int]:
    """Table 1's third column: problems per source in the final round's dataset."""
    kept = Counter(d["source"] for d in read_jsonl(final_dataset) if d["kept"])
    return {s: kept.get(s, 0) for s in sources}


# Table 3's columns: EvalPlus is the mean of its four benchmarks, as the paper reports it.
EVALPLUS = ("humaneval", "humaneval_plus", "mbpp", "mbpp_plus")
TABLE3_COLUMNS = (
    ("EvalPlus", EVALPLUS),
    ("BCB-Full", ("bigcodebench_full",)),
    ("BCB-Hard", ("bigcodebench_hard",)),
    ("LCB", ("livecodebench",)),
)


# Table 3 names the untrained model as the paper does; other tags as the benchmark layer does
TABLE3_NAMES = {"base": "Base model"}


def training_note(record: dict) -> str:
    """What a GRPO run did, in a few words, for Table 3's last column."""
    if not record.get("trained"):
        return "not trained: " + str(record.get("reason", "no record"))
    steps = record.get("steps") or record.get("global_step") or len(record.get("log", []) or [])
    return f"{steps} step(s) on {record.get('n_prompts', record.get('n_examples', '?'))} prompt(s)"


def table3(
    summaries: dict[tuple[str, str], str],
    models: Sequence[str],
    csv_path: str,
    md_path: str,
    notes: Sequence[str] = (),
    training: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Paper 002 Table 3: pass@1 (%) per model (the base model and one GRPO policy per
    round's data) on EvalPlus (mean of HumanEval, HumanEval+, MBPP, MBPP+), BigCodeBench
    Full/Hard and LiveCodeBench, their average, and each row's gap to the last round's
    policy (the paper's Delta). ``summaries``: (model, benchmark) -> metrics file; a
    column whose benchmarks were not run, or are undefined, is n/a. ``training``: model
    tag -> its GRPO training record, for the "Training" column (a policy that trained
    nothing is the base model, and its row says so)."""
    from ..records import read_json

    loaded = {key: read_json(path) for key, path in summaries.items()}
    rows = []
    for tag in models:
        row = {"Model": model_tags.label(tag, TABLE3_NAMES)}
        for label, benches in TABLE3_COLUMNS:
            values = [loaded[(tag, b)].get("pass@1") for b in benches if (tag, b) in loaded]
            values = [v for v in values if v is not None]
            row[label] = (
                round(100.0 * sum(values) / len(values), 2)
                if values and len(values) == len([b for b in benches if (tag, b) in loaded])
                else None
            )
        present = [row[label] for label, _ in TABLE3_COLUMNS if row[label] is not None]
        row["AVG"] = round(sum(present) / len(present), 2) if present else None
        rows.append(row)
    last = rows[-1]["AVG"] if rows else None
    for row in rows:
        row["Delta to last round"] = (
            round(last - row["AVG"], 2) if last is not None and row["AVG"] is not None else None
        )
    for row, tag in zip(rows, models):
        path = (training or {}).get(tag)
        row["Training"] = training_note(read_json(path)) if path else "-"
    frame = pd.DataFrame(
        rows, columns=["Model", *[c for c, _ in TABLE3_COLUMNS], "AVG", "Delta to last round", "Training"]
    )
    shown = frame.astype(object).where(frame.notna(), "n/a")
    write_table(
        frame,
        csv_path,
        md_path,
        "EvolveCoder Table 3: pass@1 (%) of GRPO policies per round's data",
        [
            "AVG: mean over the columns with a value; n/a: benchmark not run or no items.",
            "Delta: the last round's AVG minus the row's (the paper shows it as a relative gain).",
            *notes,
        ],
        md_frame=shown,
    )
    return frame
