"""The EvolveCoder track's steps end to end on the shipped seeds: real de-duplication,
real sandboxed pass matrices, and answers replayed from recordings written here for
the exact requests the steps make (the replay backend, as every workflow test uses)."""

import json
from importlib import resources

import pytest

from selfplay.config import schema as shared_schema
from selfplay.config.defaults import fill_defaults
from selfplay.errors import UserError
from selfplay.pipeline import evolve
from selfplay.records import read_json, read_jsonl, write_jsonl

SAMPLING = {"temperature": 0.6, "top_p": 0.95, "max_new_tokens": 64}

# Two refined problems the "model" writes; the others get an unreadable answer.
REFINED = {
    "add": {
        "question": "Return a + b.",
        "tests": [f"assert add({i}, {i + 1}) == {2 * i + 1}" for i in range(6)]
        + ["assert add(-1, 1) == 0", "assert add(1, y) == 2"],
    },
    "mx": {
        "question": "Return the largest element of a non-empty list.",
        "tests": [
            "assert biggest([1, 5, 2]) == 5",
            "assert biggest([-3, -1]) == -1",
            "assert biggest([7]) == 7",
            "assert biggest([2, 2]) == 2",
            "assert biggest([0, -1, 9, 3]) == 9",
            "assert biggest([1, 2, 3]) == 3",
        ],
    },
}
POOL = {
    "add": [
        "def add(a, b):\n    return a + b",
        "def add(a, b):\n    return a - b if a < 0 else a + b",
        "def add(a, b):\n    return a * 2 + 1",
        "I do not know.",
    ],
    "mx": [
        "def biggest(xs):\n    return max(xs)",
        "def biggest(xs):\n    return xs[0]",
        "def biggest(xs):\n    return sorted(xs)[-1]",
        "def biggest(xs):\n    import os\n    os._exit(0)",
    ],
}
NEW_TESTS = {
    ("add", "adversarial"): ["assert add(-5, 2) == -3", "assert add(0, 0) == 0", "assert add(1, 1) == 2"],
    ("add", "discriminative"): ["assert add(-2, 2) == 0", "assert add(3, 3) == 6"],
    ("mx", "adversarial"): ["assert biggest([3, 9, 1]) == 9", "assert biggest([1, 5, 2]) == 5"],
    ("mx", "discriminative"): ["assert biggest([4, 8]) == 8"],
}


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    root = shared_schema()
    root["properties"]["evolve"] = json.loads(
        resources.files("selfplay.tracks").joinpath("evolve", "schema.json").read_text()
    )
    section = {
        "experiment": "t",
        "seeds": {"sources": ["taco", "apps", "primeintellect"]},
        "refine": {"sampling": SAMPLING},
        "pool": {"sampling": SAMPLING, "models": [{"name": "track", "samples": 4}]},
        "adversarial": {"sampling": SAMPLING},
        "discriminative": {"sampling": SAMPLING},
        "filter": {"min_tests": 3},
        "matrix": {"time_limit": 2.0},
    }
    cfg = fill_defaults({"seed": 3, "evolve": section}, root)
    empty = tmp_path_factory.mktemp("replay") / "empty.jsonl"
    empty.write_text("")
    cfg["backend"] = {"name": "replay", "files": [str(empty)], "on_missing": "empty"}
    return cfg


def _replay(cfg, tmp_path, name, answers):
    path = tmp_path / f"{name}.recording.jsonl"
    write_jsonl(path, answers)
    return {**cfg, "backend": {"name": "replay", "files": [str(path)], "on_missing": "error"}}


def _answer_by_meta(cfg, tmp_path, step, run, answer_of):
    """Run a generation step once with empty answers to learn its requests' keys, then
    write a recording answering each request and run it again from that recording."""
    probe = tmp_path / f"{step}.probe.jsonl"
    run(cfg, str(probe))
    answers = [{"key": r["key"], "outputs": answer_of(r)} for r in read_jsonl(probe)]
    run(_replay(cfg, tmp_path, step, answers), str(tmp_path / f"{step}.jsonl"))
    return str(tmp_path / f"{step}.jsonl")


