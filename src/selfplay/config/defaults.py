"""The schema's defaults: fill them into a config, and list every key for documentation.

A key a config leaves out takes the ``default`` its property has in ``schema.json``.
Filling follows ``$ref`` into ``definitions`` (a property's own ``default`` and
``description`` beside its ``$ref`` win over the referenced ones) and descends into
every object the config has. An absent object is created only when the schema gives
it a default (then its own defaults are filled in too), so a config without a track's
section stays without it. Present values, ``null`` included, are never replaced.
"""

from __future__ import annotations

import copy
from typing import Any


class _NoDefault:
    """Marks a key that has no default in the schema (required, or computed by the code)."""

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __copy__(self) -> _NoDefault:
        return self

    def __deepcopy__(self, memo: dict) -> _NoDefault:
        return self


NO_DEFAULT: Any = _NoDefault()


def _pointer(root: dict, ref: str) -> dict:
    """The schema node a local JSON pointer (``#/definitions/...``) names."""
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref pointers are supported, got {ref!r}")
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"$ref {ref!r} names nothing in the schema")
        node = node[part]
    if not isinstance(node, dict):
        raise ValueError(f"$ref {ref!r} does not name a schema object")
    return node


def resolve(node: dict, root: dict) -> dict:
    """``node`` with its ``$ref`` chain followed; keys beside a ``$ref`` override the target's."""
    seen: set[str] = set()
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            raise ValueError(f"$ref cycle through {ref!r}")
        seen.add(ref)
        node = {**_pointer(root, ref), **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _properties(node: dict, root: dict) -> dict[str, dict]:
    return resolve(node, root).get("properties") or {}


def _fill(obj: dict, node: dict, root: dict) -> None:
    for key, sub in _properties(node, root).items():
        prop = resolve(sub, root)
        if key not in obj:
            if "default" not in prop:
                continue
            obj[key] = copy.deepcopy(prop["default"])
        if isinstance(obj[key], dict) and prop.get("properties"):
            _fill(obj[key], prop, root)
        elif isinstance(obj[key], list) and isinstance(prop.get("items"), dict):
            # a list of mappings (e.g. sinq.benchmarks.other_models): each entry gets its defaults
            item = resolve(prop["items"], root)
            if item.get("properties"):
                for entry in obj[key]:
                    if isinstance(entry, dict):
                        _fill(entry, item, root)


def fill_defaults(cfg: dict, schema: dict) -> dict:
    """A deep copy of ``cfg`` with every absent key that has a schema default filled in."""
    if not isinstance(cfg, dict):
        raise TypeError(f"a config must be a mapping, got {type(cfg).__name__}")
    out = copy.deepcopy(cfg)
    _fill(out, schema, schema)
    return out


def describe_keys(schema: dict) -> list[tuple[str, str, object]]:
    """(dotted key, description, default) for every key the schema knows, in schema order.

    The default is :data:`NO_DEFAULT` for keys that have none (required keys, and keys
    whose fallback the code computes from other keys).
    """
    rows: list[tuple[str, str, object]] = []

    def walk(node: dict, prefix: str, seen: tuple[int, ...]) -> None:
        for key, sub in _properties(node, schema).items():
            prop = resolve(sub, schema)
            path = f"{prefix}{key}"
            rows.append(
                (path, str(prop.get("description", "")), copy.deepcopy(prop.get("default", NO_DEFAULT)))
            )
            if prop.get("properties") and id(prop.get("properties")) not in seen:
                walk(prop, f"{path}.", seen + (id(prop.get("properties")),))

    walk(schema, "", ())
    return rows
