"""How Liquid Haskell is run: fixed limits, :class:`LiquidSettings` (from config) and
finding the command to run."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import UserError

CHECKER_OPTIONS: tuple[str, ...] = ("--reflection", "--ple")
PROOF_MODULE = "Language.Haskell.Liquid.ProofCombinators"
DEFAULT_MODULE_NAME = "Equiv"
DEFAULT_ALLOWED_IMPORTS: frozenset[str] = frozenset(
    {PROOF_MODULE, "Data.List", "Data.Char", "Data.Maybe", "Data.Bits", "Data.Ord"}
)
DEFAULT_TIMEOUT_S = 120.0
MAX_MODEL_OUTPUT_CHARS = 64 * 1024
MAX_FEEDBACK_CHARS = 2000
MAX_SPEC_TOKENS = 2000
OUTPUT_TAIL_CHARS = 4000
OUTPUT_HEAD_BYTES = 64 * 1024
OUTPUT_TAIL_BYTES = 192 * 1024
MISSING_REASON = "not checked: Liquid Haskell missing"

_OPTION_RE = re.compile(r"^--[A-Za-z][A-Za-z0-9-]*(=[A-Za-z0-9_.,:/+-]+)?$")
WEAKENING_OPTION_RE = re.compile(
    r"(?<![\w-])--(?:no-?[a-z][\w-]*|trust[\w-]*|check-var\w*|skip-module\w*|lazy\w*|"
    r"notermination|nototality)",
    re.IGNORECASE,
)
"""LH option text that would switch a check off. Refused in config, and also anywhere
in P, Q or the proof (see :mod:`.escape_hatches`)."""

_MODULE_RE = re.compile(r"^[A-Z][A-Za-z0-9_']*(\.[A-Z][A-Za-z0-9_']*)*$")


@dataclass(frozen=True)
class LiquidSettings:
    """How the checker is run.

    ``command``: argv prefix for LH (the file name is appended), None when not available
    (e.g. ``("liquid",)`` or ``("apptainer", "exec", "lh.sif", "liquid")``).
    ``timeout_s``: wall-clock limit. ``extra_options``: LH options fixed by config, written
    as extra LIQUID pragmas after the checker's own. ``module_name``: the checked module.
    ``allowed_imports``: modules P, Q and the proof may import. ``max_feedback_chars``:
    bound on error excerpts.
    """

    command: tuple[str, ...] | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra_options: tuple[str, ...] = ()
    module_name: str = DEFAULT_MODULE_NAME
    allowed_imports: frozenset[str] = DEFAULT_ALLOWED_IMPORTS
    max_feedback_chars: int = MAX_FEEDBACK_CHARS

    def __post_init__(self) -> None:
        if not _MODULE_RE.match(self.module_name):
            raise UserError(f"liquid: module_name {self.module_name!r} is not a Haskell module name")
        for opt in self.extra_options:
            if not _OPTION_RE.match(opt):
                raise UserError(f"liquid: extra option {opt!r} is not of the form --name or --name=value")
            if WEAKENING_OPTION_RE.search(opt):
                raise UserError(f"liquid: extra option {opt!r} would weaken the check; remove it from config")
        for mod in self.allowed_imports:
            if not _MODULE_RE.match(mod) or mod == "Prelude":
                raise UserError(f"liquid: allowed import {mod!r} is not allowed (bad name or Prelude)")
        if not self.timeout_s > 0:
            raise UserError(f"liquid: timeout_s must be positive, got {self.timeout_s!r}")
        if self.max_feedback_chars < 80:
            raise UserError("liquid: max_feedback_chars must be at least 80")

    @property
    def options(self) -> tuple[str, ...]:
        """The LIQUID options written into the file: the checker's, then config's."""
        out: list[str] = []
        for opt in CHECKER_OPTIONS + tuple(self.extra_options):
            if opt not in out:
                out.append(opt)
        return tuple(out)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> LiquidSettings:
        """Build from a config mapping with keys ``command`` (str, list or null),
        ``timeout_s``, ``extra_options``, ``module_name``, ``allowed_imports`` (replaces the
        default list; ProofCombinators is always allowed), ``max_feedback_chars``."""
        cfg = dict(cfg or {})
        known = {
            "command",
            "timeout_s",
            "extra_options",
            "module_name",
            "allowed_imports",
            "max_feedback_chars",
        }
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise UserError(f"liquid config: unknown key(s) {unknown}; known: {sorted(known)}")
        kwargs: dict[str, Any] = {"command": normalise_command(cfg.get("command"))}
        if cfg.get("timeout_s") is not None:
            kwargs["timeout_s"] = float(cfg["timeout_s"])
        if cfg.get("extra_options"):
            kwargs["extra_options"] = tuple(str(o) for o in cfg["extra_options"])
        if cfg.get("module_name"):
            kwargs["module_name"] = str(cfg["module_name"])
        if cfg.get("allowed_imports") is not None:
            kwargs["allowed_imports"] = frozenset(str(m) for m in cfg["allowed_imports"]) | {PROOF_MODULE}
        if cfg.get("max_feedback_chars") is not None:
            kwargs["max_feedback_chars"] = int(cfg["max_feedback_chars"])
        return cls(**kwargs)

    @classmethod
    def coerce(cls, value: LiquidSettings | Mapping[str, Any] | None) -> LiquidSettings:
        if isinstance(value, LiquidSettings):
            return value
        return cls.from_config(value)


def normalise_command(command: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """A config command (a string split like a shell would, or a list) as a tuple; None
    or empty means 'not available'."""
    if command is None:
        return None
    if isinstance(command, str):
        parts = shlex.split(command)
    else:
        parts = [str(c) for c in command]
    return tuple(parts) or None


def resolve_command(command: str | Sequence[str] | None) -> list[str] | None:
    """The argv to run, with its program resolved to a path, or None when the program
    cannot be found (or is not executable)."""
    argv = normalise_command(command)
    if not argv:
        return None
    prog = argv[0]
    if os.sep in prog:
        if not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
            return None
        found = prog
    else:
        found = shutil.which(prog)
        if found is None:
            return None
    return [found, *argv[1:]]


_PACKAGE_ENV_RE = re.compile(r"""-package-(env|db)[= ]\s*['"]?(/[^\s'"]+)""")


