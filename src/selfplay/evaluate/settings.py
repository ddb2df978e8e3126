"""Checking a config's evaluation settings when the workflow starts: every benchmark a
track runs exists and can get its data, every mode it names is defined and fits the
benchmark, and every model tag names a model the track has."""

from __future__ import annotations

from ..errors import UserError
from . import model_tags
from .modes import EvalMode
from .registry import ADAPTERS, benchmark


def run_spec(spec) -> tuple[list[str], list[str] | None]:
    """(modes, models or None = the track's) of one ``<track>.benchmarks.runs`` entry."""
    if isinstance(spec, dict):
        return list(spec["modes"]), (list(spec["models"]) if spec.get("models") else None)
    return list(spec), None


def track_runs(track_cfg: dict) -> list[tuple[str, str, str]]:
    """(benchmark, mode, model) of every evaluation a track's ``benchmarks`` section asks for."""
    section = track_cfg["benchmarks"]
    rounds = int(track_cfg.get("rounds", 0))
    runs = []
    for bench, spec in section["runs"].items():
        modes, models = run_spec(spec)
        for mode in modes:
            for tag in model_tags.expand(models or section["models"], rounds):
                runs.append((bench, mode, tag))
    return runs


def other_tags(track_cfg: dict) -> list[str]:
    """The tags of a track's ``other_models`` (models behind an OpenAI-compatible server)."""
    return [m["tag"] for m in track_cfg.get("benchmarks", {}).get("other_models", [])]


def other_model(track_cfg: dict, tag: str) -> dict | None:
    """The ``other_models`` entry (a model behind an OpenAI-compatible server) named ``tag``."""
    return next((m for m in track_cfg.get("benchmarks", {}).get("other_models", []) if m["tag"] == tag), None)


def check_evaluation(cfg: dict, track: str) -> None:
    """Raise UserError naming the key of the first problem in ``<track>.benchmarks``."""
    ev = cfg[track].get("benchmarks")
    if not ev:
        return
    modes = {
        name: EvalMode.from_config(name, section) for name, section in cfg["evaluation"]["modes"].items()
    }
    others = tuple(other_tags(cfg[track]))
    clash = [t for t in others if model_tags.is_shared(t)]
    if clash or len(set(others)) != len(others):
        raise UserError(
            f"config key {track}.benchmarks.other_models: tags must be unique and differ from "
            f"the shared tags base, bob, alice, alice_rounds, alice_r<k>, grpo_rounds and grpo_r<k> (got {list(others)})"
        )
    for tag in ev["models"]:
        try:
            model_tags.check(tag, int(cfg[track].get("rounds", 0)), others)
        except UserError as exc:
            raise UserError(f"config key {track}.benchmarks.models: {exc}") from None
    for name, spec in ev["runs"].items():
        key = f"{track}.benchmarks.runs.{name}"
        mode_names, models = run_spec(spec)
        for tag in models or []:
            try:
                model_tags.check(tag, int(cfg[track].get("rounds", 0)), others)
            except UserError as exc:
                raise UserError(f"config key {key}.models: {exc}") from None
        if name not in ADAPTERS:
            raise UserError(f"config key {key}: unknown benchmark; known: {', '.join(sorted(ADAPTERS))}")
        bench = benchmark(name)
        for m in mode_names:
            if m not in modes:
                raise UserError(f"config key {key}: mode {m!r} is not defined in evaluation.modes")
            if modes[m].aggregate == "majority" and bench.task != "classify":
                raise UserError(
                    f"config key {key}: mode {m!r} takes a majority vote, which only "
                    f"classification benchmarks have ({name} is {bench.task})"
                )
        check_source(cfg, name)


def check_source(cfg: dict, name: str) -> None:
    settings = cfg["evaluation"]["benchmarks"][name]
    key = f"evaluation.benchmarks.{name}"
    bench = benchmark(name)
    source = settings["source"]
    if source == "path" and not settings.get("path"):
        raise UserError(f"config key {key}.path: source is 'path', so name the file ({bench.source_note})")
    if source == "download" and not bench.downloads:
        raise UserError(
            f"config key {key}.source: {name} has no download (its data: {bench.source_note}); "
            "use source: path"
        )
    if source == "download":
        check_download_pins(settings, name)
    if source == "smoke" and not bench.smoke:
        raise UserError(
            f"config key {key}.source: {name} ships no smoke items; use package, download or path"
        )
    if source == "package" and not bench.package:
        raise UserError(f"config key {key}.source: no pip package ships {name}'s data")


def check_download_pins(settings: dict, name: str) -> None:
    """Every file a download would fetch names a commit or release tag, and every sha256
    pinned in config names a file the benchmark downloads (a typo would pin nothing)."""
    from .pins import check_revision

    key = f"evaluation.benchmarks.{name}"
    files = set()
    for spec in benchmark(name).downloads:
        files.add(spec["file"])
        try:
            check_revision(spec["url"].format(revision=settings.get("revision", "")))
        except UserError as exc:
            raise UserError(
                f"config key {key}{'.revision' if '{revision}' in spec['url'] else ''}: {exc}"
            ) from None
    unknown = sorted(set(settings.get("sha256") or {}) - files)
    if unknown:
        raise UserError(
            f"config key {key}.sha256: {', '.join(unknown)} is not a file {name} downloads "
            f"(its files: {', '.join(sorted(files))})"
        )


def check_layer_check(cfg: dict) -> None:
    """``evaluation.check``: known benchmarks whose data can be had, and a greedy mode."""
    check = cfg["evaluation"]["check"]
    for key in ("benchmarks", "base_model"):
        for name in check[key]:
            if name not in ADAPTERS:
                raise UserError(
                    f"config key evaluation.check.{key}: unknown benchmark {name!r}; "
                    f"known: {', '.join(sorted(ADAPTERS))}"
                )
            check_source(cfg, name)
    if check["base_model"] and "greedy" not in cfg["evaluation"]["modes"]:
        raise UserError(
            "config key evaluation.check.base_model: needs a mode named greedy in evaluation.modes"
        )
