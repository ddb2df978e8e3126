"""Reference Haskell programs P for the Haskell track (the embedded default).

The paper draws its references from a synthetic dataset that cannot be fetched
here, so the package ships a small hand-written set instead: one ``.hs`` file per
program under ``haskell_programs/``. Each file holds exactly one top-level
function, named like the file, in this shape::

    -- reflectable                  (optional marker, first line only)
    import Data.List (sortBy)       (optional imports, from base only)

    name :: T1 -> T2 -> R           (top-level signature, may span lines)
    name ... = ...                  (equations; helpers only in ``where``)

There is no ``module`` header and no ``main``. The marker says the program is
simple enough (first-order recursion over Int, Bool and lists, no library
functions) that a Liquid Haskell equivalence proof by reflection + PLE is
plausible.

A record is a dict ``{"id", "entry_point", "code", "origin", "reflectable",
"arity"}``. As with HumanEval in :mod:`selfplay.data.sources`, the set has no
train/test split of its own: programs in name order alternate between "train"
(even positions) and "test" (odd positions).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import UserError
from ..records import content_id

PROGRAMS_DIR = Path(__file__).resolve().parent / "haskell_programs"
REFERENCE_SPLITS = ("train", "test")
REFLECTABLE_MARKER = "-- reflectable"

_NAME = re.compile(r"[a-z_][A-Za-z0-9_']*")
_SIGNATURE_START = re.compile(r"^([a-z_][A-Za-z0-9_']*)\s*::(?![!#$%&*+./<=>?@\\^|~:-])")
_OPENERS = {"(": ")", "[": "]", "{": "}"}


def _strip_line_comment(line: str) -> str:
    """``line`` without a trailing ``--`` comment (a run of dashes not part of an operator).

    String and character literals are skipped, so ``"--"`` inside a literal stays.
    """
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == '"':
            i += 1
            while i < n and line[i] != '"':
                i += 2 if line[i] == "\\" else 1
        elif ch == "-" and line.startswith("--", i):
            j = i
            while j < n and line[j] == "-":
                j += 1
            before = line[i - 1] if i else " "
            after = line[j] if j < n else " "
            symbols = "!#$%&*+./<=>?@\\^|~:"
            if before not in symbols and after not in symbols:
                return line[:i].rstrip()
            i = j
            continue
        i += 1
    return line


def split_arrows(type_text: str) -> list[str]:
    """The parts of a type between its depth-0 ``->`` arrows, stripped.

    Arrows inside parentheses, brackets or braces (a function argument, a tuple
    of functions) do not split. A context (``Ord a => ...``) at depth 0 is dropped
    first. ``"Int -> (Int -> Int) -> [Int]"`` gives ``["Int", "(Int -> Int)", "[Int]"]``.
    """
    text = " ".join(type_text.split())
    depth_zero_context = _depth_zero_positions(text, "=>")
    if depth_zero_context:
        text = text[depth_zero_context[-1] + 2 :].strip()
    cuts = _depth_zero_positions(text, "->")
    parts, start = [], 0
    for pos in cuts:
        parts.append(text[start:pos].strip())
        start = pos + 2
    parts.append(text[start:].strip())
    if any(not p for p in parts):
        raise ValueError(f"malformed type {type_text!r}: an arrow with a missing side")
    return parts


def _depth_zero_positions(text: str, token: str) -> list[int]:
    """Offsets of ``token`` in ``text`` outside any bracket; raises on unbalanced brackets."""
    stack: list[str] = []
    found: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in _OPENERS:
            stack.append(_OPENERS[ch])
        elif ch in ")]}":
            if not stack or stack.pop() != ch:
                raise ValueError(f"malformed type {text!r}: unbalanced {ch!r}")
        elif not stack and text.startswith(token, i):
            found.append(i)
            i += len(token)
            continue
        i += 1
    if stack:
        raise ValueError(f"malformed type {text!r}: unclosed bracket")
    return found


def signature_arity(type_text: str) -> int:
    """How many arguments a function of this type takes: its depth-0 arrows."""
    return len(split_arrows(type_text)) - 1


def _top_level_declarations(code: str) -> list[tuple[int, str]]:
    """``(first line number, text)`` of each top-level declaration in ``code``.

    A declaration starts at column 0 and continues over the more deeply indented
    (or blank) lines after it; its text has comments dropped and whitespace
    collapsed. Line comments are handled; ``{- -}`` blocks are not expected in the
    shipped files and are not.
    """
    decls: list[tuple[int, list[str]]] = []
    for number, raw in enumerate(code.splitlines(), 1):
        line = _strip_line_comment(raw)
        if not line.strip():
            continue
        if line[0].isspace() and decls:
            decls[-1][1].append(line)
        else:
            decls.append((number, [line]))
    return [(number, " ".join(" ".join(parts).split())) for number, parts in decls]


def _top_level_signatures(code: str) -> list[tuple[str, str]]:
    """``(name, type text)`` for each top-level ``name :: type`` in ``code``."""
    sigs = []
    for _, text in _top_level_declarations(code):
        match = _SIGNATURE_START.match(text)
        if match:
            sigs.append((match.group(1), text[match.end() :].strip()))
    return sigs


def parse_reference_program(name: str, code: str, where: str) -> dict:
    """Check one program's shape and build its record; ``where`` names it in errors."""
    top = _top_level_declarations(code)
    for n, line in top:
        if re.match(r"module(?![\w'])", line):
            raise UserError(f"{where}:{n}: a reference program has no 'module' header")
        if re.match(r"main(?![\w'])", line):
            raise UserError(f"{where}:{n}: a reference program defines no 'main'")
    sigs = _top_level_signatures(code)
    if not sigs:
        raise UserError(f"{where}: no top-level type signature (expected '{name} :: ...')")
    if len(sigs) > 1:
        names = ", ".join(s for s, _ in sigs)
        raise UserError(f"{where}: {len(sigs)} top-level type signatures ({names}); expected only '{name}'")
    sig_name, type_text = sigs[0]
    if sig_name != name:
        raise UserError(f"{where}: the signature names {sig_name!r} but the file is named for {name!r}")
    for n, line in top:
        if line.startswith("import "):
            continue
        first = _NAME.match(line)
        if not first or first.group(0) != name:
            raise UserError(
                f"{where}:{n}: a top-level line that is not part of {name!r}; put helpers in a 'where' clause"
            )
    try:
        arity = signature_arity(type_text)
    except ValueError as exc:
        raise UserError(f"{where}: {exc}") from None
    lines = code.splitlines()
    reflectable = bool(lines) and lines[0].strip() == REFLECTABLE_MARKER
    return {
        "id": content_id({"name": name, "code": code}),
        "entry_point": name,
        "code": code,
        "origin": "reference",
        "reflectable": reflectable,
        "arity": arity,
    }


