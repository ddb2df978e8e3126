"""Fast, isolated compile-and-run checks of Haskell functions with GHC.

A *check* asks: what does ``f a1 a2 ... an`` evaluate to, where ``f`` is defined
in a given program text and the ``ai`` are Haskell argument expressions?  The
answer is the ``show`` of the result, forced completely, or the exception that
forcing it raised, or a timeout, or a resource-limit kill.

Why batching
------------
GHC is slow to start and to link (about 0.5-1 s per ``ghc`` call here, most of it
fixed cost), while compiling one more small module in an already running
``ghc --make`` costs about 25 ms.  So a batch of checks is handled as:

1. *Screening* (host side, no GHC): each request becomes one Haskell module of
   its own, named ``S<hash>`` after its content (program, function, arguments,
   settings).  The program's ``module`` header (if any) is replaced by that name,
   its imports and pragmas are kept, and the call expression is appended as a
   top-level ``selfplayCheck__ = show (S<hash>.f (a1) ... (an))``.  Because the call
   lives in the request's own module, an ill-typed argument literal is a compile
   error of that module only.  Hostile source is rejected here (see below).
2. *One confined compile per batch*: a small driver script runs
   ``ghc --make -fkeep-going -no-link`` on all modules (GHC carries on past
   modules that fail and reports errors per file), then writes a dispatcher
   ``Main`` that imports only the modules that produced object files, and links
   it once into ``runner``.  Errors are mapped back to requests by file name.
   Failures GHC cannot attribute (it aborts the whole build for a bad header
   pragma, a compile that times out, a failed link) are resolved by compiling
   the unresolved part again, splitting it in halves when a round makes no
   progress, so one bad program never fails its batch-mates.
3. *One confined process per check*: ``./runner S<hash> ...`` runs in a fresh
   sandbox process (own work directory, rlimits, GHC heap limit, timeout), so an
   infinite loop, a memory blow-up or a crash affects that check alone.  The
   runner forces the whole ``show`` string (bounded), catches any exception and
   prints one tagged line.

Compilation and runs both go through :class:`selfplay.sandbox.Sandbox`
(``run_command``/``run_commands``): network, PID and mount namespaces, an
unprivileged uid, rlimits, a private tmpfs work directory, a minimal filesystem
view (Debian's GHC lives under /usr, its package database in /var/lib/ghc; both
are part of it), a scrubbed environment, wall-clock timeouts with a
whole-namespace kill.

Why reject hostile source before compiling
------------------------------------------
Model-written code is hostile, and in Haskell code can run at *compile* time:
Template Haskell splices and quasi-quoters execute arbitrary Haskell (including
IO) inside the compiler, ``ANN`` pragmas are evaluated by the compiler,
``OPTIONS_GHC`` pragmas can load compiler plugins or name a preprocessor or
assembler program to run (``-F -pgmF``, ``-fplugin``, ``-pgmc``), and ``CPP`` can
``#include`` host files into error messages.  At run time, a *pure* function can
only escape purity through ``unsafePerformIO`` and relatives, ``unsafeCoerce``
(breaks type and memory safety) or the FFI.  So each module is compiled as Safe
Haskell (``{-# LANGUAGE Safe #-}``: no TH, no unsafe imports, FFI only in IO),
only a few packages are exposed (no ``process``, ``unix``, ``directory``,
``template-haskell`` or ``ghc``), and before GHC sees anything the screen
rejects, with a recorded reason: any pragma other than LANGUAGE and a few
harmless optimisation/documentation pragmas, extensions that enable compile-time
code or unsafe features (TemplateHaskell, QuasiQuotes, CPP, FFI, MagicHash,
Trustworthy, Unsafe, ...), extensions GHC does not know (they abort a whole
``--make`` build), imports of escape-hatch modules (``System.IO.Unsafe``,
``Unsafe.Coerce``, ``System.Process``, ``Foreign``, ``GHC.IO``, ...), the unsafe
functions by name, and ``foreign import/export``.  Compilation still runs confined,
in case something slips through.  A result of type ``IO a`` cannot be checked at
all (it has no ``Show`` instance), so IO code is never run.

Outcome statuses
----------------
``value`` (``value`` holds the ``show`` text), ``exception`` (``exc_type`` is the
exception's type name, e.g. ``ErrorCall``, ``ArithException``,
``PatternMatchFail``; ``exc_message`` its bounded message, without GHC's call-stack
locations), ``timeout`` (wall clock), ``killed`` (a resource limit: GHC heap
overflow, address-space or CPU limit, a result longer than
``max_value_chars``; ``detail`` says which), ``compile_error`` (``compile_error``
holds a bounded excerpt of GHC's errors for this request's module),
``rejected`` (``detail`` holds the screening reason) and ``error`` (the check
could not be carried out: sandbox or harness failure).

Determinism: the module text and name depend only on the request and the
settings, the program is compiled alone in its own module at ``-O0`` with fixed
flags, and evaluation is pure, so the same request gives the same outcome
regardless of its batch-mates (up to timeouts on a loaded machine).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import MissingToolError
from .signature import scan

CHECK_NAME = "selfplayCheck__"
PRELUDE_ALIAS = "SelfplayPrelude__"
MAX_SOURCE_CHARS = 200_000
MAX_ARG_CHARS = 100_000
EXCERPT_CHARS = 2000
LINK_MARK = "--selfplay-link--"
INSTALL_HINT = "install the Debian package `ghc` (apt-get install ghc)"

# Packages a checked program may import from; everything else is hidden.
PACKAGES = ("base", "containers", "array", "mtl", "transformers", "text", "bytestring", "deepseq")

# Extensions that run code at compile time, read host files, reach the FFI or
# break Safe Haskell's guarantees.
BANNED_EXTENSIONS = frozenset(
    {
        "TemplateHaskell",
        "TemplateHaskellQuotes",
        "QuasiQuotes",
        "CPP",
        "ForeignFunctionInterface",
        "CApiFFI",
        "GHCForeignImportPrim",
        "UnliftedFFITypes",
        "InterruptibleFFI",
        "MagicHash",
        "UnboxedTuples",
        "UnboxedSums",
        "UnliftedNewtypes",
        "UnliftedDatatypes",
        "Trustworthy",
        "Unsafe",
        "StaticPointers",
        "PackageImports",
        "ImplicitParams",
    }
)
# Pragmas GHC treats as harmless hints or documentation; all others are refused.
ALLOWED_PRAGMAS = frozenset(
    {
        "LANGUAGE",
        "INLINE",
        "NOINLINE",
        "INLINABLE",
        "INLINEABLE",
        "SPECIALIZE",
        "SPECIALISE",
        "UNPACK",
        "NOUNPACK",
        "MINIMAL",
        "COMPLETE",
        "OVERLAPPING",
        "OVERLAPPABLE",
        "OVERLAPS",
        "INCOHERENT",
        "SCC",
        "DEPRECATED",
        "WARNING",
        "CONLIKE",
        "OPAQUE",
    }
)
BANNED_MODULES = (
    "System.IO.Unsafe",
    "Unsafe",
    "System.Process",
    "System.Posix",
    "System.Directory",
    "System.Mem",
    "Foreign",
    "GHC.IO",
    "GHC.Exts",
    "GHC.Prim",
    "GHC.Base",
    "GHC.ST",
    "GHC.Conc",
    "GHC.Weak",
    "Control.Monad.ST.Unsafe",
    "Control.Monad.ST.Lazy.Unsafe",
    "Data.ByteString.Unsafe",
    "Data.ByteString.Internal",
    "Data.Array.Unsafe",
    "Data.Array.Base",
    "Data.Text.Unsafe",
    "Data.Text.Internal",
    "Language.Haskell.TH",
    "Debug.Trace",
    "System.Environment",
    "System.Exit",
)
BANNED_NAMES = (
    "unsafePerformIO",
    "unsafeDupablePerformIO",
    "unsafeInterleaveIO",
    "unsafeDupableInterleaveIO",
    "unsafeCoerce",
    "unsafeIOToST",
    "unsafeSTToIO",
    "unsafeInterleaveST",
    "unsafeFixIO",
    "inlinePerformIO",
    "accursedUnutterablePerformIO",
    "unsafeLocalState",
    "unsafeIOToSTM",
)
_BANNED_NAME_RE = re.compile(r"(?<![\w'])(" + "|".join(BANNED_NAMES) + r")(?![\w'])")
_FOREIGN_RE = re.compile(r"(?<![\w'.])foreign\s+(import|export)(?![\w'])")
_IMPORT_RE = re.compile(
    r"(?m)^[ \t]*import\s+(?:safe\s+)?(?:qualified\s+)?(?:\"[^\"\n]*\"\s+)?"
    r"([A-Z][\w']*(?:\.[A-Z][\w']*)*)"
)
_PRAGMA_RE = re.compile(r"\{-#\s*([A-Za-z_]+)(.*?)#-\}", re.S)
_MODID = r"[A-Z][\w']*(?:\.[A-Z][\w']*)*"
_HEADER_RE = re.compile(r"module\s+(" + _MODID + r")\s*")
_VARID_RE = re.compile(r"^[a-z_][A-Za-z0-9_']*$")
_KEYWORDS = frozenset(
    {
        "case",
        "class",
        "data",
        "default",
        "deriving",
        "do",
        "else",
        "foreign",
        "if",
        "import",
        "in",
        "infix",
        "infixl",
        "infixr",
        "instance",
        "let",
        "module",
        "newtype",
        "of",
        "then",
        "type",
        "where",
        "_",
    }
)
_ERROR_HEAD_RE = re.compile(r"^(?:ghc(?:-[\d.]+)?: )?(S[0-9a-f]{20})\.hs:")
STATUSES = ("value", "exception", "timeout", "killed", "compile_error", "rejected", "error")
_SANDBOX_FAILURE = "compiler could not run"
_NO_GHC_EXIT = 97


# ---------------------------------------------------------------- public data


@dataclass(frozen=True)
class CheckRequest:
    """One check: ``function arg1 ... argN`` evaluated in the program ``source``.

    source    the whole program text (a module; a ``module`` header is optional)
    function  the name of a top-level function (a Haskell variable identifier)
    args      Haskell expressions, one per argument (e.g. ``"3"``, ``"[1,2]"``,
              ``"\\"ab\\""``, ``"(Just 'x')"``); each is parenthesised in the call
    timeout   wall-clock seconds for the run (None: the checker's default)
    """

    source: str
    function: str
    args: tuple[str, ...] = ()
    timeout: float | None = None

    @classmethod
    def of(cls, item: CheckRequest | Sequence[Any]) -> CheckRequest:
        """Accept a CheckRequest or a (source, function, args[, timeout]) tuple."""
        if isinstance(item, CheckRequest):
            return item
        source, function, args, *rest = item
        if isinstance(args, str):
            raise TypeError("args must be a sequence of argument expressions, not one string")
        return cls(source, function, tuple(args), rest[0] if rest else None)


@dataclass
class CheckOutcome:
    """The result of one check (see the module docstring for the statuses).

    status         one of STATUSES
    compiled       True when the request's module compiled and linked
    value          the complete ``show`` text of the result (status 'value')
    exc_type       exception type name (status 'exception')
    exc_message    bounded exception message (status 'exception')
    compile_error  bounded excerpt of GHC's errors (status 'compile_error')
    detail         the reason for 'rejected', 'killed', 'error', 'timeout'
    seconds        wall time of the run (0 when it never ran)
    module         the generated module name (``S<hash>``), for tracing
    """

    status: str
    compiled: bool = False
    value: str | None = None
    exc_type: str | None = None
    exc_message: str | None = None
    compile_error: str | None = None
    detail: str | None = None
    seconds: float = 0.0
    module: str | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown check status {self.status!r}")

    def behaviour(self) -> tuple:
        """A hashable summary: two runs behaved the same when these are equal."""
        if self.status == "value":
            return ("value", self.value)
        if self.status == "exception":
            return ("exception", self.exc_type)
        return (self.status,)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "compiled": self.compiled,
            "value": self.value,
            "exc_type": self.exc_type,
            "exc_message": self.exc_message,
            "compile_error": self.compile_error,
            "detail": self.detail,
            "seconds": round(float(self.seconds), 6),
            "module": self.module,
        }


@dataclass(frozen=True)
class GhcSettings:
    """Knobs of a GhcChecker.

    run_timeout        default wall-clock seconds per check run
    run_memory_mb      address-space limit of a check run; the GHC heap limit
                       (``+RTS -M``) is 3/4 of it so overflow is a clean exception
    max_value_chars    longest accepted ``show`` text (longer: 'killed')
    max_message_chars  exception messages are cut to this length
    compile_timeout    seconds for one GHC invocation: base + per module
    compile_timeout_per_module
    compile_memory_mb  memory limit of the compiler's processes
    batch_modules      most modules compiled by one GHC invocation
    parallel_compiles  GHC invocations running at once (each on its own worker)
    min_split_modules  a batch is split for parallel compiles only when each
                       part gets at least this many modules
    link               'dynamic' (default: links in about half the time of a static
                       runner, each run starts a few ms slower; measured faster
                       overall for batches of 40, see bench/results/ghc.json) or 'static'
    ghc                the compiler command (resolved on PATH)
    optimisation       GHC optimisation flag ('-O0' keeps compiles fast)
    """

    run_timeout: float = 5.0
    run_memory_mb: int = 1024
    max_value_chars: int = 100_000
    max_message_chars: int = 1000
    compile_timeout: float = 60.0
    compile_timeout_per_module: float = 2.0
    compile_memory_mb: int = 2048
    batch_modules: int = 100
    parallel_compiles: int = 2
    min_split_modules: int = 12
    link: str = "dynamic"
    ghc: str = "ghc"
    optimisation: str = "-O0"

    def __post_init__(self) -> None:
        if self.link not in ("static", "dynamic"):
            raise ValueError("link must be 'static' or 'dynamic'")
        if self.optimisation not in ("-O0", "-O1", "-O2", "-O"):
            raise ValueError("optimisation must be -O0, -O, -O1 or -O2")
        for name in ("run_timeout", "compile_timeout", "compile_timeout_per_module"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive")
        for name in (
            "run_memory_mb",
            "max_value_chars",
            "max_message_chars",
            "compile_memory_mb",
            "batch_modules",
            "parallel_compiles",
            "min_split_modules",
        ):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive int")


# ---------------------------------------------------------------- GHC discovery


def find_ghc(command: str = "ghc") -> str:
    """Absolute path of the GHC executable; MissingToolError naming the package when absent."""
    path = shutil.which(command)
    if path is None:
        raise MissingToolError(
            f"'{command}' (the Glasgow Haskell Compiler) is needed for Haskell checks "
            f"but was not found on PATH: {INSTALL_HINT}"
        )
    return path


def ghc_available(command: str = "ghc") -> bool:
    return shutil.which(command) is not None


_facts_lock = threading.Lock()
_facts: dict[str, tuple[str, frozenset[str]]] = {}


def ghc_facts(ghc_path: str) -> tuple[str, frozenset[str]]:
    """(numeric version, supported LANGUAGE extensions) of a GHC (trusted, host-side query)."""
    with _facts_lock:
        if ghc_path not in _facts:
            try:
                version = subprocess.run(
                    [ghc_path, "--numeric-version"], capture_output=True, text=True, timeout=60, check=True
                ).stdout.strip()
                exts = subprocess.run(
                    [ghc_path, "--supported-extensions"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=True,
                ).stdout.split()
            except (OSError, subprocess.SubprocessError) as exc:
                raise MissingToolError(
                    f"'{ghc_path}' does not work ({type(exc).__name__}): {INSTALL_HINT}"
                ) from None
            _facts[ghc_path] = (version, frozenset(exts))
        return _facts[ghc_path]


# ---------------------------------------------------------------- screening and module text


def _line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and 0-based column of offset ``pos``."""
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1)
    return line, col


