"""The PSV paper's artifacts (paper 003) from the track's files.

Every number is pass@k in percent: per evaluation problem the unbiased estimator from
its n samples and c verified ones, averaged over problems; then mean and standard
deviation over run seeds, bold where the best method's paired t-test over seeds against
every other method of its group gives p < 0.05 (selfplay.metrics).

- Table 1: per setting (test-time training, transfer), the base model, the prompting
  baseline, and each loop method's final solver theta_T, on the setting's evaluation sets.
- Tables 2 and 3: the same cells for the ablation and proposal-setting methods.
- Figure 1: pass@1 of theta_0..theta_T per method, baselines as horizontal lines.
- Figure 4: pass@k of the full method per iteration, +-1 std over seeds.
- Figure 5: final pass@1 against the question budget B per iteration (methods of
  config ``psv.figures.figure5``); Figure 6: final pass@1 against the number of proposal
  rounds at a fixed total budget (``psv.figures.figure6``), one line per total.
- Yield: per iteration, proposals made / parsed / unique / spec-valid, the pool's
  problems per difficulty class after solving, and refusals by reason.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from ..metrics import best_by_paired_test, format_mean_std_markdown, mean_pass_at_k, mean_std
from ..records import read_jsonl, write_text_atomic
from .decoding import decoding_of
from .figures import finish_figure, pyplot
from .tables import write_table

CLASSES = ("EASY", "MEDIUM", "HARD", "IMPOSSIBLE")


def scores_of(path: str, ks: list[int]) -> dict:
    """pass@k (%) of one scores file, and how its answers were decoded."""
    rows = read_jsonl(path)
    counts = [(r["n"], r["c"]) for r in rows]
    out = {}
    for k in ks:
        value = mean_pass_at_k(counts, k)
        out[k] = None if value is None else 100.0 * value
    return {
        "passk": out,
        "problems": len(rows),
        "decoding": decoding_of(r.get("answer_format") for r in rows),
    }


def results_frame(scores: dict[tuple, str], ks: list[int]) -> pd.DataFrame:
    """``scores[(setting, method, seed, t, eval_set)] = path`` -> one row per k."""
    rows = []
    for (setting, method, seed, t, eval_set), path in sorted(scores.items(), key=lambda kv: str(kv[0])):
        s = scores_of(path, ks)
        for k in ks:
            rows.append(
                {
                    "setting": setting,
                    "method": method,
                    "seed": int(seed),
                    "model": int(t),
                    "eval_set": eval_set,
                    "k": k,
                    "pass": s["passk"][k],
                    "decoding": s["decoding"],
                    "problems": s["problems"],
                }
            )
    return pd.DataFrame(
        rows, columns=["setting", "method", "seed", "model", "eval_set", "k", "pass", "decoding", "problems"]
    )


def _values(frame: pd.DataFrame, setting: str, method: str, t: int, eval_set: str, k: int) -> list:
    sel = frame[
        (frame.setting == setting)
        & (frame.method == method)
        & (frame.model == t)
        & (frame.eval_set == eval_set)
        & (frame.k == k)
    ].sort_values("seed")
    return [None if pd.isna(v) else float(v) for v in sel["pass"]]


def method_table(
    frame: pd.DataFrame,
    groups: dict[str, dict],
    ks: list[int],
    title: str,
    csv_path: str,
    md_path: str,
    notes: list[str] | None = None,
) -> pd.DataFrame:
    """``groups[setting] = {"methods": {method: final t}, "eval_sets": [...]}``: one row per
    (setting, method), one column per (eval set, k)."""
    csv_rows, md_rows = [], []
    for setting, g in groups.items():
        cells: dict[tuple[str, int], dict[str, list]] = {}
        for eval_set in g["eval_sets"]:
            for k in ks:
                cells[(eval_set, k)] = {
                    m: _values(frame, setting, m, t, eval_set, k) for m, t in g["methods"].items()
                }
        bold = {
            col: best_by_paired_test({m: v for m, v in per.items() if v and None not in v})
            if all(v and None not in v for v in per.values())
            else set()
            for col, per in cells.items()
        }
        for method, t in g["methods"].items():
            csv_row = {"setting": setting, "method": method, "model": t}
            md_row = {"Setting": setting, "Method": method}
            decodings = set(
                frame[(frame.setting == setting) & (frame.method == method) & (frame.model == t)]["decoding"]
            )
            for (eval_set, k), per in cells.items():
                mean, std = mean_std(per[method]) if per[method] else (None, None)
                csv_row[f"{eval_set} pass@{k}"] = None if mean is None else round(mean, 4)
                csv_row[f"{eval_set} pass@{k} std"] = None if std is None else round(std, 4)
                csv_row[f"{eval_set} pass@{k} seeds"] = len(per[method])
                md_row[f"{eval_set} pass@{k}"] = format_mean_std_markdown(
                    mean, std, bold=method in bold[(eval_set, k)]
                )
            md_row["Decoding"] = csv_row["decoding"] = "/".join(sorted(decodings)) or "-"
            csv_rows.append(csv_row)
            md_rows.append(md_row)
    table_notes = [
        "A cell is pass@k in percent (unbiased estimator from n samples per problem), mean ± standard "
        "deviation over run seeds; bold: the best method of its setting, better than every other by a "
        "paired t-test over seeds (p < 0.05).",
        "n/a: fewer samples per problem than k, or the model was not evaluated.",
    ] + (notes or [])
    frame_out = pd.DataFrame(csv_rows)
    write_table(frame_out, csv_path, md_path, title, table_notes, md_frame=pd.DataFrame(md_rows))
    return frame_out


def yield_table(
    runs: dict[tuple, dict[int, dict]], csv_path: str, md_path: str, reasons_csv: str
) -> pd.DataFrame:
    """``runs[(setting, method, seed)][t] = {"solutions": path, "proposals": path or None}``."""
    rows, reasons = [], Counter()
    for (setting, method, seed), iters in sorted(runs.items(), key=lambda kv: str(kv[0])):
        for t, paths in sorted(iters.items()):
            sol = read_jsonl(paths["solutions"])
            classes = Counter(r["difficulty"] for r in sol)
            row = {
                "setting": setting,
                "method": method,
                "seed": seed,
                "iteration": t,
                "pool": len(sol),
                **{c.lower(): classes.get(c, 0) for c in CLASSES},
                "samples": sum(r["n"] for r in sol),
                "parsed samples": sum(s["parsed"] for r in sol for s in r["samples"]),
                "verified samples": sum(r["c"] for r in sol),
            }
            for r in sol:
                for s in r["samples"]:
                    if not s["verified"] and s["reason"]:
                        reasons[("solution", _reason_head(s["reason"]))] += 1
            props = read_jsonl(paths["proposals"]) if paths.get("proposals") else []
            row.update(
                {
                    "proposed": len(props),
                    "parsed": sum(p["parsed"] for p in props),
                    "spec-valid": sum(p["valid"] for p in props),
                    "unique": sum(p["unique"] for p in props),
                }
            )
            for p in props:
                if not p["unique"] and p["reason"]:
                    reasons[("proposal", _reason_head(p["reason"]))] += 1
            rows.append(row)
    frame = pd.DataFrame(rows)
    notes = [
        "easy/medium/hard/impossible: pool problems per class after solving at this iteration (pass rate of "
        "k samples: easy >= tau_E, medium >= tau_M, hard > 0, impossible 0).",
        "proposed/parsed/spec-valid/unique: the proposals made after this iteration's solving; the valid "
        "ones are de-duplicated (in order, and against the pool) and the unique ones join the next "
        "iteration's pool.",
    ]
    write_table(frame, csv_path, md_path, "PSV yield per iteration", notes)
    rframe = pd.DataFrame(
        [{"what": w, "reason": r, "count": n} for (w, r), n in sorted(reasons.items())],
        columns=["what", "reason", "count"],
    )
    write_text_atomic(reasons_csv, rframe.to_csv(index=False))
    return frame


def _reason_head(reason: str) -> str:
    """A refusal's code without its per-item detail (``screen:a,b`` stays whole)."""
    return reason.split(" ", 1)[0]


