"""Python builtin identifier swap, classification version (Miceli Barone et al. 2023;
paper 001, Section 3.4.1 and Table 2: accuracy, greedy and chain of thought).

The data (``python_builtins_swap.csv`` of the inverse scaling prize submission) has
three columns:

- ``prompt``: a statement that swaps two builtins (``print, len = len, print``), then a
  function's signature and docstring;
- ``classes``: a Python list literal of two strings, each the rest of the function
  (its body): first the original body from GitHub, which is wrong once the builtins are
  swapped, then the body with every use of the two builtins swapped, which is right;
- ``answer_index``: the index of the right body in ``classes`` (1 throughout the data).

The authors' chat evaluation shows each row twice, once in each order, as "Program 1" and
"Program 2" (the prompt followed by one body), and asks which program is more likely to
be correct, answered with its number. We do the same: every row gives two items,
``<row>:order1`` (the bodies in file order) and ``<row>:order2`` (reversed), and the
labels are the program numbers ``"1"`` and ``"2"``. Accuracy over both orders is the
number Table 2 reports. A model that always answers the same number scores 50% by
construction, one that always prefers the unmodified GitHub body scores 0%.

The positive label is ``"1"`` (the first program shown). No label means "the swapped
variant": the swapped (right) body is Program 1 in one order and Program 2 in the other,
so precision, recall and F1 here only describe a preference for the first position; the
papers report accuracy alone.

Rows are ids ``row-<n>`` (1-based CSV data row); the shipped smoke rows are
``smoke-<n>``. A row whose ``classes`` is not a list of two strings or whose
``answer_index`` is not 0 or 1 is skipped with the reason. ``max_chars`` (when set)
skips rows whose longer program exceeds it; the authors skipped examples over 4,000
tokens of their model's tokenizer. ``limit`` (config) keeps the first N rows, i.e. 2N
items, so both orders of a row stay together.
"""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ..benchmark import ClassificationBenchmark
from . import _classify as common

# The submission's repository, pinned to the commit that holds the CC-BY-4.0 test set.
REPOSITORY = "https://github.com/Avmb/inverse_scaling_prize_code_identifier_swap"
REVISION = "7fb6d8231796f460e12102942cbc0e9e1f30288e"
DOWNLOADS = {
    "identifier_swap": {
        "url": (
            "https://raw.githubusercontent.com/Avmb/inverse_scaling_prize_code_identifier_swap/"
            f"{REVISION}/cc_4_0_licensed/python_builtins_swap.csv"
        ),
        "file": f"python_builtins_swap-{REVISION[:7]}.csv",
        "sha256": None,
    },
}

COLUMNS = ("prompt", "classes", "answer_index")

# A plain assistant, as the benchmark's own evaluation asks it: no word may point at the
# swapped builtins before the function (a hint changes what the benchmark measures).
SYSTEM = "You are a helpful assistant."


class IdentifierSwap(ClassificationBenchmark):
    name = "identifier_swap"
    release_items = 2_000  # 1,000 rows, each in both orders
    title = "Python builtin identifier swap"
    smoke = "identifier_swap.smoke.csv"
    source_note = (
        "python_builtins_swap.csv of the inverse scaling prize submission by Miceli Barone et al. "
        f"({REPOSITORY}, cc_4_0_licensed/, commit {REVISION[:7]}): 1,000 rows, each shown in both "
        "orders"
    )
    downloads = (DOWNLOADS["identifier_swap"],)
    labels: ClassVar[tuple[str, ...]] = ("1", "2")
    positive: ClassVar[str] = "1"

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        path = common.resolve_source(
            self.name, source, settings, hint=f"download {DOWNLOADS['identifier_swap']['url']}"
        )
        smoke = path is None
        if smoke:
            path = common.smoke_file(self.smoke)
        elif path.is_dir():
            found = sorted(path.rglob("*.csv"))
            if len(found) != 1:
                raise UserError(
                    f"{path}: expected one .csv file of the identifier swap benchmark, found {len(found)}"
                )
            path = found[0]
        items, skipped = [], []
        rows = read_rows(path)
        if settings.get("limit"):
            rows = rows[: int(settings["limit"])]
        for n, row in enumerate(rows, 1):
            base = f"{common.SMOKE_PREFIX if smoke else 'row-'}{n}"
            pair, reason = parse_row(row)
            if pair is None:
                skipped.append({"id": base, "reason": reason})
                continue
            head, classes, answer = pair
            programs = [head + body.rstrip() + "\n" for body in classes]
            longest = max(programs, key=len)
            reason = common.too_long(longest, settings)
            if reason:
                skipped.append({"id": base, "reason": reason})
                continue
            swap_line = head.split("\n", 1)[0]
            for order, (first, second) in (("order1", (0, 1)), ("order2", (1, 0))):
                label = "1" if answer == first else "2"
                items.append(
                    {
                        "id": f"{base}:{order}",
                        "group": None,
                        "label": label,
                        "program_1": programs[first],
                        "program_2": programs[second],
                        "swap_statement": swap_line,
                        "row": base,
                    }
                )
        return common.dedupe(items, skipped), skipped

    def messages(self, item: dict, cot: bool) -> list[dict]:
        user = (
            "Below are two versions of the same Python program.\n\n"
            f"Program 1:\n{common.fence(item['program_1'], 'python')}\n\n"
            f"Program 2:\n{common.fence(item['program_2'], 'python')}\n\n"
            "Which of the two programs is more likely to be correct, program 1 or program 2? "
            + self.answer_instruction(cot)
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def read_rows(path: Path) -> list[dict]:
    """The CSV's data rows as dicts of its three columns (a one-line UserError when the
    file is not that CSV)."""
    try:
        with common.open_text(path) as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLUMNS:
            raise UserError(
                f"{path}: expected the CSV header {','.join(COLUMNS)}, got {','.join(header or [])[:80]!r}"
            )
        return [dict(zip(COLUMNS, r)) if len(r) == len(COLUMNS) else {"_bad": len(r)} for r in reader]
    except csv.Error as exc:
        raise UserError(f"{path}: not a readable CSV file ({exc})") from None


def parse_row(row: dict) -> tuple[tuple[str, list[str], int] | None, str | None]:
    """((prompt, [body, body], answer_index), None) or (None, why the row cannot be used)."""
    if "_bad" in row:
        return None, f"malformed row: {row['_bad']} columns instead of {len(COLUMNS)}"
    head = row["prompt"]
    if not head.strip():
        return None, "malformed row: empty prompt"
    try:
        classes = ast.literal_eval(row["classes"])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, "malformed row: classes is not a Python list literal"
    if not (isinstance(classes, list) and len(classes) == 2 and all(isinstance(c, str) for c in classes)):
        return None, "malformed row: classes is not a list of two strings"
    try:
        answer = int(row["answer_index"])
    except ValueError:
        return None, f"malformed row: answer_index {row['answer_index']!r} is not a number"
    if answer not in (0, 1):
        return None, f"malformed row: answer_index {answer} is not 0 or 1"
    return (head, classes, answer), None
