"""The PSV track's shipped Dafny problems (the embedded default, Dafny 2.3).

The paper's seed and evaluation sets are Verus programs that cannot be shipped here, so
the package carries a small hand-written Dafny set instead, in ``dafny_problems/``:

* ``manifest.json``: ``{"description", "dafny_version", "problems": [...]}``, where each
  problem is ``{"name", "target", "description", "split", "difficulty"}``;
* ``<name>.spec.dfy``: the spec in the shared data model - spec helper functions and
  predicates (with bodies), then the one target method, declared without a body;
* ``<name>.solution.dfy``: a reference solution, the spec text unchanged with a body
  after the target's header (plus any helper lemmas it needs).

Reference solutions only show that a spec is solvable (each was checked with Dafny 2.3
and ``/noCheating:1``); they are never training data and are never shown to a model.

The shipped files follow one layout, which the checks below rely on: top-level
declarations are separated by a blank line and hold no blank line inside, and the
target's ``requires``/``ensures``/``modifies`` clauses contain no braces.

A record is a dict ``{"id", "name", "target", "description", "split", "difficulty",
"spec", "solution"}``; ``id`` is :func:`selfplay.records.content_id` of the spec text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import UserError
from ..records import content_id

PROBLEMS_DIR = Path(__file__).resolve().parent / "dafny_problems"
MANIFEST_NAME = "manifest.json"
SPLITS = ("seed", "eval")
DIFFICULTIES = ("trivial", "easy", "medium", "hard")
PROBLEM_KEYS = ("name", "target", "description", "split", "difficulty")

_PROBLEM_NAME = re.compile(r"[a-z][a-z0-9_]*")
_DAFNY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_METHOD_HEADER = re.compile(r"method\s+([A-Za-z_][A-Za-z0-9_']*)\s*[(<]")


def spec_declarations(spec: str) -> list[str]:
    """The spec's top-level declarations: its blank-line-separated blocks, without edge newlines."""
    return [block.strip("\n") for block in re.split(r"\n[ \t]*\n", spec) if block.strip()]


def check_problem_texts(name: str, target: str, spec: str, solution: str) -> None:
    """Raise UserError unless ``spec`` has exactly one bodiless method, named ``target``,
    and ``solution`` holds every spec declaration verbatim with a body after the target."""
    decls = spec_declarations(spec)
    methods = [d for d in decls if d.startswith("method")]
    if len(methods) != 1:
        raise UserError(
            f"Dafny problem {name!r}: the spec declares {len(methods)} methods; "
            "it must declare exactly one (the target)"
        )
    header = methods[0]
    match = _METHOD_HEADER.match(header)
    if not match or match.group(1) != target:
        found = match.group(1) if match else "?"
        raise UserError(
            f"Dafny problem {name!r}: the spec's method is {found!r} but the "
            f"manifest names the target {target!r}"
        )
    if "{" in header or "}" in header:
        raise UserError(f"Dafny problem {name!r}: the target method {target!r} must have no body in the spec")
    for decl in decls:
        if decl not in solution:
            first = decl.splitlines()[0]
            raise UserError(
                f"Dafny problem {name!r}: the solution does not contain the spec "
                f"declaration starting {first!r} verbatim"
            )
    after = solution[solution.index(header) + len(header) :]
    if not after.lstrip().startswith("{"):
        raise UserError(
            f"Dafny problem {name!r}: in the solution, the target's header is not followed by a body"
        )


def _read_manifest(root: Path) -> list[dict]:
    path = root / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"no Dafny problem manifest at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read Dafny problem manifest {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    problems = data.get("problems") if isinstance(data, dict) else None
    if not isinstance(problems, list) or not problems:
        raise UserError(f"{path}: expected an object with a non-empty 'problems' list")
    seen: set[str] = set()
    for pos, entry in enumerate(problems):
        label = entry.get("name") if isinstance(entry, dict) else None
        where = f"{path}: problem {label!r}" if isinstance(label, str) else f"{path}: problem #{pos}"
        if not isinstance(entry, dict):
            raise UserError(f"{where}: expected an object")
        missing = [k for k in PROBLEM_KEYS if not isinstance(entry.get(k), str) or not entry[k].strip()]
        if missing:
            raise UserError(f"{where}: missing or empty field(s) {', '.join(missing)}")
        extra = sorted(set(entry) - set(PROBLEM_KEYS))
        if extra:
            raise UserError(f"{where}: unknown field(s) {', '.join(extra)}")
        if not _PROBLEM_NAME.fullmatch(entry["name"]):
            raise UserError(f"{where}: a problem name is lower-case letters, digits and '_'")
        if not _DAFNY_NAME.fullmatch(entry["target"]):
            raise UserError(f"{where}: target {entry['target']!r} is not a Dafny method name")
        if entry["split"] not in SPLITS:
            raise UserError(
                f"{where}: unknown split {entry['split']!r} (expected one of {', '.join(SPLITS)})"
            )
        if entry["difficulty"] not in DIFFICULTIES:
            raise UserError(
                f"{where}: unknown difficulty {entry['difficulty']!r} "
                f"(expected one of {', '.join(DIFFICULTIES)})"
            )
        if entry["name"] in seen:
            raise UserError(f"{where}: duplicate problem name")
        seen.add(entry["name"])
    return problems


def _read_text(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"Dafny problem {name!r}: missing file {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"Dafny problem {name!r}: cannot read {path}: {exc}") from None


def load_problems(split: str | None = None, directory: str | Path | None = None) -> list[dict]:
    """The problems of ``split`` ("seed", "eval", or None for all) in manifest order.

    ``directory`` defaults to the shipped set. Every problem is checked whatever the split,
    so a fault anywhere in the manifest or the files is a one-line UserError naming it.
    """
    if split is not None and split not in SPLITS:
        raise UserError(f"Dafny problem split must be one of {', '.join(SPLITS)}, not {split!r}")
    root = Path(directory) if directory is not None else PROBLEMS_DIR
    if not root.is_dir():
        raise UserError(f"no directory of Dafny problems at {root}")
    entries = _read_manifest(root)
    expected = {f"{e['name']}.{kind}.dfy" for e in entries for kind in ("spec", "solution")}
    strays = sorted(p.name for p in root.glob("*.dfy") if p.name not in expected)
    if strays:
        raise UserError(
            f"{root}: {strays[0]} belongs to no problem in {MANIFEST_NAME} "
            "(files are <name>.spec.dfy and <name>.solution.dfy)"
        )
    out = []
    for entry in entries:
        name = entry["name"]
        spec = _read_text(root / f"{name}.spec.dfy", name)
        solution = _read_text(root / f"{name}.solution.dfy", name)
        check_problem_texts(name, entry["target"], spec, solution)
        out.append(
            {
                "id": content_id(spec),
                "name": name,
                "target": entry["target"],
                "description": entry["description"],
                "split": entry["split"],
                "difficulty": entry["difficulty"],
                "spec": spec,
                "solution": solution,
            }
        )
    return [p for p in out if split is None or p["split"] == split]
