"""The Verus problem sets of PSV (paper 003, Sec. 4): where they come from, and how a
downloaded copy becomes problem records.

Sources (see ``docs/psv-data.md`` for what we found in each repository):

* ``dafny2verus``, ``mbpp``, ``humaneval``: the three JSON-lines files in ``data/`` of the
  paper's repository ``abwilf/psv``. One line is one problem; its ``spec`` field is the
  program cut just after the target function's open brace, its ``gold_code`` field the
  whole verified program. The repository has no licence file: we download it and never
  redistribute it.
* ``humaneval-verus``: the hand-written programs of ``secure-foundations/human-eval-verus``
  (``tasks/human_eval_NNN.rs``, one file per HumanEval task; unfinished tasks hold an
  empty ``verus!`` block). PSV's ``humaneval`` set is derived from it.

A problem record is ``{"id", "name", "dataset", "spec", "target", "target_mode",
"helper_bodies", "source_file"}``. ``spec`` ends with the open brace of the target
function (Appendix A: "END your target function with an open curly brace"); the solver
continues from there. No record carries a reference implementation of its target: the
JSON-lines ``gold_code`` field is read only to count lines whose spec is not a prefix of
it, and the human-eval-verus files are cut before the target's body. ``helper_bodies``
names the non-spec functions that come *before* the target and keep their bodies in the
spec, as the released specs do (e.g. an earlier exec helper the target may call).

Verus parsing here is deliberately small: :func:`blank_non_code` hides comments and
string/char literals behind spaces (same length, newlines kept), and every structural
question (braces, ``fn`` items, ``use`` lines) is asked of that blanked text.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import re
from pathlib import Path

from ..errors import UserError

# --- pinned sources -----------------------------------------------------------------

PSV_REPO = "abwilf/psv"
# The commit at which we read data/*.jsonl (each file had a single stored version).
PSV_COMMIT = "1c5692b49932f5ea4de4ad5998a3da29869e3f07"
HEV_REPO = "secure-foundations/human-eval-verus"
# A commit holding the completed human_eval_163.rs that PSV's humaneval.jsonl matches.
HEV_COMMIT = "a558d4e4caeb82e0b2dbdfa08f7cdecfb6e847d9"

_PSV_LICENCE = "none: abwilf/psv has no licence file (all rights reserved by default)"
_HEV_LICENCE = (
    "MIT according to the project brief; not confirmed from the stored snapshot "
    "(no LICENSE file was visible there), so treated as not redistributable"
)


def _raw_url(repo: str, commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def _psv_source(stem: str, paper_count: int, released_count: int) -> dict:
    return {
        "url": _raw_url(PSV_REPO, PSV_COMMIT, f"data/{stem}.jsonl"),
        "kind": "file",
        "repo": PSV_REPO,
        "commit": PSV_COMMIT,
        "subdir": "data",
        "glob": f"{stem}.jsonl",
        "format": "psv-jsonl",
        "sha256": None,  # not knowable without network access; download_pinned logs it
        "licence": _PSV_LICENCE,
        "redistributable": False,
        "paper_count": paper_count,
        "released_count": released_count,
    }


_SOURCES: dict[str, dict] = {
    "dafny2verus": _psv_source("dafny2verus", 271, 241),
    "mbpp": _psv_source("mbpp", 78, 74),
    "humaneval": _psv_source("humaneval", 85, 73),
    "humaneval-verus": {
        "url": f"https://codeload.github.com/{HEV_REPO}/tar.gz/{HEV_COMMIT}",
        "kind": "tarball",
        "repo": HEV_REPO,
        "commit": HEV_COMMIT,
        "subdir": "tasks",
        "glob": "human_eval_*.rs",
        "format": "hev-rs",
        "sha256": None,  # GitHub builds these archives on request; pin what you observe
        "licence": _HEV_LICENCE,
        "redistributable": False,
        "paper_count": None,
        "released_count": None,
    },
}

VERUS_DATASETS = tuple(_SOURCES)


def verus_dataset_sources() -> dict[str, dict]:
    """Every Verus set: ``{name: {url, commit, subdir, glob, licence, redistributable, ...}}``
    (a copy; also ``kind``, ``repo``, ``format``, ``sha256`` and the paper's and the
    release's problem counts where known)."""
    return copy.deepcopy(_SOURCES)


def _source(dataset: str) -> dict:
    if dataset not in _SOURCES:
        raise UserError(f"unknown Verus dataset {dataset!r}; known: {', '.join(VERUS_DATASETS)}")
    return _SOURCES[dataset]


def download_verus_dataset(
    dataset: str, root: str | Path, log, sha256: str | None = None, pin_key: str | None = None
) -> str:
    """Fetch one set into ``root`` so that :func:`load_verus_problems` reads it: the file
    (or, from a tarball, only the files matching ``subdir/glob``) lands in ``root/subdir``.

    Uses :func:`selfplay.data.sources.download_pinned`: without a sha256 pin the download is
    accepted and a warning names the observed digest. Returns that digest."""
    from .sources import download_pinned

    src = _source(dataset)
    root = Path(root)
    pin = sha256 if sha256 is not None else src["sha256"]
    if src["kind"] == "file":
        dest = root / src["subdir"] / src["glob"]
        return download_pinned(src["url"], str(dest), pin, pin_key, log)
    archive = root / "archives" / f"{src['repo'].replace('/', '_')}-{src['commit']}.tar.gz"
    got = download_pinned(src["url"], str(archive), pin, pin_key, log)
    extract_matching(archive, root, src["subdir"], src["glob"])
    return got


def extract_matching(archive: str | Path, root: str | Path, subdir: str, pattern: str) -> list[Path]:
    """Copy the regular files ``<top>/<subdir>/<pattern>`` of a GitHub tarball to
    ``root/subdir/<name>`` (by base name only: nothing else in the archive is written)."""
    import tarfile

    out_dir = Path(root) / subdir
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise UserError(f"{archive} is not a readable tar archive: {exc}") from exc
    with tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if not member.isfile() or len(parts) != 3 or parts[1] != subdir:
                continue
            if not fnmatch.fnmatchcase(parts[2], pattern):
                continue
            fh = tar.extractfile(member)
            if fh is None:  # pragma: no cover - isfile() members always have data
                continue
            dest = out_dir / parts[2]
            dest.write_bytes(fh.read())
            written.append(dest)
    if not written:
        raise UserError(f"{archive}: no files match {subdir}/{pattern}; is this the right archive?")
    return written


# --- a small Verus scanner ----------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z0-9_]")
_RAW_STRING = re.compile(r"b?r(#*)\"")
_SPACES = re.compile(r"\s*")


def blank_non_code(text: str, literals: bool = True) -> tuple[str, str | None]:
    """``text`` with comments and (unless ``literals`` is false) string/char literals
    replaced by spaces (newlines kept, same length), and an error message if a comment or
    literal never ends (it is then blanked to the end of the text).

    Handles nested ``/* */`` comments, escapes in ``"..."``, raw strings ``r#"..."#``, byte
    prefixes, and tells char literals (``'{'``, ``'\\n'``) from lifetimes (``'a``)."""
    out = list(text)
    n = len(text)
    i = 0
    error = None

    def blank(a: int, b: int, literal: bool = False) -> None:
        if literal and not literals:
            return
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                error = error or f"unterminated block comment at offset {i}"
            blank(i, j)
            i = j
        elif c in "rb" and (i == 0 or not _IDENT.match(text[i - 1])) and (m := _RAW_STRING.match(text, i)):
            close = '"' + m.group(1)
            j = text.find(close, m.end())
            if j < 0:
                error = error or f"unterminated raw string at offset {i}"
                j = n
            else:
                j += len(close)
            blank(i, j, literal=True)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                error = error or f"unterminated string at offset {i}"
            blank(i, j + 1, literal=True)
            i = j + 1
        elif c == "'":
            if nxt == "\\":
                j = text.find("'", i + 3)
                if j < 0 or j - i > 12:
                    error = error or f"bad char literal at offset {i}"
                    i += 1
                    continue
                blank(i, j + 1, literal=True)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'" and nxt != "\n":
                blank(i, i + 3, literal=True)
                i += 3
            else:  # a lifetime or loop label: code
                i += 1
        else:
            i += 1
    return "".join(out), error


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FN = re.compile(r"(?<![A-Za-z0-9_])fn\s+([A-Za-z_][A-Za-z0-9_]*)")
# Words that start a new item; after a closing brace they show it closed a body.
_ITEM_START = {
    "fn",
    "pub",
    "spec",
    "proof",
    "exec",
    "open",
    "closed",
    "struct",
    "enum",
    "impl",
    "trait",
    "use",
    "mod",
    "const",
    "static",
    "type",
    "broadcast",
    "global",
    "uninterp",
    "axiom",
    "tracked",
    "ghost",
    "unsafe",
    "extern",
    "macro_rules",
    "verus",
    "layout",
    "async",
}


def _next_token(blanked: str, pos: int) -> str:
    """The next non-space character, or word, at or after ``pos`` ('' at the end)."""
    j = _SPACES.match(blanked, pos).end()
    if j >= len(blanked):
        return ""
    w = _WORD.match(blanked, j)
    return w.group(0) if w else blanked[j]


def _fn_mode(blanked: str, kw_pos: int) -> str:
    """``spec``, ``proof`` or ``exec``, from the modifiers before ``fn`` (back to the
    previous ``;``, brace or attribute)."""
    start = kw_pos
    while start > 0 and blanked[start - 1] not in ";{}]":
        start -= 1
    words = set(_WORD.findall(blanked[start:kw_pos]))
    if "spec" in words:
        return "spec"
    if "proof" in words:
        return "proof"
    return "exec"


def fn_items(blanked: str) -> list[dict]:
    """The ``fn`` items of a blanked program, in order: ``{"name", "mode", "start" (the
    ``fn`` keyword), "header_end", "body_open", "body_close"}``. ``body_open`` is None for a
    bodiless declaration; ``body_close`` is None when the body is not closed (a spec cut at
    the target's open brace). Braces inside a header (``ensures match r { .. }``) are told
    from the body by what follows the closing brace."""
    items = []
    for m in _FN.finditer(blanked):
        item = {
            "name": m.group(1),
            "mode": _fn_mode(blanked, m.start()),
            "start": m.start(),
            "header_end": len(blanked),
            "body_open": None,
            "body_close": None,
        }
        depth, group_open = 0, None
        for j in range(m.end(), len(blanked)):
            ch = blanked[j]
            if ch == ";" and depth == 0:
                item["header_end"] = j
                break
            if ch == "{":
                if depth == 0:
                    group_open = j
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth < 0:  # the enclosing block closed: not a well-formed item
                    break
                if depth == 0:
                    follow = _next_token(blanked, j + 1)
                    if follow in ("", "}", "#") or follow in _ITEM_START:
                        item.update(header_end=group_open, body_open=group_open, body_close=j)
                        break
        else:
            if depth == 1:  # open at the end: the last group is the (unfinished) body
                item.update(header_end=group_open, body_open=group_open)
        items.append(item)
    return items


def _depths_ok(blanked: str) -> tuple[int, str | None]:
    depth = 0
    for k, ch in enumerate(blanked):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return depth, f"unmatched closing brace at offset {k}"
    return depth, None


# --- crate import rewriting ---------------------------------------------------------

# Verus renamed its crates `builtin` / `builtin_macros` to `verus_builtin` /
# `verus_builtin_macros` in mid 2025 (verus-lang/verus pull request #1815; e.g.
# asterinas/vostd PR #158 "Update verus crate names"). The current vstd prelude
# re-exports both (`pub use verus_builtin::*;` and the `verus_builtin_macros` macros,
# https://verus-lang.github.io/verus/verusdoc/src/vstd/prelude.rs.html), so one
# `use vstd::prelude::*;` replaces the old pair.
PRELUDE_IMPORT = "use vstd::prelude::*;"
_OLD_USE = re.compile(
    r"(?m)^[ \t]*(?:#\[\s*allow\s*\([^\]\n]*\)\s*\][ \t]*\n?[ \t]*)?"
    r"(?:(?:pub(?:\([^)\n]*\))?\s+)?use\s+(?:::)?(?:builtin_macros|builtin)\b[^;]*"
    r"|extern\s+crate\s+(?:builtin_macros|builtin)\s*);[ \t]*\n?"
)
_PRELUDE_USE = re.compile(r"(?<![A-Za-z0-9_:])use\s+(?:::)?vstd\s*::\s*prelude\s*::\s*\*\s*;")
_OLD_PATH = re.compile(r"(?<![A-Za-z0-9_])(?<![A-Za-z0-9_]::)(?:builtin_macros|builtin)\s*::")


def rewrite_crate_imports(text: str) -> tuple[str, list[str]]:
    """Replace imports of the pre-2025 crates ``builtin`` / ``builtin_macros`` (``use``
    lines, with an ``#[allow(...)]`` attribute in front if any, and ``extern crate``)
    by a single ``use vstd::prelude::*;``, added where the first old import stood unless
    the program already imports the prelude. Returns the new text and one line per
    change; a second call changes nothing. Paths such as ``builtin::f(..)`` in code are
    left alone: :func:`old_crate_references` finds them."""
    blanked, _ = blank_non_code(text)
    spans = [(m.start(), m.end()) for m in _OLD_USE.finditer(blanked)]
    if not spans:
        return text, []
    changes = [f"removed {' '.join(text[a:b].split())}" for a, b in spans]
    pieces, last = [], 0
    for a, b in spans:
        pieces.append(text[last:a])
        last = b
    pieces.append(text[last:])
    kept_blanked = "".join(
        blanked[x:y] for x, y in zip([0] + [b for _, b in spans], [a for a, _ in spans] + [len(blanked)])
    )
    if not _PRELUDE_USE.search(kept_blanked):
        pieces[0] = pieces[0] + PRELUDE_IMPORT + "\n"
        changes.append(f"added {PRELUDE_IMPORT}")
    return "".join(pieces), changes


def old_crate_references(text: str) -> list[str]:
    """Code (not comments or strings) that still names ``builtin`` / ``builtin_macros``."""
    blanked, _ = blank_non_code(text)
    out: list[str] = []
    for m in [*_OLD_USE.finditer(blanked), *_OLD_PATH.finditer(blanked)]:
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.start())
        line = text[line_start : line_end if line_end >= 0 else len(text)].strip()
        if line not in out:
            out.append(line)
    return out