def test_seeds_to_round_one_dataset(cfg, tmp_path):
    seeds, skipped = tmp_path / "seeds.jsonl", tmp_path / "skipped.jsonl"
    evolve.prepare_seeds(cfg, str(seeds), str(skipped))
    records = read_jsonl(seeds)
    assert {r["source"] for r in records} == {"taco", "apps", "primeintellect"}
    vectors, meta = tmp_path / "embeddings.npy", tmp_path / "embeddings.json"
    evolve.embed_seeds(cfg, str(seeds), str(vectors), str(meta))
    assert read_json(meta)["ids"] == [r["id"] for r in records]
    # a bundle's vectors are restored only for the same seeds, byte for byte
    again, again_meta = tmp_path / "again.npy", tmp_path / "again.json"
    evolve.restore_embeddings(str(seeds), str(vectors), str(meta), str(again), str(again_meta))
    assert again.read_bytes() == vectors.read_bytes()
    other = tmp_path / "other_seeds.jsonl"
    write_jsonl(other, records[1:])
    with pytest.raises(UserError, match="other seed problems"):
        evolve.restore_embeddings(str(other), str(vectors), str(meta), str(again), str(again_meta))
    kept, stats = tmp_path / "dedup.jsonl", tmp_path / "dedup.json"
    evolve.deduplicate_seeds(cfg, str(seeds), str(vectors), str(meta), str(kept), str(stats))
    s = read_json(stats)
    # the shipped TACO/APPS pair "sum of even numbers" collapses to one problem
    t1 = {row["source"]: row for row in s["table1"]}
    assert list(t1) == ["taco", "apps", "primeintellect", "Overall"]
    assert t1["taco"]["before"] + t1["apps"]["before"] == t1["taco"]["after"] + t1["apps"]["after"] + 1
    assert len(read_jsonl(kept)) == len(records) - len(s["dropped"])

    problems = read_jsonl(kept)[:3]
    write_jsonl(kept, problems)
    names = {problems[0]["id"]: "add", problems[1]["id"]: "mx"}

    refine = _answer_by_meta(
        cfg,
        tmp_path,
        "refine",
        lambda c, out: evolve.refine_generate(c, str(kept), None, out),
        lambda r: [
            json.dumps(REFINED[names[r["meta"]["problem_id"]]])
            if r["meta"]["problem_id"] in names
            else "Sorry, no JSON today."
        ],
    )
    suite0 = tmp_path / "suite0.jsonl"
    evolve.refined_suites(str(kept), refine, str(suite0))
    suites = {s["id"]: s for s in read_jsonl(suite0)}
    add = suites[problems[0]["id"]]
    assert add["entry"] == "add" and len(add["tests"]) == 8
    assert suites[problems[2]["id"]]["reason"] == "parse:no_json_object"

    pool_gen = _answer_by_meta(
        cfg,
        tmp_path,
        "pool",
        lambda c, out: evolve.pool_generate(c, str(suite0), "track", 4, None, None, out),
        lambda r: [
            f"```python\n{code}\n```" if "def" in code else code
            for code in POOL[names[r["meta"]["problem_id"]]]
        ],
    )
    pool = tmp_path / "pool.jsonl"
    evolve.pool_solutions(str(suite0), [pool_gen], str(pool))
    pools = {p["id"]: p["solutions"] for p in read_jsonl(pool)}
    assert [s["reason"] for s in pools[add["id"]]] == [None, None, None, "parse:no_code_block"]

    m0 = tmp_path / "matrix0.jsonl"
    evolve.round_matrices(cfg, str(suite0), str(pool), str(m0))
    mats = {m["id"]: m for m in read_jsonl(m0)}
    madd = mats[add["id"]]
    assert madd["malformed"][:7] == [None] * 7
    assert madd["malformed"][7] is not None  # its argument y cannot be evaluated: judges no one
    assert madd["passed"][0][:7] == [True] * 7  # the right program
    assert madd["passed"][3] == [False] * 8 and madd["reasons"][3][0] == evolve.NO_PROGRAM
    mmx = mats[problems[1]["id"]]
    assert mmx["passed"][3] == [False] * 6  # os._exit never passes
    assert mmx["passed"][1] == [False, False, True, True, False, False]  # xs[0]

    d0 = tmp_path / "dataset0.jsonl"
    evolve.round_dataset(cfg, 0, str(suite0), str(m0), str(d0))
    data0 = {d["id"]: d for d in read_jsonl(d0)}
    assert data0[add["id"]]["dropped"]["7"] == "malformed"

    evolved = _answer_by_meta(
        cfg,
        tmp_path,
        "round1",
        lambda c, out: evolve.evolve_generate(c, 1, str(suite0), str(pool), str(m0), None, out),
        lambda r: [json.dumps({"tests": NEW_TESTS[(names[r["meta"]["problem_id"]], r["meta"]["step"])]})],
    )
    steps = {(r["meta"]["problem_id"], r["meta"]["step"]) for r in read_jsonl(evolved)}
    assert steps == {(p["id"], m) for p in problems[:2] for m in ("adversarial", "discriminative")}
    suite1 = tmp_path / "suite1.jsonl"
    evolve.extend_suites(1, str(suite0), evolved, str(suite1))
    s1 = {s["id"]: s for s in read_jsonl(suite1)}
    assert len(s1[add["id"]]["tests"]) == 8 + 5
    mx_rejected = [r for r in s1[problems[1]["id"]]["rejected"] if r["round"] == 1]
    assert mx_rejected == [
        {
            "text": "assert biggest([1, 5, 2]) == 5",
            "reason": "duplicate",
            "round": 1,
            "method": "adversarial",
            "shown_solutions": mx_rejected[0]["shown_solutions"],
        }
    ]

    m1 = tmp_path / "matrix1.jsonl"
    evolve.round_matrices(cfg, str(suite1), str(pool), str(m1), previous_path=str(m0))
    m1add = {m["id"]: m for m in read_jsonl(m1)}[add["id"]]
    assert m1add["passed"][0][:8] == madd["passed"][0]  # carried over
    assert m1add["passed"][0][8:] == [True] * 5  # the right program passes the new ones
    assert m1add["passed"][1][8] is False  # add(-5, 2) catches the negative-a bug
    d1 = tmp_path / "dataset1.jsonl"
    evolve.round_dataset(cfg, 1, str(suite1), str(m1), str(d1))
    assert {d["id"] for d in read_jsonl(d1)} == {add["id"], problems[1]["id"]}

    # the round tables and figures read these files
    from selfplay.report import evolve as report

    rounds = [(str(suite0), str(m0), str(d0)), (str(suite1), str(m1), str(d1))]
    t2 = report.table2(
        rounds, ["taco", "apps", "primeintellect"], str(tmp_path / "t2.csv"), str(tmp_path / "t2.md")
    )
    kept1 = [d for d in read_jsonl(d1) if d["kept"]]
    assert t2[(t2["Round"] == 1) & (t2["Metric"] == "#Problems")]["Overall"].item() == len(kept1)
    f4 = report.figure4(rounds, [1, 2], *(str(tmp_path / f"f4.{e}") for e in ("png", "pdf", "csv")))
    assert set(f4["round"]) == {0, 1} and set(f4["k"]) == {1, 2}
    f5 = report.figure5(rounds, *(str(tmp_path / f"f5.{e}") for e in ("png", "pdf", "csv")))
    generated = f5.set_index("method")["generated"].to_dict()
    assert generated == {"adversarial": 3 + 1, "discriminative": 2 + 1}
    f6 = report.figure6(rounds[-1], [1], *(str(tmp_path / f"f6.{e}") for e in ("png", "pdf", "csv")))
    assert list(f6["model"]) == (["track"] if kept1 else [])
    y = report.yield_table(rounds, str(tmp_path / "y.csv"), str(tmp_path / "y.md"))
    assert y.loc[1, "tests accepted"] == 7 and y.loc[1, "tests rejected"] == 1
    assert y.loc[0, "malformed"] == 1
    assert (tmp_path / "f4.png").stat().st_size > 0
