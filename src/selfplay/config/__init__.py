"""Configuration: JSON-schema validation with one-line errors that name the key."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..errors import UserError


def schema() -> dict:
    return json.loads(resources.files(__package__).joinpath("schema.json").read_text())


def _key_path(error) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def validate_config(cfg: Any) -> dict:
    """Check ``cfg`` against the schema plus cross-field rules; raise UserError naming the key."""
    import jsonschema

    if not isinstance(cfg, dict):
        raise UserError("config: expected a mapping at the top level")
    validator = jsonschema.Draft7Validator(schema())
    errors = sorted(validator.iter_errors(cfg), key=lambda e: (len(list(e.absolute_path)), str(e.absolute_path)))
    if errors:
        err = errors[0]
        if err.validator == "additionalProperties":
            raise UserError(f"config key {_key_path(err)}: {err.message} (unknown key: check its spelling)")
        raise UserError(f"config key {_key_path(err)}: {err.message}")
    verify = cfg["sinq"]["verify"]
    if verify["timeout_min"] > verify["timeout_max"]:
        raise UserError("config key sinq.verify.timeout_min: must not exceed sinq.verify.timeout_max")
    backend = cfg["backend"]
    if backend["name"] == "replay" and not backend.get("files"):
        raise UserError("config key backend.files: the replay backend needs at least one recordings file")
    if backend["name"] == "openai" and not backend.get("base_url"):
        raise UserError("config key backend.base_url: the openai backend needs the server's URL")
    if cfg["model"]["source"] in ("hf", "local") and not cfg["model"].get("path"):
        raise UserError("config key model.path: needed when model.source is 'hf' or 'local'")
    return cfg
