"""Saving a matplotlib figure: each file written beside its target and renamed, so a
half-written image never looks finished."""

from __future__ import annotations

from pathlib import Path


def save_figure(fig, *paths: str, dpi: int = 150) -> None:
    for path in paths:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(path).with_name(f".{Path(path).name}.tmp{Path(path).suffix}")
        fig.savefig(tmp, dpi=dpi)
        tmp.replace(path)
