"""EvolveCoder's seed-set artifacts (paper 002, Sec. 2.1), from the statistics dict that
``selfplay.tracks.evolve.dedup.summary`` writes:

- Table 1: problems per source before and after semantic de-duplication, and in the
  final dataset (a count the later stages supply; "n/a" until they do).
- Figure 1: the cross-source duplication matrix as a heatmap (row A, column B: the
  share of A's problems with a near-duplicate in B; the diagonal is 1 by definition;
  ``dedup`` defines it exactly).
- Figure 2: histograms of each problem's mean cosine to its k nearest neighbours,
  before and after filtering, with the two means in the legend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..records import write_text_atomic
from ..tracks.evolve.seeds import LABELS, SOURCES
from .figures import finish_figure, pyplot
from .tables import write_table


def _label(source: str) -> str:
    return LABELS.get(source, source)


def _in_paper_order(names: Sequence[str]) -> list[str]:
    known = [s for s in SOURCES if s in names]
    return known + sorted(n for n in names if n not in SOURCES)


def table1(
    stats: Mapping,
    csv_path: str,
    md_path: str,
    final_counts: Mapping[str, int] | None = None,
    final_name: str = "final dataset",
) -> pd.DataFrame:
    """Table 1 from ``stats["table1"]``. ``final_counts`` (source -> problems in the final
    dataset) fills the third column; without it, or for a source it lacks, "n/a"."""
    rows = [r for r in stats["table1"] if r["source"] != "Overall"]
    finals = dict(final_counts or {})
    out = []
    for r in rows:
        out.append(
            {
                "Dataset": _label(r["source"]),
                "Before filtering": int(r["before"]),
                "After filtering": int(r["after"]),
                final_name: finals.get(r["source"], "n/a"),
            }
        )
    overall_final = (
        sum(finals[r["source"]] for r in rows) if rows and all(r["source"] in finals for r in rows) else "n/a"
    )
    out.append(
        {
            "Dataset": "Overall",
            "Before filtering": sum(r["Before filtering"] for r in out),
            "After filtering": sum(r["After filtering"] for r in out),
            final_name: overall_final,
        }
    )
    frame = pd.DataFrame(out, columns=["Dataset", "Before filtering", "After filtering", final_name])
    kept = [
        f"{row['Dataset']} {100.0 * row['After filtering'] / row['Before filtering']:.2f}%"
        for row in out[:-1]
        if row["Before filtering"]
    ]
    notes = [
        f"Filtering: problems whose statement embeddings have cosine above {stats['threshold']} are grouped "
        f"(connected groups) and one representative per group is kept, drawn with seed {stats['seed']}.",
        "Retained: " + (", ".join(kept) if kept else "n/a") + ".",
        f"{final_name}: problems of each source left after the later stages; n/a until they have run.",
    ]
    write_table(
        frame,
        csv_path,
        md_path,
        "EvolveCoder Table 1: seed problems per source before and after de-duplication",
        notes,
    )
    return frame


def _ordered_matrix(figure1: Mapping) -> tuple[list[str], np.ndarray]:
    names = list(figure1["sources"])
    order = _in_paper_order(names)
    index = [names.index(n) for n in order]
    matrix = np.asarray(figure1["overlap"], dtype=float)[np.ix_(index, index)]
    return order, matrix


def figure1(
    stats: Mapping, png_path: str, pdf_path: str | None = None, csv_path: str | None = None
) -> pd.DataFrame:
    """Figure 1: the cross-source duplication heatmap (and its numbers as CSV)."""
    plt = pyplot()
    import seaborn as sns

    order, matrix = _ordered_matrix(stats["figure1"])
    labels = [_label(s) for s in order]
    frame = pd.DataFrame(matrix, index=labels, columns=labels)
    if csv_path:
        write_text_atomic(csv_path, frame.rename_axis("problems of \\ matched in").to_csv())
    size = max(4.0, 1.1 * len(labels) + 2.0)
    fig, ax = plt.subplots(figsize=(size, size * 0.85))
    sns.heatmap(
        frame,
        annot=True,
        fmt=".2f",
        vmin=0.0,
        vmax=1.0,
        cmap="Blues",
        square=True,
        cbar_kws={"label": "share of row's problems"},
        ax=ax,
    )
    ax.set(
        xlabel="has a near-duplicate in",
        ylabel="problems of",
        title=f"Cross-source semantic duplication (cosine > {stats['figure1']['threshold']})",
    )
    finish_figure(fig, *(p for p in (png_path, pdf_path) if p))
    return frame


def figure2(
    stats: Mapping, png_path: str, pdf_path: str | None = None, csv_path: str | None = None, bins: int = 30
) -> pd.DataFrame:
    """Figure 2: histograms of the mean cosine to the k nearest neighbours, before and
    after filtering; the legend gives each mean (summary rows also as CSV)."""
    plt = pyplot()
    k = stats["k"]
    values = {
        which: np.asarray([v for v in stats["figure2"][which] if v is not None], dtype=float)
        for which in ("before", "after")
    }
    summary = pd.DataFrame(
        [
            {
                "set": which,
                "problems": int(v.size),
                "mean": float(v.mean()) if v.size else float("nan"),
                "median": float(np.median(v)) if v.size else float("nan"),
            }
            for which, v in values.items()
        ]
    )
    if csv_path:
        write_text_atomic(csv_path, summary.to_csv(index=False))
    present = [v for v in values.values() if v.size]
    low = min(float(v.min()) for v in present) if present else 0.0
    high = max(float(v.max()) for v in present) if present else 1.0
    edges = np.linspace(low, high if high > low else low + 1e-3, bins + 1)
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for (which, v), colour in zip(values.items(), ("tab:red", "tab:blue")):
        if v.size:
            ax.hist(
                v,
                bins=edges,
                alpha=0.55,
                color=colour,
                label=f"{which} filtering (n={v.size}, mean {v.mean():.3f})",
            )
            ax.axvline(v.mean(), color=colour, linestyle="--", linewidth=1)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set(
        xlabel=f"mean cosine similarity to the {k} nearest neighbours",
        ylabel="problems",
        title="Local redundancy before and after de-duplication",
    )
    if present:
        ax.legend(fontsize=8)
    missing = [w for w, v in values.items() if not v.size]
    if missing:
        fig.text(0.5, 0.01, f"no problem with a neighbour: {', '.join(missing)}", ha="center", fontsize=8)
    finish_figure(fig, *(p for p in (png_path, pdf_path) if p))
    return summary
