"""Validity of a teacher's proposal (paper 004, Sec. 3.3.1 "Rejection sampling"): the
paper rejects proposals that are malformed, unsafe to execute or non-deterministic under
repeated runs, following Absolute Zero. Here each of those is made precise, and a valid
proposal comes back with its five I/O pairs, the outputs made by running its ``f``.

Every proposal's ``f`` runs only in the sandbox (``execution``), and each verdict is
decided in the host on encoded values. The checks, in order; the first failure is the
proposal's ``reason`` (the part before the first ``:`` is its class, for yield tables):

``malformed:<what>``
    ``code`` is not text, is longer than ``max_code_chars``, does not parse
    (``malformed:syntax_error``) or defines no top-level ``def f`` (``malformed:no_f``);
    not exactly ``n_inputs`` inputs (``malformed:input_count``); an input is not the
    source of an argument tuple made of literals (``(3, [1, 2])``, ``('ab',)``; see
    ``execution``) or is longer than ``max_input_chars`` (``malformed:input_not_literal``); two inputs are the same arguments
    (``malformed:duplicate_inputs``).
``unsafe:import:<module>`` / ``unsafe:name:<name>`` / ``unsafe:dunder:<name>``
    The sandbox confines every program whatever it does; this screen is what keeps the
    *task* well defined: a function whose value depends on the clock, randomness, the
    environment, files, processes or the interpreter's internals is not a function of
    its inputs, and a task made of it cannot be judged consistently later. The screen
    reads the syntax tree (nothing runs): an import of a module in ``banned_imports``
    (matched on the first component and on every dotted prefix, so ``os.path`` and
    ``from concurrent import futures`` are caught, unlike Absolute Zero's list; relative
    imports too), a name in ``banned_names`` (eval, exec, compile, open, input,
    __import__, globals, vars, id, getattr, ...), and any dunder name or attribute
    (``x.__class__``, ``__builtins__``) except those in ``allowed_dunders``. Text
    tricks (``getattr`` is banned for that reason) can still hide things from a screen;
    the determinism check and the sandbox remain.
``raises:<ExcType>``
    ``f`` raised on an input (SystemExit, MemoryError and RecursionError included); the
    detail names the input.
``timeout``
    a call ran past ``timeout_s`` (or the import and calls past their total).
``crashed:<status>``
    the run ended without the shim's report (the process was killed, exited, or its
    reply was not the shim's list: ``crashed:malformed_result``).
``no_f``
    ``f`` was not defined after the program ran (deleted or rebound at import).
``non_deterministic``
    the encoded outcome of some input differs between two calls in one run (``f`` is
    called on the five inputs, then on the five again: state kept between calls) or
    between runs under the ``determinism_seeds`` (separate sandbox pools whose programs
    start under each seed's PYTHONHASHSEED and ``random.seed``: hash order of str and
    bytes, ``random``). Our sandbox fixes both seeds in every run, so repeated runs
    under one seed alone would prove nothing about them.
``unencodable`` / ``output_too_large``
    a returned value the sandbox could not encode within its bounds (self-referential,
    too deep, a ``repr`` that raises), or one whose ``repr`` is longer than
    ``max_output_chars``.
``not_plain_value:<type>`` / ``output_not_literal``
    a returned value must be plain data whose ``repr`` reads back, in the host, as the
    same value (so a deduction answer can state it and an abduction target can be
    shown): an object of another type (a ``deque``, a ``Fraction``, a generator) or a
    value such as a complex number or a bytearray fails.
``nan_output``
    an output holds a NaN, which equals nothing, itself included: no answer could match.
``none_output``
    every output is None (``reject_none_outputs: all``, default) or some is (``any``);
    ``never`` turns the check off. A function that returns nothing for all five inputs
    says nothing an induction student could infer.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...evaluate.python_calls import mismatch
from ...sandbox.encoding import MalformedValue, decode_value
from .execution import (
    CallJob,
    NotALiteral,
    args_text,
    defines_f,
    host_encoding,
    read_call_args,
    read_literal,
    run_jobs,
    seconds,
)
from .sections import from_section

# Modules whose use makes a function depend on something besides its inputs (clock,
# randomness, environment, files, processes, threads, network, interpreter internals).
BANNED_IMPORTS = (
    "_thread",
    "asyncio",
    "atexit",
    "builtins",
    "calendar",
    "code",
    "codeop",
    "concurrent",
    "ctypes",
    "datetime",
    "dbm",
    "faulthandler",
    "fcntl",
    "gc",
    "getpass",
    "glob",
    "grp",
    "gzip",
    "http",
    "importlib",
    "inspect",
    "io",
    "locale",
    "logging",
    "marshal",
    "mmap",
    "multiprocessing",
    "os",
    "pathlib",
    "pdb",
    "pickle",
    "platform",
    "posix",
    "pty",
    "pwd",
    "random",
    "resource",
    "runpy",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shutil",
    "signal",
    "site",
    "socket",
    "sqlite3",
    "ssl",
    "subprocess",
    "sys",
    "sysconfig",
    "tempfile",
    "termios",
    "threading",
    "time",
    "trace",
    "tracemalloc",
    "tty",
    "urllib",
    "uuid",
    "warnings",
    "weakref",
    "webbrowser",
    "zipfile",
    "zipimport",
)
# Builtins that run text as code, touch files or the terminal, reach the interpreter's
# namespaces, or expose memory addresses; getattr/setattr/delattr reach dunders by text.
BANNED_NAMES = (
    "__import__",
    "breakpoint",
    "compile",
    "delattr",
    "eval",
    "exec",
    "exit",
    "getattr",
    "globals",
    "help",
    "id",
    "input",
    "locals",
    "memoryview",
    "open",
    "quit",
    "setattr",
    "vars",
)
ALLOWED_DUNDERS = ("__name__", "__init__")
REJECT_NONE = ("all", "any", "never")


@dataclass(frozen=True)
class ValiditySettings:
    """What makes a proposal valid (see the module docstring). Config ``gasp.validity``.

    timeout_s           seconds each call of ``f`` may take (Absolute Zero: 10)
    run_timeout_s       seconds one run (the program's import and all its calls under
                        one seed) may take at most: a loop at import costs this, not
                        ``timeout_s`` per call
    n_inputs            inputs a proposal must give (paper: 5 pairs, 2 shown, 3 private)
    max_code_chars      longest accepted program
    max_input_chars     longest accepted input text
    max_output_chars    longest ``repr`` of an output (Absolute Zero cuts stored outputs
                        at 400 characters; a longer one is refused here instead)
    banned_imports / banned_names / allowed_dunders   the unsafe screen
    determinism_seeds   two or more distinct seeds; one sandbox pool per seed, the
                        first one's outputs become the task's
    repeat_calls        times ``f`` is called on the inputs within one run (2: a call
                        that changes what the next returns is caught)
    reject_none_outputs all | any | never
    """

    timeout_s: float = 10.0
    run_timeout_s: float = 30.0
    n_inputs: int = 5
    max_code_chars: int = 20_000
    max_input_chars: int = 1_000
    max_output_chars: int = 1_000
    banned_imports: tuple[str, ...] = BANNED_IMPORTS
    banned_names: tuple[str, ...] = BANNED_NAMES
    allowed_dunders: tuple[str, ...] = ALLOWED_DUNDERS
    determinism_seeds: tuple[int, ...] = (0, 1)
    repeat_calls: int = 2
    reject_none_outputs: str = "all"

    def __post_init__(self) -> None:
        object.__setattr__(self, "timeout_s", seconds("timeout_s", self.timeout_s, 600))
        object.__setattr__(self, "run_timeout_s", seconds("run_timeout_s", self.run_timeout_s, 3600))
        for name, low in (
            ("n_inputs", 1),
            ("max_code_chars", 1),
            ("max_input_chars", 1),
            ("max_output_chars", 1),
            ("repeat_calls", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name}: must be an integer >= {low}, not {value!r}")
        for name in ("banned_imports", "banned_names", "allowed_dunders"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise ValueError(f"{name}: must be a list of names, not {value!r}")
            object.__setattr__(self, name, tuple(value))
        seeds = self.determinism_seeds
        if isinstance(seeds, (str, int)) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**32 for s in seeds
        ):
            raise ValueError(f"determinism_seeds: must be a list of integers in 0..2**32-1, not {seeds!r}")
        seeds = tuple(seeds)
        if len(set(seeds)) < 2 or len(set(seeds)) != len(seeds):
            raise ValueError(f"determinism_seeds: needs two or more distinct seeds, got {list(seeds)}")
        object.__setattr__(self, "determinism_seeds", seeds)
        if self.reject_none_outputs not in REJECT_NONE:
            raise ValueError(
                f"reject_none_outputs: one of {', '.join(REJECT_NONE)}, not {self.reject_none_outputs!r}"
            )

    @classmethod
    def from_dict(cls, section: Mapping[str, Any] | None, prefix: str = "gasp.validity") -> ValiditySettings:
        """Config ``section`` over the defaults; an unknown key or bad value is a one-line UserError."""
        return from_section(cls, section, prefix)


@dataclass(frozen=True)
class Verdict:
    """``valid`` with the proposal's pairs (``[{"input", "output", "output_repr"}] * n_inputs``),
    or the ``reason`` (see the module docstring) and a ``detail`` for people."""

    valid: bool
    reason: str | None = None
    detail: str | None = None
    pairs: list[dict[str, Any]] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "reason": self.reason, "detail": self.detail, "pairs": self.pairs}


def _invalid(reason: str, detail: str | None = None) -> Verdict:
    return Verdict(False, reason, detail)


# ---------------------------------------------------------------- static checks


def screen(code: str, settings: ValiditySettings) -> str | None:
    """The unsafe screen on ``code``'s syntax tree: ``unsafe:<kind>:<what>`` or None."""
    tree = ast.parse(code)
    banned = set(settings.banned_imports)

    def hit_module(name: str) -> str | None:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            if ".".join(parts[:end]) in banned:
                return ".".join(parts[:end])
        return None

    bound = _bound_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if hit_module(alias.name):
                    return f"unsafe:import:{hit_module(alias.name)}"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                return "unsafe:import:relative"
            module = node.module or ""
            if hit_module(module):
                return f"unsafe:import:{hit_module(module)}"
            for alias in node.names:  # from concurrent import futures; from os import path
                if hit_module(f"{module}.{alias.name}"):
                    return f"unsafe:import:{hit_module(f'{module}.{alias.name}')}"
        elif isinstance(node, ast.Name):
            if _dunder(node.id) and node.id not in settings.allowed_dunders:
                return f"unsafe:dunder:{node.id}"
            if node.id in settings.banned_names and node.id not in bound:
                return f"unsafe:name:{node.id}"
        elif isinstance(node, ast.Attribute):
            if _dunder(node.attr) and node.attr not in settings.allowed_dunders:
                return f"unsafe:dunder:{node.attr}"
    return None


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the program binds itself (variables, parameters, defs, imports, handlers): a
    banned builtin's name used as a variable (``id``, ``input``) is the variable."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return bound


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def static_check(proposal: Any, settings: ValiditySettings) -> tuple[Verdict | None, list[tuple]]:
    """(the failing verdict or None, the inputs' argument tuples) from what needs no run."""
    if not isinstance(proposal, Mapping):
        return _invalid("malformed:not_a_proposal", f"a {type(proposal).__name__}"), []
    code, inputs = proposal.get("code"), proposal.get("inputs")
    if not isinstance(proposal.get("question"), str) or not proposal["question"].strip():
        return _invalid("malformed:no_question"), []
    if not isinstance(code, str) or not code.strip():
        return _invalid("malformed:no_code"), []
    if len(code) > settings.max_code_chars:
        return _invalid("malformed:code_too_long", f"{len(code)} > {settings.max_code_chars} characters"), []
    why = defines_f(code)
    if why:
        return _invalid(f"malformed:{why}"), []
    unsafe = screen(code, settings)
    if unsafe:
        return _invalid(unsafe), []
    if not isinstance(inputs, (list, tuple)) or len(inputs) != settings.n_inputs:
        count = len(inputs) if isinstance(inputs, (list, tuple)) else type(inputs).__name__
        return _invalid("malformed:input_count", f"{count} inputs, {settings.n_inputs} needed"), []
    calls, seen = [], []
    for index, text in enumerate(inputs):
        try:
            args = read_call_args(text, settings.max_input_chars)
            args_text(args)  # an integer too long for repr is refused here
            key = host_encoding(args)
        except (NotALiteral, ValueError) as exc:
            return _invalid("malformed:input_not_literal", f"input {index}: {exc}"), []
        if key in seen:
            return _invalid(
                "malformed:duplicate_inputs", f"input {index} repeats input {seen.index(key)}"
            ), []
        seen.append(key)
        calls.append(args)
    return None, calls


