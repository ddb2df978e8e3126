"""How a paper's benchmark table is laid out from a track's evaluation settings: which
benchmarks are its rows, which (mode, model) pairs its columns, which metrics files
its cells read. The tracks name their tables' benchmarks; this does the rest."""

from __future__ import annotations

from .registry import benchmark

MODEL_LABELS = {"base": "Base", "bob": "Trained Bob", "alice": "Trained Alice"}
MODE_SUFFIX = {"greedy": "", "majority": " Maj", "cot": " CoT", "sampled": ""}


def model_label(tag: str) -> str:
    if tag.startswith("alice_r"):
        return f"Alice round {tag[len('alice_r'):]}"
    return MODEL_LABELS.get(tag, tag)


def column_label(mode: str, model: str) -> str:
    return model_label(model) + MODE_SUFFIX.get(mode, f" ({mode})")


def table_layout(runs: dict[str, list[str]], models: list[str], benches: list[str]):
    """(rows, columns, cells) of a table over ``benches`` (those the track runs):
    rows [(title, bench)], columns [(label, (mode, model))], cells [(bench, mode, model)]."""
    present = [b for b in benches if b in runs]
    modes: list[str] = []
    for b in present:
        modes += [m for m in runs[b] if m not in modes]
    rows = [(benchmark(b).title, b) for b in present]
    columns = [(column_label(m, t), (m, t)) for m in modes for t in models]
    cells = [(b, m, t) for b in present for m in runs[b] for t in models]
    return rows, columns, cells
