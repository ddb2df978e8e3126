"""EquiBench (Wei et al. 2025): are two programs equivalent? Paper 000, Section 5.3.1
(Figures 4-5, Table 7): accuracy and F1 per category, averaged over 16 samples.

Six categories of 400 pairs each (200 equivalent, 200 not), the item's group:

- ``DCE``: C programs that differ by removed dead or live code; equivalent means the
  same program state at every corresponding point reached;
- ``STOKE``: x86-64 assembly from the STOKE superoptimizer; equivalent means the same
  values in the live-out registers for the same values of the defined-in registers;
- ``TVM``: CUDA kernels from TVM schedules; equivalent means the same result on valid
  inputs (floating-point rounding aside);
- ``OJ_A``, ``OJ_V``, ``OJ_VA``: Python programming-contest solutions that differ by an
  algorithm, by variable names, or both; equivalent means the same output for every
  valid input.

The data: the Hugging Face dataset ``anjiangwei/EquiBench-Datasets``, one JSON-lines file
per category (``preprocess/<category>/pairs.jsonl``; the card of pull request refs/pr/6
names ``pairs_v2.jsonl`` for STOKE), downloaded as ``equibench-<category>-<revision>.jsonl`` into one
folder. Each line is one pair as the EquiBench code writes it: ``category``,
``pair_id``, ``program_1_code``, ``program_2_code``, ``truth_label`` (true = equivalent),
plus paths, lengths and problem fields; STOKE pairs may carry ``problem_def_in`` and
``problem_live_out``, which the prompt shows when present. The reader takes one such file,
or a folder searched recursively (in a folder holding both ``pairs.jsonl`` and
``pairs_v2.jsonl`` the newer version is read). The category comes from the row, else from
the folder or file name.

Positive label: ``Yes`` (the programs are equivalent; class attribute ``positive``).
EquiBench's truth label is "equivalent: true", and the evaluation code released with
paper 000 scores it with scikit-learn's default positive class, i.e. ``truth_label ==
True``; the F1 of Figure 5 and Table 7 is therefore F1 of finding equivalent pairs. (It is
also why STOKE's F1 is so low there: a model that calls superoptimized assembly
inequivalent most of the time has a low recall of the equivalent class.)

Item ids are ``<category>-<pair_id>`` (the smoke set's ``smoke-<category>-<pair_id>``).
``limit`` (config) keeps the first N pairs of each category, so a short run still covers
all six; ``max_chars`` (when set) skips pairs whose two programs together are longer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ..benchmark import ClassificationBenchmark
from . import _classify as common

CATEGORIES = ("DCE", "STOKE", "TVM", "OJ_A", "OJ_V", "OJ_VA")

DATASET = "anjiangwei/EquiBench-Datasets"
# The dataset's main branch was last changed by commit a8033c1 ("remove problems"). Only
# this abbreviation has been seen; the Hub resolves commit-id prefixes (huggingface_hub
# issue 197, fixed server-side), but the full 40-hex id from the dataset's History page
# is the safer pin.
REVISION = "a8033c1"
# Every category as preprocess/<cat>/pairs.jsonl, as the main card's configs name them (not
# verified at this revision: the card of pull request refs/pr/6 points STOKE at
# pairs_v2.jsonl instead; the reader prefers a pairs_v2.jsonl next to a pairs.jsonl).
FILES = {cat: f"preprocess/{cat}/pairs.jsonl" for cat in CATEGORIES}
DOWNLOADS = {
    f"equibench_{cat.lower()}": {
        "url": f"https://huggingface.co/datasets/{DATASET}/resolve/{REVISION}/{FILES[cat]}",
        # flat names: the download rule puts a benchmark's files in one folder
        "file": f"equibench-{cat}-{REVISION}.jsonl",
        "sha256": None,
    }
    for cat in CATEGORIES
}

# What "equivalent" means in each category, and how to fence its code.
NOTIONS = {
    "DCE": (
        "two C programs",
        "c",
        "They count as equivalent when, run on the same input, they pass through the same program state "
        "at every corresponding point that execution reaches.",
    ),
    "STOKE": (
        "two x86-64 assembly functions",
        "asm",
        "They count as equivalent when, started with the same values in the input registers, they always "
        "finish with the same values in the output registers.",
    ),
    "TVM": (
        "two CUDA kernels",
        "cuda",
        "They count as equivalent when, given the same valid input, they always compute the same output "
        "(floating-point rounding differences aside).",
    ),
    "OJ": (
        "two Python solutions to the same programming-contest problem",
        "python",
        "They count as equivalent when they print the same output for every valid input of the problem.",
    ),
}

SYSTEM = (
    "You are an expert in program semantics. You decide whether two programs behave identically, "
    "by reasoning about what they compute rather than how their text looks."
)


class EquiBench(ClassificationBenchmark):
    name = "equibench"
    release_items = 2_400  # six categories
    title = "EquiBench"
    smoke = "equibench.smoke.jsonl"
    source_note = (
        f"EquiBench (Wei et al. 2025): 2,400 program pairs in six categories, Hugging Face dataset "
        f"{DATASET} at {REVISION}"
    )
    downloads = tuple(DOWNLOADS.values())
    labels: ClassVar[tuple[str, ...]] = ("Yes", "No")
    # "Yes, they are equivalent" is the positive class: EquiBench's truth_label is true for
    # equivalent pairs and paper 000's F1 is computed with that class as positive.
    positive: ClassVar[str] = "Yes"

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        path = common.resolve_source(
            self.name, source, settings, hint=f"download the six files of huggingface.co/datasets/{DATASET}"
        )
        smoke = path is None
        files = [common.smoke_file(self.smoke)] if smoke else pair_files(path)
        items, skipped = [], []
        for file in files:
            for where, record in common.read_json_records(file):
                item, reason = _item(record, where, smoke, category_of_path(file))
                if reason is None:
                    reason = common.too_long(item["program_1"] + item["program_2"], settings)
                if reason is not None:
                    skipped.append({"id": (item or {}).get("id", where), "reason": reason})
                else:
                    items.append(item)
        items = common.dedupe(items, skipped)
        limit = settings.get("limit")
        if limit:
            counts: dict[str, int] = {}
            kept = []
            for item in items:
                counts[item["group"]] = counts.get(item["group"], 0) + 1
                if counts[item["group"]] <= int(limit):
                    kept.append(item)
            items = kept
        return items, skipped

    def messages(self, item: dict, cot: bool) -> list[dict]:
        category = item["group"]
        what, lang, notion = NOTIONS["OJ" if category.startswith("OJ_") else category]
        registers = ""
        if category == "STOKE" and (item.get("def_in") or item.get("live_out")):
            registers = (
                f" The input registers are {item.get('def_in') or 'not given'}; the output registers are "
                f"{item.get('live_out') or 'not given'}."
            )
        user = (
            f"Here are {what}.\n\n"
            f"Program 1:\n{common.fence(item['program_1'], lang)}\n\n"
            f"Program 2:\n{common.fence(item['program_2'], lang)}\n\n"
            f"{notion}{registers} Are the two programs equivalent? " + self.answer_instruction(cot)
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def pair_files(path: Path) -> list[Path]:
    """The pair files under ``path``: per folder, the newest ``pairs*.jsonl`` version; any
    other .jsonl file as it is."""
    if path.is_file():
        return [path]
    found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    chosen: dict[Path, Path] = {}
    others = []
    for p in found:
        m = re.fullmatch(r"pairs(?:_v(\d+))?\.jsonl(?:\.gz)?", p.name)
        if m is None:
            others.append(p)
            continue
        best = chosen.get(p.parent)
        if best is None or _version(p) > _version(best):
            chosen[p.parent] = p
    files = sorted(chosen.values()) + others
    if not files:
        raise UserError(f"{path}: no EquiBench pair files (.jsonl) in this folder")
    return files


def _version(p: Path) -> int:
    m = re.fullmatch(r"pairs(?:_v(\d+))?\.jsonl(?:\.gz)?", p.name)
    return int(m.group(1)) if m and m.group(1) else 1


def category_of_path(path: Path) -> str | None:
    """A category named by the file's folder or file name (longest match: OJ_VA before OJ_V)."""
    for part in (path.parent.name, path.name):
        for cat in sorted(CATEGORIES, key=len, reverse=True):
            if re.search(rf"(^|[^A-Za-z]){cat}($|[^A-Za-z_])", part, flags=re.IGNORECASE):
                return cat
    return None


