"""How a paper's benchmark table is laid out from a track's evaluation settings: which
benchmarks are its rows, which (mode, model) pairs its columns, which metrics files
its cells read. The tracks name their tables' benchmarks; this does the rest."""

from __future__ import annotations

from . import model_tags
from .registry import benchmark

MODE_SUFFIX = {"greedy": "", "majority": " Maj", "cot": " CoT", "sampled": ""}


def column_label(mode: str, model: str) -> str:
    return model_tags.label(model) + MODE_SUFFIX.get(mode, f" ({mode})")


def table_layout(runs: list[tuple[str, str, str]], benches: list[str]):
    """(rows, columns, cells) of a table over ``benches`` (those among the track's runs,
    (benchmark, mode, model) triples): rows [(title, bench)], columns [(label, (mode,
    model))] in run order, cells [(bench, mode, model)]."""
    cells = [r for r in runs if r[0] in benches]
    present = [b for b in benches if any(c[0] == b for c in cells)]
    pairs: list[tuple[str, str]] = []
    for _, mode, model in cells:
        if (mode, model) not in pairs:
            pairs.append((mode, model))
    order = {m: i for i, m in enumerate(dict.fromkeys(mode for mode, _ in pairs))}
    pairs.sort(key=lambda p: order[p[0]])  # all models of a mode side by side
    rows = [(benchmark(b).title, b) for b in present]
    columns = [(column_label(m, t), (m, t)) for m, t in pairs]
    return rows, columns, cells
