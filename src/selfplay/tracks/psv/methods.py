"""PSV, its baselines and its ablations, each a named set of loop settings.

Two names are built in and never train: ``base`` (the base model, one-shot prompt) and
``fewshot`` (the AlphaVerus-style prompting baseline: the base model with up to
``fewshot.exemplars`` in-domain worked examples, the verified solutions the base model
itself wrote for the setting's seed problems; no training). Every other name in config
``psv.methods`` is a self-play loop whose settings are the shared ones (``iterations``,
``propose``, ``rft``) with that method's overrides, e.g. ``rft: {propose: false}``
(iterative RFT without proposals), ``no_verification: {train_on: all}``,
``no_difficulty: {difficulty_labels: false}``, ``no_diversity: {refresh_examples:
false}``, ``a_to_h: {target_classes: [HARD]}`` (Table 3's proposal settings).
"""

from __future__ import annotations

from ...errors import UserError

BUILT_IN = ("base", "fewshot")
# What a loop method may override, and the shared config section each key lives in.
OVERRIDABLE = {
    "iterations": None,
    "propose": None,
    "budget": "propose",
    "examples_per_class": "propose",
    "input_classes": "propose",
    "target_classes": "propose",
    "difficulty_labels": "propose",
    "refresh_examples": "propose",
    "dedup_scope": "propose",
    "train_on": "rft",
    "max_per_problem": "rft",
}


def method_names(cfg: dict) -> list[str]:
    return list(BUILT_IN) + [m for m in cfg["psv"]["methods"] if m not in BUILT_IN]


def method_settings(cfg: dict, name: str) -> dict:
    """The flat settings of a loop method: shared values, then the method's overrides."""
    psv = cfg["psv"]
    if name in BUILT_IN:
        raise UserError(f"PSV method {name!r} is a baseline without a self-play loop")
    if name not in psv["methods"]:
        raise UserError(f"PSV method {name!r} is not in config psv.methods ({', '.join(psv['methods'])})")
    overrides = psv["methods"][name] or {}
    unknown = sorted(set(overrides) - set(OVERRIDABLE))
    if unknown:
        raise UserError(
            f"config key psv.methods.{name}: unknown setting(s) {unknown}; known: {sorted(OVERRIDABLE)}"
        )
    flat = {"iterations": int(psv["iterations"]), "propose": True}
    for key, section in OVERRIDABLE.items():
        if section:
            flat[key] = psv[section][key]
    flat.update(overrides)
    if flat["train_on"] not in ("verified", "all"):
        raise UserError(f"config key psv.methods.{name}.train_on: verified or all, not {flat['train_on']!r}")
    if flat["dedup_scope"] not in ("iteration", "run"):
        raise UserError(
            f"config key psv.methods.{name}.dedup_scope: iteration or run, not {flat['dedup_scope']!r}"
        )
    if int(flat["iterations"]) < 1:
        raise UserError(f"config key psv.methods.{name}.iterations: at least 1")
    return flat


def check_methods(cfg: dict) -> None:
    for name in cfg["psv"]["methods"]:
        if name in BUILT_IN:
            raise UserError(
                f"config key psv.methods.{name}: {name} is a built-in baseline; choose another name"
            )
        method_settings(cfg, name)
    known = set(method_names(cfg))
    for section in ("tables", "figures"):
        for table, names in cfg["psv"].get(section, {}).items():
            for n in names:
                if n not in known:
                    raise UserError(
                        f"config key psv.{section}.{table}: method {n!r} is not built in or in psv.methods"
                    )
                if section == "figures" and n in BUILT_IN:
                    raise UserError(f"config key psv.figures.{table}: {n} is a baseline; list loop methods")


def train_settings(cfg: dict, method: str) -> dict:
    """How a method builds its RFT training sets; ``base`` stands for the shared way
    (config psv.rft), which theta_1 of every method that follows it is trained with."""
    if method == "base":
        rft = cfg["psv"]["rft"]
        return {"train_on": rft["train_on"], "max_per_problem": int(rft["max_per_problem"])}
    ms = method_settings(cfg, method)
    return {"train_on": ms["train_on"], "max_per_problem": int(ms["max_per_problem"])}