# ---------------------------------------------------------------- runs


def _pools(sandboxes: Any, settings: ValiditySettings) -> list[tuple[int, Any]]:
    """(seed, pool) per determinism seed, from a mapping seed -> Sandbox or Sandboxes
    carrying ``.seed``; a pool whose seed differs from its key is refused."""
    if isinstance(sandboxes, Mapping):
        pairs = list(sandboxes.items())
    else:
        pairs = [(getattr(sb, "seed", None), sb) for sb in sandboxes]
    for seed, sb in pairs:
        if getattr(sb, "seed", seed) != seed:
            raise ValueError(f"sandbox under key {seed} runs with seed {sb.seed}")
    by_seed = dict(pairs)
    missing = [s for s in settings.determinism_seeds if s not in by_seed]
    if missing:
        raise ValueError(
            f"no sandbox pool for determinism seed(s) {missing}; have {sorted(by_seed, key=str)}"
        )
    return [(seed, by_seed[seed]) for seed in settings.determinism_seeds]


@contextmanager
def seeded_sandboxes(settings: ValiditySettings, workers: int = 2, limits=None) -> Iterator[dict[int, Any]]:
    """One ``Sandbox`` per determinism seed (closed on exit), for :func:`check_proposals`."""
    from ...sandbox import Sandbox

    with ExitStack() as stack:
        yield {
            seed: stack.enter_context(Sandbox(workers=workers, limits=limits, seed=seed))
            for seed in settings.determinism_seeds
        }


