"""The goalposts: the hard real problems the GASP teacher is shown (paper 004, Sec. 3.2).

A goalpost is a LiveCodeBench problem of the training split, reduced to what the teacher's
prompt needs::

    {"id": question_id, "title": question_title, "text": question_content, "starter_code": str}

Where they come from:

- the embedded default ships eight small function-style problems written for this project
  in LiveCodeBench's row format (``selfplay/data/gasp_goalposts/rows.jsonl``, dated before
  the training cut; see the README there);
- at paper scale, the hard set H is made by :func:`filter_goalposts` from the training split
  (:func:`training_split`: LiveCodeBench's problems dated before ``train_before``, which
  never overlap the evaluation window), and written as LiveCodeBench rows, so the same
  file is both the teacher's goalposts and the items of the benchmark ``gasp_goalposts``
  (each checkpoint's pass@100 on H: Table 4, Figures 5 and 14).

The filter, as Sec. 3.2 describes it: a training problem stays in H only when pass@100 = 0,
i.e. none of its n sampled answers passes, under every one of (1) the base model and every
checkpoint (saved every 50 iterations) of each of three Real-data RL seeds, (2) an AZR
checkpoint, (3) one more RL run trained on what is left after (1) and (2). Each of these
is one named *filter*: the benchmark layer's scored rows (``<mode>.scored.jsonl``: one row
per sample with ``id``, ``sample`` and ``passed``) of one model on the candidates. Filters
are applied in the order given; a problem an earlier filter solved need not be scored by
the later ones (the final RL run is trained and scored on what is left), but a problem
still standing must be scored by every filter, or the filter is incomplete and this stops.
So the filter runs in two steps: :func:`filter_goalposts` with the filters of (1) and (2)
on the whole training split (the *prefilter*: the rows the final RL run, the method
``filter_rl``, trains on), then :func:`final_filter` with the final RL run's checkpoints
on what the prefilter left, giving H. Each record names the ``stage`` that removed its
problem (``prefilter`` or ``final_rl``; None while it stays).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from ...errors import UserError
from ...evaluate.benchmarks import livecodebench as lcb
from ...evaluate.files import read_json_lines
from ...records import read_jsonl, write_jsonl

SHIPPED = lcb.GOALPOST_ROWS  # selfplay/data/gasp_goalposts/rows.jsonl


class Goalpost(TypedDict):
    id: str
    title: str
    text: str
    starter_code: str


def load_rows(path: str | Path | None = None) -> list[dict]:
    """The goalposts' LiveCodeBench rows: those this project ships (None) or a JSONL file."""
    return read_json_lines(SHIPPED if path is None else path, "GASP goalposts")


def goalposts_from_rows(
    rows: list[dict], train_before: str | None = lcb.DEFAULTS["train_before"]
) -> list[Goalpost]:
    """One goalpost per LiveCodeBench row, in file order (id = question_id).

    Every row must read as a LiveCodeBench item (tests and metadata included: a goalpost
    the benchmark cannot judge is no goalpost), ids must be unique, and with
    ``train_before`` every contest date must lie before it (goalposts come from the
    training split and must never sit in an evaluation window)."""
    cut = lcb._as_datetime(train_before, "train_before") if train_before is not None else None
    out: list[Goalpost] = []
    seen: set[str] = set()
    for n, row in enumerate(rows, 1):
        item, why = lcb.item_from_row(row, lcb.DEFAULTS["max_decompressed_mb"] * 1024 * 1024)
        where = (
            f"goalpost row {n} ({row.get('question_id')!r})" if isinstance(row, dict) else f"goalpost row {n}"
        )
        if item is None:
            raise UserError(f"{where}: {why}")
        if item["id"] in seen:
            raise UserError(f"{where}: question_id {item['id']!r} appears twice")
        if cut is not None and lcb._as_datetime(item["contest_date"], "contest_date") >= cut:
            raise UserError(
                f"{where}: contest_date {item['contest_date'][:10]} is not before the training cut "
                f"{cut.date()}; goalposts come from the training split"
            )
        seen.add(item["id"])
        out.append(
            {
                "id": item["id"],
                "title": item["title"] or item["id"],
                "text": item["question"],
                "starter_code": item["starter_code"],
            }
        )
    if not out:
        raise UserError("the goalpost file holds no rows")
    return out


def load_goalposts(
    path: str | Path | None = None, train_before: str | None = lcb.DEFAULTS["train_before"]
) -> list[Goalpost]:
    """The goalposts of a file of LiveCodeBench rows (None: the shipped ones)."""
    return goalposts_from_rows(load_rows(path), train_before)


