"""The configured verifier behind one interface (config ``psv.language``): Dafny runs
here; Verus runs in the pinned Verus image on a cluster. Both screen an answer before
the verifier sees it and give records of the same shape (selfplay.dafny.checks)."""

from __future__ import annotations

from ...errors import UserError


def dafny_settings(cfg: dict):
    from ...dafny.runner import DafnySettings

    return DafnySettings(**cfg["psv"]["verify"]["dafny"])


def require_canary(cfg: dict) -> dict:
    """Run the configured verifier's canary (once per process: selfplay.verifier_canary);
    a verifier that gets it wrong stops the job before any verdict of its is used."""
    from ... import verifier_canary

    language = cfg["psv"]["language"]
    if language == "dafny":
        return verifier_canary.check_dafny(dafny_settings(cfg))
    if language == "verus":
        return verifier_canary.check_verus(verus_settings(cfg))
    raise UserError(f"PSV language {language!r} has no verifier")


def check_specs(cfg: dict, texts: list[str]) -> list[dict]:
    require_canary(cfg)
    language = cfg["psv"]["language"]
    if language == "dafny":
        from ...dafny import checks

        return checks.check_specs(texts, dafny_settings(cfg))
    if language == "verus":
        from ...verus import checks as verus_checks

        return verus_checks.check_specs(texts, verus_settings(cfg))
    raise UserError(f"PSV language {language!r} has no verifier")


def verify_solutions(cfg: dict, pairs: list[tuple[str, str]]) -> list[dict]:
    require_canary(cfg)
    language = cfg["psv"]["language"]
    if language == "dafny":
        from ...dafny import checks

        return checks.verify_solutions(pairs, dafny_settings(cfg))
    if language == "verus":
        from ...verus import checks as verus_checks

        return verus_checks.verify_solutions(pairs, verus_settings(cfg))
    raise UserError(f"PSV language {language!r} has no verifier")


def verus_settings(cfg: dict):
    from ...verus.runner import VerusSettings

    return VerusSettings(**cfg["psv"]["verify"]["verus"])


def verify_workers(cfg: dict) -> int:
    """How many verifier processes a PSV job runs at once (the active language's
    ``workers``): its rules ask the cluster for that many CPUs."""
    language = cfg["psv"]["language"]
    if language == "dafny":
        return int(dafny_settings(cfg).workers)
    if language == "verus":
        return int(verus_settings(cfg).workers)
    raise UserError(f"PSV language {language!r} has no verifier")


def verifier_description(cfg: dict) -> dict:
    """What decided the verdicts, for the records: the verifier, its settings and its
    canary's outcome in this job (None when the job never ran it)."""
    from ...verifier_canary import recorded

    language = cfg["psv"]["language"]
    canary = next((c for c in reversed(recorded()) if c["verifier"] == language), None)
    return {"verifier": language, "settings": dict(cfg["psv"]["verify"][language]), "canary": canary}


def spec_target_name(language: str, text: str) -> str | None:
    """The name of the function a spec asks for (no verifier run), or None when the text
    is not a spec; de-duplication compares it before the spec check."""
    if language == "dafny":
        from ...dafny.screen import inspect_spec

        spec, _ = inspect_spec(text)
        return spec.target.name if spec is not None else None
    from ...verus.checks import spec_target_name as verus_target

    return verus_target(text)
