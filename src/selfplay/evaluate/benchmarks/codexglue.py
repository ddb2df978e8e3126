"""CodeXGLUE Defect Detection (Lu et al. 2021; the Devign data of Zhou et al. 2019): is a
C function from FFmpeg or QEMU vulnerable? Paper 001 Table 3 (accuracy; greedy,
majority of 9, chain of thought) and paper 000 Table 5 (accuracy, precision, recall, F1
over 16 samples). Both use the test split (2,732 functions).

Where the data comes from: the Hugging Face dataset ``google/code_x_glue_cc_defect_detection``,
whose Parquet conversion holds ``data/test-00000-of-00001.parquet`` with the columns
``id`` (int32), ``func`` (the function's source), ``target`` (bool, true = vulnerable),
``project`` and ``commit_id``. The reader also takes the JSON-lines files that the
CodeXGLUE repository's ``preprocess.py`` writes (``test.jsonl``: ``func``, ``target`` as
0/1, ``project``, ``commit_id``, ``idx``). A folder is searched for the test split's
file(s) (names containing ``test``).

Labels: ``Yes`` (the function contains a vulnerability, the positive class, as in
CodeXGLUE's own precision/recall) and ``No``. Item ids are the dataset's ``id`` (or
``idx``); the shipped smoke functions are ``smoke-<id>``. ``max_chars`` (when set) skips
functions longer than that.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ..benchmark import ClassificationBenchmark
from . import _classify as common

DATASET = "google/code_x_glue_cc_defect_detection"
# The commit "Convert dataset to Parquet" that added data/*.parquet (the files have not
# changed since; main's head commit is the merge of that pull request, 69bd48c).
REVISION = "a618859d5c7a7aed0c495d4b9578fd64b77475b4"
DOWNLOADS = {
    "codexglue": {
        "url": f"https://huggingface.co/datasets/{DATASET}/resolve/{REVISION}/data/test-00000-of-00001.parquet",
        "file": f"codexglue-defect-test-{REVISION[:7]}.parquet",
        "sha256": None,
    },
}

SYSTEM = (
    "You are a security auditor for C code. You look for memory-safety errors and other defects an "
    "attacker could exploit."
)


class CodeXGlueDefect(ClassificationBenchmark):
    name = "codexglue"
    release_items = 2_732  # the test split
    title = "CodeXGLUE defect detection"
    smoke = "codexglue.smoke.parquet"
    source_note = (
        f"CodeXGLUE Defect Detection test split (Devign, FFmpeg and QEMU; 2,732 C functions), "
        f"Hugging Face dataset {DATASET} at {REVISION[:7]}"
    )
    downloads = (DOWNLOADS["codexglue"],)
    labels: ClassVar[tuple[str, ...]] = ("Yes", "No")
    positive: ClassVar[str] = "Yes"

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        path = common.resolve_source(
            self.name, source, settings, hint=f"download {DOWNLOADS['codexglue']['url']}"
        )
        smoke = path is None
        files = [common.smoke_file(self.smoke)] if smoke else split_files(path)
        items, skipped = [], []
        for file in files:
            for where, record in read_records(file):
                item, reason = _item(record, where, smoke)
                if reason is None:
                    reason = common.too_long(item["func"], settings)
                if reason is not None:
                    skipped.append({"id": (item or {}).get("id", where), "reason": reason})
                else:
                    items.append(item)
        return common.first(common.dedupe(items, skipped), settings), skipped

    def messages(self, item: dict, cot: bool) -> list[dict]:
        user = (
            "Here is one function from a C project (the rest of the project is not shown):\n\n"
            f"{common.fence(item['func'], 'c')}\n\n"
            "Does this function contain a security vulnerability? " + self.answer_instruction(cot)
        )
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def split_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and "test" in p.name and p.name.endswith((".parquet", ".jsonl", ".jsonl.gz"))
    )
    if not found:
        raise UserError(
            f"{path}: no test split file (.parquet or .jsonl with 'test' in its name) of "
            f"CodeXGLUE defect detection in this folder"
        )
    return found


def read_records(path: Path) -> list[tuple[str, object]]:
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError(
                "reading CodeXGLUE's Parquet file needs pyarrow (pip install pyarrow; the datasets "
                "package brings it)"
            ) from None
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises its own error types for a corrupt file
            raise UserError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
        return [(f"{path.name}[{i}]", r) for i, r in enumerate(rows)]
    return common.read_json_records(path)


def _item(record: object, where: str, smoke: bool) -> tuple[dict | None, str | None]:
    bad = common.unreadable(record)
    if bad:
        return None, bad
    if not isinstance(record, dict):
        return None, "malformed record: not an object"
    raw_id = record.get("id", record.get("idx"))
    if raw_id is None:
        return None, "malformed record: no id or idx"
    ident = f"{common.SMOKE_PREFIX}{raw_id}" if smoke else str(raw_id)
    target = record.get("target")
    if isinstance(target, bool):
        vulnerable = target
    elif isinstance(target, int) and target in (0, 1):
        vulnerable = bool(target)
    else:
        return {"id": ident}, f"malformed record: target {target!r} is not true/false or 0/1"
    func = record.get("func")
    if not isinstance(func, str) or not func.strip():
        return {"id": ident}, "malformed record: no function source (func)"
    return {
        "id": ident,
        "group": None,
        "label": "Yes" if vulnerable else "No",
        "func": func,
        "project": record.get("project"),
        "commit_id": record.get("commit_id"),
    }, None