def row_of_item(item: dict) -> dict:
    """A prepared LiveCodeBench item written back as a row of the dataset's format, which
    ``item_from_row`` reads back into the same item (private tests stay in their stored
    form; metadata keeps ``func_name``, the only key the judge reads)."""
    return {
        "question_title": item["title"],
        "question_content": item["question"],
        "platform": item["platform"],
        "question_id": item["id"],
        "contest_id": item["contest_id"],
        "contest_date": item["contest_date"],
        "starter_code": item["starter_code"],
        "difficulty": item["group"],
        "public_test_cases": json.dumps(item["public_tests"]),
        "private_test_cases": item["private_tests"],
        "metadata": json.dumps({"func_name": item["func_name"]} if item["func_name"] else {}),
    }


def training_split(source: str | Path | None, settings: dict | None = None) -> tuple[list[dict], list[dict]]:
    """(rows, skipped): LiveCodeBench's training split as rows (the goalpost candidates).

    ``livecodebench.training_problems`` picks the problems dated before ``train_before``
    (refusing a cut after the evaluation window's start, and checking ``paper_counts``
    when set); ``settings`` is ``evaluation.benchmarks.livecodebench``; ``source`` a
    downloaded release folder, a JSONL file, or None (the LiveCodeBench smoke rows)."""
    items, skipped = lcb.training_problems(source, settings)
    return [row_of_item(item) for item in items], skipped


# --- the filter (Sec. 3.2) -------------------------------------------------------


def _tally(name: str, rows: list[dict], candidates: set[str]) -> dict[str, list[int]]:
    """{problem id: [samples, passes]} of one filter's scored rows."""
    out: dict[str, list[int]] = {}
    for n, row in enumerate(rows, 1):
        if not isinstance(row, Mapping) or "id" not in row or "passed" not in row:
            raise UserError(
                f"goalpost filter {name}: scored row {n} has no id and passed "
                "(expected the benchmark layer's codegen .scored.jsonl rows)"
            )
        pid = str(row["id"])
        if pid not in candidates:
            raise UserError(
                f"goalpost filter {name}: scored row {n} is for {pid!r}, which is not a candidate"
            )
        entry = out.setdefault(pid, [0, 0])
        entry[0] += 1
        entry[1] += bool(row["passed"])
    return out


PREFILTER, FINAL_RL = "prefilter", "final_rl"  # the filter's two steps (a record's stage)


def filter_goalposts(
    candidates: list[dict],
    scored: Mapping[str, list[dict]],
    samples: int | None = None,
    stage: str = PREFILTER,
) -> tuple[list[dict], list[dict]]:
    """(kept rows, records): the candidates (LiveCodeBench rows) no filter solved.

    ``scored`` maps each filter's name to its scored rows, in the order the filters apply
    (e.g. ``base``, ``rl_s0_step50`` ... for every checkpoint of every Real-data RL seed,
    ``azr``, then ``final_rl_step50`` ...). A candidate is kept when every filter that
    scored it has 0 passing samples (pass@n = 0); it is dropped as soon as one has any.
    ``samples`` (the paper: 100), when given, is the number of samples every filter must
    have drawn per problem it scored.

    One record per candidate, in candidate order: ``{"id", "title", "kept", "reason",
    "stage": ``stage`` when a filter solved it else None, "solved_by": [filters with
    passes > 0], "filters": [{"filter", "n", "passes"}, ...]}`` (every filter that scored
    it, in filter order)."""
    if not scored:
        raise UserError("goalpost filter: no filters given (each needs its scored rows)")
    ids = []
    for n, row in enumerate(candidates, 1):
        qid = row.get("question_id") if isinstance(row, Mapping) else None
        if not isinstance(qid, str) or not qid:
            raise UserError(f"goalpost filter: candidate {n} has no question_id")
        ids.append(qid)
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise UserError(f"goalpost filter: candidate ids appear twice: {', '.join(dup)}")
    tallies = {name: _tally(name, list(rows), set(ids)) for name, rows in scored.items()}
    kept, records = [], []
    for row, pid in zip(candidates, ids):
        entries, solved_by = [], []
        for name, tally in tallies.items():
            if pid not in tally:
                if not solved_by:
                    raise UserError(
                        f"goalpost filter {name}: {pid!r} is still standing but has no scored "
                        "samples there (every filter must score what earlier filters left)"
                    )
                continue
            n, passes = tally[pid]
            if samples is not None and n != int(samples):
                raise UserError(
                    f"goalpost filter {name}: {pid!r} has {n} scored samples, expected {int(samples)}"
                )
            entries.append({"filter": name, "n": n, "passes": passes})
            if passes:
                solved_by.append(name)
        if solved_by:
            first = next(e for e in entries if e["filter"] == solved_by[0])
            reason = f"solved by {first['filter']} ({first['passes']} of {first['n']} samples passed)"
        else:
            reason = f"pass@n = 0 under all {len(entries)} filters"
            kept.append(row)
        records.append(
            {
                "id": pid,
                "title": row.get("question_title"),
                "kept": not solved_by,
                "reason": reason,
                "stage": stage if solved_by else None,
                "solved_by": solved_by,
                "filters": entries,
            }
        )
    return kept, records


