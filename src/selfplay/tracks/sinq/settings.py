"""The SInQ track's settings, built when the workflow starts (selfplay.config.components)."""

from __future__ import annotations

from ...config.components import check_sandbox, check_training


def check(cfg: dict) -> None:
    check_sandbox("sinq.verify.memory_mb", cfg["sinq"]["verify"]["memory_mb"])
    check_training(cfg, "sinq")