def iteration_frame(frame: pd.DataFrame, setting: str, eval_set: str, k: int) -> pd.DataFrame:
    """Mean and std over seeds of pass@k per (method, model t)."""
    sel = frame[(frame.setting == setting) & (frame.eval_set == eval_set) & (frame.k == k)]
    rows = []
    for (method, t), g in sel.groupby(["method", "model"]):
        vals = [None if pd.isna(v) else float(v) for v in g.sort_values("seed")["pass"]]
        mean, std = mean_std(vals)
        rows.append(
            {
                "setting": setting,
                "eval_set": eval_set,
                "k": k,
                "method": method,
                "model": int(t),
                "mean": mean,
                "std": std,
                "seeds": len(vals),
            }
        )
    return pd.DataFrame(rows, columns=["setting", "eval_set", "k", "method", "model", "mean", "std", "seeds"])


def figure1(
    frame: pd.DataFrame, settings: dict[str, list[str]], loop_methods: list[str], png: str, pdf: str, csv: str
) -> pd.DataFrame:
    """pass@1 against the number of training iterations, per (setting, eval set)."""
    panels = [(s, e) for s, sets in settings.items() for e in sets]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    data = []
    for ax, (setting, eval_set) in zip(axes[0], panels):
        it = iteration_frame(frame, setting, eval_set, 1)
        data.append(it)
        for method in loop_methods:
            line = it[it.method.isin([method, "base"])]
            line = pd.concat([line[line.method == "base"].assign(method=method), line[line.method == method]])
            line = line.dropna(subset=["mean"]).sort_values("model")
            if len(line):
                ax.plot(line["model"], line["mean"], marker="o", label=method)
        for baseline, style in (("base", ":"), ("fewshot", "--")):
            b = it[(it.method == baseline)].dropna(subset=["mean"])
            if len(b):
                ax.axhline(float(b["mean"].iloc[0]), linestyle=style, color="grey", label=baseline)
        ax.set_title(f"{setting}: {eval_set}")
        ax.set_xlabel("training iterations")
        ax.set_ylabel("pass@1 (%)")
        ax.legend(fontsize=7)
    out = pd.concat(data) if data else pd.DataFrame()
    out.to_csv(csv, index=False)
    finish_figure(fig, png, pdf)
    return out


