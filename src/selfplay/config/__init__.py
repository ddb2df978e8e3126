"""Configuration: JSON-schema validation with one-line errors that name the key.

How the workflow gets its config: ``config.yaml`` when no ``--configfile`` is given;
otherwise exactly the files named (merged left to right, so ``seq.yaml seq_e2.yaml``
is E0's settings with E2's changes) and ``--config`` on top. Keys a config leaves out
take the schema's defaults. :func:`prepare_config` is what the Snakefile runs first.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..errors import UserError


def schema() -> dict:
    """The whole config schema: the shared keys (``config/schema.json``) plus, for every
    registered track, its section (``tracks/<name>/schema.json``, which may refer to the
    shared ``#/definitions``)."""
    from ..tracks.registry import TRACKS

    whole = json.loads(resources.files(__package__).joinpath("schema.json").read_text())
    tracks = resources.files(__package__.rsplit(".", 1)[0]).joinpath("tracks")
    for name in TRACKS:
        if name in whole["properties"]:
            raise UserError(f"config schema: the shared schema already has a key named after track {name}")
        whole["properties"][name] = json.loads(tracks.joinpath(name, "schema.json").read_text())
    whole["properties"]["tracks"]["items"]["enum"] = list(TRACKS)
    return whole


def _key_path(error) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def configured_tracks(cfg: dict) -> list[str]:
    """The registered tracks the config has a section for (their rules are loaded)."""
    from ..tracks.registry import TRACKS

    return [t for t in TRACKS if t in cfg]


def validate_config(cfg: Any) -> dict:
    """Check ``cfg`` against the schema plus cross-field rules; raise UserError naming the key.

    Text values from the command line are first read as the type the schema asks for
    (``--config "sinq={'bob': {'samples': 5}}"`` gives the integer 5), in place.
    """
    import jsonschema

    from .coerce import coerce_command_line_strings
    from .defaults import fill_defaults

    if not isinstance(cfg, dict):
        raise UserError("config: expected a mapping at the top level")
    validator = jsonschema.Draft7Validator(schema())
    coerce_command_line_strings(cfg, validator)
    errors = sorted(
        validator.iter_errors(cfg), key=lambda e: (len(list(e.absolute_path)), str(e.absolute_path))
    )
    if errors:
        err = errors[0]
        if err.validator == "additionalProperties":
            raise UserError(f"config key {_key_path(err)}: {err.message} (unknown key: check its spelling)")
        raise UserError(f"config key {_key_path(err)}: {err.message}")
    filled = fill_defaults(cfg, validator.schema)
    cfg.clear()
    cfg.update(filled)
    if "tracks" not in cfg:  # default: every track the config has a section for
        cfg["tracks"] = configured_tracks(cfg)
    for track in cfg["tracks"]:
        if track not in cfg:
            raise UserError(f"config key tracks: lists {track} but the config has no {track} section")
    backend = cfg["backend"]
    if backend["name"] == "replay" and not backend.get("files"):
        raise UserError("config key backend.files: the replay backend needs at least one recordings file")
    if backend["name"] == "openai" and not backend.get("base_url"):
        raise UserError("config key backend.base_url: the openai backend needs the server's URL")
    if cfg["model"]["source"] in ("hf", "local") and not cfg["model"].get("path"):
        raise UserError("config key model.path: needed when model.source is 'hf' or 'local'")
    return cfg


def prepare_config(cfg: dict, model_dir: str) -> dict:
    """Validate the workflow's config in place and build every component's settings.

    Raises UserError (one line, naming the key) on the first problem.
    """
    from .components import check_components

    validate_config(cfg)
    check_components(cfg, configured_tracks(cfg), model_dir)
    return cfg
