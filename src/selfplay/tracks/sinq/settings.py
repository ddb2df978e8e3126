"""The SInQ track's settings, built when the workflow starts (selfplay.config.components)."""

from __future__ import annotations

from ...config.components import check_sandbox, check_training
from ...errors import UserError


def check(cfg: dict) -> None:
    verify = cfg["sinq"]["verify"]
    if verify["timeout_min"] > verify["timeout_max"]:
        raise UserError("config key sinq.verify.timeout_min: must not exceed sinq.verify.timeout_max")
    check_sandbox("sinq.verify.memory_mb", cfg["sinq"]["verify"]["memory_mb"])
    check_training(cfg, "sinq")