def _views(text: str) -> tuple[str, list[str]]:
    """(code view with comments, pragmas and literals blanked; pragma texts)."""
    segments = scan(text)
    pragmas = [text[s.start : s.end] for s in segments if s.kind == "pragma"]
    out = []
    for s in segments:
        part = text[s.start : s.end]
        if s.kind == "code":
            out.append(part)
        elif s.kind in ("string", "char"):
            # keep the quotes so the structure stays visible, blank the contents
            inner = re.sub(r"[^\n]", " ", part[1:-1]) if len(part) >= 2 else ""
            out.append(part[:1] + inner + part[-1:] if len(part) >= 2 else " " * len(part))
        else:
            out.append(re.sub(r"[^\n]", " ", part))
    return "".join(out), pragmas


def screen_code(code_view: str) -> str | None:
    """Reason to reject a code view (comments/literals blanked), or None."""
    m = _BANNED_NAME_RE.search(code_view)
    if m:
        return f"uses {m.group(1)} (escapes purity or type safety)"
    m = _FOREIGN_RE.search(code_view)
    if m:
        return f"uses foreign {m.group(1)} (the FFI can run arbitrary native code)"
    for m in _IMPORT_RE.finditer(code_view):
        mod = m.group(1)
        if mod == "Main" or re.fullmatch(r"S[0-9a-f]{20}", mod):
            # the dispatcher or another check's module: a cycle or a dependency on
            # a batch-mate would make GHC abort the whole batch
            return f"imports {mod} (checks cannot import the runner or each other)"
        for banned in BANNED_MODULES:
            if mod == banned or mod.startswith(banned + "."):
                return f"imports {mod} (not allowed: unsafe, effectful or compile-time code)"
    return None


