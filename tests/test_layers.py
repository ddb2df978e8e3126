"""The library's layers import downwards only.

Every module under ``src/selfplay/`` belongs to one layer; a module may import from
its own layer and the layers below it, never from a layer above:

    shared  <  tracks  <  report  <  pipeline  <  tools

- shared: the parts every paper uses and no paper owns. ``errors``, ``records``,
  ``metrics``, ``embeddings``, ``spec_verdict``, ``verifier_canary``, ``sandbox``,
  ``containers``, ``haskell``, ``dafny``, ``verus``, ``specverify``, ``llm``,
  ``evaluate``, ``train``, ``curriculum``, ``data``, ``config``, ``bundle``,
  ``cluster``, ``plan``, ``layout`` and the package's ``__init__``. They know no game and no
  workflow step: what two layers above both need (reading Haskell out of an answer,
  building the generation backend's settings) lives here.
- tracks: one package per paper's game (``tracks/<name>``) plus the tracks' own shared
  modules (``tracks/stages.py``, ``tracks/registry.py``). A track imports no other
  track's package.
- report: tables and figures, read from the tracks' records.
- pipeline: the workflow steps the scripts in ``workflow_scripts/`` call; a step may
  write a report (``pipeline/evaluate.py`` uses ``report/decoding.py``).
- tools: the command lines over everything (``cli``, ``__main__``, ``pin_audit``,
  which audits every track's downloads, ``docs_gen``, which documents every track).

One seam runs the other way, by design: the config check assembles the schema from each
registered track's ``tracks/<name>/schema.json`` and runs its ``settings.check``. It reads
the list of tracks from ``selfplay.tracks.registry`` (names and titles, importing nothing
of the project, checked below) and loads ``selfplay.tracks.<name>.settings`` by the
registered name, so the config layer knows the convention, never a game.

Imports are read with ``ast`` from every module, including imports inside functions and
``importlib.import_module`` calls whose module name is written in the source.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "selfplay"

SHARED = {
    "selfplay",  # the package's __init__ (its version)
    "errors",
    "records",
    "metrics",
    "embeddings",
    "spec_verdict",
    "verifier_canary",
    "sandbox",
    "containers",
    "haskell",
    "dafny",
    "verus",
    "specverify",
    "llm",
    "evaluate",
    "train",
    "curriculum",
    "data",
    "config",
    "bundle",
    "cluster",
    "plan",
    "layout",
}
LAYERS = {"tracks": 1, "report": 2, "pipeline": 3, "cli": 4, "__main__": 4, "pin_audit": 4, "docs_gen": 4}
LAYER_NAMES = {0: "shared", 1: "tracks", 2: "report", 3: "pipeline", 4: "tools"}
TRACK_COMMONS = {"stages", "registry"}  # modules of the tracks layer every track may use

# (importing module, imported module or dynamic prefix): the config check's seam (docstring).
SEAMS = {
    ("selfplay.config", "selfplay.tracks.registry"),
    ("selfplay.config.components", "selfplay.tracks.{}"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "selfplay"
    if top in SHARED:
        return 0
    if top in LAYERS:
        return LAYERS[top]
    raise AssertionError(f"{module}: not placed in a layer; add {top!r} to tests/test_layers.py")


def known(module: str) -> bool:
    rel = Path(*module.split("."))
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def dynamic_name(node: ast.expr) -> str | None:
    """The module name an ``import_module`` argument spells, with ``{}`` for each
    formatted part; None when it is not written in the source."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, imported selfplay module) for every import the file's source names."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                where = ".".join(base + ([node.module] if node.module else []))
            else:
                where = node.module or ""
            for alias in node.names:  # `from selfplay import tracks` imports selfplay.tracks
                sub = f"{where}.{alias.name}"
                found.append((node.lineno, sub if known(sub) else where))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in ("import_module", "__import__"):
                spelled = dynamic_name(node.args[0])
                if spelled and spelled.startswith("."):
                    spelled = package + spelled
                if spelled:
                    found.append((node.lineno, spelled))
    mine = [(line, name) for line, name in found if name == "selfplay" or name.startswith("selfplay.")]
    return sorted(set(mine), key=mine.index)


def violations(root: Path = PACKAGE) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path)
        mine = layer_of(module)
        for line, target in imports_of(path):
            if (module, target) in SEAMS or (module, target.split("{}")[0] + "{}") in SEAMS:
                continue
            theirs = layer_of(target) if "{}" not in (target.split(".") + [""])[1] else mine
            where = f"{path.relative_to(SRC.parent)}:{line}"
            if theirs > mine:
                out.append(
                    f"{where}: {module} ({LAYER_NAMES[mine]}) imports {target} ({LAYER_NAMES[theirs]})"
                )
            elif mine == theirs == 1:  # one track's package reaching into another's
                a, b = module.split(".")[2], target.split(".")[2] if target.count(".") >= 2 else ""
                if b and a != b and a not in TRACK_COMMONS and b not in TRACK_COMMONS:
                    out.append(f"{where}: track {a} imports track {b} ({target})")
    return out


def test_every_import_runs_downwards():
    found = violations()
    assert not found, "imports against the layer order (see this file's docstring):\n" + "\n".join(found)


def test_the_seam_imports_nothing_of_the_project():
    """The registry the config layer reads must stay a list: no game can come in through it."""
    registry = PACKAGE / "tracks" / "registry.py"
    assert imports_of(registry) == []


def test_the_check_sees_function_level_relative_and_dynamic_imports(tmp_path):
    """The reader finds each kind of import a wrong-way dependency could hide in."""
    pkg = tmp_path / "selfplay"
    (pkg / "llm").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "llm" / "__init__.py").write_text("")
    (pkg / "llm" / "x.py").write_text(
        "import importlib\n"
        "def f(name):\n"
        "    from ..pipeline.agents import g\n"
        "    from selfplay.tracks import seq\n"
        "    importlib.import_module(f'selfplay.report.{name}')\n"
    )
    global SRC
    saved, SRC = SRC, tmp_path
    try:
        found = imports_of(pkg / "llm" / "x.py")
        assert [t for _, t in found] == [
            "selfplay.pipeline.agents",
            "selfplay.tracks",
            "selfplay.report.{}",
        ]
        assert len(violations(pkg)) == 3
    finally:
        SRC = saved
