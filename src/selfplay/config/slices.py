"""The part of the config one job uses.

Every rule hands its job the config values it reads as ``params: cfg=...`` built with
:func:`config_slice`, never the whole config: Snakemake compares a job's params with
those of its last run, so a changed value reruns exactly the jobs that were given it
(and what depends on their outputs), and a job that reads a key it was not given fails
with a KeyError instead of silently depending on an untracked value.
"""

from __future__ import annotations

import copy
from typing import Any

_ABSENT = object()


def _get(cfg: dict, parts: list[str]) -> Any:
    node: Any = cfg
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def config_slice(cfg: dict, *paths: str) -> dict:
    """A nested dict holding only the dotted ``paths`` of ``cfg`` (absent ones left out).

    ``config_slice(cfg, "seed", "sinq.bob")`` -> ``{"seed": ..., "sinq": {"bob": {...}}}``:
    the same shape the library reads, so a step takes the slice where it took the config.
    """
    out: dict = {}
    for path in paths:
        parts = path.split(".")
        value = _get(cfg, parts)
        if value is _ABSENT:
            continue
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = copy.deepcopy(value)
    return out
