"""Canaries: before a job believes a verifier, the verifier must tell a known-good input
from a known-bad one.

A verifier that is broken where it runs (a binary that cannot start inside the sandbox
or image, a wrapper that answers "verified" to everything, a prover of the wrong
version) does not announce itself: every answer reads as failed, or as passed, and the
tables quietly fill with zeros or with nonsense. So each job, the first time it is about
to use a verifier, gives it two small inputs whose verdict is known: one it must accept
and one it must refuse *for the expected reason* (a refuted proof, a type error, a wrong
value; not a crash or a timeout). Any other answer stops the job with
:class:`CanaryFailed`, one line naming the verifier, the input and what it answered.

Each canary runs once per process and per verifier configuration (a job is one
process), through the same library path the job then uses, with the job's own settings
and, where the job already holds one, its own sandbox. The outcome (inputs, expected,
answered, seconds) is logged and kept: :func:`recorded` lists every canary run in this
process, and :func:`selfplay.containers.runtime.runtime_record` puts that list into
the records a job writes.

The verifiers and the verdict each canary pair asks for:

* ``python-sandbox`` (:func:`check_python_sandbox`): a correct sum returns 55, an
  off-by-one one returns 45; the sandbox must report the right value for each;
* ``ghc`` (:func:`check_ghc`): a well-typed function evaluates to 55; an ill-typed one is
  a compile error;
* ``liquid-haskell`` (:func:`check_liquid`): a true equivalence lemma is SAFE, a false
  one (``x + x`` against ``x + x + 1``) is UNSAFE;
* ``dafny`` (:func:`check_dafny`) and ``verus`` (:func:`check_verus`): a maximum whose
  body meets its ensures verifies; one returning its first argument fails verification.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from .errors import UserError

log = logging.getLogger("selfplay")

ACCEPTED = "accepted"
REJECTED = "rejected"
ERROR = "error"


class CanaryFailed(UserError):
    """A verifier got a canary wrong; its verdicts cannot be trusted (one line)."""


@dataclass(frozen=True)
class Answer:
    """What a verifier said about one canary input: ``accepted``, ``rejected`` (for the
    reason a wrong input must be refused) or ``error`` (anything else: a crash, a
    timeout, a refusal for another reason), the verifier's own words and, when it
    timed the input itself, its seconds."""

    verdict: str
    said: str
    seconds: float | None = None


@dataclass(frozen=True)
class Probe:
    """One canary input: its name and the verdict it must get."""

    name: str
    expected: str


@dataclass
class Outcome:
    """One canary run: per input its name, expected, answered (with the verifier's own
    words) and seconds, and whether every answer was the expected one."""

    verifier: str
    inputs: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.inputs) and all(i["answered"] == i["expected"] for i in self.inputs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verifier": self.verifier,
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "inputs": [dict(i) for i in self.inputs],
        }

    def failure(self) -> str:
        """The one line a failed canary stops the job with."""
        bad = next(i for i in self.inputs if i["answered"] != i["expected"])
        kind = "known-good" if bad["expected"] == ACCEPTED else "known-bad"
        return (
            f"verifier canary: {self.verifier} answered {bad['answered']} ({bad['said']}) to its {kind} input "
            f"{bad['name']!r}, which must be {bad['expected']}; its verdicts cannot be trusted, so the job stops "
            f"(check that {self.verifier} runs where the job runs it)"
        )


_lock = threading.Lock()
_done: dict[Hashable, Outcome] = {}
_order: list[Hashable] = []


def recorded() -> list[dict[str, Any]]:
    """Every canary run in this process, in order (for a job's records)."""
    with _lock:
        return [_done[k].to_dict() for k in _order]


def clear() -> None:
    """Forget every canary (the next use of each verifier runs its canary again)."""
    with _lock:
        _done.clear()
        _order.clear()


def run_canary(
    verifier: str, key: Hashable, probes: list[Probe], ask: Callable[[], list[Answer]]
) -> dict[str, Any]:
    """Run ``ask`` (one Answer per probe, in order) unless this verifier's canary already
    ran in this process under ``key``; raise CanaryFailed when an answer is not the
    expected one (every later call with the same key raises it again). Returns the
    outcome as recorded."""
    full_key = (verifier, key)
    with _lock:
        known = _done.get(full_key)
    if known is None:
        start = time.monotonic()
        try:
            answers = ask()
        except UserError:
            raise
        except Exception as exc:  # the verifier's own machinery broke down on the canary
            answers = [Answer(ERROR, f"{type(exc).__name__}: {exc}".splitlines()[0][:300])] * len(probes)
        if len(answers) != len(probes):
            raise RuntimeError(f"{verifier} canary gave {len(answers)} answers for {len(probes)} inputs")
        known = Outcome(verifier, seconds=time.monotonic() - start)
        share = known.seconds / len(probes)  # for a verifier that does not time each input
        for probe, answer in zip(probes, answers):
            seconds = share if answer.seconds is None else float(answer.seconds)
            known.inputs.append(
                {
                    "name": probe.name,
                    "expected": probe.expected,
                    "answered": answer.verdict,
                    "said": answer.said[:300],
                    "seconds": round(seconds, 3),
                }
            )
        with _lock:
            if full_key not in _done:
                _order.append(full_key)
            _done[full_key] = known
        log.info(
            "verifier canary %s: %s in %.2f s (%s)",
            verifier,
            "passed" if known.passed else "FAILED",
            known.seconds,
            "; ".join(f"{i['name']}: {i['answered']}" for i in known.inputs),
        )
    if not known.passed:
        raise CanaryFailed(known.failure())
    return known.to_dict()


# ------------------------------------------------------------------ Python sandbox

PY_ENTRY = "canary_sum"
PY_INPUT = "{'n': 10}"
PY_EXPECTED = 55
PY_GOOD = (
    "def canary_sum(n):\n    total = 0\n    for k in range(1, n + 1):\n        total += k\n    return total\n"
)
PY_BAD = "def canary_sum(n):\n    return n * (n - 1) // 2\n"  # off by one: 45 for n = 10
PY_PROBES = [Probe("sum_to_n_correct", ACCEPTED), Probe("sum_to_n_off_by_one", REJECTED)]


def _python_answer(result: Any) -> Answer:
    if result.status == "ok":
        said = f"returned {result.value_repr}"
        if result.value_repr == repr(PY_EXPECTED):
            return Answer(ACCEPTED, said, result.seconds)
        if result.value_repr == repr(PY_EXPECTED - 10):
            return Answer(REJECTED, said, result.seconds)
        return Answer(ERROR, said, result.seconds)
    why = result.exc_type or result.detail or ""
    return Answer(ERROR, f"{result.status}{': ' + why if why else ''}", result.seconds)


def check_python_sandbox(sandbox: Any, timeout: float = 30.0) -> dict[str, Any]:
    """The canary of the Python sandbox, run in ``sandbox`` (the job's own)."""
    limits = getattr(sandbox, "limits", None)

    def ask() -> list[Answer]:
        results = sandbox.run_many([(code, PY_ENTRY, PY_INPUT, timeout) for code in (PY_GOOD, PY_BAD)])
        return [_python_answer(r) for r in results]

    return run_canary("python-sandbox", (type(sandbox).__qualname__, repr(limits)), PY_PROBES, ask)


def checked_sandbox(sandbox: Any) -> Any:
    """``sandbox`` once its canary has passed (a job opens its sandbox through this);
    closed again when the canary fails."""
    try:
        check_python_sandbox(sandbox)
    except BaseException:
        sandbox.close()
        raise
    return sandbox


# ------------------------------------------------------------------ GHC

GHC_FUNCTION = "canarySum"
GHC_GOOD = "canarySum :: Int -> Int\ncanarySum n = sum [1 .. n]\n"
GHC_BAD = (
    'canarySum :: Int -> Int\ncanarySum n = sum [1 .. n] ++ "!"\n'  # a list appended to an Int: a type error
)
GHC_PROBES = [Probe("sum_to_n_well_typed", ACCEPTED), Probe("sum_to_n_ill_typed", REJECTED)]


def _ghc_answer(outcome: Any, good: bool) -> Answer:
    said = outcome.status + (f" {outcome.value}" if outcome.status == "value" else "")
    if outcome.status == "error" or outcome.status not in ("value", "compile_error"):
        detail = outcome.detail or outcome.exc_type or ""
        return Answer(ERROR, said + (f": {detail}" if detail else ""))
    if outcome.status == "compile_error":
        if good:
            said += ": " + (outcome.compile_error or "").strip().replace("\n", " ")[:200]
        return Answer(REJECTED, said)
    return Answer(ACCEPTED if outcome.value == "55" else ERROR, said)


def check_ghc(checker: Any, timeout: float = 10.0) -> dict[str, Any]:
    """The canary of GHC, run by ``checker`` (the job's :class:`~selfplay.haskell.ghc_check.GhcChecker`)."""
    from .haskell.ghc_check import CheckRequest

    def ask() -> list[Answer]:
        good, bad = checker.check(
            [
                CheckRequest(GHC_GOOD, GHC_FUNCTION, ("10",), timeout),
                CheckRequest(GHC_BAD, GHC_FUNCTION, ("10",), timeout),
            ]
        )
        return [_ghc_answer(good, True), _ghc_answer(bad, False)]

    key = (checker.ghc, checker.version, repr(checker.settings))
    return run_canary("ghc", key, GHC_PROBES, ask)


# ------------------------------------------------------------------ Liquid Haskell

LH_P_NAME = "canaryTwice"
LH_P = "canaryTwice :: Int -> Int\ncanaryTwice x = x + x\n"
LH_GOOD_Q_NAME = "canaryTwiceAlt"
LH_GOOD_Q = "canaryTwiceAlt :: Int -> Int\ncanaryTwiceAlt x = 2 * x\n"
LH_BAD_Q_NAME = "canaryOffByOne"
LH_BAD_Q = "canaryOffByOne :: Int -> Int\ncanaryOffByOne x = x + x + 1\n"


def _lh_answer(q_name: str) -> str:
    return (
        "```haskell\n"
        f"{{-@ lemma_canaryTwice_equiv :: x:Int -> {{ canaryTwice x == {q_name} x }} @-}}\n"
        "lemma_canaryTwice_equiv :: Int -> Proof\n"
        "lemma_canaryTwice_equiv x\n"
        "  =   canaryTwice x\n"
        f"  === {q_name} x\n"
        "  *** QED\n"
        "```\n"
    )


LH_PROBES = [Probe("twice_equals_double", ACCEPTED), Probe("twice_equals_twice_plus_one", REJECTED)]


def _liquid_answer(verdict: dict) -> Answer:
    said = f"{verdict.get('status')}: {verdict.get('reason')}"
    if verdict.get("status") == "safe" and verdict.get("accepted"):
        return Answer(ACCEPTED, said)
    if verdict.get("status") == "unsafe":
        return Answer(REJECTED, said)
    return Answer(ERROR, said)


def check_liquid(
    settings: Any, sandbox: Any = None, sandbox_limits: Any = None, **plain: Any
) -> dict[str, Any]:
    """The canary of Liquid Haskell through :func:`~selfplay.haskell.liquid.check_proof`
    with the job's ``settings`` and, when given, its sandbox (``plain``: what
    check_proof takes for an unconfined run, e.g. ``workdir``)."""
    from .haskell.liquid import check_proof

    def ask() -> list[Answer]:
        answers = []
        for q_name, q_source in ((LH_GOOD_Q_NAME, LH_GOOD_Q), (LH_BAD_Q_NAME, LH_BAD_Q)):
            verdict = check_proof(
                _lh_answer(q_name),
                p_source=LH_P,
                p_name=LH_P_NAME,
                q_source=q_source,
                q_name=q_name,
                settings=settings,
                sandbox=sandbox,
                sandbox_limits=sandbox_limits,
                **plain,
            )
            answers.append(_liquid_answer(verdict))
        return answers

    return run_canary("liquid-haskell", repr(settings), LH_PROBES, ask)


# ------------------------------------------------------------------ Dafny

DAFNY_TARGET = "CanaryMax"
DAFNY_GOOD = (
    "method CanaryMax(a: int, b: int) returns (m: int)\n"
    "  ensures m >= a && m >= b\n"
    "  ensures m == a || m == b\n"
    "{\n"
    "  if a >= b { m := a; } else { m := b; }\n"
    "}\n"
)
DAFNY_BAD = (
    "method CanaryMax(a: int, b: int) returns (m: int)\n"
    "  ensures m >= a && m >= b\n"
    "  ensures m == a || m == b\n"
    "{\n"
    "  m := a;\n"
    "}\n"
)
DAFNY_PROBES = [Probe("max_correct", ACCEPTED), Probe("max_returns_first", REJECTED)]


def _dafny_answer(verdict: Any) -> Answer:
    said = verdict.status + (f": {verdict.detail}" if verdict.detail else "")
    if verdict.proved(DAFNY_TARGET):
        return Answer(ACCEPTED, said)
    if verdict.status == "failed" and verdict.implementations.get(DAFNY_TARGET) == "error":
        return Answer(REJECTED, said)
    return Answer(ERROR, said)


def _check_prover(
    verifier: str,
    settings: Any,
    find: Callable[[Any], Any],
    verify: Callable[..., list],
    jobs: list,
    probes: list[Probe],
    answer: Callable[[Any], Answer],
) -> dict[str, Any]:
    """A prover's canary: ``jobs`` (good, bad) verified in one call of the prover's
    ``verify`` with the job's ``settings``; ``find`` fails first, with its own one
    line, when the prover is not installed at all."""
    found = find(settings)
    return run_canary(
        verifier, (repr(found), repr(settings)), probes, lambda: [answer(v) for v in verify(jobs, settings)]
    )


def check_dafny(settings: Any = None) -> dict[str, Any]:
    """The canary of Dafny with the job's :class:`~selfplay.dafny.runner.DafnySettings`."""
    from .dafny import runner

    jobs = [
        runner.DafnyJob("canary_good", DAFNY_GOOD, no_cheating=True),
        runner.DafnyJob("canary_bad", DAFNY_BAD, no_cheating=True),
    ]
    return _check_prover(
        "dafny",
        settings or runner.DafnySettings(),
        runner.check_dafny,
        runner.verify,
        jobs,
        DAFNY_PROBES,
        _dafny_answer,
    )


# ------------------------------------------------------------------ Verus

VERUS_GOOD = (
    "use vstd::prelude::*;\n\nverus! {\n\n"
    "fn canary_max(a: u32, b: u32) -> (m: u32)\n"
    "    ensures\n"
    "        m >= a && m >= b,\n"
    "        m == a || m == b,\n"
    "{\n"
    "    if a >= b { a } else { b }\n"
    "}\n\n"
    "fn main() {}\n\n"
    "} // verus!\n"
)
VERUS_BAD = VERUS_GOOD.replace("    if a >= b { a } else { b }\n", "    a\n").replace(
    "canary_max", "canary_max_wrong"
)
VERUS_PROBES = [Probe("max_correct", ACCEPTED), Probe("max_returns_first", REJECTED)]
VERUS_MIN_VERIFIED = 2  # the function and main


def _verus_answer(verdict: Any) -> Answer:
    said = f"{verdict.status}, {verdict.verified} verified, {verdict.errors} errors"
    if verdict.detail:
        said += f": {verdict.detail}"
    if verdict.status == "verified" and verdict.verified >= VERUS_MIN_VERIFIED:
        return Answer(ACCEPTED, said)
    if verdict.status == "failed" and verdict.errors >= 1:
        return Answer(REJECTED, said)
    return Answer(ERROR, said)


def check_verus(settings: Any = None) -> dict[str, Any]:
    """The canary of Verus with the job's :class:`~selfplay.verus.settings.VerusSettings`."""
    from .verus import runner

    jobs = [runner.VerusJob("canary_good", VERUS_GOOD), runner.VerusJob("canary_bad", VERUS_BAD)]
    return _check_prover(
        "verus",
        settings or runner.VerusSettings(),
        runner.check_verus,
        runner.verify,
        jobs,
        VERUS_PROBES,
        _verus_answer,
    )
