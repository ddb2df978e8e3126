"""The EvolveCoder track's config section (src/selfplay/tracks/evolve/schema.json):
every key described, paper defaults filled, bad values refused with the key's path.
The track is not registered yet (its rules come next), so the section is checked
against the shared definitions directly."""

import json
from importlib import resources

import jsonschema
import pytest

from selfplay.config import schema as shared_schema
from selfplay.config.defaults import describe_keys, fill_defaults

SAMPLING = {"temperature": 0.6, "top_p": 0.95, "max_new_tokens": 64}
MINIMAL = {
    "experiment": "default",
    "refine": {"sampling": SAMPLING},
    "pool": {"sampling": SAMPLING},
    "adversarial": {"sampling": SAMPLING},
    "discriminative": {"sampling": SAMPLING},
}


@pytest.fixture(scope="module")
def whole():
    root = shared_schema()
    root["properties"]["evolve"] = json.loads(
        resources.files("selfplay.tracks").joinpath("evolve", "schema.json").read_text()
    )
    return root


def _errors(whole, section):
    validator = jsonschema.Draft7Validator({**whole, "required": []})
    return [".".join(map(str, e.absolute_path)) for e in validator.iter_errors({"evolve": section})]


def test_minimal_section_fills_the_papers_numbers(whole):
    assert _errors(whole, MINIMAL) == []
    filled = fill_defaults({"evolve": json.loads(json.dumps(MINIMAL))}, whole)["evolve"]
    assert filled["dedup"]["threshold"] == 0.9 and filled["dedup"]["neighbours"] == 10
    assert filled["refine"]["tests"] == 20
    assert filled["pool"]["models"] == [{"name": "track", "samples": 8}]
    assert filled["adversarial"]["top"] == 2 and filled["adversarial"]["diverse"] == 3
    assert filled["discriminative"]["size"] == 5 and filled["discriminative"]["min_test_pass_rate"] == 0.1
    assert filled["filter"] == {
        "min_test_pass_rate": 0.1,
        "max_per_vector": 5,
        "min_tests": 5,
        "max_perfect_solutions": 60,
    }
    assert filled["rounds"] == 3 and filled["ks"] == [1, 4, 8]
    assert filled["seeds"]["sources"] == ["taco", "apps", "primeintellect", "code_contests", "codeforces"]


@pytest.mark.parametrize(
    "patch, where",
    [
        ({"dedup": {"threshold": 1.5}}, "evolve.dedup.threshold"),
        ({"filter": {"min_tests": 0}}, "evolve.filter.min_tests"),
        ({"seeds": {"sources": ["leetcode"]}}, "evolve.seeds.sources.0"),
        (
            {"adversarial": {"sampling": SAMPLING, "diverse_window": [0.4]}},
            "evolve.adversarial.diverse_window",
        ),
        ({"pool": {"sampling": SAMPLING, "models": [{"name": "x"}]}}, "evolve.pool.models.0"),
        ({"matrix": {"time_limit": 0}}, "evolve.matrix.time_limit"),
        ({"refine": {"sampling": SAMPLING, "temperature": 1}}, "evolve.refine"),
    ],
)
def test_bad_values_are_refused_at_their_key(whole, patch, where):
    assert where in _errors(whole, {**MINIMAL, **patch})


def test_every_key_is_described(whole):
    section = {
        "type": "object",
        "properties": {"evolve": whole["properties"]["evolve"]},
        "definitions": whole["definitions"],
    }
    keys = describe_keys(section)
    assert len(keys) > 30
    assert all(description for _, description, _ in keys), [k for k, d, _ in keys if not d]