def _item(
    record: object, where: str, smoke: bool, path_category: str | None
) -> tuple[dict | None, str | None]:
    bad = common.unreadable(record)
    if bad:
        return None, bad
    if not isinstance(record, dict):
        return None, "malformed record: not an object"
    category = record.get("category") or path_category
    if category not in CATEGORIES:
        return None, f"unknown category {category!r} (expected one of {', '.join(CATEGORIES)})"
    pair_id = record.get("pair_id")
    if pair_id is None:
        return None, "malformed record: no pair_id"
    ident = f"{common.SMOKE_PREFIX if smoke else ''}{category}-{pair_id}"
    truth = record.get("truth_label")
    if isinstance(truth, int) and not isinstance(truth, bool) and truth in (0, 1):
        truth = bool(truth)
    if not isinstance(truth, bool):
        return {"id": ident}, f"malformed record: truth_label {truth!r} is not true or false"
    p1, p2 = record.get("program_1_code"), record.get("program_2_code")
    if not (isinstance(p1, str) and p1.strip() and isinstance(p2, str) and p2.strip()):
        return {"id": ident}, "malformed record: program_1_code or program_2_code missing"
    item = {
        "id": ident,
        "group": category,
        "label": "Yes" if truth else "No",
        "program_1": p1,
        "program_2": p2,
    }
    if category == "STOKE":
        item["def_in"] = record.get("problem_def_in") or record.get("def_in")
        item["live_out"] = record.get("problem_live_out") or record.get("live_out")
    return item, None
