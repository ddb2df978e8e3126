"""Saving a matplotlib figure: each file written beside its target and renamed, so a
half-written image never looks finished; `finish_figure` also lays it out, says which
points had no data, and frees it."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (jobs have no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, *paths: str, dpi: int = 150) -> None:
    for path in paths:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(path).with_name(f".{Path(path).name}.tmp{Path(path).suffix}")
        fig.savefig(tmp, dpi=dpi)
        tmp.replace(path)


def finish_figure(fig, *paths: str, empty: list | None = None, what: str = "rounds") -> None:
    """Lay out ``fig``, note the ``what`` (e.g. rounds) that had no verified instances,
    write it to every path and close it."""
    if empty:
        fig.text(0.5, 0.01, f"no verified instances in {what} {list(empty)}", ha="center", fontsize=8)
    fig.tight_layout()
    save_figure(fig, *paths)
    pyplot().close(fig)