def screen_pragmas(pragmas: Iterable[str], supported: frozenset[str]) -> str | None:
    """Reason to reject a program's pragmas, or None."""
    for text in pragmas:
        m = _PRAGMA_RE.fullmatch(text.strip())
        if not m:
            return "malformed pragma"
        name = m.group(1).upper()
        if name not in ALLOWED_PRAGMAS:
            if name.startswith("OPTIONS"):
                return (
                    f"{{-# {m.group(1)} #-}} pragma not allowed (compiler flags can run plugins and programs)"
                )
            return f"{{-# {m.group(1)} #-}} pragma not allowed"
        if name == "LANGUAGE":
            for ext in (e.strip() for e in m.group(2).split(",")):
                if not ext:
                    continue
                if ext in BANNED_EXTENSIONS:
                    return f"extension {ext} not allowed (compile-time code, FFI or unsafe features)"
                if supported and ext not in supported:
                    return f"unknown extension {ext}"
    return None


def _header_span(code: str, start: int) -> tuple[int, int] | None | str:
    """If the code view begins with a module header at ``start``, its (start, end) span.

    Returns None when there is no header and an error string when the header is malformed.
    """
    if not re.match(r"module(?![\w'])", code[start : start + 7]):
        return None
    m = _HEADER_RE.match(code, start)
    if not m:
        return "malformed module header"
    i = m.end()
    if i < len(code) and code[i] == "(":
        depth = 0
        while i < len(code):
            if code[i] == "(":
                depth += 1
            elif code[i] == ")":
                depth -= 1
                if depth == 0:
                    i += 1
                    break
            i += 1
        else:
            return "malformed module header (unbalanced export list)"
    w = re.compile(r"\s*where(?![\w'])").match(code, i)
    if not w:
        return "malformed module header (no 'where')"
    return start, w.end()