def filter_files(
    candidates_path: str | Path,
    scored_paths: Mapping[str, str | Path],
    rows_out: str | Path,
    records_out: str | Path,
    samples: int | None = None,
) -> dict[str, Any]:
    """:func:`filter_goalposts` file to file: candidate rows (JSONL) and each filter's
    ``.scored.jsonl`` -> H as LiveCodeBench rows, and one record per candidate."""
    candidates = read_json_lines(candidates_path, "goalpost candidates")
    scored = {name: read_jsonl(path) for name, path in scored_paths.items()}
    kept, records = filter_goalposts(candidates, scored, samples)
    write_jsonl(rows_out, kept)
    write_jsonl(records_out, records)
    return {"candidates": len(candidates), "kept": len(kept), "filters": list(scored)}


def final_filter_files(
    rows_path: str | Path,
    records_path: str | Path,
    scored_paths: Mapping[str, str | Path],
    rows_out: str | Path,
    records_out: str | Path,
    samples: int | None = None,
) -> dict[str, Any]:
    """:func:`final_filter` file to file: the prefilter's rows and records and each final
    RL checkpoint's ``.scored.jsonl`` -> H as LiveCodeBench rows, and the records."""
    rows = read_jsonl(rows_path)
    scored = {name: read_jsonl(path) for name, path in scored_paths.items()}
    kept, records = final_filter(rows, read_jsonl(records_path), scored, samples)
    write_jsonl(rows_out, kept)
    write_jsonl(records_out, records)
    return {"prefiltered": len(rows), "kept": len(kept), "filters": list(scored)}


def final_filter(
    rows: list[dict], records: list[dict], scored: Mapping[str, list[dict]], samples: int | None = None
) -> tuple[list[dict], list[dict]]:
    """(H, records): Sec. 3.2's third stage on the prefilter's output.

    ``rows`` and ``records`` are what :func:`filter_goalposts` kept and recorded (the
    prefilter); ``scored`` maps each final RL checkpoint's tag to its scored rows, which
    may cover the whole training split (a problem the prefilter removed is not looked at
    again). A kept problem any of them solves (pass@n > 0) leaves H with stage
    ``final_rl``; every record of a problem still standing gains the final filters'
    entries. Empty ``scored`` (no final RL run, ``goalposts.filter.final_rl`` null):
    H is the prefilter's rows and the records are unchanged."""
    rows, records = list(rows), [dict(r) for r in records]
    if not scored:
        return rows, records
    known = {str(r.get("id")) for r in records}
    for name, srows in scored.items():
        _tally(name, list(srows), known)  # every row well formed and for a training problem
    standing = {str(r.get("question_id")) for r in rows}
    marked = {str(r["id"]) for r in records if r.get("kept")}
    if standing != marked:
        raise UserError(
            "goalpost filter final_rl: the prefilter's rows and records disagree on what stayed "
            f"({', '.join(sorted(standing ^ marked))})"
        )
    narrowed = {name: [r for r in srows if str(r["id"]) in standing] for name, srows in scored.items()}
    kept, final = filter_goalposts(rows, narrowed, samples, stage=FINAL_RL) if rows else ([], [])
    by_id = {r["id"]: r for r in final}
    for rec in records:
        last = by_id.get(str(rec["id"]))
        if last is None:
            continue
        rec["filters"] = list(rec["filters"]) + last["filters"]
        rec.update(kept=last["kept"], stage=last["stage"], solved_by=last["solved_by"])
        rec["reason"] = (
            last["reason"] if not last["kept"] else f"pass@n = 0 under all {len(rec['filters'])} filters"
        )
    return kept, records