def load_reference_programs(directory: str | Path | None = None) -> list[dict]:
    """Every ``*.hs`` reference program in ``directory`` (default: the shipped set), sorted by name."""
    root = Path(directory) if directory is not None else PROGRAMS_DIR
    if not root.is_dir():
        raise UserError(f"no directory of Haskell reference programs at {root}")
    paths = sorted(root.glob("*.hs"), key=lambda p: p.stem)
    if not paths:
        raise UserError(f"{root}: holds no .hs reference programs")
    out = []
    for path in paths:
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read Haskell reference program {path}: {exc}") from None
        if not re.fullmatch(r"[a-z_][A-Za-z0-9_']*", path.stem):
            raise UserError(f"{path}: the file name must be a Haskell function name plus '.hs'")
        out.append(parse_reference_program(path.stem, code, str(path)))
    return out


def split_reference_programs(programs: list[dict], split: str) -> list[dict]:
    """One half of ``programs`` in name order: "train" = even positions, "test" = odd."""
    if split not in REFERENCE_SPLITS:
        raise UserError(f"Haskell reference split must be one of {REFERENCE_SPLITS}, not {split!r}")
    ordered = sorted(programs, key=lambda p: p["entry_point"])
    parity = 0 if split == "train" else 1
    return [p for pos, p in enumerate(ordered) if pos % 2 == parity]
