"""Haskell checks with real GHC: batching, per-check isolation, screening, confinement, divergence.

GHC is slow to start, so the GHC-backed tests share one checker and a handful of
batches (about six confined GHC invocations in all).  They are skipped, with a
message naming the package, when ``ghc`` is not installed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from selfplay.errors import MissingToolError
from selfplay.haskell.divergence import (
    Comparison,
    PairCheck,
    behaviours_agree,
    check_pair,
    check_pairs,
    compare_outcomes,
)
from selfplay.haskell.ghc_check import (
    CheckOutcome,
    CheckRequest,
    GhcChecker,
    GhcSettings,
    build_module,
    split_errors,
)
from selfplay.sandbox import Sandbox, SandboxLimits

HAVE_GHC = shutil.which("ghc") is not None
needs_ghc = pytest.mark.skipif(
    not HAVE_GHC,
    reason="ghc not found: install the Debian package `ghc` (apt-get install ghc) to run the real GHC tests",
)
REPO = Path(__file__).resolve().parents[1]


def strong_isolation(iso: dict) -> bool:
    return bool(
        iso.get("netns") and iso.get("pidns") and iso.get("mountns") and isinstance(iso.get("uid"), int)
    )


def sandbox_uids(sb: Sandbox) -> set[int]:
    return {s.lease.uid for s in sb._servers if s.lease is not None}


def processes_owned_by(uids: set[int]) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid in uids:
                    found.append(int(pid))
            except OSError:
                pass
    return found


# ------------------------------------------------------------------ programs of the big batch

MULT3 = "f :: Int -> Int -> Int -> Int\nf a b c = a * b + c\n"
STRINGS = """module Text.Tools
  ( describe
  , shout
  ) where

import Data.Char (toUpper, isDigit)
import Data.List (sort, nub)
import qualified Data.Map as M

shout :: String -> String
shout = map toUpper

describe :: String -> Char -> (Int, [Maybe Int]) -> (String, Maybe Char, Int)
describe s c (k, ms) =
  ( shout (sort (nub s))
  , if c `elem` s then Just c else Nothing
  , k + sum [m | Just m <- ms] + M.size (M.fromList (zip s [0 :: Int ..])) + length (filter isDigit s)
  )
"""
DOUBLES = "avg :: [Double] -> Double\navg xs = sum xs / fromIntegral (length xs)\n"
THIRD = "third :: Double -> Double -> Double\nthird a b = a / b\n"
MAIN_PROG = """module Main (main) where

main :: IO ()
main = print (solve 3)