def figure4(
    frame: pd.DataFrame,
    settings: dict[str, list[str]],
    method: str,
    ks: list[int],
    png: str,
    pdf: str,
    csv: str,
) -> pd.DataFrame:
    """pass@k of ``method`` per iteration, a band of +-1 std over seeds, per (setting, eval set)."""
    panels = [(s, e) for s, sets in settings.items() for e in sets]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    data = []
    for ax, (setting, eval_set) in zip(axes[0], panels):
        for k in ks:
            it = iteration_frame(frame, setting, eval_set, k)
            line = pd.concat([it[it.method == "base"].assign(method=method), it[it.method == method]])
            line = line.dropna(subset=["mean"]).sort_values("model")
            data.append(line)
            if len(line):
                x, mean = line["model"].astype(float), line["mean"].astype(float)
                std = line["std"].astype(float).fillna(0.0)
                ax.plot(x, mean, marker="o", label=f"pass@{k}")
                ax.fill_between(x, mean - std, mean + std, alpha=0.2)
        ax.set_title(f"{method}, {setting}: {eval_set}")
        ax.set_xlabel("training iterations")
        ax.set_ylabel("pass@k (%)")
        ax.legend(fontsize=7)
    out = pd.concat(data) if data else pd.DataFrame()
    out.to_csv(csv, index=False)
    finish_figure(fig, png, pdf)
    return out


