"""docs/config-reference.md: every config key from the schemas (selfplay.docs_gen.config_reference),
and the committed page kept current."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from selfplay.config import schema
from selfplay.config.defaults import describe_keys
from selfplay.docs_gen import config_reference

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / config_reference.PAGE
SCHEMA_FILES = [
    REPO / "src/selfplay/config/schema.json",
    *sorted(REPO.glob("src/selfplay/tracks/*/schema.json")),
]


def documented_keys(page: str) -> list[str]:
    return re.findall(r"^\| `([^`]+)` \|", page, flags=re.M)


def property_names(node, out: set[str]) -> set[str]:
    """Every property name anywhere in a raw schema file, definitions included."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                out.update(value)
            if key not in ("default", "enum", "const", "examples"):
                property_names(value, out)
    elif isinstance(node, list):
        for value in node:
            property_names(value, out)
    return out


def test_committed_reference_is_current():
    assert PAGE.read_text() == config_reference.render(), (
        "docs/config-reference.md is not current: run `selfplay docs`"
    )


def test_every_key_of_every_schema_file_is_documented():
    """Read independently of the generator: each property name in each schema file (the
    shared definitions included) ends some documented key, and each dotted key the config
    check's own key list gives (describe_keys) has a row."""
    keys = documented_keys(PAGE.read_text())
    assert len(keys) == len(set(keys))
    last = {re.split(r"[.\]]", k)[-1] for k in keys}
    assert len(SCHEMA_FILES) == 6
    for file in SCHEMA_FILES:
        missing = property_names(json.loads(file.read_text()), set()) - last
        assert missing == set(), f"{file.relative_to(REPO)}: keys missing from the reference: {missing}"
    assert {path for path, _, _ in describe_keys(schema())} - set(keys) == set()


def test_nested_keys_of_lists_mappings_and_alternatives_are_walked():
    keys = documented_keys(PAGE.read_text())
    for key in (
        "sinq.benchmarks.other_models[].tag",  # a list of mappings
        "evaluation.modes.<name>.sampling.temperature",  # a mapping with free names
        "seq.translate.model.name",  # anyOf null or a model
        "gasp.iterations",
    ):
        assert key in keys


def test_a_schema_change_without_regeneration_is_caught():
    changed = copy.deepcopy(schema())
    changed["properties"]["gasp"]["properties"]["iterations"]["description"] = "Changed."
    changed["properties"]["bundle"]["properties"]["new_key"] = {"type": "integer", "description": "New."}
    text = config_reference.render(changed)
    assert text != PAGE.read_text()
    assert "| `bundle.new_key` | integer | — | New. |  |" in text.splitlines()


def test_rows_give_type_default_and_paper_sections():
    rows = {k.path: k for k in config_reference.config_keys(schema())}
    assert rows["seq.bob.samples"].type == "integer"
    assert rows["sinq.verify.timeout_min"].paper == "001 Sec. 3.1"
    assert "null" in rows["seq.translate.model"].type
    page = PAGE.read_text()
    assert "| `bundle.report` | boolean | `true` |" in page


@pytest.mark.parametrize(
    "description, refs",
    [
        ("Paper 000 App. F: take seq_probability", "000 App. F"),
        ("(paper 001 uses 1.0, paper 000 uses 0.6)", "001; 000"),
        ("Solver training (paper 003 Tables 4-5).", "003 Tables 4-5"),
        ("(paper 004, App. D: temperature 1.0)", "004 App. D"),
        ("paper 000's Table 4, as paper 000 says", "000 Table 4"),
        ("no paper config constrains decoding", ""),
    ],
)
def test_paper_refs(description, refs):
    assert config_reference.paper_refs(description) == refs