solve :: Int -> [Int]
solve n = [n, n - 1 .. 1]
"""
SOLUTION_A = "module Solution where\n\nscore :: Int -> Int\nscore x = x + 100\n"
SOLUTION_B = "module Solution where\n\nscore :: Int -> Int\nscore x = x - 100\n"
INDENTED = "module Bar where\n  twice :: Int -> Int\n  twice x = 2 * x\n"
NEG = "absDiff :: Int -> Int -> Int\nabsDiff a b = abs (a - b)\n"
EITHER = 'pick :: Bool -> Either String Int\npick b = if b then Right 1 else Left "no"\n'

SYNTAX_ERROR = "broken :: Int -> Int\nbroken x = x +\n"
LOOP = "spin :: Int -> Int\nspin x = if x < 0 then x else spin (x + 1)\n"
MEMORY = "hog :: Int -> Int\nhog _ = let xs = [1 ..] :: [Integer] in length xs + fromInteger (sum xs)\n"
ERROR = 'boom :: Int -> Int\nboom n = if n > 0 then error ("bad input " ++ show n) else n\n'
DIVZERO = "ratio :: Int -> Int -> Int\nratio a b = a `div` b\n"
PARTIAL = "firstOf :: [Int] -> Int\nfirstOf (x : _) = x\n"
LATE_ERROR = 'items :: Int -> [Int]\nitems n = [n, n + 1, error "third"]\n'
INFINITE = "nats :: Int -> [Int]\nnats n = [n ..]\n"
UNSAFE = (
    "import System.IO.Unsafe (unsafePerformIO)\n\nsneaky :: Int -> Int\n"
    'sneaky x = unsafePerformIO (writeFile "/tmp/pwned" "x" >> return x)\n'
)
TH = "{-# LANGUAGE TemplateHaskell #-}\nsplice :: Int -> Int\nsplice x = x\n"
OPTIONS = "{-# OPTIONS_GHC -F -pgmF /bin/sh #-}\nopts :: Int -> Int\nopts x = x\n"
BAD_IMPORT_SYNTAX = "import (Data.List\nhdr :: Int -> Int\nhdr x = x\n"

BATCH = {
    "mult3": (MULT3, "f", ["2", "3", "4"]),
    "mult3_neg": (MULT3, "f", ["(-2)", "3", "-4"]),
    "strings": (STRINGS, "describe", ['"b1a2b"', "'a'", "(5, [Just 1, Nothing, Just 10])"]),
    "shout_unicode": (STRINGS, "shout", ['"caf\\233 \\955"']),
    "avg": (DOUBLES, "avg", ["[1.5, 2.5, 3.5]"]),
    "third": (THIRD, "third", ["1", "3"]),
    "main_prog": (MAIN_PROG, "solve", ["4"]),
    "solution_a": (SOLUTION_A, "score", ["1"]),
    "solution_b": (SOLUTION_B, "score", ["1"]),
    "indented": (INDENTED, "twice", ["21"]),
    "neg": (NEG, "absDiff", ["3", "(-4)"]),
    "either": (EITHER, "pick", ["False"]),
    "mult3_again": (MULT3, "f", ["2", "3", "4"]),
    "syntax_error": (SYNTAX_ERROR, "broken", ["1"]),
    "literal_type_error": (MULT3, "f", ["2", "True", "4"]),
    "loop": (LOOP, "spin", ["0"]),
    "memory": (MEMORY, "hog", ["0"]),
    "error": (ERROR, "boom", ["7"]),
    "divzero": (DIVZERO, "ratio", ["1", "0"]),
    "partial": (PARTIAL, "firstOf", ["[]"]),
    "late_error": (LATE_ERROR, "items", ["1"]),
    "infinite": (INFINITE, "nats", ["1"]),
    "unsafe": (UNSAFE, "sneaky", ["1"]),
    "template_haskell": (TH, "splice", ["1"]),
    "options_pragma": (OPTIONS, "opts", ["1"]),
    "bad_import_syntax": (BAD_IMPORT_SYNTAX, "hdr", ["1"]),
}
GOOD = {
    "mult3": "10",
    "mult3_neg": "-10",
    "strings": "(\"12AB\",Just 'a',22)",
    "shout_unicode": '"CAF\\201 \\923"',
    "avg": "2.5",
    "third": "0.3333333333333333",
    "main_prog": "[4,3,2,1]",
    "solution_a": "101",
    "solution_b": "-99",
    "indented": "42",
    "neg": "7",
    "either": 'Left "no"',
    "mult3_again": "10",
}
SETTINGS = GhcSettings(run_timeout=2.0, run_memory_mb=256)


@pytest.fixture(scope="module")
def checker():
    if not HAVE_GHC:
        pytest.skip("ghc not found: install the Debian package `ghc`")
    with GhcChecker(SETTINGS) as ghc_checker:
        yield ghc_checker


@pytest.fixture(scope="module")
def batch(checker):
    labels = list(BATCH)
    reqs = []
    for label in labels:
        source, function, args = BATCH[label]
        timeout = 20.0 if label == "memory" else None
        reqs.append(CheckRequest(source, function, tuple(args), timeout))
    started = time.monotonic()
    outcomes = checker.check(reqs)
    elapsed = time.monotonic() - started
    return dict(zip(labels, outcomes)), elapsed, dict(checker.stats)


# ------------------------------------------------------------------ the batch


@needs_ghc
def test_good_programs_give_exact_values_despite_bad_batch_mates(batch):
    outcomes, _, _ = batch
    for label, expected in GOOD.items():
        out = outcomes[label]
        assert (out.status, out.value) == ("value", expected), (label, out)
        assert out.compiled and out.exc_type is None and out.compile_error is None


@needs_ghc
def test_compile_errors_are_per_request(batch):
    outcomes, _, _ = batch
    syntax = outcomes["syntax_error"]
    assert syntax.status == "compile_error" and not syntax.compiled
    assert "parse error" in syntax.compile_error
    typed = outcomes["literal_type_error"]
    assert typed.status == "compile_error"
    assert "Bool" in typed.compile_error and "Int" in typed.compile_error
    # A header GHC cannot even read aborts a whole --make build; the batch recovers.
    header = outcomes["bad_import_syntax"]
    assert header.status == "compile_error" and "parse error" in header.compile_error


@needs_ghc
def test_runtime_failures_stay_in_their_own_check(batch):
    outcomes, _, _ = batch
    assert outcomes["loop"].status == "timeout"
    assert 1.9 < outcomes["loop"].seconds < 4.0
    mem = outcomes["memory"]
    assert mem.status == "killed", mem
    assert "memory" in mem.detail or "heap" in mem.detail
    err = outcomes["error"]
    assert (err.status, err.exc_type, err.exc_message) == ("exception", "ErrorCall", "bad input 7")
    div = outcomes["divzero"]
    assert (div.status, div.exc_type, div.exc_message) == ("exception", "ArithException", "divide by zero")
    partial = outcomes["partial"]
    assert (partial.status, partial.exc_type) == ("exception", "PatternMatchFail")
    assert "Non-exhaustive patterns in function firstOf" in partial.exc_message
    late = outcomes["late_error"]
    assert (late.status, late.exc_type, late.exc_message) == ("exception", "ErrorCall", "third")
    infinite = outcomes["infinite"]
    assert infinite.status == "killed" and "longer than" in infinite.detail


@needs_ghc
def test_hostile_programs_are_rejected_with_a_reason(batch):
    outcomes, _, _ = batch
    assert outcomes["unsafe"].status == "rejected" and "unsafePerformIO" in outcomes["unsafe"].detail
    assert outcomes["template_haskell"].status == "rejected"
    assert "TemplateHaskell" in outcomes["template_haskell"].detail
    assert (
        outcomes["options_pragma"].status == "rejected" and "OPTIONS_GHC" in outcomes["options_pragma"].detail
    )
    assert not Path("/tmp/pwned").exists()


@needs_ghc
def test_batch_is_cheap_in_ghc_invocations(batch):
    _, elapsed, stats = batch
    # two parallel groups, plus one recompile of the group whose header aborted GHC
    assert stats["ghc_invocations"] <= 4, stats
    assert elapsed < 60


@needs_ghc
def test_same_request_same_outcome_in_another_batch(batch, checker):
    outcomes, _, _ = batch
    labels = ["mult3", "strings", "avg", "error", "divzero", "partial", "literal_type_error"]
    with GhcChecker(SETTINGS, sandbox=checker.sandbox) as fresh:  # no shared caches: compiles again
        again = fresh.check([BATCH[label] for label in labels])
        assert fresh.stats["ghc_invocations"] == 1
    for label, out in zip(labels, again):
        first = outcomes[label]
        assert out.to_dict() | {"seconds": 0} == first.to_dict() | {"seconds": 0}, label


@needs_ghc
def test_rerun_uses_the_cached_runner(batch, checker):
    before = checker.stats["ghc_invocations"]
    mult3 = BATCH["mult3"]
    again = checker.check([mult3, BATCH["syntax_error"], BATCH["divzero"], (*mult3, 3.0)])
    assert checker.stats["ghc_invocations"] == before
    assert [o.status for o in again] == ["value", "compile_error", "exception", "value"]
    assert again[0].value == again[3].value == "10"


# ------------------------------------------------------------------ screening (no GHC needed)


@pytest.mark.parametrize(
    "source, needle",
    [
        ("import System.IO.Unsafe\nf :: Int -> Int\nf = id\n", "System.IO.Unsafe"),
        ("import Unsafe.Coerce\nf :: Int -> Int\nf = id\n", "Unsafe.Coerce"),
        ("f :: Int -> Int\nf x = unsafeCoerce x\n", "unsafeCoerce"),
        ("{-# LANGUAGE QuasiQuotes #-}\nf :: Int -> Int\nf = id\n", "QuasiQuotes"),
        ("{-# LANGUAGE CPP #-}\nf :: Int -> Int\nf = id\n", "CPP"),
        ("{-# language Trustworthy #-}\nf :: Int -> Int\nf = id\n", "Trustworthy"),
        ("{-# OPTIONS_GHC -fplugin=Evil #-}\nf :: Int -> Int\nf = id\n", "OPTIONS_GHC"),
        ('{-# ANN module "x" #-}\nf :: Int -> Int\nf = id\n', "ANN"),
        ('foreign import ccall "system" sys :: Int -> IO Int\nf :: Int -> Int\nf = id\n', "foreign import"),
        ("import System.Process (system)\nf :: Int -> Int\nf = id\n", "System.Process"),
        ("import qualified Foreign.Ptr as P\nf :: Int -> Int\nf = id\n", "Foreign.Ptr"),
        ('import Debug.Trace\nf :: Int -> Int\nf x = trace "hi" x\n', "Debug.Trace"),
        ("import Main\nf :: Int -> Int\nf = id\n", "imports Main"),
        ("import S0123456789abcdef0123\nf :: Int -> Int\nf = id\n", "each other"),
    ],
)
def test_screen_rejects_hostile_source(source, needle):
    text, rejected, early = build_module("S" + "0" * 20, source, "f", ["1"])
    assert text is None and early is None
    assert needle in rejected


def test_screen_ignores_comments_and_strings_and_checks_arguments():
    source = (
        "-- never call unsafePerformIO here\n{- import System.Process -}\n"
        'f :: String -> String\nf s = s ++ "unsafeCoerce import Foreign"\n'
    )
    text, rejected, early = build_module("S" + "1" * 20, source, "f", ['"foreign import"'])
    assert rejected is None and early is None and "selfplayCheck__" in text
    _, rejected, _ = build_module("S" + "1" * 20, source, "f", ['unsafePerformIO (return "x")'])
    assert "argument 1" in rejected
    _, rejected, _ = build_module("S" + "1" * 20, source, "f x", ["1"])
    assert "identifier" in rejected
    _, rejected, _ = build_module("S" + "1" * 20, source, "f", ["{-# LANGUAGE CPP #-} 1"])
    assert "pragma" in rejected


def test_module_text_keeps_imports_pragmas_and_line_numbers():
    name = "S" + "a" * 20
    source = (
        "{-# LANGUAGE TupleSections #-}\nmodule My.Mod\n  ( g\n  ) where\n\nimport Data.List (sort)\n"
        "\ng :: [Int] -> [Int]\ng = sort\n"
    )
    text, _, _ = build_module(name, source, "g", ["[2,1]"])
    assert text.startswith("{-# LANGUAGE Safe #-} {-# LANGUAGE TupleSections #-}\n")
    assert f"module {name} where\n" in text and "My.Mod" not in text
    assert "import Data.List (sort)" in text and "import Prelude\n" in text
    assert f'{{-# LINE 6 "{name}.hs" #-}}' in text  # 'import Data.List' was line 6
    assert text.rstrip().endswith(f"selfplayCheck__ = SelfplayPrelude__.show ({name}.g ([2,1]))")
    hiding = "import Prelude hiding (lookup)\nlookup :: Int -> Int\nlookup = id\n"
    text, _, _ = build_module(name, hiding, "lookup", ["1"])
    assert "import Prelude\n" not in text  # the program's own Prelude import stays in charge


def test_split_errors_maps_diagnostics_to_modules():
    a, b = "S" + "a" * 20, "S" + "b" * 20
    stderr = (
        f"{a}.hs:3:5: error:\n    Variable not in scope: y\n  |\n"
        f"ghc: {b}.hs:1:14-24: Incompatible Safe Haskell flags!\n"
        f"--selfplay-link--\n/usr/bin/ld: cannot find x\n"
    )
    errors, link = split_errors(stderr)
    assert set(errors) == {a, b}
    assert "Variable not in scope" in errors[a]
    assert "ld: cannot find" in link


def test_missing_ghc_is_a_clear_error():
    with pytest.raises(MissingToolError) as info:
        GhcChecker(GhcSettings(ghc="no-such-ghc-binary-xyz"))
    assert "install the Debian package `ghc`" in str(info.value)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------ divergence


def out(status: str, value: str | None = None, exc: str | None = None) -> CheckOutcome:
    return CheckOutcome(
        status, compiled=status not in ("compile_error", "rejected"), value=value, exc_type=exc
    )


@pytest.mark.parametrize(
    "p, q, expected",
    [
        (out("value", "1"), out("value", "1"), Comparison(True, False, "same_behaviour")),
        (out("value", "1"), out("value", "1.0"), Comparison(True, True, "different_value")),
        (
            out("value", "Just 1"),
            out("exception", exc="ErrorCall"),
            Comparison(True, True, "variant_exception"),
        ),
        (out("value", "1"), out("timeout"), Comparison(True, True, "variant_timeout")),
        (out("value", "1"), out("killed"), Comparison(True, True, "variant_killed")),
        (out("value", "1"), out("compile_error"), Comparison(False, False, "variant_compile_error")),
        (out("value", "1"), out("rejected"), Comparison(False, False, "variant_rejected")),
        (out("value", "1"), out("error"), Comparison(False, False, "variant_error")),
        (out("exception", exc="ErrorCall"), out("value", "1"), Comparison(False, False, "source_exception")),
        (
            out("exception", exc="ErrorCall"),
            out("exception", exc="ArithException"),
            Comparison(False, False, "source_exception"),
        ),
        (out("timeout"), out("value", "1"), Comparison(False, False, "source_timeout")),
        (out("killed"), out("value", "1"), Comparison(False, False, "source_killed")),
        (out("compile_error"), out("value", "1"), Comparison(False, False, "source_compile_error")),
    ],
)
def test_compare_outcomes(p, q, expected):
    assert compare_outcomes(p, q) == expected


def test_behaviours_agree_for_seq_sanity():
    assert behaviours_agree(out("value", "3"), out("value", "3")) is True
    assert behaviours_agree(out("value", "3"), out("value", "4")) is False
    assert behaviours_agree(out("value", "3"), out("exception", exc="ErrorCall")) is False
    assert (
        behaviours_agree(out("exception", exc="ErrorCall"), out("exception", exc="PatternMatchFail")) is True
    )
    assert behaviours_agree(out("exception", exc="ErrorCall"), out("timeout")) is True
    assert behaviours_agree(out("value", "3"), out("compile_error")) is None
    assert behaviours_agree(out("error"), out("value", "3")) is None


SIGN = """sign :: Int -> String
sign n
  | n < 0 = "negative"
  | n == 0 = "zero"
  | otherwise = "positive"