def module_name_for(source: str, function: str, args: Sequence[str], salt: str) -> str:
    digest = hashlib.sha256()
    for part in (salt, source, function, *args):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return "S" + digest.hexdigest()[:20]


def build_module(
    name: str, source: str, function: str, args: Sequence[str], supported: frozenset[str] = frozenset()
) -> tuple[str | None, str | None, str | None]:
    """Screen a request and write its module text.

    Returns (module text, rejection reason, early compile error): exactly one of
    the three is not None.  A compile error here means the header is malformed in
    a way that would make GHC abort the whole batch.
    """
    if (
        not isinstance(source, str)
        or not isinstance(function, str)
        or not all(isinstance(a, str) for a in args)
    ):
        return None, "source, function and arguments must be text", None
    if len(source) > MAX_SOURCE_CHARS:
        return None, f"program longer than {MAX_SOURCE_CHARS} characters", None
    if "\x00" in source or any("\x00" in a for a in args):
        return None, "NUL character in the program or an argument", None
    if not _VARID_RE.match(function) or function in _KEYWORDS:
        return None, f"function name {function!r} is not a Haskell variable identifier", None
    code, pragmas = _views(source)
    why = screen_pragmas(pragmas, supported) or screen_code(code)
    if why:
        return None, why, None
    for index, arg in enumerate(args):
        if len(arg) > MAX_ARG_CHARS:
            return None, f"argument {index + 1} longer than {MAX_ARG_CHARS} characters", None
        if not arg.strip():
            return None, f"argument {index + 1} is empty", None
        arg_code, arg_pragmas = _views(arg)
        if arg_pragmas or "{-#" in arg:
            return None, f"argument {index + 1} contains a pragma", None
        why = screen_code(arg_code)
        if why:
            return None, f"argument {index + 1} {why}", None

    first = re.search(r"\S", code)
    if first is None:
        return None, None, "empty program"
    header = _header_span(code, first.start())
    if isinstance(header, str):
        return None, None, header
    if header is None:
        prefix_end = body = first.start()
    else:
        prefix_end = header[0]
        later = re.compile(r"\S").search(code, header[1])
        body = later.start() if later else len(source)
    line, col = _line_col(source, body)
    indent = " " * col
    # Any explicit import of Prelude switches the implicit one off, so the
    # qualified alias used by the call comes with a plain ``import Prelude``
    # unless the program already chose its own Prelude import (or none at all).
    explicit = any(m.group(1) == "Prelude" for m in _IMPORT_RE.finditer(code))
    no_implicit = any(re.search(r"\b(NoImplicitPrelude|RebindableSyntax)\b", p) for p in pragmas)
    plain = "" if explicit or no_implicit else f"{indent}import Prelude\n"
    call_args = "".join(" (" + a.strip().replace("\n", "\n" + indent + "      ") + ")" for a in args)
    text = (
        "{-# LANGUAGE Safe #-} "
        + source[:prefix_end]
        + f"module {name} where\n"
        + plain
        + f"{indent}import qualified Prelude as {PRELUDE_ALIAS}\n"
        + f'{{-# LINE {line} "{name}.hs" #-}}\n'
        + indent
        + source[body:]
        + f"\n\n{indent}{CHECK_NAME} :: {PRELUDE_ALIAS}.String\n"
        + f"{indent}{CHECK_NAME} = {PRELUDE_ALIAS}.show ({name}.{function}{call_args})\n"
    )
    return text, None, None


