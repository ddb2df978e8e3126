"""The EvolveCoder track's settings, built when the workflow starts (selfplay.config.components)."""

from __future__ import annotations

from ...config.components import check_sandbox, named
from ...errors import UserError


def check(cfg: dict) -> None:
    from ...train.rl.settings import GRPOSettings

    ev = cfg["evolve"]
    check_sandbox("evolve.matrix.memory_mb", ev["matrix"]["memory_mb"])
    named("evolve.grpo", lambda: GRPOSettings.from_dict(ev["grpo"]))
    names = [m["name"] for m in ev["pool"]["models"]]
    if len(set(names)) != len(names):
        raise UserError(f"config key evolve.pool.models: each model once, got {names}")
    for name in names:
        if name != "track" and name not in ev["models"]:
            raise UserError(
                f"config key evolve.pool.models: {name!r} is neither 'track' nor a key of evolve.models"
            )
    if ev.get("generator_served") and ev.get("generator"):
        raise UserError(
            "config keys evolve.generator and evolve.generator_served: name the refiner and test "
            "writer once (a local model in generator, or a served one in generator_served)"
        )
    window = ev["adversarial"]["diverse_window"]
    if window is not None and not window[0] < window[1]:
        raise UserError(f"config key evolve.adversarial.diverse_window: needs lo < hi, got {window}")
