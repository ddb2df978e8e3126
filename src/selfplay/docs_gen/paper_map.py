"""docs/paper-map.md: every table and figure a shipped config builds, and the code that makes it.

For each shipped config (``config.yaml``, and each ``config/papers/*.yaml``, the regime
overlays ``<paper>_<x>.yaml`` on top of their ``<paper>.yaml``) the real workflow is loaded
with Snakemake's API, as ``snakemake`` would load it in an empty folder, and every input of
rule ``all`` is followed to

- the rule whose output pattern matches it (its wildcards filled in from the path),
- the rule's ``script:`` in ``workflow_scripts/``,
- the library functions that script calls: the ``selfplay.*`` names it imports, resolved
  from the script's syntax tree (the logging wrapper and record readers left out).

An output's paper name ("Table 4", "Figure 12") comes from its file name, which the rules
keep equal to the paper's number, and its title from the rule's ``title`` param, else from
the label of its entry in Snakemake's report (``report(..., labels=...)``). Tracks' outputs are grouped under their paper (selfplay.tracks.registry);
the benchmark layer's own reports get a section of their own.
"""

from __future__ import annotations

import ast
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

PAGE = "docs/paper-map.md"
DEFAULT_CONFIG = "config.yaml"
EVAL_SECTION = "evaluation"  # the benchmark layer's own reports (rules/common.smk EVAL_REPORTS)
# Modules of plumbing every script uses (the logging step, errors, record reading): not the
# function that makes an output.
_PLUMBING = ("selfplay.pipeline.step", "selfplay.errors", "selfplay.records")
_NUMBERED = re.compile(r"^(table|figure)(\d+)$")


@dataclass
class Output:
    """One table or figure: all its files (e.g. .md and .csv) from one rule."""

    name: str  # "Table 4", or the file's stem where the paper gives it no number
    title: str  # the rule's title param, or ""
    paths: list[str]
    rule: str
    rules_file: str  # repository-relative
    wildcards: dict[str, str]
    script: str  # repository-relative, or "" for a rule without a script
    functions: list[str] = field(default_factory=list)


@dataclass
class ConfigMap:
    configfiles: tuple[str, ...]  # () is the embedded default, config.yaml
    targets: list[str]  # every input of rule all, in order
    sections: dict[str, list[Output]]  # track (or EVAL_SECTION) -> its outputs
    # track (or EVAL_SECTION) -> the report outputs of rules that rule all does not run
    # (tables that need other runs' results, optional figures): built when named
    on_request: dict[str, list[Output]] = field(default_factory=dict)


def shipped_configs(repo: Path) -> list[tuple[str, ...]]:
    """The configs the project ships: () for config.yaml, then each paper config, a regime
    overlay ``<paper>_<x>.yaml`` given after its ``<paper>.yaml``."""
    papers = sorted((repo / "config" / "papers").glob("*.yaml"))
    names = {p.stem for p in papers}
    out: list[tuple[str, ...]] = [()]
    for p in papers:
        base = p.stem.rsplit("_", 1)[0]
        rel = f"config/papers/{p.name}"
        out.append((f"config/papers/{base}.yaml", rel) if "_" in p.stem and base in names else (rel,))
    return out


def config_label(configfiles: tuple[str, ...]) -> str:
    if not configfiles:
        return f"default (`{DEFAULT_CONFIG}`, no `--configfile`)"
    return "`--configfile " + " ".join(configfiles) + "`"