# ---------------------------------------------------------------- compile driver and runner


_MAIN_HEAD = """{-# LANGUAGE ScopedTypeVariables #-}
module Main (main) where

import qualified Control.Exception as E
import qualified Data.Typeable as T
import qualified Numeric as N
import qualified System.Environment as Env
import qualified System.Exit as Exit
import qualified System.IO as IO
"""

_MAIN_MID = """
checks :: [(String, String)]
checks =
  [ ("", "")
"""

_MAIN_TAIL = """  ]

main :: IO ()
main = do
  args <- Env.getArgs
  case args of
    [key, valueLimit, messageLimit] ->
      case lookup key checks of
        Just text -> runCheck (read valueLimit) (read messageLimit) text
        Nothing -> emit "N" key >> Exit.exitWith (Exit.ExitFailure 3)
    _ -> Exit.exitWith (Exit.ExitFailure 2)

-- Force at most cap characters of a string, each one to WHNF; how many there were.
forced :: Int -> String -> Int
forced cap = go 0
  where
    go n s | n >= cap = n
    go n [] = n
    go n (c : cs) = c `seq` go (n + 1) cs

runCheck :: Int -> Int -> String -> IO ()
runCheck valueLimit messageLimit text = do
  r <- E.try (E.evaluate (forced (valueLimit + 1) text))
  case r of
    Right n
      | n > valueLimit -> emit "L" (show valueLimit)
      | otherwise -> emit "V" text
    Left (e :: E.SomeException) -> describe messageLimit e

describe :: Int -> E.SomeException -> IO ()
describe messageLimit e =
  case E.fromException e of
    Just (a :: E.AsyncException) -> emit "R" (show a)
    Nothing -> do
      emit "X" (exceptionType e)
      r <- E.try (E.evaluate (forced (messageLimit + 1) (message e)))
      case r of
        Right n
          | n > messageLimit -> emit "T" (take messageLimit (message e))
          | otherwise -> emit "M" (message e)
        Left (_ :: E.SomeException) -> emit "U" ""

exceptionType :: E.SomeException -> String
exceptionType (E.SomeException inner) = show (T.typeOf inner)

message :: E.SomeException -> String
message e = case E.fromException e of
  Just (E.ErrorCallWithLocation msg _) -> msg
  Nothing -> E.displayException e

escape :: Char -> String
escape c
  | c == '\\\\' = "\\\\\\\\"
  | c >= ' ' && c <= '~' = [c]
  | otherwise = "\\\\u" ++ N.showHex (fromEnum c) ";"

emit :: String -> String -> IO ()
emit tag payload = do
  putStr (tag ++ " " ++ concatMap escape payload ++ "\\n")
  IO.hFlush IO.stdout
"""


def _ghc_flags(settings: GhcSettings) -> list[str]:
    flags = [settings.optimisation, "-v0", "-w", "-package-env", "-", "-hide-all-packages"]
    for pkg in PACKAGES:
        flags += ["-package", pkg]
    flags += ["-outputdir", "build", "-i."]
    if settings.link == "dynamic":
        flags.append("-dynamic")
    return flags


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _driver_script(ghc: str, names: Sequence[str], settings: GhcSettings) -> str:
    """The shell script run confined: compile all, build Main from what compiled, link."""
    flags = " ".join(_sh_quote(f) for f in _ghc_flags(settings))
    files = " ".join(f"{n}.hs" for n in names)
    # First try: a Main importing every module, so an all-good batch compiles and
    # links in one GHC run.  If any module fails, GHC skips Main (and with
    # -fkeep-going still compiles every other module); then a Main importing only
    # the modules that produced object files is linked in a second run.
    return f"""set -u
if [ ! -x {_sh_quote(ghc)} ]; then echo "cannot execute {ghc} inside the sandbox" >&2; exit {_NO_GHC_EXIT}; fi
{{
  cat main_head.txt
  for m in {" ".join(names)}; do echo "import qualified $m"; done
  cat main_mid.txt
  for m in {" ".join(names)}; do echo "  , (\\"$m\\", $m.{CHECK_NAME})"; done
  cat main_tail.txt
}} > Main.hs
{_sh_quote(ghc)} {flags} --make -fkeep-going -rtsopts -o runner Main.hs {files}
: > built.txt
for m in {" ".join(names)}; do
  if [ -f "build/$m.o" ] && [ -f "build/$m.hi" ]; then echo "$m" >> built.txt; fi
done
if [ ! -f runner ] && [ -s built.txt ]; then
  {{
    cat main_head.txt
    while read -r m; do echo "import qualified $m"; done < built.txt
    cat main_mid.txt
    while read -r m; do echo "  , (\\"$m\\", $m.{CHECK_NAME})"; done < built.txt
    cat main_tail.txt
  }} > Main.hs
  echo '{LINK_MARK}' >&2
  {_sh_quote(ghc)} {flags} --make -rtsopts -o runner Main.hs
fi
"""


def split_errors(stderr: str) -> tuple[dict[str, str], str]:
    """GHC's compile-phase stderr split per module ``S<hash>``; also the link-phase text."""
    compile_part, _, link_part = stderr.partition(LINK_MARK + "\n")
    errors: dict[str, list[str]] = {}
    current: str | None = None
    for line in compile_part.splitlines():
        m = _ERROR_HEAD_RE.match(line)
        if m:
            current = m.group(1)
            errors.setdefault(current, []).append(line)
        elif line and not line[0].isspace():
            current = None  # a diagnostic about something else
        elif current is not None:
            errors[current].append(line)
    return {k: "\n".join(v).strip() for k, v in errors.items()}, link_part


