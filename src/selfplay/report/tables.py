"""Writing a table as CSV and Markdown together."""

from __future__ import annotations

import pandas as pd

from ..records import write_text_atomic


def write_table(frame: pd.DataFrame, csv_path: str, md_path: str, title: str, notes: list[str] | None = None) -> None:
    write_text_atomic(csv_path, frame.to_csv(index=False))
    lines = [f"# {title}", "", frame.to_markdown(index=False), ""]
    for note in notes or []:
        lines.append(f"- {note}")
    write_text_atomic(md_path, "\n".join(lines).rstrip() + "\n")
