"""One problem's test suite across EvolveCoder's rounds (paper 002, Sec. 2.3 and 3).

A problem carries its accumulated suite: every test with the round and the method that
produced it (``seed`` for the refinement's tests in round 0, then ``adversarial`` and
``discriminative``). Tests accumulate across rounds; the end-of-round filter
(``selection.final_filter``) decides what round r's dataset holds, without deleting
anything from the suite, so later rounds still see (and the tables still count) every
test ever generated. This module turns a pass matrix over the suite into:

* the two generation steps' inputs for the next round (which programs, which tests,
  which results are shown);
* the round's dataset entry (kept tests, the reason a problem is dropped);
* the numbers behind Table 2 (problems and mean tests per source), Figure 4 (pool
  pass@k under the round's tests), Figure 5 (generated vs retained tests per method)
  and Figure 6 (pass@k per candidate model on the final suite);
* beyond the paper: when the seed problem has a reference solution, how many of the
  generated tests it fails (a direct measure of wrong tests, which the paper does not
  check).

Matrices here are rows = pool solutions, columns = the suite's tests, with
``usable[t]`` False for tests that could not be evaluated at all (malformed input or
expected value); those never reach the selection or the filter.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ...metrics.passk import pass_at_ks
from .selection import FilterResult, Pick, adversarial_pick, discriminative_pick, final_filter

METHODS = ("adversarial", "discriminative")


def usable_columns(usable: Sequence[bool]) -> list[int]:
    return [t for t, ok in enumerate(usable) if ok]


def submatrix(rows: Sequence[Sequence[bool]], columns: Sequence[int]) -> list[list[bool]]:
    return [[bool(row[t]) for t in columns] for row in rows]


def _lift(pick: Pick, columns: list[int], candidates: list[int]) -> Pick:
    """A pick made on the usable columns and the candidate rows, with its tests as suite
    indices and its solutions (and the solutions its reasons name) as pool indices."""
    why = dict(pick.why)
    if "pass_rates" in why:
        why["pass_rates"] = {candidates[s]: rate for s, rate in why["pass_rates"].items()}
    for key in ("top", "diverse"):
        if key in why:
            why[key] = [candidates[s] for s in why[key]]
    return Pick(
        tests=[columns[t] for t in pick.tests], solutions=[candidates[s] for s in pick.solutions], why=why
    )


def generation_picks(
    rows: Sequence[Sequence[bool]],
    usable: Sequence[bool],
    seed: int,
    settings: dict,
    has_program: Sequence[bool] | None = None,
) -> dict[str, Pick]:
    """What each generation method of the next round shows the model: tests are suite
    indices, solutions are pool indices. ``settings`` holds the track's
    ``evolve.adversarial`` and ``evolve.discriminative`` sections.

    Only pool entries with a program (``has_program``; every entry when None) are
    candidates: an entry without one cannot be shown, so it takes no place in a pick
    and does not count in the pass rates a pick is made on (a test every program passes
    is "passed by nearly all solutions" however many answers held no program). Were
    such rows candidates, their identical all-failing vectors would win the
    discriminative group and crowd the adversarial pick, and the programs shown would
    be fewer than the paper's five, or none. No candidate: no pick."""
    columns = usable_columns(usable)
    candidates = [s for s in range(len(rows)) if has_program is None or has_program[s]]
    if not candidates:
        return {}
    sub = submatrix([rows[s] for s in candidates], columns)
    adv, dis = settings["adversarial"], settings["discriminative"]
    window = adv.get("diverse_window")
    picks = {}
    if adv.get("enabled", True):
        picks["adversarial"] = _lift(
            adversarial_pick(
                sub,
                random.Random(f"{seed}:adversarial"),
                easy_pass_rate=float(adv["easy_pass_rate"]),
                top=int(adv["top"]),
                diverse=int(adv["diverse"]),
                diverse_window=tuple(window) if window else None,
            ),
            columns,
            candidates,
        )
    if dis.get("enabled", True):
        picks["discriminative"] = _lift(
            discriminative_pick(
                sub,
                random.Random(f"{seed}:discriminative"),
                min_test_pass_rate=float(dis["min_test_pass_rate"]),
                size=int(dis["size"]),
            ),
            columns,
            candidates,
        )
    return picks