def _excerpt(text: str, name: str, limit: int = EXCERPT_CHARS) -> str:
    text = text.replace(name, "Program")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unescape(payload: str) -> str:
    return re.sub(
        r"\\\\|\\u([0-9a-f]+);",
        lambda m: "\\" if m.group(0) == "\\\\" else chr(min(int(m.group(1), 16), 0x10FFFF)),
        payload,
    )


def parse_run(result: Any, name: str) -> CheckOutcome:
    """Turn the runner's CommandResult into a CheckOutcome."""
    records: list[tuple[str, str]] = []
    for line in result.stdout.decode("ascii", "replace").split("\n"):
        if len(line) >= 2 and line[1] == " " and line[0] in "VLXMTURN":
            records.append((line[0], _unescape(line[2:])))
    base = dict(compiled=True, seconds=result.seconds, module=name)
    tags = dict(records)
    if "V" in tags:
        return CheckOutcome("value", value=tags["V"], **base)
    if "L" in tags:
        return CheckOutcome("killed", detail=f"value longer than {tags['L']} characters", **base)
    if "R" in tags:
        return CheckOutcome("killed", detail=f"GHC runtime: {tags['R']}", **base)
    if "X" in tags:
        if "M" in tags or "T" in tags:
            msg = tags.get("M", tags.get("T"))
            msg = _excerpt(msg, name, 10**9)
        elif "U" in tags:
            msg = "<message could not be shown>"
        else:
            msg = "<message did not finish>"
        return CheckOutcome("exception", exc_type=tags["X"], exc_message=msg, **base)
    if "N" in tags:
        return CheckOutcome("error", detail="check missing from the runner", **base)
    if result.status == "timeout":
        return CheckOutcome("timeout", detail="wall-clock limit reached", **base)
    if result.status == "killed":
        return CheckOutcome("killed", detail=result.detail or "killed", **base)
    if result.status == "error":
        return CheckOutcome("error", detail=result.detail or "sandbox error", **base)
    err = result.stderr.decode("utf-8", "replace").strip()
    low = err.lower()
    if "heap exhausted" in low or "out of memory" in low or "stack overflow" in low or "heap overflow" in low:
        return CheckOutcome("killed", detail=f"GHC runtime: {err.splitlines()[-1][:300]}", **base)
    return CheckOutcome(
        "killed", detail=f"exited with code {result.exit_code} without a result: {err[:300]}", **base
    )


# ---------------------------------------------------------------- the checker


@dataclass
class _Compiled:
    """Outcome of compiling one group: which modules got into which runner, and errors."""

    binary: bytes | None = None
    built: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


