"""The Haskell track's tables and figures (paper 000) from the track's files.

- Table 2: Bob's accuracy on the intrinsic-evaluation instances (made by the final
  Alice from train-half and test-half sources), base vs trained, with the change.
  Accuracy = correct Yes/No verdicts over all of Bob's sampled answers.
- Table 6: per game, Alice's attempts over all rounds, the validated ones and the
  yield, with validated counts per round (the paper's caption); the regimes' formula
  (Appendix F) reads these yields.
- Data yield: the source pipeline (reference programs, translations) kept/rejected.
- Figure 3: mean and standard deviation of instance difficulty per round (untrained Bob).
- Figure 6: validated instances per round and game, counts and proportions.
- Figure 7: difficulty distributions per round, one panel per game.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from ..records import read_json, read_jsonl, read_jsonl_all, write_text_atomic
from .bob import bob_accuracy
from .decoding import decoding_of
from .figures import finish_figure, pyplot
from .tables import write_table

GAMES = ("seq", "sinq")
GAME_LABEL = {"seq": "SEQ", "sinq": "SINQ"}


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def table2(
    labeled: dict[tuple[str, str], list[str]], dataset: str, csv_path: str, md_path: str
) -> pd.DataFrame:
    rows = []
    for split in ("train", "test"):
        untrained, trained_rows = (
            read_jsonl_all(labeled[(split, "untrained")]),
            read_jsonl_all(labeled[(split, "trained")]),
        )
        base, _, n_base = bob_accuracy(untrained)
        trained, _, n_trained = bob_accuracy(trained_rows)
        delta = None if base is None or trained is None else trained - base
        rows.append(
            {
                "Benchmark": f"{dataset} ({split.capitalize()})",
                "Base": _fmt(base),
                "Trained": _fmt(trained),
                "Δ": "n/a" if delta is None else f"{delta:+.2f}",
                "answers (base)": n_base,
                "answers (trained)": n_trained,
                "Bob's decoding": decoding_of(
                    i["bob"].get("answer_format") for i in untrained + trained_rows
                ),
            }
        )
    frame = pd.DataFrame(rows)
    write_table(
        frame,
        csv_path,
        md_path,
        "Haskell track Table 2: Bob's accuracy (%), base vs trained",
        [
            "Accuracy: Bob's correct Yes/No verdicts over all his sampled answers on the instances the final "
            "Alice made (SEQ instances are equivalent, SINQ ones are not).",
            "n/a: no verified instance to judge on these sources.",
        ],
    )
    return frame


def table6(rounds: dict[str, list[str]], csv_path: str, md_path: str) -> pd.DataFrame:
    """``rounds[stage]`` = candidate shard paths of each training round. Whether Liquid
    Haskell checked the proofs is read from the candidates' proof attempts (status
    ``missing``: the proof-check job found no Liquid Haskell), not from the machine that
    builds the table, which never has it."""
    attempts, validated, per_round, reasons = Counter(), Counter(), {}, Counter()
    unchecked = 0
    formats: dict[str, list] = {game: [] for game in GAMES}
    for stage, paths in rounds.items():
        cands = read_jsonl_all(paths)
        per_round[stage] = Counter()
        for c in cands:
            attempts[c["game"]] += 1
            formats[c["game"]].append(c.get("answer_format"))
            if c["verified"]:
                validated[c["game"]] += 1
                per_round[stage][c["game"]] += 1
            elif c["game"] == "seq":
                reasons[c.get("reject_reason") or "?"] += 1
            unchecked += any(a.get("status") == "missing" for a in c.get("proof_attempts") or ())
    rows = []
    for game in GAMES:
        counts = ", ".join(str(per_round[s][game]) for s in rounds)
        rows.append(
            {
                "Game": GAME_LABEL[game],
                "Total Validated": validated[game],
                "Attempts": attempts[game],
                "Yield": "n/a" if not attempts[game] else f"{100.0 * validated[game] / attempts[game]:.2f}%",
                "Validated by round": counts,
                "Alice's decoding": decoding_of(formats[game]),
            }
        )
    frame = pd.DataFrame(rows)
    notes = [
        "An attempt is one Alice output in a training round; validated: a Liquid Haskell proof accepted (SEQ) "
        "or a divergence confirmed by running both programs with GHC (SINQ).",
        "Alice's decoding: free (as in the paper) or constrained (the answer skeleton was enforced while "
        "decoding; the content stayed the model's).",
    ]
    if unchecked:
        notes.append(
            f"Liquid Haskell was not available to the proof checks of {unchecked} SEQ attempts: their proofs "
            "were not checked, so they could not be validated (reason recorded: 'not checked: Liquid "
            "Haskell missing')."
        )
    if reasons:
        top = ", ".join(f"{r} ({n})" for r, n in reasons.most_common(5))
        notes.append(f"Most common SEQ rejections: {top}.")
    write_table(frame, csv_path, md_path, "Haskell track Table 6: validation yields per game", notes)
    return frame


def table3(
    summaries: dict[tuple[str, str], str], benchmarks: list[str], csv_path: str, md_path: str
) -> pd.DataFrame:
    """``summaries[(bench, agent)]`` (the benchmark layer's metrics files) for agent in
    base/alice/bob: Table 3's rows, Bob's then Alice's per benchmark."""
    from ..evaluate.registry import benchmark

    rows, untrained = [], set()
    for bench in benchmarks:
        base = read_json(summaries[(bench, "base")])
        for agent in ("bob", "alice"):
            trained = read_json(summaries[(bench, agent)])
            if not trained.get("adapter"):
                untrained.add(agent.capitalize())
            row = {"Benchmark": benchmark(bench).title, "Agent": agent.capitalize()}
            for key, label, scale in (
                ("pass@1", "Pass@1 (%)", 100.0),
                ("compile_errors", "Compilation Errors", 1.0),
            ):
                b, t = base.get(key), trained.get(key)
                b = None if b is None else scale * b
                t = None if t is None else scale * t
                row[f"{label} Base"] = "n/a" if b is None else f"{b:.1f}"
                row[f"{label} Trained"] = "n/a" if t is None else f"{t:.1f}"
                row[f"{label} Δ"] = "n/a" if b is None or t is None else f"{t - b:+.1f}"
            row["problems"] = trained.get("n")
            row["samples"] = trained.get("samples")
            row["decoding"] = trained.get("decoding")
            rows.append(row)
    frame = pd.DataFrame(rows)
    notes = [
        "Pass@1: mean over problems of the share of samples passing every test (GHC, sandboxed); "
        "compilation errors: failed compiles per sampling trial.",
        "Trained: Bob's adapter, or the last round's Alice adapter; a round that trained nothing keeps "
        "the previous model.",
    ]
    if untrained:
        notes.append(
            f"{' and '.join(sorted(untrained))}: no adapter was trained in this run, so 'Trained' is the "
            "base model sampled again with other seeds, and its Δ is sampling noise."
        )
    write_table(
        frame, csv_path, md_path, "Haskell track Table 3: Haskell code generation, base vs trained", notes
    )
    return frame


def table8(table6_by_experiment: dict[str, str], csv_path: str, md_path: str) -> pd.DataFrame:
    """Verified generations per game and experiment (each experiment's Table 6 CSV)."""
    columns = {}
    for name, path in table6_by_experiment.items():
        frame = pd.read_csv(path)
        counts = {
            row["Game"]: int(row["Total Validated"]) if int(row["Attempts"]) else None
            for _, row in frame.iterrows()
        }
        columns[name] = counts
    rows = []
    for game in ("SEQ", "SINQ"):
        rows.append(
            {"Game": game, **{n: ("–" if c.get(game) is None else c[game]) for n, c in columns.items()}}
        )
    rows.append({"Game": "Total", **{n: sum(v for v in c.values() if v) for n, c in columns.items()}})
    frame = pd.DataFrame(rows)
    write_table(
        frame,
        csv_path,
        md_path,
        "Haskell track Table 8: verified generations per regime, all rounds",
        ["–: the regime plays no such game (no attempts)."],
    )
    return frame


def data_yield(parts: dict[str, tuple[str, str]], csv_path: str, md_path: str) -> pd.DataFrame:
    """``parts[name] = (kept path, rejected path)`` for each source set."""
    rows = []
    for name, (kept_path, rejected_path) in parts.items():
        kept, rejected = read_jsonl(kept_path), read_jsonl(rejected_path)
        why = Counter(r["reject_reason"].split(":", 1)[0] for r in rejected)
        rows.append(
            {
                "source set": name,
                "programs": len(kept) + len(rejected),
                "kept": len(kept),
                "rejected": len(rejected),
                "reasons": ", ".join(f"{k} ({v})" for k, v in sorted(why.items())),
            }
        )
    frame = pd.DataFrame(rows)
    write_table(
        frame,
        csv_path,
        md_path,
        "Haskell track: source programs through the compile-and-run filter",
        [
            "Kept: a top-level signature with supported argument types, a generated input of those types, and "
            "a GHC compile and run that returned a value."
        ],
    )
    return frame


def difficulty_frame(rounds: dict[str, list[str]]) -> pd.DataFrame:
    rows = [
        {"round": int(stage[len("round") :]), "game": GAME_LABEL[i["game"]], "difficulty": i["difficulty"]}
        for stage, paths in rounds.items()
        for i in read_jsonl_all(paths)
        if i.get("difficulty") is not None
    ]
    return pd.DataFrame(rows, columns=["round", "game", "difficulty"])


def figure3(rounds: dict[str, list[str]], png: str, pdf: str, csv: str) -> pd.DataFrame:
    plt = pyplot()
    data = difficulty_frame(rounds)
    xs = sorted(int(s[len("round") :]) for s in rounds)
    summary = pd.DataFrame(
        [
            {
                "round": x,
                "instances": int((data["round"] == x).sum()),
                "mean": data.loc[data["round"] == x, "difficulty"].mean(),
                "std": data.loc[data["round"] == x, "difficulty"].std(ddof=0),
            }
            for x in xs
        ]
    )
    write_text_atomic(csv, summary.to_csv(index=False))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(summary["round"], summary["mean"], yerr=summary["std"].fillna(0), marker="o", capsize=3)
    ax.set(
        xlabel="round",
        ylabel="difficulty (untrained Bob)",
        ylim=(-0.5, 10.5),
        xticks=xs,
        title="Instance difficulty per round (mean ± std)",
    )
    finish_figure(
        fig, png, pdf, empty=[int(r["round"]) for _, r in summary.iterrows() if r["instances"] == 0]
    )
    return summary


def figure6(rounds: dict[str, list[str]], png: str, pdf: str, csv: str) -> pd.DataFrame:
    plt = pyplot()
    rows = []
    for stage, paths in rounds.items():
        cands = read_jsonl_all(paths)
        for game in GAMES:
            n = sum(c["verified"] and c["game"] == game for c in cands)
            rows.append({"round": int(stage[len("round") :]), "game": GAME_LABEL[game], "validated": n})
    frame = pd.DataFrame(rows, columns=["round", "game", "validated"])
    totals = frame.groupby("round")["validated"].transform("sum")
    frame["proportion"] = (frame["validated"] / totals.where(totals > 0)).fillna(0.0)
    write_text_atomic(csv, frame.to_csv(index=False))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    xs = sorted(frame["round"].unique())
    bottom = [0] * len(xs)
    for game in GAMES:
        part = frame[frame.game == GAME_LABEL[game]].set_index("round").reindex(xs)
        left.bar(xs, part["validated"], bottom=bottom, label=GAME_LABEL[game])
        bottom = [b + v for b, v in zip(bottom, part["validated"])]
    props = frame.pivot(index="round", columns="game", values="proportion").reindex(xs).fillna(0.0)
    acc = [0.0] * len(xs)
    for game in GAMES:
        vals = list(props[GAME_LABEL[game]]) if GAME_LABEL[game] in props else [0.0] * len(xs)
        right.bar(xs, vals, bottom=acc, label=GAME_LABEL[game])
        acc = [a + v for a, v in zip(acc, vals)]
    left.set(xlabel="round", ylabel="validated instances", xticks=xs, title="Counts")
    right.set(xlabel="round", ylabel="share of validated", ylim=(0, 1.05), xticks=xs, title="Proportions")
    left.legend()
    finish_figure(fig, png, pdf)
    return frame


def figure7(rounds: dict[str, list[str]], png: str, pdf: str, csv: str) -> pd.DataFrame:
    plt = pyplot()
    data = difficulty_frame(rounds)
    write_text_atomic(csv, data.to_csv(index=False))
    xs = sorted(int(s[len("round") :]) for s in rounds)
    fig, axes = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
    for ax, game in zip(axes, GAMES):
        part = data[data.game == GAME_LABEL[game]]
        groups = [part.loc[part["round"] == x, "difficulty"].tolist() for x in xs]
        present = [i for i, g in enumerate(groups) if g]
        if present:
            ax.boxplot([groups[i] for i in present], positions=[xs[i] for i in present], widths=0.5)
            ax.plot(
                [xs[i] for i in present],
                [sum(groups[i]) / len(groups[i]) for i in present],
                "o-",
                label="mean",
            )
            ax.legend(loc="upper left")
        else:
            ax.text(0.5, 0.5, "no verified instances", transform=ax.transAxes, ha="center")
        ax.set(ylabel="difficulty", ylim=(-0.5, 10.5), title=f"{GAME_LABEL[game]} game", xticks=xs)
    axes[-1].set_xlabel("round")
    finish_figure(fig, png, pdf)
    return data


def table7(
    files: dict[tuple[str, str, str, str], str],
    rows: list[dict],
    experiments: list[str],
    csv_path: str,
    md_path: str,
) -> pd.DataFrame:
    """Every regime x every benchmark (paper 000 Table 7): ``files[(experiment, benchmark,
    mode, model)]`` are the benchmark layer's metrics files of each regime's run."""
    from .evaluation import cell, metric_of

    plain, shown = [], []
    for row in rows:
        p = {"Benchmark": row["label"], "Metric": row["metric"]}
        s = dict(p)
        for e in experiments:
            summary = read_json(files[(e, row["benchmark"], row["mode"], row["model"])])
            value = metric_of(summary, row["metric"], row["group"])
            p[e] = None if value is None else round(value, 4)
            s[e] = cell(value)
        plain.append(p)
        shown.append(s)
    notes = [
        "Scores in %: pass@1 for code generation (Bob = the trained Bob, Alice = the final round's Alice), "
        "accuracy and F1 with the trained Bob elsewhere; each the mean over the run's samples per item.",
        "Columns: the regimes' runs (seq.regimes.experiments); n/a: undefined (e.g. F1 with no positive "
        "prediction) or no items.",
    ]
    write_table(
        pd.DataFrame(plain),
        csv_path,
        md_path,
        "Haskell track Table 7: benchmarks across regimes",
        notes,
        md_frame=pd.DataFrame(shown),
    )
    return pd.DataFrame(plain)


def figure19(table6_by_experiment: dict[str, str], png: str, pdf: str, csv_path: str) -> pd.DataFrame:
    """Validated generations per round of each regime's run given (paper 000 Figure 19: E2 vs E3)."""
    rows = []
    for name, path in table6_by_experiment.items():
        frame = pd.read_csv(path, dtype={"Validated by round": str})
        per_game = [
            [int(x) for x in str(v).split(",") if x.strip()] if isinstance(v, str) else []
            for v in frame["Validated by round"]
        ]
        n = max((len(c) for c in per_game), default=0)
        for r in range(n):
            rows.append(
                {"experiment": name, "round": r + 1, "validated": sum(c[r] for c in per_game if r < len(c))}
            )
    data = pd.DataFrame(rows, columns=["experiment", "round", "validated"])
    data.to_csv(csv_path, index=False)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3))
    for name in table6_by_experiment:
        part = data[data["experiment"] == name]
        ax.plot(part["round"], part["validated"], marker="o", label=name)
    ax.set_xlabel("round")
    ax.set_ylabel("validated generations (SEQ + SINQ)")
    ax.legend(fontsize=7)
    ax.set_title("Haskell track Figure 19: validated generations per round", fontsize=9)
    finish_figure(fig, png, pdf)
    return data