"""
SIGN_INEQ = """signIneq :: Int -> String
signIneq n
  | n <= 0 = "non-positive"
  | otherwise = "positive"
"""
SIGN_LOOPS = """signLoop :: Int -> String
signLoop n
  | n == 7 = signLoop n
  | n < 0 = "negative"
  | n == 0 = "zero"
  | otherwise = "positive"
"""
HEAD_P = "safeHead :: [Int] -> Int\nsafeHead xs = head xs\n"


@needs_ghc
def test_check_pairs_with_ghc(checker):
    pairs = [
        PairCheck(SIGN, "sign", SIGN_INEQ, "signIneq", ("0",)),  # the paper's SINQ example
        PairCheck(SIGN, "sign", SIGN_INEQ, "signIneq", ("5",)),
        PairCheck(SIGN, "sign", SIGN_LOOPS, "signLoop", ("7",), 1.0),
        PairCheck(SIGN, "sign", SIGN_INEQ, "signIneq", ("True",)),  # x does not type-check
        PairCheck(HEAD_P, "safeHead", HEAD_P, "safeHead", ("[]",)),  # P raises: invalid
    ]
    before = checker.stats["ghc_invocations"]
    verdicts = check_pairs(checker, pairs)
    assert [(v["valid"], v["diverges"], v["reason"]) for v in verdicts] == [
        (True, True, "different_value"),
        (True, False, "same_behaviour"),
        (True, True, "variant_timeout"),
        (False, False, "source_compile_error"),
        (False, False, "source_exception"),
    ]
    assert verdicts[0]["p"]["value"] == '"zero"' and verdicts[0]["q"]["value"] == '"non-positive"'
    # The confirmation reruns reuse the compiled runner.
    assert checker.stats["ghc_invocations"] - before <= 2
    single = check_pair(checker, SIGN, "sign", SIGN_INEQ, "signIneq", ["0"])
    assert single["diverges"] and checker.stats["ghc_invocations"] - before <= 2


# ------------------------------------------------------------------ confinement of executables


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, limits=SandboxLimits(memory_mb=512)) as sandbox:
        yield sandbox


def test_command_runs_unprivileged_in_a_private_dir(sb):
    r = sb.run_command(["/bin/sh", "-c", "id -u; pwd; ls -A; cat in.txt"], 5.0, files={"in.txt": "hello\n"})
    assert r.ok, r
    uid, cwd, listing, data = r.text().splitlines()
    if strong_isolation(r.isolation):
        assert int(uid) >= 65000
        assert cwd.startswith("/tmp/work/")
    assert listing == "in.txt" and data == "hello"
    assert r.isolation["exec"] is True


def test_command_has_no_network(sb):
    if not strong_isolation(sb.isolation):
        pytest.skip("needs network namespaces (run as root with unshare)")
    probe = (
        "import socket\n"
        "names = [l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]]\n"
        "print(','.join(names))\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('connected')\n"
        "except OSError as e:\n    print('blocked', e.errno)\n"
    )
    r = sb.run_command(["/usr/bin/python3", "-S", "-c", probe], 10.0)
    assert r.ok, (r, r.text("stderr"))
    names, verdict = r.text().splitlines()
    assert names == "lo"
    assert verdict.startswith("blocked")


def test_command_cannot_write_outside_its_dir(sb):
    if not strong_isolation(sb.isolation):
        pytest.skip("needs the mount namespace and a separate uid")
    token = uuid.uuid4().hex
    targets = [
        f"/tmp/pwned_{token}",
        f"/var/tmp/pwned_{token}",
        str(REPO / f"pwned_{token}"),
        f"/root/pwned_{token}",
        f"/etc/pwned_{token}",
    ]
    script = "; ".join(f"(echo x > {t}) 2>/dev/null && echo wrote {t}" for t in targets) + "; true"
    r = sb.run_command(["/bin/sh", "-c", script], 5.0)
    assert r.ok and "wrote /tmp" not in r.text()
    for t in targets:
        assert not os.path.exists(t), t
    for t in targets[2:]:
        assert f"wrote {t}" not in r.text()


def test_command_timeout_kills_the_whole_group(sb):
    started = time.monotonic()
    r = sb.run_command(["/bin/sh", "-c", "sleep 100 & (setsid sleep 100 &) ; sleep 100"], 0.5)
    assert r.status == "timeout" and time.monotonic() - started < 5.0
    uids = sandbox_uids(sb)
    assert uids == set() or processes_owned_by(uids) == []
    health = sb.run_command(["/bin/echo", "ok"], 2.0)
    assert health.text() == "ok\n"


def test_command_limits_output_files_and_exec_errors(sb):
    r = sb.run_command(
        ["/bin/sh", "-c", "exec head -c 3000000 /dev/zero > big"],
        5.0,
        limits=SandboxLimits(memory_mb=512, max_file_mb=1),
    )
    assert r.status == "killed" and r.signal == "SIGXFSZ", r
    r = sb.run_command(["/bin/sh", "-c", "yes | head -c 100000"], 5.0, max_output_kb=4)
    assert r.ok and len(r.stdout) == 4096 and r.stdout_truncated
    r = sb.run_command(["/no/such/program"], 5.0)
    assert r.status == "error" and "could not execute" in r.detail
    # A sandboxed program cannot smuggle a privileged file out through the collected outputs.
    r = sb.run_command(
        ["/bin/sh", "-c", "ln -s /etc/shadow runner; echo data > out"], 5.0, collect=["runner", "out"]
    )
    assert r.ok and "runner" not in r.files and r.files["out"] == b"data\n"
    if sb.isolation.get("fs_view") == "minimal":  # a tool outside the sandbox's view is not inside: say why
        with tempfile.NamedTemporaryFile("w", dir="/tmp", suffix=".sh", delete=False) as fh:
            fh.write("#!/bin/sh\necho hi\n")
        try:
            os.chmod(fh.name, 0o755)
            r = sb.run_command([fh.name], 5.0)
            assert (
                r.status == "error"
                and f"{fh.name} exists on the host but not in the sandbox's filesystem view" in r.detail
            )
        finally:
            os.unlink(fh.name)


def test_tool_dirs_stay_reachable_read_only_under_tmp():
    """A trusted tool kept in /tmp (e.g. Liquid Haskell, or its test double in a checkout
    under /tmp) runs when its folder is named in tool_dirs, and cannot be written."""
    tools = tempfile.mkdtemp(dir="/tmp")
    try:
        os.chmod(tools, 0o755)
        tool = os.path.join(tools, "tool.sh")
        with open(tool, "w") as fh:
            fh.write("#!/bin/sh\necho from-tool\n")
        os.chmod(tool, 0o755)
        with Sandbox(workers=1, tool_dirs=[tools]) as sb:
            if sb.isolation.get("fs_view") != "minimal":
                pytest.skip("needs the mount namespace (the sandbox's own filesystem view)")
            assert sb.run_command([tool], 5.0).text() == "from-tool\n"
            r = sb.run_command(
                ["/bin/sh", "-c", f"echo x > {tools}/w 2>/dev/null && echo wrote || echo refused"], 5.0
            )
            assert r.text() == "refused\n" and not os.path.exists(os.path.join(tools, "w"))
    finally:
        shutil.rmtree(tools)


def test_command_environment_is_scrubbed(sb, monkeypatch):
    monkeypatch.setenv("SELFPLAY_TEST_SECRET", "hunter2")
    r = sb.run_command(["/usr/bin/env"], 5.0, env={"EXTRA": "1"})
    assert "hunter2" not in r.text() and "EXTRA=1" in r.text()


@needs_ghc
def test_compiled_haskell_program_is_confined(sb):
    """Compile (confined) an unrestricted IO program, then run it confined: it cannot escape."""
    if not strong_isolation(sb.isolation):
        pytest.skip("needs namespaces and a separate uid")
    token = uuid.uuid4().hex
    outside = REPO / f"pwned_{token}"
    program = f"""import Control.Exception
