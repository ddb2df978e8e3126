"""Verifying many Dafny programs at once, confined, with exact per-program verdicts.

The verifier
------------
The PSV track's verifier here is Dafny 2.3 (Debian's ``dafny`` package, a Mono
program) driven with the z3 4.8.5 binary of the PyPI wheel ``z3-solver==4.8.5.0``
(newer z3 builds reject a prover option Dafny 2.3 always sends).  One Dafny run is::

    dafny /compile:0 /trace /timeLimit:T /vcsCores:1 /proverOpt:PROVER_PATH=<z3> [/noCheating:1] FILE...

What it prints (measured on this machine; every line below is Dafny's own):

* always a header ``Dafny 2.3.0.10506`` on stdout; stderr stays empty unless Mono
  itself crashes (then an ``[ERROR] FATAL UNHANDLED EXCEPTION`` trace, exit 1);
* parse errors: ``F(l,c): Error: ...`` lines, then ``N parse errors detected in F``,
  exit 2.  Files are parsed in order and Dafny stops at the first file that has
  parse errors, so later files of the same run are never looked at;
* resolution and type errors: ``F(l,c): Error: ...`` for every file, then
  ``N resolution/type errors detected in F`` (one file) or ``... in the program``
  (several), exit 2;
* verification (with ``/trace``): per Boogie implementation a line
  ``Verifying Impl$$_module.__default.Max ...`` and then
  ``  [0.263 s, 3 proof obligations]  verified`` (or ``error``, ``errors``, ``timed out``,
  ``out of memory``, ``out of resource``, ``inconclusive``); failed checks follow as
  ``F(l,c): Error BP5003: ...`` and ``F(l,c): Related location: ...`` lines, a time
  limit as ``F(l,c): Verification of 'Impl$$...' timed out after T seconds``;
  the last line is ``Dafny program verifier finished with V verified, E errors``
  (``, N time out`` etc. appended when nonzero); exit 0 when E and the others are
  zero, else 4.  Implementations with nothing to prove (a method without
  specification) and those marked ``{:verify false}`` are not listed at all: a
  file whose only method is ``{:verify false}`` reads ``0 verified, 0 errors``,
  exit 0;
* a prover that cannot start: ``Fatal Error: ProverException: ...``, no summary,
  exit 4.  A wrong z3 version: ``Prover error: ... unknown parameter
  'model_compress'`` and yet a normal-looking summary - the reason every run is
  checked for such lines, not only for its summary.

Boogie names carry the module, the class (``__default`` for module-level
declarations) and the member, with ``_`` written ``__``, ``'`` written ``_k`` and
``?`` written ``_q``; a named module ``M`` appears as ``_<n>_M``.  Verdicts name
each implementation by its declaration (``Max``, ``C.Inc``; ``Fib/wellformed`` for
a well-formedness check, ``N/override`` for a trait-override check).

Batching
--------
One Dafny process for one small method takes 0.8-1 s here (Mono start, translation,
a z3 started and fed Dafny's prelude), while each further small job in the same
process adds 0.15-0.3 s (measured in bench/results/dafny.json).  So jobs are
verified many per process: each job
becomes its own file ``j<k>.dfy`` holding ``module SelfplayJob<k> {`` + the job's
text + ``}`` (the text is not changed; its lines are shifted down by one, which
the verdict undoes), and all files go on one command line.  Dafny then treats
them as one program of independent modules: without an ``import`` no job can see
another's declarations, and every message names the file it is about, every
trace line the module.  A job is only wrapped when that is safe: its comments,
strings and character literals must be well formed and its braces balanced (so
it cannot close its module), and it must not use ``module``, ``import``,
``include``, ``refines``, ``export``, ``opened`` or the wrapper's module names.
Other jobs, and every job when ``batch=False``, run one per process on their
text as is (file ``program.dfy``), which is also how a batch of one is run.

A parse or resolution error stops Dafny before it verifies anything, for the
whole run.  The jobs named by the error lines are taken out and run alone (so
their verdict, messages included, is exactly what a run of their own gives), and
the others are run again together.  A run that crashes, times out, is killed, or
whose output does not add up (trace outcomes against the summary counts, errors
against failed implementations, exit code against both) has its suspect run
alone and the rest again, or is split in halves when no job is suspected; a job
alone that still fails that way gets status ``crash`` (or ``timeout``) with the
reason.  The suspect is known because Dafny 2.3 verifies the modules one after
another in file order, each as a Boogie program of its own (it announces each
with ``Running abstract interpretation...`` and starts a prover for it), while an
implementation's lines only appear once it is done.  That also means a
batch-mate's declarations are never in the prover's context, so batched verdicts
equal one-at-a-time verdicts (tests/test_dafny_runner.py checks this on a mixed
batch; a proof close to its time limit can land on either side in both modes).

Confinement
-----------
Every Dafny process runs through :class:`selfplay.sandbox.Sandbox`
(``run_command``): network, PID and mount namespaces, an unprivileged uid, a
private tmpfs work directory as HOME, a scrubbed environment (Mono needs nothing
more), rlimits (address space ``memory_mb`` per process, Mono's threads counted
in the process limit) and a wall-clock timeout.  The sandbox shows only system
directories (Mono and Debian's Dafny live under /usr, Mono's configuration in
/etc/mono), Python and its ``tool_dirs``: a private sandbox gets the folders of
Dafny and z3 (:func:`tool_dirs`).  A small shell driver checks that both
executables are reachable inside the sandbox before starting Dafny.

Escape hatches are not judged here: ``/noCheating:1`` (on by default) makes
``assume`` an error and refuses bodiless methods and lemmas (as a parse error:
``a method with an ensures clause must have a body, unless given the :axiom
attribute``), but ``{:axiom}``, ``{:verify false}``, ``decreases *`` and changes to a
spec pass; a bodiless target (a spec checked on its own) needs
``no_cheating=False``.  Whether the target was verified is for the caller to read
from ``implementations``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from ..errors import MissingToolError
from ..specverify.runs import (
    MAX_TEXT_CHARS,  # noqa: F401 (the limit, read here by callers)
    add_stats,
    borrowed_sandbox,
    early_refusal,
    fill_missing,
)
from .source import lex

INSTALL_HINT = "install the Debian package `dafny` (apt-get install dafny)"
Z3_HINT = "pip install z3-solver==4.8.5.0"
Z3_VERSION = "4.8.5"
STATUSES = ("verified", "failed", "parse_error", "resolution_error", "timeout", "crash")
IMPL_STATUSES = ("verified", "error", "timeout", "inconclusive")
MODULE_PREFIX = "SelfplayJob"
SOLO_FILE = "program.dfy"
MAX_MESSAGES = 50
MAX_MESSAGE_CHARS = 500
MIN_SPLIT_JOBS = 4
OUTPUT_KB = 2048
_NO_TOOL_EXIT = 97

# Boogie's per-implementation outcomes, as the verdict names them.
_OUTCOMES = {
    "verified": "verified",
    "error": "error",
    "timed out": "timeout",
    "out of resource": "timeout",
    "out of memory": "inconclusive",
    "inconclusive": "inconclusive",
}
# Summary counters (after "V verified, E errors") and the trace outcome each counts.
_COUNTERS = {
    "inconclusive": "inconclusive",
    "time out": "timed out",
    "out of memory": "out of memory",
    "out of resource": "out of resource",
}
_KIND_SUFFIX = {"Impl": "", "CheckWellformed": "/wellformed", "OverrideCheck": "/override"}

_HEADER_RE = re.compile(r"^Dafny (\d+\.\d+\S*)$")
_VERIFYING_RE = re.compile(r"^Verifying (\S+) \.\.\.$")
_OUTCOME_RE = re.compile(
    r"^\s+\[([\d.]+) s, \d+ proof obligations?\]\s+"
    r"(verified|errors?|timed out|out of resource|out of memory|inconclusive)\s*$"
)
_POSITION_RE = re.compile(r"^([^\s(][^()]*)\((-?\d+),(-?\d+)\): (.*)$")
_SUMMARY_RE = re.compile(
    r"^Dafny program verifier finished with (\d+) verified, (\d+) errors?((?:, \d+ [a-z ]+?)*)$"
)
_COUNTER_RE = re.compile(r", (\d+) (inconclusive|time outs?|out of memory|out of resource)")
_PARSE_FAIL_RE = re.compile(r"^\d+ parse errors detected in (.+)$")
_RESOLVE_FAIL_RE = re.compile(r"^\d+ resolution/type errors detected in (.+)$")
_BOOGIE_FAIL_RE = re.compile(r"^\d+ (?:name resolution|type checking) errors detected in .+$")
_BOOGIE_NAME_RE = re.compile(r"\b([A-Za-z]+)\$\$([A-Za-z0-9_.]+)")
# Lines that mean Dafny, Mono or the prover broke down, whatever the summary says.
_CRASH_MARKERS = (
    "Fatal Error",
    "Prover error",
    "SKIPPED because of internal error",
    "Prover died",
    "FATAL UNHANDLED EXCEPTION",
    "Unhandled Exception",
    "*** Error",
    "Exception:",
)
# Of those, the ones no program can cause: the tools themselves do not work.
_ENVIRONMENT_MARKERS = (
    "Unable to start the process",
    "unknown parameter",
    "*** Error",
    "Cannot open assembly",
)


# ---------------------------------------------------------------- settings and tools


def _default_dafny() -> str:
    return os.environ.get("SELFPLAY_DAFNY") or "dafny"


@dataclass(frozen=True)
class DafnySettings:
    """How Dafny is run.

    dafny            the Dafny executable (default: $SELFPLAY_DAFNY, else ``dafny`` on PATH)
    z3               the z3 binary Dafny drives (default: the one the z3-solver wheel installs;
                     it must be z3 4.8.5)
    time_limit       Dafny's ``/timeLimit``: prover seconds per implementation
    run_timeout      wall seconds for a Dafny process verifying one job
    per_job_timeout  wall seconds added for every further job of a batched process
    memory_mb        address-space limit of each process (Mono, z3)
    no_cheating      pass ``/noCheating:1`` (a job's own ``no_cheating`` overrides it)
    batch_size       most jobs in one Dafny process
    workers          Dafny processes at once (the private sandbox's workers)
    """

    dafny: str = field(default_factory=_default_dafny)
    z3: str | None = None
    time_limit: int = 20
    run_timeout: float = 120.0
    per_job_timeout: float = 40.0
    memory_mb: int = 2048
    no_cheating: bool = True
    batch_size: int = 24
    workers: int = 2

    def __post_init__(self) -> None:
        if not isinstance(self.dafny, str) or not self.dafny:
            raise ValueError("dafny must name an executable")
        if self.z3 is not None and (not isinstance(self.z3, str) or not self.z3):
            raise ValueError("z3 must be a path or None")
        for name in ("time_limit", "memory_mb", "batch_size", "workers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        for name in ("run_timeout", "per_job_timeout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < float("inf"):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    def timeout_for(self, jobs: int) -> float:
        """Wall seconds allowed for a process verifying ``jobs`` jobs."""
        return float(self.run_timeout) + float(self.per_job_timeout) * max(0, jobs - 1)


def find_dafny(command: str | None = None) -> str:
    """Absolute path of the Dafny executable; MissingToolError naming the package when absent."""
    command = command or _default_dafny()
    path = shutil.which(command)
    if path is None:
        raise MissingToolError(
            f"Dafny ('{command}') is needed to verify PSV programs but was not found: "
            f"{INSTALL_HINT}, or set $SELFPLAY_DAFNY to a Dafny 2.3 executable"
        )
    return os.path.abspath(path)


def wheel_z3() -> str | None:
    """The z3 executable installed by the z3-solver wheel (its data scripts), or None."""
    try:
        dist = metadata.distribution("z3-solver")
    except metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if str(entry).replace("\\", "/").endswith("bin/z3"):
            path = os.path.abspath(str(dist.locate_file(entry)))
            if os.path.isfile(path):
                return path
    return None


_z3_lock = threading.Lock()
_z3_versions: dict[tuple[str, float], str] = {}


def z3_version(path: str) -> str:
    """The version z3 reports of itself (``4.8.5``); a trusted host-side query."""
    try:
        key = (path, os.stat(path).st_mtime)
    except OSError:
        raise MissingToolError(f"z3 not found at {path}: {Z3_HINT}") from None
    with _z3_lock:
        if key not in _z3_versions:
            try:
                out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
            except (OSError, subprocess.SubprocessError) as exc:
                raise MissingToolError(
                    f"z3 at {path} does not run ({type(exc).__name__}): {Z3_HINT}"
                ) from None
            m = re.search(r"Z3 version (\d+\.\d+\.\d+)", out)
            _z3_versions[key] = m.group(1) if m else "unknown"
        return _z3_versions[key]


def resolve_z3(settings: DafnySettings | None = None) -> str:
    """Absolute path of a z3 4.8.5 for Dafny; MissingToolError naming the wheel otherwise."""
    settings = settings or DafnySettings()
    path = settings.z3 or wheel_z3()
    if path is None:
        raise MissingToolError(
            f"Dafny 2.3 needs the z3 4.8.5 binary of the PyPI wheel, which is not installed: {Z3_HINT}"
        )
    path = os.path.abspath(path)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise MissingToolError(f"z3 not found (or not executable) at {path}: {Z3_HINT}")
    version = z3_version(path)
    if version != Z3_VERSION:
        raise MissingToolError(
            f"z3 at {path} is version {version}, but Dafny 2.3 needs {Z3_VERSION} "
            f"(newer ones reject its prover options): {Z3_HINT}"
        )
    return path


def check_dafny(settings: DafnySettings | None = None) -> tuple[str, str]:
    """(Dafny path, z3 path) when both are usable; otherwise a one-line MissingToolError."""
    settings = settings or DafnySettings()
    return find_dafny(settings.dafny), resolve_z3(settings)


def tool_dirs(settings: DafnySettings | None = None) -> list[str]:
    """The folders of Dafny and z3 (as named and as resolved), for a Sandbox's ``tool_dirs``:
    the sandbox shows little of the host (e.g. not a checkout's virtualenv, where z3 may live)."""
    dafny, z3 = check_dafny(settings)
    return sorted(
        {os.path.dirname(os.path.realpath(p)) for p in (dafny, z3)}
        | {os.path.dirname(p) for p in (dafny, z3)}
    )


def dafny_available(settings: DafnySettings | None = None) -> bool:
    try:
        check_dafny(settings)
    except MissingToolError:
        return False
    return True


# ---------------------------------------------------------------- jobs and verdicts


@dataclass(frozen=True)
class DafnyJob:
    """One program to verify: ``text`` is a whole Dafny file.

    no_cheating   None: the settings' choice; False is needed for a spec checked on its
                  own (its target has no body, which ``/noCheating:1`` refuses)
    """

    name: str
    text: str
    no_cheating: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError("a DafnyJob's name must be a str")
        if not isinstance(self.text, str):
            raise TypeError("a DafnyJob's text must be a str (the Dafny program)")
        if self.no_cheating is not None and not isinstance(self.no_cheating, bool):
            raise TypeError("no_cheating must be True, False or None")

    @classmethod
    def of(cls, item: DafnyJob | Sequence[Any]) -> DafnyJob:
        """Accept a DafnyJob or a (name, text[, no_cheating]) tuple."""
        if isinstance(item, DafnyJob):
            return item
        return cls(*item)


@dataclass
class DafnyVerdict:
    """What Dafny said about one job.

    status           'verified' (Dafny accepted the file: no errors, no time-outs),
                     'failed' (verification errors, or an inconclusive prover),
                     'parse_error', 'resolution_error', 'timeout' (a time limit, no
                     errors) or 'crash' (Dafny, the prover or the sandbox broke down, or
                     the output could not be trusted; ``detail`` says why)
    verified         implementations Dafny reported verified for this job
    errors           error reports for this job (as Dafny counts them)
    implementations  declaration -> 'verified' | 'error' | 'timeout' | 'inconclusive',
                     for every implementation Dafny verified; skipped ones
                     (``{:verify false}``, nothing to prove) are absent
    messages         Dafny's error, warning and related-location lines about this job,
                     positions relative to the job's own text (file ``program.dfy``)
    seconds          wall time spent on this job (its share of a batched run)
    detail           the reason for 'crash' and for a wall-clock 'timeout'
    """

    name: str
    status: str
    verified: int = 0
    errors: int = 0
    implementations: dict[str, str] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    seconds: float = 0.0
    detail: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown Dafny verdict status {self.status!r}")

    def proved(self, declaration: str) -> bool:
        """True when Dafny accepted the file and verified ``declaration``'s body itself."""
        return self.status == "verified" and self.implementations.get(declaration) == "verified"

    def outcome(self) -> tuple:
        """Everything but timing and the free-text detail: equal for equal verdicts."""
        return (
            self.status,
            self.verified,
            self.errors,
            tuple(sorted(self.implementations.items())),
            tuple(self.messages),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "verified": self.verified,
            "errors": self.errors,
            "implementations": dict(self.implementations),
            "messages": list(self.messages),
            "seconds": round(float(self.seconds), 6),
            "detail": self.detail,
        }


# ---------------------------------------------------------------- wrapping jobs in modules

_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_?']*")
_ALONE_WORDS = frozenset({"module", "import", "include", "refines", "export", "opened"})
_ODD_CHAR_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029\ufeff]")


def batch_problem(text: str) -> str | None:
    """Why ``text`` must be verified in a process of its own; None when it can be wrapped."""
    if _ODD_CHAR_RE.search(text):
        return "contains control or invisible characters"
    lexed = lex(text)  # the screen's lexer: comments and literals read as Dafny reads them
    if lexed.unterminated:
        return f"leaves a {lexed.unterminated.replace('_', ' ')} open"
    code = lexed.masked()
    depth = 0
    for ch in code:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return "closes a brace it did not open"
    if depth:
        return "leaves a brace open"
    for m in _WORD_RE.finditer(code):
        word = m.group(0)
        if word in _ALONE_WORDS:
            return f"uses '{word}' (modules or file inclusion)"
        if word.startswith(MODULE_PREFIX):
            return f"uses the name {word} (reserved for batched modules)"
    return None


def wrap(text: str, index: int) -> str:
    """The file text of job ``index`` in a batch: its own module, the job's lines one lower."""
    return f"module {MODULE_PREFIX}{index} {{\n{text}\n}}\n"


# ---------------------------------------------------------------- reading Dafny's output


def _unescape(name: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(name):
        pair = name[i : i + 2]
        if pair in ("__", "_k", "_q"):
            out.append({"__": "_", "_k": "'", "_q": "?"}[pair])
            i += 2
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def split_boogie_name(name: str) -> tuple[str, str] | None:
    """(module, declaration key) of a Boogie implementation name, or None when it is not one.

    ``Impl$$_module.__default.Max`` -> ('', 'Max');
    ``CheckWellformed$$_3_SelfplayJob3.C.F`` -> ('SelfplayJob3', 'C.F/wellformed').
    """
    m = _BOOGIE_NAME_RE.fullmatch(name)
    if not m:
        return None
    kind, path = m.groups()
    parts = path.split(".")
    if len(parts) < 2 or not all(parts):
        return None
    module = "" if parts[0] == "_module" else _unescape(re.sub(r"^_\d+_", "", parts[0]))
    members = [_unescape(p) for p in parts[1:-1] if p != "__default"] + [_unescape(parts[-1])]
    return module, ".".join(members) + _KIND_SUFFIX.get(kind, "/" + kind.lower())


@dataclass
class _Impl:
    job: int | None
    key: str
    raw: str | None = None  # Boogie's outcome text; None while it runs
    seconds: float = 0.0


@dataclass
class RunReport:
    """One Dafny run's output, read line by line and attributed to jobs.

    phase        'verification' (ended with the summary), 'parse' or 'resolution'
                 (ended with Dafny's count of such errors) or 'broken'
    culprits     jobs named by errors before verification started
    suspects     jobs being verified when something went wrong
    modules      modules whose verification had started (Dafny verifies the modules of a
                 batch one after another, in file order, each as its own Boogie program)
    problems     reasons not to trust the run
    environment  set when the tools themselves do not work (no job is to blame)
    """

    phase: str = "broken"
    header: str | None = None
    summary: dict[str, int] | None = None
    impls: list[_Impl] = field(default_factory=list)
    messages: dict[int, list[str]] = field(default_factory=dict)
    errors: dict[int, int] = field(default_factory=dict)
    culprits: set[int] = field(default_factory=set)
    suspects: set[int] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    environment: str | None = None
    modules: int = 0

    def job_impls(self, job: int) -> list[_Impl]:
        return [impl for impl in self.impls if impl.job == job]


def _clean_text(text: str, modules: dict[str, int]) -> str:
    """A message with Boogie names replaced by declaration keys and cut to a bounded length."""

    def named(m: re.Match) -> str:
        split = split_boogie_name(m.group(0))
        if split is None:
            return m.group(0)
        module, key = split
        return key if module in modules or not module else f"{module}.{key}"

    text = _BOOGIE_NAME_RE.sub(named, text)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def parse_output(
    stdout: str,
    stderr: str,
    exit_code: int | None,
    files: dict[str, tuple[int, int]],
    modules: dict[str, int],
    solo: int | None = None,
) -> RunReport:
    """Read one run's output.

    files    file name -> (job, lines the wrapper added above the job's text)
    modules  wrapper module name -> job (empty for a run of one unwrapped job)
    solo     the job of a one-job run: it owns everything, whatever the module or file
    """
    rep = RunReport()
    current: _Impl | None = None
    seen: set[tuple[int | None, str]] = set()
    lines = stdout.splitlines()

    def problem(why: str) -> None:
        rep.problems.append(why[:300])
        if current is not None and current.job is not None:
            rep.suspects.add(current.job)

    for raw_line in lines:
        line = raw_line.rstrip("\r")
        m = _HEADER_RE.match(line)
        if m and rep.header is None:
            rep.header = m.group(1)
            continue
        if line == "Running abstract interpretation...":
            rep.modules += 1
            continue
        m = _VERIFYING_RE.match(line)
        if m:
            if current is not None and current.raw is None:
                problem(f"no outcome for {current.key}")
            split = split_boogie_name(m.group(1))
            job = solo
            key = m.group(1)
            if split is not None:
                module, key = split
                if solo is None:
                    job = modules.get(module)
                elif module:
                    key = f"{module}.{key}"
            current = _Impl(job, key)
            rep.impls.append(current)
            if job is None:
                problem(f"implementation {m.group(1)} belongs to no job of this run")
            elif (job, key) in seen:
                problem(f"implementation {key} reported twice")
            seen.add((job, key))
            continue
        m = _OUTCOME_RE.match(line)
        if m:
            if current is None or current.raw is not None:
                problem("an outcome line without its implementation")
            else:
                # Boogie writes "errors" when one implementation failed more than one check
                current.raw = "error" if m.group(2) == "errors" else m.group(2)
                current.seconds = float(m.group(1))
            continue
        m = _POSITION_RE.match(line)
        if m:
            name, row, col, text = m.groups()
            if name in files:
                job, shift = files[name]
                shown = SOLO_FILE
            elif solo is not None:
                job, shift, shown = solo, 0, name
            else:
                problem(f"a message about {name}, which is no job's file")
                continue
            text = _clean_text(text, modules)
            rep.messages.setdefault(job, []).append(f"{shown}({int(row) - shift},{col}): {text}")
            if text.startswith("Error"):
                rep.errors[job] = rep.errors.get(job, 0) + 1
                if not rep.impls:
                    rep.culprits.add(job)
            continue
        m = _SUMMARY_RE.match(line)
        if m:
            counts = {"verified": int(m.group(1)), "errors": int(m.group(2))}
            for num, what in _COUNTER_RE.findall(m.group(3) or ""):
                counts[what.rstrip("s") if what.startswith("time") else what] = int(num)
            rep.summary = counts
            continue
        m = _PARSE_FAIL_RE.match(line) or _RESOLVE_FAIL_RE.match(line)
        if m:
            if m.group(1) in files:
                rep.culprits.add(files[m.group(1)][0])
            continue
        if _BOOGIE_FAIL_RE.match(line):
            problem(f"Dafny produced a Boogie program that Boogie rejects: {line}")
            continue
        for marker in _CRASH_MARKERS:
            if marker in line:
                problem(line)
                if any(env in line for env in _ENVIRONMENT_MARKERS):
                    rep.environment = line[:300]
                break
    if current is not None and current.raw is None:
        problem(f"no outcome for {current.key}")
    for line in stderr.splitlines():
        if any(marker in line for marker in _CRASH_MARKERS) or "Exception" in line:
            rep.problems.append(f"stderr: {line[:300]}")
            if any(env in line for env in _ENVIRONMENT_MARKERS):
                rep.environment = line[:300]
            break

    last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
    if _SUMMARY_RE.match(last):
        rep.phase = "verification"
    elif _PARSE_FAIL_RE.match(last):
        rep.phase = "parse"
    elif _RESOLVE_FAIL_RE.match(last):
        rep.phase = "resolution"
    if rep.header is None:
        rep.problems.append("no Dafny header line")
    if rep.phase in ("parse", "resolution"):
        if exit_code != 2:
            rep.problems.append(f"{rep.phase} errors but exit code {exit_code}")
        if not rep.culprits:
            rep.problems.append(f"{rep.phase} errors that name no job")
    elif rep.phase == "verification":
        rep.problems.extend(_consistency(rep, exit_code))
    else:
        rep.problems.insert(
            0,
            "Dafny stopped without a summary"
            + (f" (exit code {exit_code})" if exit_code is not None else ""),
        )
    return rep


def _consistency(rep: RunReport, exit_code: int | None) -> list[str]:
    """Why a finished run's trace, messages, summary and exit code disagree (empty: they agree)."""
    summary = rep.summary or {}
    raws = [impl.raw for impl in rep.impls]
    found = []
    if summary.get("verified") != raws.count("verified"):
        found.append(f"summary says {summary.get('verified')} verified, the trace {raws.count('verified')}")
    if summary.get("errors") != sum(rep.errors.values()):
        found.append(f"summary says {summary.get('errors')} errors, the messages {sum(rep.errors.values())}")
    for counter, raw in _COUNTERS.items():
        if summary.get(counter, 0) != raws.count(raw):
            found.append(f"summary says {summary.get(counter, 0)} {counter}, the trace {raws.count(raw)}")
    clean = not any(summary.get(k, 0) for k in ("errors", *_COUNTERS))
    if exit_code != (0 if clean else 4):
        found.append(f"exit code {exit_code} does not match the summary")
    for job in {impl.job for impl in rep.impls} | set(rep.errors):
        if job is None:
            continue
        outcomes = {impl.raw for impl in rep.job_impls(job)}
        if "error" in outcomes and not rep.errors.get(job):
            found.append("a failed implementation without an error message")
        if rep.errors.get(job) and outcomes <= {"verified"}:
            found.append("error messages for a job whose implementations all verified")
    return found


def verdict_from_report(rep: RunReport, job: int, name: str, seconds: float) -> DafnyVerdict:
    """The verdict of ``job`` in a run whose report is trusted (no problems)."""
    messages = rep.messages.get(job, [])
    if len(messages) > MAX_MESSAGES:
        messages = messages[:MAX_MESSAGES] + [f"... {len(messages) - MAX_MESSAGES} more lines"]
    errors = rep.errors.get(job, 0)
    if rep.phase in ("parse", "resolution"):
        status = "parse_error" if rep.phase == "parse" else "resolution_error"
        return DafnyVerdict(name, status, 0, errors, {}, messages, seconds)
    impls = {impl.key: _OUTCOMES[impl.raw] for impl in rep.job_impls(job) if impl.raw is not None}
    outcomes = set(impls.values())
    detail = None
    if errors or "error" in outcomes:
        status = "failed"
    elif "timeout" in outcomes:
        status = "timeout"
        detail = "an implementation reached the prover's time limit"
    elif "inconclusive" in outcomes:
        status, detail = "failed", "the prover was inconclusive (or ran out of memory)"
    else:
        status = "verified"
    verified = sum(1 for v in impls.values() if v == "verified")
    return DafnyVerdict(name, status, verified, errors, impls, messages, seconds, detail)


# ---------------------------------------------------------------- running


def _driver(dafny: str, z3: str) -> str:
    """The shell script run confined: check both tools are reachable, then become Dafny."""

    def q(text: str) -> str:
        return "'" + text.replace("'", "'\\''") + "'"

    lines = ["set -u"]
    for what, path in (("z3", z3), ("Dafny", dafny)):
        lines.append(
            f"if [ ! -x {q(path)} ]; then echo {q(f'cannot execute {what} ({path}) inside the sandbox')} "
            f">&2; exit {_NO_TOOL_EXIT}; fi"
        )
    lines.append(f'exec {q(dafny)} "$@"')
    return "\n".join(lines) + "\n"


def dafny_flags(settings: DafnySettings, z3: str, no_cheating: bool) -> list[str]:
    flags = [
        "/compile:0",
        "/trace",
        f"/timeLimit:{settings.time_limit}",
        "/vcsCores:1",
        f"/proverOpt:PROVER_PATH={z3}",
    ]
    if no_cheating:
        flags.append("/noCheating:1")
    return flags


def _halves(unit: list[int]) -> list[list[int]]:
    mid = len(unit) // 2
    return [unit[:mid], unit[mid:]]


class _Runner:
    """Runs units (lists of job indices) and turns each result into verdicts and follow-up units."""

    def __init__(self, jobs: list[DafnyJob], settings: DafnySettings, sandbox: Any, dafny: str, z3: str):
        from ..sandbox import SandboxLimits

        self.jobs = jobs
        self.settings = settings
        self.sandbox = sandbox
        self.z3 = z3
        self.driver = _driver(dafny, z3)
        self.limits = SandboxLimits(
            memory_mb=settings.memory_mb, max_processes=128, max_open_files=256, max_file_mb=16
        )
        self.lock = threading.Lock()
        self.stats = {"processes": 0, "batched_processes": 0}

    def no_cheating(self, k: int) -> bool:
        own = self.jobs[k].no_cheating
        return self.settings.no_cheating if own is None else own

    def execute(self, unit: list[int]) -> tuple[dict[int, DafnyVerdict], list[list[int]]]:
        solo = len(unit) == 1
        if solo:
            k = unit[0]
            files = {SOLO_FILE: self.jobs[k].text}
            where = {SOLO_FILE: (k, 0)}
            modules: dict[str, int] = {}
        else:
            files = {f"j{k}.dfy": wrap(self.jobs[k].text, k) for k in unit}
            where = {f"j{k}.dfy": (k, 1) for k in unit}
            modules = {f"{MODULE_PREFIX}{k}": k for k in unit}
        argv = ["/bin/sh", "run.sh", *dafny_flags(self.settings, self.z3, self.no_cheating(unit[0])), *where]
        files["run.sh"] = self.driver
        timeout = self.settings.timeout_for(len(unit))
        result = self.sandbox.run_command(
            argv, timeout, files=files, limits=self.limits, max_output_kb=OUTPUT_KB
        )
        with self.lock:
            self.stats["processes"] += 1
            self.stats["batched_processes"] += 0 if solo else 1
        return self._interpret(unit, result, where, modules, timeout)

    def _crash_all(self, unit: list[int], detail: str, seconds: float) -> dict[int, DafnyVerdict]:
        share = seconds / len(unit)
        return {k: DafnyVerdict(self.jobs[k].name, "crash", seconds=share, detail=detail) for k in unit}

    def _interpret(
        self,
        unit: list[int],
        result: Any,
        where: dict[str, tuple[int, int]],
        modules: dict[str, int],
        timeout: float,
    ) -> tuple[dict[int, DafnyVerdict], list[list[int]]]:
        solo = len(unit) == 1
        stdout, stderr = result.text("stdout"), result.text("stderr")
        if result.status == "error":
            why = f"the sandbox could not run Dafny: {result.detail or 'unknown reason'}"
            return (self._crash_all(unit, why, result.seconds), []) if solo else ({}, _halves(unit))
        if result.status == "exited" and result.exit_code == _NO_TOOL_EXIT:
            why = stderr.strip().splitlines()[-1][:300] if stderr.strip() else "Dafny or z3 is not reachable"
            return self._crash_all(unit, why, result.seconds), []
        rep = parse_output(stdout, stderr, result.exit_code, where, modules, unit[0] if solo else None)
        if rep.environment is not None:
            return self._crash_all(unit, f"Dafny or z3 does not work: {rep.environment}", result.seconds), []
        if result.stdout_truncated:
            rep.problems.append(f"output longer than {OUTPUT_KB} KiB")
        if result.status != "exited":
            what = {"timeout": f"Dafny did not finish within {timeout:.0f} s (wall clock)"}.get(
                result.status, f"Dafny was killed ({result.detail or result.signal or 'no reason given'})"
            )
            if solo:
                status = "timeout" if result.status == "timeout" else "crash"
                k = unit[0]
                return {k: DafnyVerdict(self.jobs[k].name, status, seconds=result.seconds, detail=what)}, []
            return {}, self._split(unit, self._suspects(unit, rep))
        if rep.problems:
            if solo:
                why = "; ".join(dict.fromkeys(rep.problems))
                return self._crash_all(
                    unit, f"Dafny's output cannot be trusted: {why}"[:1000], result.seconds
                ), []
            if rep.phase in ("parse", "resolution") and rep.culprits:
                return {}, self._split(unit, rep.culprits)
            return {}, self._split(unit, self._suspects(unit, rep))
        if rep.phase in ("parse", "resolution") and not solo:
            return {}, self._split(unit, rep.culprits)
        trace_total = sum(impl.seconds for impl in rep.impls)
        overhead = max(0.0, result.seconds - trace_total) / len(unit)
        verdicts = {}
        for k in unit:
            own = sum(impl.seconds for impl in rep.job_impls(k))
            verdicts[k] = verdict_from_report(rep, k, self.jobs[k].name, own + overhead)
        return verdicts, []

    @staticmethod
    def _suspects(unit: list[int], rep: RunReport) -> set[int]:
        """Jobs to blame for a broken batched run: those named by the output, else the job
        whose module was being verified when the output stopped (Dafny prints an
        implementation's lines only once it is done, but announces each module)."""
        if rep.suspects:
            return rep.suspects
        if rep.phase == "broken" and 1 <= rep.modules <= len(unit):
            return {unit[rep.modules - 1]}
        return set()

    @staticmethod
    def _split(unit: list[int], blamed: Iterable[int]) -> list[list[int]]:
        """Blamed jobs alone, the others together; halves when nobody is to blame."""
        blamed = [k for k in unit if k in set(blamed)]
        if not blamed:
            return _halves(unit) if len(unit) > 1 else [unit]
        rest = [k for k in unit if k not in set(blamed)]
        return [[k] for k in blamed] + ([rest] if rest else [])


def _partition(indices: list[int], batch_size: int, workers: int) -> list[list[int]]:
    """Split jobs into batches of at most ``batch_size``, and into at least ``workers``
    batches when each would still get MIN_SPLIT_JOBS jobs."""
    if not indices:
        return []
    count = -(-len(indices) // batch_size)
    if count < workers:
        count = max(count, min(workers, len(indices) // MIN_SPLIT_JOBS))
    size = -(-len(indices) // count)
    return [indices[i : i + size] for i in range(0, len(indices), size)]


def _early_verdict(job: DafnyJob) -> DafnyVerdict | None:
    """A verdict for text no Dafny run should see."""
    why = early_refusal(job.text)
    if why is None:
        return None
    return DafnyVerdict(job.name, "parse_error", messages=[f"{SOLO_FILE}: {why} (not run)"], detail=why)


def verify(
    jobs: Sequence[DafnyJob | Sequence[Any]],
    settings: DafnySettings | None = None,
    sandbox: Any = None,
    batch: bool = True,
    stats: dict[str, int] | None = None,
) -> list[DafnyVerdict]:
    """Verify every job; verdicts in the same order.

    ``sandbox``: a :class:`selfplay.sandbox.Sandbox` to run in (Dafny and z3 must be
    reachable inside it); None starts a private one for the call.  ``batch=False``
    runs one Dafny process per job, as the paper does.  ``stats``, when given, is
    updated with the number of Dafny processes run.
    """
    settings = settings or DafnySettings()
    items = [DafnyJob.of(job) for job in jobs]
    dafny, z3 = check_dafny(settings)
    verdicts: list[DafnyVerdict | None] = [None] * len(items)
    units: list[list[int]] = []
    groups: dict[bool, list[int]] = {}
    for k, job in enumerate(items):
        early = _early_verdict(job)
        if early is not None:
            verdicts[k] = early
        elif not batch or batch_problem(job.text) is not None:
            units.append([k])
        else:
            nc = settings.no_cheating if job.no_cheating is None else job.no_cheating
            groups.setdefault(nc, []).append(k)
    workers = getattr(sandbox, "workers", None) or settings.workers
    batched = [part for ks in groups.values() for part in _partition(ks, settings.batch_size, workers)]
    units = batched + units
    if units:
        from ..sandbox import SandboxLimits

        limits = SandboxLimits(
            memory_mb=settings.memory_mb, max_processes=128, max_open_files=256, max_file_mb=16, tmpfs_mb=128
        )
        with borrowed_sandbox(
            sandbox, workers=settings.workers, tool_dirs=lambda: tool_dirs(settings), limits=limits
        ) as box:
            runner = _Runner(items, settings, box, dafny, z3)
            with ThreadPoolExecutor(max(1, workers), thread_name_prefix="dafny") as pool:
                pending = {pool.submit(runner.execute, unit) for unit in units}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        finished, more = fut.result()
                        for k, verdict in finished.items():
                            verdicts[k] = verdict
                        pending |= {pool.submit(runner.execute, unit) for unit in more}
            add_stats(stats, runner.stats)
    return fill_missing(
        verdicts, lambda k: DafnyVerdict(items[k].name, "crash", detail="no verdict (internal error)")
    )