def _module_file(src: Path, module: str) -> Path | None:
    parts = module.split(".")
    for candidate in (src.joinpath(*parts).with_suffix(".py"), src.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def script_functions(script: Path, src: Path) -> list[str]:
    """The ``selfplay.*`` functions (or classes) ``script`` calls or passes on, as dotted
    names, in the order they first appear; plumbing (:data:`_PLUMBING`) left out.

    ``src`` is the folder that holds the ``selfplay`` package: a name imported from a
    package is a module when the package has a file of that name."""
    tree = ast.parse(script.read_text(), filename=str(script))
    names: dict[str, str] = {}  # local name -> dotted name (a module or a function)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "selfplay":
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "selfplay":
                    names[alias.asname or alias.name.split(".")[0]] = (
                        alias.asname and alias.name or "selfplay"
                    )
    found: list[str] = []
    uses = sorted(  # each use of an imported name, called or passed on (draw = module.figure1)
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.Attribute, ast.Name)) and isinstance(n.ctx, ast.Load)
        ),
        key=lambda n: (n.lineno, n.col_offset),
    )
    inner = {id(n.value) for n in uses if isinstance(n, ast.Attribute)}  # part of a longer a.b.c
    for use in uses:
        if id(use) in inner:
            continue
        chain: list[str] = []
        func = use
        while isinstance(func, ast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id not in names:
            continue
        dotted = names[func.id]
        for attr in reversed(chain):  # down through modules; one step into a class (a method)
            is_module = _module_file(src, dotted) is not None
            dotted = f"{dotted}.{attr}"
            if not is_module:
                break
        if _module_file(src, dotted) is not None:
            continue  # a module itself, not something it defines
        if any(dotted.startswith(p + ".") for p in _PLUMBING) or dotted in found:
            continue
        found.append(dotted)
    return found


def _top_level_names(file: Path) -> set[str]:
    """What a module defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(file.read_text(), filename=str(file)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def check_defined(name: str, src: Path) -> None:
    """Raise UserError unless the dotted ``name`` (a function, class, or a class's method) is
    defined at the top level of its module under ``src``."""
    parts = name.split(".")
    for cut in (len(parts) - 1, len(parts) - 2):  # module.function, or module.Class.method
        file = _module_file(src, ".".join(parts[:cut])) if cut > 0 else None
        if file is not None:
            if parts[cut] in _top_level_names(file):
                return
            break
    raise UserError(f"paper map: {name} is not defined in the library (src/)")


def _output_name(path: str) -> str:
    stem = Path(path).stem
    m = _NUMBERED.match(stem)
    return f"{m.group(1).capitalize()} {m.group(2)}" if m else stem


def _title(rule, path: str, wildcards: dict[str, str]) -> str:
    """The rule's ``title`` param, else the label its report entry for ``path`` carries (the
    name Snakemake's HTML report shows), wildcards filled in; "" when neither says more
    than the output's name."""
    title = getattr(rule.params, "title", None) if "title" in rule.params.keys() else None
    if isinstance(title, str):
        return title
    for out in rule.output:
        entry = out.flags.get("report")
        if entry is not None and out.match(path) and entry.labels:
            label = str(next(iter(entry.labels.values())))
            try:
                label = label.format(**wildcards)
            except (KeyError, IndexError, ValueError):
                pass
            return label.removesuffix(" (CSV)")
    return ""


def _beyond_name(title: str, name: str) -> str:
    """What ``title`` says beyond the output's ``name`` ("Haskell track Table 4: PySecDB ..."
    -> "PySecDB ..."; "figure1" for Figure 1 -> "")."""
    title = title.split(f"{name}: ", 1)[1] if f"{name}: " in title else title
    return "" if re.sub(r"\s", "", title.lower()) == re.sub(r"\s", "", name.lower()) else title


def _docstring_sentence(rule) -> str:
    text = " ".join((rule.docstring or "").split())
    return text.split(". ", 1)[0].rstrip(".") if text else ""


def _outputs(paths: list[str], producers: dict, repo: Path, src: Path) -> list[Output]:
    grouped: dict[tuple[str, str], Output] = {}
    for path in paths:
        rule = producers[path]
        key = (str(Path(path).with_suffix("")), rule.name)
        wildcards = {k: str(v) for k, v in (rule.get_wildcards(path) or {}).items()}
        if key in grouped:
            grouped[key].paths.append(path)
            if path.endswith((".md", ".png")):  # the table's or figure's own label, not its CSV's
                grouped[key].title = _title(rule, path, wildcards) or grouped[key].title
            continue
        script = ""
        functions: list[str] = []
        if rule.script:
            script_path = (Path(rule.snakefile).parent / rule.script).resolve()
            script = script_path.relative_to(repo).as_posix()
            functions = script_functions(script_path, src)
            for name in functions:
                check_defined(name, src)
        grouped[key] = Output(
            name=_output_name(path),
            title=_title(rule, path, wildcards),
            paths=[path],
            rule=rule.name,
            rules_file=Path(rule.snakefile).resolve().relative_to(repo).as_posix(),
            wildcards=wildcards,
            script=script,
            functions=functions,
        )
    return list(grouped.values())


def map_config(repo: Path, configfiles: tuple[str, ...]) -> ConfigMap:
    """Load the workflow with ``configfiles`` (as ``snakemake`` does, in an empty folder) and
    map every input of rule ``all`` to its rule, script and functions."""
    from snakemake.api import ConfigSettings, OutputSettings, ResourceSettings, SnakemakeApi, StorageSettings
    from snakemake.settings.types import Quietness

    repo = repo.resolve()
    src = repo / "src"
    with tempfile.TemporaryDirectory(prefix="paper-map-") as workdir:
        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            workflow_api = api.workflow(
                resource_settings=ResourceSettings(cores=1),
                config_settings=ConfigSettings(configfiles=[repo / c for c in configfiles]),
                storage_settings=StorageSettings(),
                snakefile=repo / "Snakefile",
                workdir=Path(workdir),
            )
            workflow = workflow_api._workflow  # loads the Snakefile; the API has no public handle
            targets = [str(t) for t in workflow.get_rule("all").input]
            rules = [r for r in workflow.rules if r.name != "all"]
            producers = {}
            for target in targets:
                matching = [r for r in rules if r.is_producer(target)]
                if len(matching) != 1:
                    raise UserError(
                        f"paper map ({config_label(configfiles)}): {target} is made by "
                        f"{len(matching)} rules ({', '.join(r.name for r in matching) or 'none'}), not one"
                    )
                producers[target] = matching[0]
            g = workflow.globals
            groups = {t: [str(p) for p in g["TRACK_OUTPUTS"][t]["report"]()] for t in g["TRACKS"]}
            groups[EVAL_SECTION] = [str(p) for p in g["EVAL_REPORTS"]]
            made = set(producers.values())
            extra: dict[str, list[str]] = {}
            extra_producers = {}
            for rule in rules:
                reported = [str(f) for f in rule.output if f.flags.get("report")]
                if not reported or rule in made:
                    continue
                stem = Path(rule.snakefile).stem
                extra.setdefault(EVAL_SECTION if stem == "evaluate" else stem, []).extend(reported)
                extra_producers.update({p: rule for p in reported})
    placed = {p for paths in groups.values() for p in paths}
    stray = [t for t in targets if t not in placed]
    if stray:  # rule all builds something no track lists: the map must not drop it
        raise UserError(
            f"paper map ({config_label(configfiles)}): outputs of rule all in no section: {stray}"
        )
    sections = {
        name: _outputs([p for p in paths if p in producers], producers, repo, src)
        for name, paths in groups.items()
        if paths
    }
    on_request = {name: _outputs(paths, extra_producers, repo, src) for name, paths in extra.items()}
    for outputs in on_request.values():
        for o in outputs:
            o.title = _beyond_name(o.title, o.name) or _docstring_sentence(extra_producers[o.paths[0]])
    return ConfigMap(configfiles, targets, sections, on_request)


def _link(text: str, target: str) -> str:
    return f"[{text}](../{target})"


def _function_link(name: str, src: Path) -> str:
    module = name.rsplit(".", 1)[0]
    file = _module_file(src, module)
    return _link(f"`{name}`", file.relative_to(src.parent).as_posix()) if file else f"`{name}`"


def _rows(outputs: list[Output], src: Path) -> list[str]:
    lines = ["| Output | Target path | Rule | Script | Library function |", "| --- | --- | --- | --- | --- |"]
    for o in outputs:
        name = f"**{o.name}**" if _NUMBERED.match(Path(o.paths[0]).stem) else f"`{o.name}` (no paper number)"
        title = _beyond_name(o.title, o.name)
        if title:
            name += f": {title}"
        rule = _link(f"`{o.rule}`", o.rules_file)
        if o.wildcards:
            rule += " (" + ", ".join(f"{k}={v}" for k, v in o.wildcards.items()) + ")"
        script = _link(f"`{o.script}`", o.script) if o.script else "(no script)"
        functions = "<br>".join(_function_link(f, src) for f in o.functions) or "—"
        paths = "<br>".join(f"`{p}`" for p in o.paths)
        lines.append(" | ".join(["", name.replace("|", "\\|"), paths, rule, script, functions, ""]).strip())
    return lines


def render(repo: Path, maps: list[ConfigMap]) -> str:
    """The page's Markdown: one section per paper (then the benchmark layer), one table per
    config that builds that paper's outputs."""
    from ..tracks.registry import TRACKS

    src = repo.resolve() / "src"
    maps = sorted(maps, key=lambda m: not m.configfiles)  # the paper configs first, the default last
    papers = sorted(TRACKS.values(), key=lambda t: t.paper.number)
    lines = [
        "# Paper map",
        "",
        "<!-- Generated by `selfplay docs` (src/selfplay/docs_gen/paper_map.py) from the workflow;",
        "     tests/test_docs_paper_map.py fails when this page is not current. -->",
        "",
        "Every table and figure that rule `all` builds, for every shipped config, and the code",
        "that makes it: the target path (build it alone with `snakemake --cores 2 <path>` and the",
        "same `--configfile`), the rule that writes it (with the wildcards the path fills in), the",
        "thin script the rule runs, and the library functions that script calls, where the logic",
        "and its tests live. A paper number (Table 4, Figure 12) is the file's name; outputs the",
        "paper does not number (yields, per-round figures of other benchmarks) keep their file name.",
        "The paper configs run one paper each; the embedded default (`config.yaml`) runs every",
        "track on small slices, so its paths and outputs can differ from the paper config's.",
        "",
        "Configs: " + ", ".join(config_label(m.configfiles) for m in maps) + ".",
        "",
    ]
    for track in [t.name for t in papers] + [EVAL_SECTION]:
        if track == EVAL_SECTION:
            heading = "Benchmark layer (every config)"
            intro = "The benchmark layer's own reports (docs/evaluation.md), built by every config."
        else:
            paper = TRACKS[track].paper
            heading = f"Paper {paper.number}: {paper.title}"
            intro = (
                f"Track `{track}` ({TRACKS[track].title}), [arXiv {paper.arxiv}]({paper.url}); "
                f"its rules are in `rules/{track}.smk`."
            )
        lines += [f"## {heading}", "", intro, ""]
        for m in maps:
            outputs = m.sections.get(track)
            if not outputs:
                continue
            count = sum(len(o.paths) for o in outputs)
            lines += [f"### {config_label(m.configfiles)}", "", f"{len(outputs)} outputs, {count} files.", ""]
            lines += _rows(outputs, src) + [""]
            if m.on_request.get(track):
                lines += [
                    "Not built by `all` with this config; built when the path is named as a target:",
                    "",
                ]
                lines += _rows(m.on_request[track], src) + [""]
    return "\n".join(lines)


def listed_paths(page: str) -> dict[str, set[str]]:
    """Config label -> the target paths the page lists under that config's headings."""
    listed: dict[str, set[str]] = {}
    label = None
    for line in page.splitlines():
        if line.startswith("### "):
            label = line[4:].strip()
        elif label and line.startswith("| ") and not line.startswith(("| Output", "| ---")):
            cells = line.split(" | ")
            listed.setdefault(label, set()).update(re.findall(r"`([^`]+)`", cells[1]))
    return listed


def missing_outputs(page: str, maps: list[ConfigMap]) -> list[str]:
    """ "<config>: <path>" for each output of rule all that ``page`` does not list for its config."""
    listed = listed_paths(page)
    return [
        f"{config_label(m.configfiles)}: {t}"
        for m in maps
        for t in m.targets
        if t not in listed.get(config_label(m.configfiles), set())
    ]


def generate(repo: Path) -> tuple[str, list[ConfigMap]]:
    repo = Path(repo)
    maps = [map_config(repo, c) for c in shipped_configs(repo)]
    return render(repo, maps), maps