import System.IO
main :: IO ()
main = do
  r1 <- try (writeFile "{outside}" "x") :: IO (Either IOException ())
  putStrLn (either (const "write blocked") (const "wrote outside") r1)
  r2 <- try (readFile "/etc/shadow" >>= \\s -> length s `seq` return ()) :: IO (Either IOException ())
  putStrLn (either (const "read blocked") (const "read shadow") r2)
  writeFile "inside.txt" "fine"
  putStrLn "done"
"""
    limits = SandboxLimits(memory_mb=2048, max_processes=64, max_open_files=256, max_file_mb=128)
    comp = sb.run_command(
        ["ghc", "-O0", "-v0", "-package-env", "-", "Main.hs", "-o", "prog", "-outputdir", "o"],
        120.0,
        files={"Main.hs": program},
        collect=["prog"],
        limits=limits,
        max_collect_kb=64 * 1024,
    )
    assert comp.ok and "prog" in comp.files, comp.text("stderr")
    run = sb.run_command(["./prog"], 10.0, files={"prog": comp.files["prog"]}, executables=["prog"])
    assert run.ok, run
    assert run.text().splitlines() == ["write blocked", "read blocked", "done"]
    assert not outside.exists()


@needs_ghc
def test_compiler_that_cannot_run_is_an_error_not_a_compile_error(checker):
    with GhcChecker(SETTINGS, sandbox=checker.sandbox) as broken:
        broken.ghc = "/nonexistent/ghc"
        outs = broken.check([BATCH["mult3"], BATCH["avg"]])
        assert broken.stats["ghc_invocations"] == 1  # no bisection on a sandbox failure
    assert [o.status for o in outs] == ["error", "error"]
    assert "cannot execute" in outs[0].detail