def _failure(outcome, index: int, seed: int) -> Verdict:
    """The verdict of a call that did not return a value."""
    where = f"input {index} (seed {seed})"
    status, value = outcome.status, outcome.value
    if status == "raised":
        return _invalid(f"raises:{value}", f"on {where}")
    if status == "timeout":
        return _invalid("timeout", f"on {where}")
    if status == "missing":
        return _invalid("no_f", "f is not defined once the program has run")
    if status == "exception":  # the program's import raised: no call ran
        return _invalid(f"raises:{value}", f"while loading the program (seed {seed})")
    if status == "error" and isinstance(value, str) and "not encodable" in value:
        large = any(word in value for word in ("exceeds", "more than", "deeper", "out of memory"))
        return _invalid("output_too_large" if large else "unencodable", f"{value} ({where})")
    detail = value if isinstance(value, str) else None
    return _invalid(f"crashed:{status}", f"{detail or status} ({where})")


def _holds_object(node: Any) -> str | None:
    """The type name of the first value the encoding could not rebuild (an ``object`` node)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if type(item) is list:
            if len(item) == 3 and item[0] == "object" and isinstance(item[1], str):
                return item[1]
            stack.extend(item)
    return None


def _pair(
    args: tuple, encoded: Any, settings: ValiditySettings
) -> tuple[dict[str, Any] | None, Verdict | None]:
    """The I/O pair of a returned value, or the verdict refusing the value."""
    kind = _holds_object(encoded)
    if kind is not None:
        return None, _invalid(f"not_plain_value:{kind}")
    try:
        value = decode_value(encoded)
    except MalformedValue as exc:
        return None, _invalid("crashed:malformed_result", str(exc))
    try:
        shown = repr(value)
    except (ValueError, RecursionError, MemoryError):  # e.g. an integer past Python's digit limit
        return None, _invalid("output_too_large", "its repr cannot be made")
    if len(shown) > settings.max_output_chars:
        return None, _invalid(
            "output_too_large", f"repr of {len(shown)} > {settings.max_output_chars} characters"
        )
    if mismatch(encoded, encoded) is not None:  # only a NaN fails to equal itself
        return None, _invalid("nan_output")
    try:
        back = host_encoding(read_literal(shown, settings.max_output_chars))
    except NotALiteral:
        return None, _invalid("output_not_literal", f"{shown[:80]} does not read back as a literal")
    if back != encoded:
        return None, _invalid("output_not_literal", f"{shown[:80]} reads back as another value")
    return {"input": args_text(args), "output": encoded, "output_repr": shown}, None


def check_proposals(proposals: Sequence[Any], sandboxes: Any, settings: ValiditySettings) -> list[Verdict]:
    """One :class:`Verdict` per proposal (``{"question", "code", "inputs"}``), in order.

    ``sandboxes``: a pool per seed of ``settings.determinism_seeds`` (a mapping seed ->
    ``Sandbox``, or Sandboxes made with ``seed=``; see :func:`seeded_sandboxes`). Every
    statically sound proposal runs once per seed, all of them in one ``run_many`` per
    pool, each run calling ``f`` on the inputs ``repeat_calls`` times in a row.
    """
    pools = _pools(sandboxes, settings)
    verdicts: list[Verdict | None] = []
    todo: list[tuple[int, list[tuple]]] = []
    for number, proposal in enumerate(proposals):
        failed, calls = static_check(proposal, settings)
        verdicts.append(failed)
        if failed is None:
            todo.append((number, calls))
    jobs = [CallJob(proposals[number]["code"], calls * settings.repeat_calls) for number, calls in todo]
    runs: list[list[tuple[int, list]]] = [[] for _ in jobs]
    going = list(range(len(jobs)))
    for seed, sb in pools:  # a later seed only reruns what returned everywhere so far
        for place, outcomes in zip(
            going, run_jobs(sb, [jobs[place] for place in going], settings.timeout_s, settings.run_timeout_s)
        ):
            runs[place].append((seed, outcomes))
        going = [place for place in going if all(o.status == "ok" for o in runs[place][-1][1])]
    for place, (number, calls) in enumerate(todo):
        verdicts[number] = _judge_runs(calls, runs[place], settings)
    return verdicts  # type: ignore[return-value]


def _judge_runs(calls: list[tuple], runs: list[tuple[int, list]], settings: ValiditySettings) -> Verdict:
    """A proposal's verdict from its runs under each seed (``repeat_calls`` passes each):
    the first seed's run decides failures; any other run that raises where it returned, or
    returns another value, makes the proposal non-deterministic."""
    n = len(calls)
    first_seed, reference = runs[0]
    for place, outcome in enumerate(reference[:n]):
        if outcome.status != "ok":
            return _failure(outcome, place % n, first_seed)
    for seed, outcomes in runs:
        for place, outcome in enumerate(outcomes):
            how = "a repeated call" if seed == first_seed else f"seed {seed} against seed {first_seed}"
            if outcome.status == "raised":
                return _invalid("non_deterministic", f"input {place % n}: {how} raised {outcome.value}")
            if outcome.status != "ok":
                return _failure(outcome, place % n, seed)
            if outcome.value != reference[place % n].value:
                return _invalid("non_deterministic", f"input {place % n}: {how} returned another value")
    pairs = []
    for args, outcome in zip(calls, reference[:n]):
        pair, refused = _pair(args, outcome.value, settings)
        if refused is not None:
            return refused
        pairs.append(pair)
    nones = [pair["output"] == ["None", None] for pair in pairs]
    if (settings.reject_none_outputs == "all" and all(nones)) or (
        settings.reject_none_outputs == "any" and any(nones)
    ):
        return _invalid("none_output", f"{sum(nones)} of {n} outputs are None")
    return Verdict(True, pairs=pairs)