class GhcChecker:
    """Compiles and runs Haskell checks in batches, confined by a Sandbox.

    >>> with GhcChecker() as checker:                            # doctest: +SKIP
    ...     [out] = checker.check([("f :: Int -> Int -> Int\\nf a b = a * b\\n", "f", ["6", "7"])])
    ...     out.status, out.value
    ('value', '42')

    ``sandbox`` may be an existing :class:`selfplay.sandbox.Sandbox` (its tmpfs
    must hold a compile: ``tmpfs_mb`` of 256 or more); otherwise one is started
    with ``workers`` fork servers and closed with the checker.  Compiled runners
    and compile errors are remembered per module (the name is a content hash), so
    re-running a request, as a divergence confirmation does, costs no compile.
    """

    def __init__(
        self,
        settings: GhcSettings | None = None,
        *,
        workers: int = 2,
        sandbox: Any = None,
        cache_binaries: int = 8,
    ):
        from ..sandbox import Sandbox, SandboxLimits

        self.settings = settings or GhcSettings()
        self.ghc = find_ghc(self.settings.ghc)
        self.version, self.extensions = ghc_facts(self.ghc)
        self._salt = "|".join([self.version, self.settings.optimisation, self.settings.link, *PACKAGES, "v1"])
        self._own_sandbox = sandbox is None
        if sandbox is None:
            sandbox = Sandbox(
                workers=workers,
                limits=SandboxLimits(
                    memory_mb=1024, max_processes=64, max_open_files=256, max_file_mb=256, tmpfs_mb=768
                ),
            )
        if getattr(getattr(sandbox, "limits", None), "tmpfs_mb", 768) < 256:
            raise ValueError(
                "the sandbox's tmpfs is too small for compiling: create it with "
                "SandboxLimits(tmpfs_mb=256) or more"
            )
        self.sandbox = sandbox
        s = self.settings
        self.compile_limits = SandboxLimits(
            memory_mb=s.compile_memory_mb, max_processes=64, max_open_files=256, max_file_mb=256, tmpfs_mb=768
        )
        self.run_limits = SandboxLimits(
            memory_mb=s.run_memory_mb, max_processes=16, max_open_files=64, max_file_mb=1, tmpfs_mb=768
        )
        self._lock = threading.Lock()
        self._binaries: OrderedDict[int, bytes] = OrderedDict()
        self._binary_ids = 0
        self._cache_binaries = max(1, cache_binaries)
        self._module_binary: dict[str, int] = {}
        self._compile_errors: OrderedDict[str, CheckOutcome] = OrderedDict()
        self._executor = ThreadPoolExecutor(max(1, s.parallel_compiles), thread_name_prefix="ghc")
        # ghc_invocations: confined compile runs (each is one or two GHC processes:
        # ghc_processes); compile_seconds: their wall time summed; runs: check runs.
        self.stats = {"ghc_invocations": 0, "ghc_processes": 0, "compile_seconds": 0.0, "runs": 0}

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self._own_sandbox:
            self.sandbox.close()

    def __enter__(self) -> GhcChecker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------ public

    def prepare(self, request: CheckRequest | Sequence[Any]) -> tuple[str, str | None, CheckOutcome | None]:
        """(module name, module text, early outcome) of one request; no GHC involved."""
        req = CheckRequest.of(request)
        name = module_name_for(req.source, req.function, req.args, self._salt)
        text, rejected, early = build_module(name, req.source, req.function, req.args, self.extensions)
        if rejected:
            return name, None, CheckOutcome("rejected", detail=rejected, module=name)
        if early:
            return name, None, CheckOutcome("compile_error", compile_error=early, module=name)
        return name, text, None

    def check(self, requests: Sequence[CheckRequest | Sequence[Any]]) -> list[CheckOutcome]:
        """Compile and run every request; outcomes in the same order."""
        reqs = [CheckRequest.of(r) for r in requests]
        outcomes: list[CheckOutcome | None] = [None] * len(reqs)
        texts: dict[str, str] = {}
        names: list[str] = []
        for i, req in enumerate(reqs):
            name, text, early = self.prepare(req)
            names.append(name)
            if early is not None:
                outcomes[i] = early
            elif text is not None:
                texts[name] = text
        with self._lock:
            cached_errors = {n: self._compile_errors[n] for n in texts if n in self._compile_errors}
            have: dict[int, tuple[bytes, list[str]]] = {}  # runner id -> (runner, cached modules)
            for n in texts:
                ident = self._module_binary.get(n)
                if n not in cached_errors and ident in self._binaries:
                    have.setdefault(ident, (self._binaries[ident], []))[1].append(n)
        cached = {n for _, mods in have.values() for n in mods}
        todo = [n for n in texts if n not in cached_errors and n not in cached]
        groups = self._groups(todo)
        wanted: dict[str, set[float]] = {}  # module -> the run timeouts asked for it
        for i, req in enumerate(reqs):
            if outcomes[i] is None:
                wanted.setdefault(names[i], set()).add(self._timeout(req))
        # Compile each group and run its checks; groups proceed in parallel.
        run_results: dict[tuple[str, float], CheckOutcome] = {}
        futures = [self._executor.submit(self._compile_and_run, group, texts, wanted) for group in groups]
        for binary, mods in have.values():
            run_results.update(self._run(binary, mods, wanted))
        for fut in futures:
            run_results.update(fut.result())
        for i, req in enumerate(reqs):
            if outcomes[i] is not None:
                continue
            name = names[i]
            if name in cached_errors:
                outcomes[i] = replace(cached_errors[name])
                continue
            outcomes[i] = replace(run_results[(name, self._timeout(req))])
        return [o for o in outcomes if o is not None]

    # ------------------------------------------------------------ internals

    def _timeout(self, req: CheckRequest) -> float:
        return float(req.timeout) if req.timeout is not None else self.settings.run_timeout

    def _groups(self, names: list[str]) -> list[list[str]]:
        s = self.settings
        if not names:
            return []
        count = max(1, -(-len(names) // s.batch_modules))
        if count < s.parallel_compiles:
            count = max(count, min(s.parallel_compiles, len(names) // s.min_split_modules))
        size = -(-len(names) // count)
        return [names[i : i + size] for i in range(0, len(names), size)]

    def _remember_binary(self, binary: bytes, modules: Iterable[str]) -> int:
        with self._lock:
            self._binary_ids += 1
            ident = self._binary_ids
            self._binaries[ident] = binary
            while len(self._binaries) > self._cache_binaries:
                self._binaries.popitem(last=False)
            for m in modules:
                self._module_binary[m] = ident
            if len(self._module_binary) > 100_000:
                live = set(self._binaries)
                self._module_binary = {k: v for k, v in self._module_binary.items() if v in live}
        return ident

    def _remember_error(self, name: str, outcome: CheckOutcome) -> None:
        with self._lock:
            self._compile_errors[name] = outcome
            while len(self._compile_errors) > 10_000:
                self._compile_errors.popitem(last=False)

    def _compile_and_run(
        self, group: list[str], texts: dict[str, str], wanted: dict[str, set[float]]
    ) -> dict[tuple[str, float], CheckOutcome]:
        results: dict[tuple[str, float], CheckOutcome] = {}
        failed: dict[str, CheckOutcome] = {}  # not cached: the compiler could not run at all
        for binary, built in self._compile_all(group, texts, failed):
            results.update(self._run(binary, built, wanted))
        for name in group:
            with self._lock:
                err = failed.get(name) or self._compile_errors.get(name)
            if err is not None:
                for timeout in wanted.get(name, ()):
                    results[(name, timeout)] = replace(err)
        return results

    def _compile_all(
        self, names: list[str], texts: dict[str, str], failed: dict[str, CheckOutcome]
    ) -> list[tuple[bytes, list[str]]]:
        """Compile ``names`` until each is built or has a compile error; returns (runner, modules) pairs.

        When the compiler cannot be started at all (a sandbox failure, not the
        programs' fault) every module gets an uncached 'error' outcome in ``failed``.
        """
        linked: list[tuple[bytes, list[str]]] = []
        queue: deque[list[str]] = deque([names])
        while queue:
            group = queue.popleft()
            res, failure = self._compile_once(group, texts)
            if failure is not None and failure.startswith(_SANDBOX_FAILURE):
                for name in group:
                    failed[name] = CheckOutcome("error", detail=failure, module=name)
                continue
            if failure is not None:
                if len(group) == 1:
                    self._remember_error(
                        group[0], CheckOutcome("compile_error", compile_error=failure, module=group[0])
                    )
                else:
                    queue.extend(_halves(group))
                continue
            resolved = 0
            for name in group:
                if name in res.errors and name not in res.built:
                    self._remember_error(
                        name,
                        CheckOutcome(
                            "compile_error", compile_error=_excerpt(res.errors[name], name), module=name
                        ),
                    )
                    resolved += 1
            if res.built and res.binary is not None:
                self._remember_binary(res.binary, res.built)
                linked.append((res.binary, list(res.built)))
                resolved += len(res.built)
            elif res.built:  # compiled but the link failed: find the culprit(s)
                if len(res.built) == 1:
                    name = res.built[0]
                    self._remember_error(
                        name,
                        CheckOutcome(
                            "compile_error",
                            compile_error=_excerpt(res.errors.get("__link__", "link failed"), name),
                            module=name,
                        ),
                    )
                    resolved += 1
                else:
                    queue.extend(_halves(res.built))
            leftover = [n for n in group if n not in res.built and n not in res.errors]
            if leftover:
                if resolved:
                    queue.append(leftover)
                elif len(leftover) == 1:
                    why = res.errors.get("__other__") or "GHC stopped without a diagnosis for this program"
                    self._remember_error(
                        leftover[0],
                        CheckOutcome(
                            "compile_error", compile_error=_excerpt(why, leftover[0]), module=leftover[0]
                        ),
                    )
                else:
                    queue.extend(_halves(leftover))
        return linked

    def _compile_once(self, group: list[str], texts: dict[str, str]) -> tuple[_Compiled, str | None]:
        """One confined GHC run over ``group``: (result, failure text when nothing is attributable)."""
        s = self.settings
        files = {f"{n}.hs": texts[n] for n in group}
        files.update(
            {
                "build.sh": _driver_script(self.ghc, group, s),
                "main_head.txt": _MAIN_HEAD,
                "main_mid.txt": _MAIN_MID,
                "main_tail.txt": _MAIN_TAIL,
            }
        )
        timeout = s.compile_timeout + s.compile_timeout_per_module * len(group)
        started = time.monotonic()
        result = self.sandbox.run_command(
            ["/bin/sh", "build.sh"],
            timeout,
            files=files,
            collect=["runner", "built.txt"],
            limits=self.compile_limits,
            max_output_kb=4096,
            max_collect_kb=256 * 1024,
        )
        with self._lock:
            self.stats["ghc_invocations"] += 1
            self.stats["compile_seconds"] += time.monotonic() - started
        stderr = result.text("stderr")
        if result.status == "exited" and result.exit_code == _NO_GHC_EXIT:
            return _Compiled(), f"{_SANDBOX_FAILURE}: {stderr.strip()[:300]}"
        with self._lock:
            self.stats["ghc_processes"] += 2 if LINK_MARK in stderr else 1
        if result.status in ("timeout", "killed", "error"):
            what = {
                "timeout": f"compilation took longer than {timeout:.0f} s",
                "killed": f"compiler killed ({result.detail})",
                "error": f"{_SANDBOX_FAILURE} ({result.detail})",
            }[result.status]
            return _Compiled(), f"{what}\n{stderr[-EXCERPT_CHARS // 2 :]}".strip()
        errors, link_text = split_errors(stderr)
        built_text = result.files.get("built.txt", b"").decode("ascii", "replace")
        built = [n for n in built_text.split() if n in set(group)]
        out = _Compiled(binary=result.files.get("runner"), built=built, errors=errors)
        if built and out.binary is None:
            out.errors["__link__"] = link_text.strip() or "link failed"
        unattributed = [
            ln for ln in stderr.splitlines() if ln.startswith("ghc") and not _ERROR_HEAD_RE.match(ln)
        ]
        if unattributed:
            out.errors["__other__"] = "\n".join(unattributed)[:EXCERPT_CHARS]
        return out, None

    def _run(
        self, binary: bytes, modules: list[str], wanted: dict[str, set[float]]
    ) -> dict[tuple[str, float], CheckOutcome]:
        s = self.settings
        heap = max(16, s.run_memory_mb * 3 // 4)
        by_timeout: dict[float, list[str]] = {}
        for name in modules:
            for timeout in sorted(wanted.get(name, ())):
                by_timeout.setdefault(timeout, []).append(name)
        results: dict[tuple[str, float], CheckOutcome] = {}
        cap_kb = max(64, (s.max_value_chars * 8 + s.max_message_chars * 8) // 1024 + 16)
        for timeout, names in by_timeout.items():
            argvs = [
                [
                    "./runner",
                    n,
                    str(s.max_value_chars),
                    str(s.max_message_chars),
                    "+RTS",
                    f"-M{heap}m",
                    "-RTS",
                ]
                for n in names
            ]
            done = self.sandbox.run_commands(
                argvs,
                timeout,
                files={"runner": binary},
                executables=["runner"],
                limits=self.run_limits,
                max_output_kb=cap_kb,
            )
            with self._lock:
                self.stats["runs"] += len(done)
            for name, res in zip(names, done):
                results[(name, timeout)] = parse_run(res, name)
        return results


def _halves(items: list[str]) -> list[list[str]]:
    mid = len(items) // 2
    return [items[:mid], items[mid:]]


def check_haskell(
    requests: Sequence[CheckRequest | Sequence[Any]], settings: GhcSettings | None = None, workers: int = 2
) -> list[CheckOutcome]:
    """One-shot convenience: start a checker, run the batch, close it."""
    with GhcChecker(settings, workers=workers) as checker:
        return checker.check(requests)
