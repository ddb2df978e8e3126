"""The trivial shipped seed set of EvolveCoder (the embedded default's seeds): every
reference passes its own tests, every question states the function's signature and
example calls whose results the reference gives, the default config uses the set, and
de-duplication collapses its one planted near-duplicate."""

import re

import numpy as np
import pytest
from test_config_loading import load_as_snakemake
from test_evolve_seeds import _expected_value, _run_stdin

from selfplay import embeddings as embed
from selfplay.config import validate_config
from selfplay.errors import UserError
from selfplay.tracks.evolve import dedup, seeds

EXAMPLE = re.compile(r"^assert (\w+\(.*\)) == (.+)$", re.MULTILINE)


def _load():
    records, skipped = seeds.shipped_records(shipped_set="trivial")
    assert skipped == []
    return records


def _function(code, name):
    space = {}
    exec(compile(code, name, "exec"), space)  # our own reference code
    return space[name]


def test_every_reference_passes_its_own_tests():
    records = _load()
    assert [r["source"] for r in records] == ["taco"] * 2 + ["apps"] * 2 + ["primeintellect"] * 2 + [
        "code_contests"
    ] * 3 + ["codeforces"] * 2
    assert {r["tests"]["format"] for r in records} == {"call", "stdin"}
    for rec in records:
        tests = rec["tests"]
        assert len(tests["inputs"]) == len(tests["outputs"]) == 4
        for code in rec["solutions"]:
            for given, want in zip(tests["inputs"], tests["outputs"]):
                if tests["format"] == "stdin":
                    assert _run_stdin(code, given).split() == want.split(), (rec["id"], given)
                else:
                    assert _function(code, rec["entry"])(*given) == _expected_value(want), (rec["id"], given)


def test_each_question_states_the_signature_and_examples_the_reference_gives():
    for rec in _load():
        name = re.search(r"^Signature: def (\w+)\(", rec["question"], re.MULTILINE).group(1)
        assert rec.get("entry", name) == name, rec["id"]
        reference = _function(rec["solutions"][0], name)  # stdin programs define it too
        examples = EXAMPLE.findall(rec["question"])
        assert len(examples) == 4 and all(call.startswith(f"{name}(") for call, _ in examples), rec["id"]
        for call, result in examples:
            assert eval(call, {name: reference}) == eval(result), (rec["id"], call)


def test_the_default_seeds_with_the_trivial_set_and_paper_config_downloads():
    assert validate_config(load_as_snakemake(()))["evolve"]["seeds"]["shipped_set"] == "trivial"
    assert (
        validate_config(load_as_snakemake(("config/papers/evolve.yaml",)))["evolve"]["seeds"]["source"]
        == "download"
    )
    with pytest.raises(UserError, match="evolve.seeds.shipped_set"):
        seeds.shipped_file("taco", "hard")


def test_dedup_collapses_the_planted_near_duplicate():
    records = _load()
    emb = embed.embed_texts([r["question"] for r in records], encoder=embed.load_encoder())
    result, stats = dedup.summary(records, emb, seed=0, order=seeds.SOURCES)
    assert [set(g) for g in result.groups] == [{"taco/train/0", "code_contests/train/trivial_C. add_one"}]
    assert stats["table1"][-1] == {"source": "Overall", "before": 11, "after": 10}
    sims = emb @ emb.T
    np.fill_diagonal(sims, -1)
    a, b = (next(n for n, r in enumerate(records) if r["id"] == i) for i in result.groups[0])
    sims[a, b] = sims[b, a] = -1
    assert sims.max() < 0.8
