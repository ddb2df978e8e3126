"""Typed values from the command line.

Snakemake parses ``--config key=value`` with YAML's base loader, so every scalar inside
a nested value arrives as text: ``--config "sinq={'bob': {'samples': 5}}"`` gives
``{"bob": {"samples": "5"}}``. Where the schema wants a number, a boolean or null at
such a place, the text is read again as YAML and kept only if the result is what the
schema asks for there. Text that still does not fit is left alone, so validation
reports it with the usual one-line error naming the key.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_PASSES = 1000  # one value is fixed per pass; a config never has this many typed strings


def _typed(text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def _fixable(error, validator) -> tuple[list, Any] | None:
    """(path, value) when the error is text where the schema wants another type, and the
    text read as YAML has that type (its value is then checked like any other)."""
    candidates = [error, *(getattr(error, "context", None) or [])]
    for err in candidates:
        if err.validator != "type" or not isinstance(err.instance, str):
            continue
        value = _typed(err.instance)
        if isinstance(value, str):
            continue
        wanted = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        if any(validator.is_type(value, t) for t in wanted):
            return list(err.absolute_path), value
    return None


def _set(cfg: dict, path: list, value: Any) -> None:
    node = cfg
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def coerce_command_line_strings(cfg: dict, validator) -> dict:
    """Replace, in place, each text value the schema wants typed; return ``cfg``."""
    for _ in range(MAX_PASSES):
        fixed = False
        for error in validator.iter_errors(cfg):
            found = _fixable(error, validator)
            if found and found[0]:
                _set(cfg, *found)
                fixed = True
                break  # the errors were computed on the old value: ask again
        if not fixed:
            return cfg
    return cfg
