"""The Haskell track's settings, built when the workflow starts (selfplay.config.components):
GHC's and the sandbox's limits, Liquid Haskell's check settings, the LoRA trainer's."""

from __future__ import annotations

from ...config.components import check_backend, check_sandbox, check_training, named
from ...errors import UserError


def check(cfg: dict) -> None:
    from ...haskell.liquid import LiquidSettings

    seq = cfg["seq"]
    translator = seq["translate"]["model"]
    if translator:
        if translator["name"] == cfg["model"]["name"] and translator != cfg["model"]:
            raise UserError(
                "config key seq.translate.model: has the game model's name but other settings; "
                "give it a name of its own"
            )
        if translator["source"] in ("hf", "local") and not translator.get("path"):
            raise UserError("config key seq.translate.model.path: needed when its source is 'hf' or 'local'")
    # the translation job's backend: `backend` with seq.translate.backend over it, loading the translator
    check_backend(
        {
            **cfg,
            "model": translator or cfg["model"],
            "backend": {**cfg["backend"], **seq["translate"]["backend"]},
        },
        "resources/models/translator",
        key="seq.translate.backend",
    )
    check_sandbox("seq.verify.memory_mb", seq["verify"]["memory_mb"])
    check_sandbox("seq.proof.memory_mb", seq["proof"]["memory_mb"])
    # the command itself is looked up in the job (the Haskell image provides it)
    named("seq.proof.timeout", lambda: LiquidSettings(timeout_s=float(seq["proof"]["timeout"])))
    check_training(cfg, "seq")