@dataclass(frozen=True)
class RoundEntry:
    """One problem in one round's dataset (kept or not, with the reason)."""

    kept_problem: bool
    reason: str | None
    tests: list[int]  # suite indices of the tests the round keeps
    dropped: dict[int, str]  # suite index -> reason (malformed included)
    perfect_solutions: int


def round_entry(rows: Sequence[Sequence[bool]], usable: Sequence[bool], settings: dict) -> RoundEntry:
    """The end-of-round filter over the usable part of the accumulated suite."""
    columns = usable_columns(usable)
    f = settings["filter"]
    result: FilterResult = final_filter(
        submatrix(rows, columns),
        min_test_pass_rate=float(f["min_test_pass_rate"]),
        max_per_vector=int(f["max_per_vector"]),
        min_tests=int(f["min_tests"]),
        max_perfect=int(f["max_perfect_solutions"]),
    )
    dropped = {columns[t]: why for t, why in result.dropped.items()}
    dropped.update({t: "malformed" for t, ok in enumerate(usable) if not ok})
    return RoundEntry(
        kept_problem=result.kept_problem,
        reason=result.reason,
        tests=[columns[t] for t in result.tests],
        dropped=dict(sorted(dropped.items())),
        perfect_solutions=result.perfect_solutions,
    )


def perfect_count(
    rows: Sequence[Sequence[bool]], tests: Sequence[int], members: Sequence[int] | None = None
) -> tuple[int, int]:
    """(n, c): how many of the given pool solutions there are and how many pass every
    given test; a problem with no tests counts every solution as passing."""
    members = list(range(len(rows))) if members is None else list(members)
    c = sum(all(rows[s][t] for t in tests) for s in members)
    return len(members), c


def pool_pass_at_k(
    problems: Sequence[tuple[Sequence[Sequence[bool]], Sequence[int]]], ks: Sequence[int], members_of=None
) -> dict[int, float | None]:
    """Figure 4 / 6: mean unbiased pass@k over problems, each problem's pool judged on
    the given tests (``members_of(i)`` limits problem i's pool, e.g. to one model)."""
    counts = []
    for i, (rows, tests) in enumerate(problems):
        members = members_of(i) if members_of else None
        n, c = perfect_count(rows, tests, members)
        if n:
            counts.append((n, c))
    return pass_at_ks(counts, ks)


def method_counts(origins: Sequence[dict], entry: RoundEntry, round_: int) -> dict[str, dict[str, int]]:
    """Figure 5: per method, the tests it generated in ``round_`` and how many of those
    the round's filter keeps (for a dropped problem, none are kept)."""
    kept = set(entry.tests) if entry.kept_problem else set()
    out = {m: {"generated": 0, "retained": 0} for m in METHODS}
    for t, origin in enumerate(origins):
        if origin["round"] != round_ or origin["method"] not in out:
            continue
        out[origin["method"]]["generated"] += 1
        out[origin["method"]]["retained"] += int(t in kept)
    return out


def reference_failures(
    reference_row: Sequence[bool] | None, usable: Sequence[bool], origins: Sequence[dict]
) -> dict[str, int] | None:
    """Beyond the paper: of the usable tests per method, how many the seed's reference
    solution fails (None when the seed had no reference)."""
    if reference_row is None:
        return None
    out: dict[str, int] = defaultdict(int)
    for t, origin in enumerate(origins):
        if usable[t] and not reference_row[t]:
            out[origin["method"]] += 1
    return {m: out.get(m, 0) for m in ("seed", *METHODS)}


def table2_rows(entries: Sequence[tuple[str, RoundEntry]]) -> dict[str, dict[str, float | int]]:
    """Table 2 for one round: per source and overall, the problems kept and the mean
    number of tests they keep."""
    by: dict[str, list[int]] = defaultdict(list)
    for source, entry in entries:
        if entry.kept_problem:
            by[source].append(len(entry.tests))
            by["Overall"].append(len(entry.tests))
    return {src: {"problems": len(v), "avg_tests": (sum(v) / len(v)) if v else None} for src, v in by.items()}
