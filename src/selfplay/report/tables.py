"""Writing a table as CSV and Markdown together."""

from __future__ import annotations

import pandas as pd

from ..records import write_text_atomic


def write_table(
    frame: pd.DataFrame,
    csv_path: str,
    md_path: str,
    title: str,
    notes: list[str] | None = None,
    md_frame: pd.DataFrame | None = None,
) -> None:
    """``frame`` as CSV and Markdown; ``md_frame``, when given, is what the Markdown shows
    (formatted cells) while the CSV keeps ``frame``'s plain numbers."""
    write_text_atomic(csv_path, frame.to_csv(index=False))
    shown = frame if md_frame is None else md_frame
    # formatted cells stay as written ("0.00", not 0)
    lines = [f"# {title}", "", shown.to_markdown(index=False, disable_numparse=md_frame is not None), ""]
    for note in notes or []:
        lines.append(f"- {note}")
    write_text_atomic(md_path, "\n".join(lines).rstrip() + "\n")