def scaling_figure(
    frame: pd.DataFrame,
    settings: dict[str, list[str]],
    points: dict[str, dict],
    xlabel: str,
    png: str,
    pdf: str,
    csv: str,
) -> pd.DataFrame:
    """Final pass@1 of each method at x = ``points[m]["x"]``, one line per
    ``points[m]["line"]``, a panel per (setting, eval set); bars are +-1 std over seeds."""
    panels = [(s, e) for s, sets in settings.items() for e in sets]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    rows = []
    for ax, (setting, eval_set) in zip(axes[0], panels):
        it = iteration_frame(frame, setting, eval_set, 1)
        for method, p in points.items():
            final = it[(it.method == method) & (it.model == p["t"])]
            mean = None if final.empty else final["mean"].iloc[0]
            std = None if final.empty else final["std"].iloc[0]
            rows.append(
                {
                    "setting": setting,
                    "eval_set": eval_set,
                    "method": method,
                    "x": p["x"],
                    "line": p["line"],
                    "mean": mean,
                    "std": std,
                }
            )
        panel = pd.DataFrame([r for r in rows if r["setting"] == setting and r["eval_set"] == eval_set])
        for line, g in panel.groupby("line"):
            g = g.dropna(subset=["mean"]).sort_values("x")
            if len(g):
                ax.errorbar(
                    g["x"].astype(float),
                    g["mean"].astype(float),
                    yerr=g["std"].astype(float).fillna(0.0),
                    marker="o",
                    capsize=3,
                    label=str(line),
                )
        ax.set_title(f"{setting}: {eval_set}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("pass@1 (%)")
        ax.legend(fontsize=7)
    out = pd.DataFrame(rows, columns=["setting", "eval_set", "method", "x", "line", "mean", "std"])
    out.to_csv(csv, index=False)
    finish_figure(fig, png, pdf)
    return out


# --- from the config: what the rules call ----------------------------------------

TABLE_TITLES = {
    "table1": "PSV Table 1: test-time training and transfer (pass@k, %)",
    "table2": "PSV Table 2: ablations (pass@k, %)",
    "table3": "PSV Table 3: input/target proposal settings (pass@k, %)",
}


def _frame(cfg: dict, methods: list[str]) -> pd.DataFrame:
    from ..tracks.psv import layout

    return results_frame(layout.score_files(cfg, methods), list(cfg["psv"]["evaluation"]["ks"]))


def method_table_of(cfg: dict, table: str, csv_path: str, md_path: str) -> pd.DataFrame:
    from ..tracks.psv import layout

    psv = cfg["psv"]
    methods = list(psv["tables"][table])
    groups = {
        s: {"methods": {m: layout.iterations(cfg, m) for m in methods}, "eval_sets": v["eval_sets"]}
        for s, v in psv["settings"].items()
    }
    ev = psv["evaluation"]
    notes = [
        f"n = {ev['samples']} samples per problem at temperature {ev['sampling']['temperature']}; "
        f"{len(psv['seeds'])} run seed(s); verifier: {psv['language']}.",
        "Loop methods are shown with their final solver theta_T; base and fewshot never train.",
    ]
    return method_table(
        _frame(cfg, methods), groups, list(ev["ks"]), TABLE_TITLES[table], csv_path, md_path, notes
    )


def yield_of(cfg: dict, csv_path: str, md_path: str, reasons_csv: str) -> pd.DataFrame:
    from ..tracks.psv import layout

    return yield_table(
        layout.yield_files(cfg, list(cfg["psv"]["tables"]["table1"])), csv_path, md_path, reasons_csv
    )


def figure_of(cfg: dict, figure: str, png: str, pdf: str, csv: str) -> pd.DataFrame:
    from ..tracks.psv.methods import BUILT_IN

    psv = cfg["psv"]
    methods = list(psv["tables"]["table1"])
    settings = {s: v["eval_sets"] for s, v in psv["settings"].items()}
    if figure in ("figure5", "figure6"):
        from ..tracks.psv.methods import method_settings

        names = list(psv["figures"][figure])
        frame = _frame(cfg, names)
        points = {}
        for m in names:
            ms = method_settings(cfg, m)
            rounds = int(ms["iterations"]) - 1
            if figure == "figure5":
                points[m] = {"x": int(ms["budget"]), "line": "final solver", "t": int(ms["iterations"])}
            else:
                points[m] = {
                    "x": rounds,
                    "line": f"total {int(ms['budget']) * rounds}",
                    "t": int(ms["iterations"]),
                }
        xlabel = "questions per iteration (B)" if figure == "figure5" else "proposal rounds (iterations - 1)"
        return scaling_figure(frame, settings, points, xlabel, png, pdf, csv)
    # figures 1 and 4 read Table 1's runs; figures 5 and 6 read only their own (the rule's
    # inputs), which may be done before Table 1's are
    frame = _frame(cfg, methods)
    if figure == "figure1":
        return figure1(frame, settings, [m for m in methods if m not in BUILT_IN], png, pdf, csv)
    full = "psv" if "psv" in methods else [m for m in methods if m not in BUILT_IN][0]
    return figure4(frame, settings, full, list(psv["evaluation"]["ks"]), png, pdf, csv)


def table6_of(cfg: dict, csv_path: str, md_path: str) -> pd.DataFrame:
    """Table 6: each listed model untrained (Baseline) and LoRA-trained on one condition's
    verified solutions, pass@k on the evaluation sets (one run: no seeds to average)."""
    from ..tracks.psv import layout

    t6 = cfg["psv"]["table6"]
    ks = list(t6["ks"])
    rows = []
    for (model, condition, eval_set), path in layout.table6_scores(cfg).items():
        s = scores_of(path, ks)
        row = next((r for r in rows if r["Model"] == model and r["Condition"] == condition), None)
        if row is None:
            row = {
                "Model": model,
                "Condition": condition if condition == layout.BASELINE else f"+{condition}",
            }
            rows.append(row)
        for k in ks:
            value = s["passk"][k]
            row[f"{eval_set} pass@{k}"] = "n/a" if value is None else f"{value:.2f}"
    columns = ["Model", "Condition"] + [f"{e} pass@{k}" for e in t6["eval_sets"] for k in ks]
    frame = pd.DataFrame(rows, columns=columns)
    notes = [
        f"Each model is LoRA-trained from its own base on one verified solution per problem from the "
        f"{t6['method']} run (first seed) of the condition's setting; Baseline is the model untrained.",
        "pass@k in percent from n = {} samples per problem.".format(cfg["psv"]["evaluation"]["samples"]),
    ]
    if not t6["models"]:
        notes.insert(
            0,
            "Paper scale only: config psv.table6.models lists no model here (the paper trains "
            "Qwen3.5-9B, Qwen3.5-27B and Qwen2.5-32B-Instruct: config/papers/psv.yaml).",
        )
    write_table(
        frame,
        csv_path,
        md_path,
        "PSV Table 6: larger models trained on PSV's verified solutions",
        notes,
        md_frame=frame,
    )
    return frame