# --- problem records ------------------------------------------------------------------

DROP_REASONS = (
    "unparseable",  # bad JSON line, no spec text, an unterminated comment/literal, unbalanced braces
    "no_verus_section",  # human-eval-verus file without the VERUS BEGIN/END markers
    "no_target",  # no function to implement (empty program, spec not ending in an open brace)
    "target_is_spec_fn",  # the open brace starts a spec function: nothing to verify
    "target_is_main",  # the target is `main`
    "no_ensures",  # the target states no postcondition
    "old_crate_reference",  # builtin/builtin_macros still named after the import rewrite
    "duplicate_spec",  # same spec (comments and spacing ignored) as a problem kept earlier
)

_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


class DroppedProblem(Exception):
    """A problem the loader leaves out: ``reason`` is one of :data:`DROP_REASONS`."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


def analyse_spec(spec: str) -> dict:
    """Check a spec (a program cut just after the target's open brace) and describe it:
    ``{"target", "target_mode", "helper_bodies"}``. Raises :class:`DroppedProblem`."""
    blanked, error = blank_non_code(spec)
    if error:
        raise DroppedProblem("unparseable", error)
    _, error = _depths_ok(blanked)
    if error:
        raise DroppedProblem("unparseable", error)
    if not blanked.rstrip().endswith("{"):
        raise DroppedProblem("no_target", "the spec does not end with an open brace")
    items = fn_items(blanked)
    if not items:
        raise DroppedProblem("no_target", "the spec declares no function")
    target = items[-1]
    open_at = len(blanked.rstrip()) - 1
    if target["body_open"] != open_at or target["body_close"] is not None:
        raise DroppedProblem("no_target", f"the final open brace is not the body of fn {target['name']}")
    if target["mode"] == "spec":
        raise DroppedProblem("target_is_spec_fn", target["name"])
    if target["name"] == "main":
        raise DroppedProblem("target_is_main")
    header = blanked[target["start"] : open_at]
    if not re.search(r"(?<![A-Za-z0-9_])ensures(?![A-Za-z0-9_])", header):
        raise DroppedProblem("no_ensures", target["name"])
    helpers = [it["name"] for it in items[:-1] if it["mode"] != "spec" and it["body_close"] is not None]
    return {"target": target["name"], "target_mode": target["mode"], "helper_bodies": helpers}


def _spec_key(spec: str) -> str:
    """What duplicate detection compares: the spec without comments, spacing collapsed."""
    blanked, _ = blank_non_code(spec, literals=False)
    return " ".join(blanked.split())


def _clean_name(name: str) -> str:
    return _NAME_BAD.sub("-", name).strip("-") or "problem"


_HEV_BEGIN = re.compile(r"/\*\s*###\s*VERUS BEGIN\s*\*/[ \t]*\n?")
_HEV_END = re.compile(r"/\*\s*###\s*VERUS END\s*\*/")
_HEV_ENTRY = re.compile(r"/\*\s*###\s*ENTRY POINT\s*\n\s*([A-Za-z_][A-Za-z0-9_]*)\s*\*/")


def hev_spec(text: str) -> tuple[str, str]:
    """Cut a human-eval-verus task file into ``(spec, target)``: the program between the
    VERUS BEGIN/END markers up to the open brace of its target. The target is the exec or
    proof function with an ``ensures`` clause named like the task's entry point (exactly,
    else by prefix, e.g. ``string_sequence_impl``), else the last such function. Functions
    after the target are left out; the comment sections (prompt, Python solution, tests)
    never enter the spec."""
    begin, end = _HEV_BEGIN.search(text), _HEV_END.search(text)
    if not begin or not end or end.start() < begin.end():
        raise DroppedProblem("no_verus_section")
    program = text[begin.end() : end.start()]
    blanked, error = blank_non_code(program)
    if error:
        raise DroppedProblem("unparseable", error)
    _, error = _depths_ok(blanked)
    if error:
        raise DroppedProblem("unparseable", error)
    candidates = [
        it
        for it in fn_items(blanked)
        if it["mode"] != "spec"
        and it["name"] != "main"
        and it["body_close"] is not None
        and re.search(r"(?<![A-Za-z0-9_])ensures(?![A-Za-z0-9_])", blanked[it["start"] : it["body_open"]])
    ]
    if not candidates:
        raise DroppedProblem("no_target", "no exec or proof function with an ensures clause")
    entry = _HEV_ENTRY.search(text)
    entry_name = entry.group(1) if entry else None
    chosen = (
        [c for c in candidates if c["name"] == entry_name]
        or [c for c in candidates if entry_name and c["name"].startswith(entry_name)]
        or candidates
    )[-1]
    return program[: chosen["body_open"] + 1].lstrip("\n"), chosen["name"]


def _dataset_dir(root: Path, src: dict) -> tuple[Path, list[Path]]:
    """Where the files are: ``root/subdir``, ``root/<top>/subdir`` (an extracted GitHub
    tarball) or ``root`` itself."""
    tops = [p for p in sorted(root.iterdir()) if p.is_dir()] if root.is_dir() else []
    for base in [root / src["subdir"], *[t / src["subdir"] for t in tops], root]:
        if base.is_dir():
            files = sorted(p for p in base.glob(src["glob"]) if p.is_file())
            if files:
                return base, files
    raise UserError(f"no {src['subdir']}/{src['glob']} under {root}; download the set first ({src['url']})")


def _units(src: dict, files: list[Path], report: dict):
    """One dict per problem candidate: ``{"where", "hint", "spec", "gold", "drop"}``
    (``where`` names the file in the upstream repository, with ``#L<line>`` for JSON lines)."""
    for path in files:
        report["files_seen"] += 1
        rel = f"{src['subdir']}/{path.name}"
        if src["format"] == "psv-jsonl":
            # JSON lines end at "\n" only: str.splitlines() also splits at U+2028 and other
            # separators that may stand inside a JSON string (Dafny2Verus problem 17 has them)
            for lineno, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
                if not line.strip():
                    continue
                unit = {
                    "where": f"{rel}#L{lineno}",
                    "hint": None,
                    "spec": None,
                    "gold": None,
                    "drop": None,
                    "suffix": f"L{lineno}",
                }
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    yield {**unit, "drop": DroppedProblem("unparseable", f"bad JSON: {exc.msg}")}
                    continue
                spec = obj.get("spec") if isinstance(obj, dict) else None
                if not isinstance(spec, str) or not spec.strip():
                    yield {**unit, "drop": DroppedProblem("unparseable", "no spec text")}
                    continue
                task_id, gold = obj.get("task_id"), obj.get("gold_code")
                yield {
                    **unit,
                    "spec": spec,
                    "hint": task_id if isinstance(task_id, str) else None,
                    "gold": gold if isinstance(gold, str) else None,
                }
        else:
            unit = {
                "where": rel,
                "hint": path.stem,
                "spec": None,
                "gold": None,
                "drop": None,
                "suffix": path.stem,
            }
            try:
                spec, _ = hev_spec(path.read_text(encoding="utf-8"))
            except DroppedProblem as drop:
                yield {**unit, "drop": drop}
                continue
            yield {**unit, "spec": spec}


def load_verus_problems(root: str | Path, dataset: str) -> tuple[list[dict], dict]:
    """Read a downloaded set into problem records (see the module doc) and a report:
    ``{"dataset", "files_seen", "records_seen", "kept", "dropped": {reason: count},
    "dropped_items": [{"source_file", "reason", "detail"}], "imports_rewritten",
    "gold_not_prefixed", "with_helper_bodies"}``.

    Each spec has its old crate imports rewritten (:func:`rewrite_crate_imports`) before it
    is checked; a problem is dropped for one of :data:`DROP_REASONS`."""
    src = _source(dataset)
    _, files = _dataset_dir(Path(root), src)
    report = {
        "dataset": dataset,
        "files_seen": 0,
        "records_seen": 0,
        "kept": 0,
        "dropped": {},
        "dropped_items": [],
        "imports_rewritten": 0,
        "gold_not_prefixed": 0,
        "with_helper_bodies": 0,
    }
    records: list[dict] = []
    names: set[str] = set()
    seen_specs: dict[str, str] = {}

    def drop(where: str, reason: str, detail: str = "") -> None:
        report["dropped"][reason] = report["dropped"].get(reason, 0) + 1
        report["dropped_items"].append({"source_file": where, "reason": reason, "detail": detail})

    for unit in _units(src, files, report):
        report["records_seen"] += 1
        where, spec, gold = unit["where"], unit["spec"], unit["gold"]
        if unit["drop"] is not None:
            drop(where, unit["drop"].reason, unit["drop"].detail)
            continue
        if gold is not None and not gold.startswith(spec):
            report["gold_not_prefixed"] += 1
        _, error = blank_non_code(spec)
        if error:
            drop(where, "unparseable", error)
            continue
        new_spec, changes = rewrite_crate_imports(spec)
        leftovers = old_crate_references(new_spec)
        if leftovers:
            drop(where, "old_crate_reference", "; ".join(leftovers[:3]))
            continue
        try:
            info = analyse_spec(new_spec)
        except DroppedProblem as exc:
            drop(where, exc.reason, exc.detail)
            continue
        key = _spec_key(new_spec)
        if key in seen_specs:
            drop(where, "duplicate_spec", f"same spec as {seen_specs[key]}")
            continue
        name = _clean_name(unit["hint"] or info["target"])
        if name in names:  # a different problem under the same name: say where it is from
            name = _clean_name(f"{name}-{unit['suffix']}")
        names.add(name)
        seen_specs[key] = f"{dataset}/{name}"
        report["imports_rewritten"] += bool(changes)
        report["with_helper_bodies"] += bool(info["helper_bodies"])
        records.append(
            {
                "id": f"{dataset}/{name}",
                "name": name,
                "dataset": dataset,
                "spec": new_spec,
                "target": info["target"],
                "target_mode": info["target_mode"],
                "helper_bodies": info["helper_bodies"],
                "source_file": where,
            }
        )
    report["kept"] = len(records)
    return records, report