def tool_dirs(argv: Sequence[str]) -> list[str]:
    """Folders the sandbox must show for ``argv`` to run (a Sandbox's ``tool_dirs``;
    sandboxed processes see only system directories, Python and these): the program's,
    as named and as resolved, and, when the program is a script handing GHC a package
    environment or database by absolute path (``-package-env FILE``, as the haskell
    image's ``liquid`` wrapper does), the folder of that file, the folder of each
    database it names, and the folder of each database named directly."""
    if not argv:
        return []
    prog = argv[0]
    folders = {os.path.dirname(os.path.abspath(prog)), os.path.dirname(os.path.realpath(prog))}
    try:
        with open(prog, "rb") as fh:
            head = fh.read(64 * 1024)
    except OSError:
        head = b""
    if head.startswith(b"#!"):
        for kind, path in _PACKAGE_ENV_RE.findall(head.decode("utf-8", "replace")):
            if kind == "db":
                if os.path.isdir(path):
                    folders.add(os.path.dirname(os.path.normpath(path)))
                continue
            if not os.path.isfile(path):
                continue
            folders.add(os.path.dirname(path))
            with open(path, encoding="utf-8", errors="replace") as env:
                for line in env:
                    words = line.split()
                    if (
                        len(words) == 2
                        and words[0] == "package-db"
                        and os.path.isabs(words[1])
                        and os.path.isdir(words[1])
                    ):
                        folders.add(os.path.dirname(os.path.normpath(words[1])))
    return sorted(folders)
