"""PySecDB (Sun et al. 2023): is a Python commit, shown as a diff, a security fix?
Paper 001 Table 3 (accuracy; greedy, majority of 9, chain of thought) and paper 000
Table 4 (accuracy, precision, recall, F1 over 16 samples).

PySecDB is gated: its authors hand out the data after a request (a Google form linked
from github.com/SunLab-GMU/PySecDB, or accepting the conditions of the Hugging Face
dataset ``sunlab/PySecDB``), so it is never downloaded by the workflow. Put the file you
were given anywhere and set config ``evaluation.benchmarks.pysecdb.source: path`` and
``.path`` to it (a file, or a folder holding it).

The format, as the dataset card documents it: JSON records with five keys, ``id``,
``label`` (``"security"`` or ``"non-security"``), ``content`` (the patch text), ``source``
(``"MITRE"`` or ``"wild"``) and ``CVE-ID`` (``"CVE-<year>-<number>"``, e.g. ``"CVE-2021-3281"``, or ``"NA"``). The reader
takes a JSON list of such records, an object of them keyed by id, or JSON lines.

The model is asked whether the commit fixes a security vulnerability, without the rest of
the repository (as in paper 001). Labels: ``Yes`` (a security fix, the positive class:
precision and recall are about finding security fixes) and ``No``; an item keeps the
original ``pysecdb_label`` too. Paper 001 drops patches beyond its model's context
(128k tokens); here ``max_chars`` (config) skips patches longer than that many
characters, each recorded with the reason, and a generation job leaves out any prompt
that does not fit the serving model's context (``Backend.unfit``; the cell's summary and
its table count them).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ..benchmark import ClassificationBenchmark
from . import _classify as common

# No download: access is granted per person (so the class's ``downloads`` is empty and
# config source "download" is refused). Where to ask for it, and what you get:
ACCESS = {
    "request": [
        "https://github.com/SunLab-GMU/PySecDB",
        "https://huggingface.co/datasets/sunlab/PySecDB",
        "https://forms.gle/Uu441xPQ4dqnVGV39",
    ],
    "file": "a JSON file of records {id, label, content, source, CVE-ID}",
    "sha256": None,
}

ACCESS_HINT = (
    "PySecDB is gated: request it from its authors (github.com/SunLab-GMU/PySecDB, or accept the "
    "conditions of huggingface.co/datasets/sunlab/PySecDB), then set evaluation.benchmarks.pysecdb."
    "source: path and .path to the JSON file (or its folder)"
)

LABELS = {"security": "Yes", "non-security": "No"}

SYSTEM = (
    "You are a security engineer who reviews commits to Python projects. You see one commit as a "
    "diff, without the rest of its repository."
)


class PySecDB(ClassificationBenchmark):
    name = "pysecdb"
    release_items = 4_049  # 1,258 security and 2,791 non-security commits (Sun et al. 2023)
    title = "PySecDB"
    smoke = "pysecdb.smoke.json"
    source_note = (
        "PySecDB (Sun et al., ICSME 2023): about 1.2k security and 2.8k non-security Python commits; "
        "gated, supplied by the user (" + ACCESS_HINT + ")"
    )
    labels: ClassVar[tuple[str, ...]] = ("Yes", "No")
    positive: ClassVar[str] = "Yes"

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        path = common.resolve_source(self.name, source, settings, hint=ACCESS_HINT)
        smoke = path is None
        files = [common.smoke_file(self.smoke)] if smoke else data_files(path)
        items, skipped = [], []
        for file in files:
            for where, record in common.read_json_records(file):
                item, reason = self._item(record, where, smoke)
                if reason is None:
                    reason = common.too_long(item["patch"], settings)
                if reason is not None:
                    skipped.append({"id": item["id"] if item else where, "reason": reason})
                else:
                    items.append(item)
        return common.first(common.dedupe(items, skipped), settings), skipped

    def _item(self, record: object, where: str, smoke: bool) -> tuple[dict | None, str | None]:
        bad = common.unreadable(record)
        if bad:
            return None, bad
        if not isinstance(record, dict):
            return None, "malformed record: not a JSON object"
        raw_id = record.get("id")
        ident = f"{common.SMOKE_PREFIX}{raw_id}" if smoke else str(raw_id)
        if raw_id is None or str(raw_id) == "":
            return None, "malformed record: no id"
        label = str(record.get("label", "")).strip().lower()
        if label not in LABELS:
            return {
                "id": ident
            }, f"malformed record: label {record.get('label')!r} is not 'security' or 'non-security'"
        patch = record.get("content")
        if not isinstance(patch, str) or not patch.strip():
            return {"id": ident}, "malformed record: no patch content"
        return {
            "id": ident,
            "group": None,
            "label": LABELS[label],
            "pysecdb_label": label,
            "patch": patch,
            "origin": record.get("source"),
            "cve": record.get("CVE-ID"),
        }, None

    def messages(self, item: dict, cot: bool) -> list[dict]:
        user = (
            "Here is a commit to a Python project:\n\n"
            f"{common.fence(item['patch'], 'diff')}\n\n"
            "Does this commit fix a security vulnerability? " + self.answer_instruction(cot)
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def data_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and p.name.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))
    )
    if not found:
        raise UserError(f"{path}: no .json or .jsonl file of PySecDB in this folder; {ACCESS_HINT}")
    return found
