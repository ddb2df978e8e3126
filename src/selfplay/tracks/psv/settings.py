"""The PSV track's settings, built when the workflow starts (selfplay.config.components)."""

from __future__ import annotations

from ...config.components import check_training, named
from .methods import check_methods


def check(cfg: dict) -> None:
    from .verifier import dafny_settings, verus_settings

    psv = cfg["psv"]
    check_training(cfg, "psv")
    check_methods(cfg)
    named("psv.verify.dafny", lambda: dafny_settings(cfg))
    if psv["language"] == "verus":
        named("psv.verify.verus", lambda: verus_settings(cfg))
    named("psv.difficulty", lambda: _thresholds(psv["difficulty"]))
    t6 = psv["table6"]
    for label, setting in t6["conditions"].items():
        if setting not in psv["settings"]:
            named(f"psv.table6.conditions.{label}", lambda s=setting: _missing_setting(s))
    for set_name in t6["eval_sets"]:
        if set_name not in psv["problem_sets"]:
            named("psv.table6.eval_sets", lambda s=set_name: _missing(s))
    if t6["models"] and t6["method"] not in psv["methods"]:
        named("psv.table6.method", lambda: _missing_method(t6["method"]))
    for name, setting in psv["settings"].items():
        for set_name in [setting["seed_set"], *setting["eval_sets"]]:
            if set_name not in psv["problem_sets"]:
                named(f"psv.settings.{name}", lambda s=set_name: _missing(s))


def _thresholds(d: dict) -> None:
    from .difficulty import difficulty_class

    difficulty_class(0.5, float(d["tau_easy"]), float(d["tau_medium"]))


def _missing(set_name: str) -> None:
    from ...errors import UserError

    raise UserError(f"names problem set {set_name!r}, which is not in psv.problem_sets")


def _missing_setting(name: str) -> None:
    from ...errors import UserError

    raise UserError(f"names setting {name!r}, which is not in psv.settings")


def _missing_method(name: str) -> None:
    from ...errors import UserError

    raise UserError(f"names method {name!r}, which is not in psv.methods")
