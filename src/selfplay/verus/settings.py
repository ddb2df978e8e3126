"""How Verus is run: :class:`VerusSettings` (validated, from config), finding the
executable, and what the sandbox needs to run it.

Verus cannot be installed on the development machine; it runs inside the image built
from ``containers/verus.def``, which pins Verus 0.2026.09.16.7325eee with the Rust
toolchain that release names, and puts ``/opt/verus`` and ``/opt/cargo/bin`` on
``PATH`` with ``RUSTUP_HOME``/``CARGO_HOME`` set. The ``verus`` launcher finds its Rust
toolchain through rustup, so those variables (and ``VERUS_Z3_PATH`` when set) are
passed into the sandbox's otherwise empty environment (:func:`sandbox_env`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import MissingToolError, UserError

PINNED_VERSION = "0.2026.09.16.7325eee"
INSTALL_HINT = (
    f"Verus runs in the image built from containers/verus.def (Verus {PINNED_VERSION}); "
    "set verus.command or $SELFPLAY_VERUS to its verus executable"
)
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
HOST_ENV_PASSED = ("RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN", "VERUS_Z3_PATH")
"""Host variables copied into the sandbox when set (the launcher and Verus read them)."""

_OPTION_RE = re.compile(r"^--[a-z][a-z0-9-]*(=[A-Za-z0-9_.,:/+-]+)?$")
# Options that would check less than the whole file, change what is verified, or that
# the runner sets itself.
_REFUSED_OPTION_RE = re.compile(
    r"^--(no-verify|no-lifetime|no-vstd|no-builtin|verify-[a-z-]*|export|import|log[a-z-]*|record|"
    r"error-report|is-[a-z-]*|pervasive-path|smt-option|output-json|multiple-errors|rlimit|version|time[a-z-]*|"
    r"trace|profile[a-z-]*|debug)(=.*)?$"
)
_ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _default_command() -> tuple[str, ...]:
    raw = os.environ.get("SELFPLAY_VERUS")
    return tuple(shlex.split(raw)) if raw else ("verus",)


def _positive_number(name: str, value: Any) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < float("inf"):
        raise UserError(f"verus: {name} must be a positive number of seconds, got {value!r}")


def _int_at_least(name: str, value: Any, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise UserError(f"verus: {name} must be an integer >= {low}, got {value!r}")


@dataclass(frozen=True)
class VerusSettings:
    """How Verus is run.

    command          argv prefix of the Verus executable (default: $SELFPLAY_VERUS split like a
                     shell, else ``verus``); the file and options are appended
    timeout          wall seconds per file (the released code used 10 s); a timeout is a failure
    multiple_errors  Verus's ``--multiple-errors`` (the released code used 100)
    retries          further runs after a known Verus/rustc crash (a panic), before ``crash``
    rlimit           Verus's ``--rlimit`` (SMT resource limit per query), None for Verus's default
    output_json      pass ``--output-json`` (the verdict is then read from Verus's JSON summary)
    memory_mb        address-space limit of each process in the sandbox
    max_processes    process/thread limit of the sandbox user (rustc and z3 start many threads)
    workers          Verus processes at once (a private sandbox's workers)
    extra_args       further ``--option[=value]`` arguments (those that would verify less, or
                     that the runner sets itself, are refused)
    env              extra environment inside the sandbox, as (name, value) pairs
    """

    command: tuple[str, ...] = field(default_factory=_default_command)
    timeout: float = 10.0
    multiple_errors: int = 100
    retries: int = 2
    rlimit: int | None = None
    output_json: bool = True
    memory_mb: int = 8192
    max_processes: int = 512
    workers: int = 2
    extra_args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        command = self.command
        if isinstance(command, str):
            command = tuple(shlex.split(command))
        if (
            not isinstance(command, (tuple, list))
            or not command
            or not all(isinstance(c, str) and c for c in command)
        ):
            raise UserError(
                f"verus: command must name an executable (a string or a list), got {self.command!r}"
            )
        object.__setattr__(self, "command", tuple(command))
        _positive_number("timeout", self.timeout)
        _int_at_least("multiple_errors", self.multiple_errors, 0)
        _int_at_least("retries", self.retries, 0)
        if self.retries > 10:
            raise UserError(f"verus: retries must be at most 10, got {self.retries}")
        if self.rlimit is not None:
            _int_at_least("rlimit", self.rlimit, 1)
        if not isinstance(self.output_json, bool):
            raise UserError(f"verus: output_json must be true or false, got {self.output_json!r}")
        _int_at_least("memory_mb", self.memory_mb, 256)
        _int_at_least("max_processes", self.max_processes, 16)
        _int_at_least("workers", self.workers, 1)
        extra = tuple(self.extra_args) if isinstance(self.extra_args, (tuple, list)) else self.extra_args
        if not isinstance(extra, tuple) or not all(isinstance(a, str) for a in extra):
            raise UserError(f"verus: extra_args must be a list of strings, got {self.extra_args!r}")
        for arg in extra:
            if not _OPTION_RE.match(arg):
                raise UserError(f"verus: extra argument {arg!r} is not of the form --name or --name=value")
            if _REFUSED_OPTION_RE.match(arg):
                raise UserError(
                    f"verus: extra argument {arg!r} is not allowed (it would verify less, or the "
                    "runner sets it)"
                )
        object.__setattr__(self, "extra_args", extra)
        env = self.env
        if isinstance(env, Mapping):
            env = tuple(sorted(env.items()))
        if not isinstance(env, (tuple, list)) or not all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in env
        ):
            raise UserError(f"verus: env must map names to strings, got {self.env!r}")
        for key, value in env:
            if not _ENV_KEY_RE.match(key) or "\x00" in value:
                raise UserError(f"verus: env entry {key!r} is not a valid environment variable")
        object.__setattr__(self, "env", tuple((k, v) for k, v in env))

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> VerusSettings:
        """Build from a config mapping whose keys are the field names (all optional)."""
        cfg = dict(cfg or {})
        known = {
            "command",
            "timeout",
            "multiple_errors",
            "retries",
            "rlimit",
            "output_json",
            "memory_mb",
            "max_processes",
            "workers",
            "extra_args",
            "env",
        }
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise UserError(f"verus config: unknown key(s) {unknown}; known: {sorted(known)}")
        return cls(**{k: v for k, v in cfg.items() if v is not None})

    def verus_args(self, file_name: str) -> list[str]:
        """The arguments after the command: the file first, as the released code ran it."""
        args = [file_name, "--multiple-errors", str(self.multiple_errors)]
        if self.output_json:
            args.append("--output-json")
        if self.rlimit is not None:
            args += ["--rlimit", str(self.rlimit)]
        return args + list(self.extra_args)


def resolve_command(settings: VerusSettings | None = None) -> list[str]:
    """The command with its executable as an absolute path; a one-line MissingToolError
    when it cannot be found or run."""
    settings = settings or VerusSettings()
    prog = settings.command[0]
    if os.sep in prog:
        found = os.path.abspath(prog) if os.path.isfile(prog) and os.access(prog, os.X_OK) else None
    else:
        found = shutil.which(prog)
    if found is None:
        raise MissingToolError(
            f"Verus ('{prog}') is needed to verify PSV programs but was not found: {INSTALL_HINT}"
        )
    return [os.path.abspath(found), *settings.command[1:]]


def check_verus(settings: VerusSettings | None = None) -> list[str]:
    """The resolved command when Verus can be run; otherwise a one-line MissingToolError."""
    return resolve_command(settings)


def verus_available(settings: VerusSettings | None = None) -> bool:
    try:
        check_verus(settings)
    except MissingToolError:
        return False
    return True


def tool_dirs(settings: VerusSettings | None = None) -> list[str]:
    """Folders to show inside a sandbox (its ``tool_dirs``; sandboxed processes see only
    system directories, Python and these): those of the executable, as named and as
    resolved, of any other element of the command that is a file, and the Rust
    toolchain and z3 that the environment Verus gets names (``RUSTUP_HOME``,
    ``CARGO_HOME``, ``VERUS_Z3_PATH``'s folder; see :func:`sandbox_env`)."""
    settings = settings or VerusSettings()
    command = check_verus(settings)
    paths = [command[0], os.path.realpath(command[0])]
    paths += [p for p in command[1:] if os.sep in p and os.path.isfile(p)]
    folders = {os.path.dirname(f(p)) for p in paths for f in (os.path.abspath, os.path.realpath)}
    env = sandbox_env(settings, command)
    for key in ("RUSTUP_HOME", "CARGO_HOME"):
        if env.get(key) and os.path.isdir(env[key]):
            folders |= {os.path.abspath(env[key]), os.path.realpath(env[key])}
    if env.get("VERUS_Z3_PATH") and os.path.isfile(env["VERUS_Z3_PATH"]):
        folders |= {
            os.path.dirname(os.path.abspath(env["VERUS_Z3_PATH"])),
            os.path.dirname(os.path.realpath(env["VERUS_Z3_PATH"])),
        }
    return sorted(folders)


def sandbox_env(
    settings: VerusSettings | None = None, command: Sequence[str] | None = None
) -> dict[str, str]:
    """The environment Verus gets inside the sandbox (on top of the sandbox's scrubbed
    one): PATH with the executable's folder and ``$CARGO_HOME/bin`` first, the host's
    rustup/cargo/z3 variables when set, then the settings' own ``env``."""
    settings = settings or VerusSettings()
    command = list(command) if command is not None else check_verus(settings)
    path = [os.path.dirname(command[0])]
    if os.environ.get("CARGO_HOME"):
        path.append(os.path.join(os.environ["CARGO_HOME"], "bin"))
    env = {"PATH": ":".join([*dict.fromkeys(path), SAFE_PATH])}
    for key in HOST_ENV_PASSED:
        if os.environ.get(key):
            env[key] = os.environ[key]
    env.update(dict(settings.env))
    return env
