"""Build every component's settings from a config when the workflow starts.

The schema checks each value on its own; this module checks that the values make
sense to the parts that will use them: the generation backend's constructor, the LoRA
trainer, the sandbox limits and the verifiers. Nothing is started (no model is loaded,
no engine imported), but a combination a job would refuse is refused here, so
``snakemake -n`` fails on it with one line naming the key.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UserError


def named(key: str, check: Callable[[], object]) -> object:
    """Run ``check``; a refusal is re-raised naming the config key it came from."""
    try:
        return check()
    except UserError as exc:
        raise UserError(f"config key {key}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise UserError(f"config key {key}: {exc}") from None


def check_backend(cfg: dict, model_dir: str, key: str = "backend") -> None:
    """The backend the generation jobs build from ``cfg["backend"]`` and ``cfg["model"]``."""
    from ..llm.factory import checked_settings, generation_backend_config

    named(key, lambda: checked_settings(generation_backend_config(cfg, model_dir)))


def check_training(cfg: dict, track: str) -> None:
    from ..train.settings import validate_settings

    for agent, settings in cfg[track]["training"].items():
        named(f"{track}.training.{agent}", lambda s=settings: validate_settings(s))


def check_sandbox(key: str, memory_mb: int) -> None:
    from ..sandbox.limits import SandboxLimits

    named(key, lambda: SandboxLimits(memory_mb=int(memory_mb)))


def check_components(cfg: dict, tracks: list[str], model_dir: str) -> None:
    """Build every setting the run's jobs will build; raise UserError on the first refusal.

    Each track's own settings are checked by ``selfplay.tracks.<track>.settings.check``.
    """
    import importlib

    from ..evaluate.settings import check_evaluation, check_layer_check

    check_backend(cfg, model_dir)
    check_layer_check(cfg)
    for track in tracks:
        importlib.import_module(f"selfplay.tracks.{track}.settings").check(cfg)
        check_evaluation(cfg, track)
