"""What counts as divergence between two Haskell functions on one input (SINQ, SEQ sanity).

Outcomes come from :mod:`selfplay.haskell.ghc_check` (``CheckOutcome``): the fully
forced ``show`` of the result (``value``), an ``exception``, a ``timeout``, a
resource-limit kill (``killed``), ``compile_error``, ``rejected`` or ``error``.

SINQ (``compare_outcomes(p, q)`` and ``check_pair``), mirroring the Python track
(``selfplay.tracks.sinq.verify.check_pair``):

- The instance is *valid* only when P compiled and **returned a value** on x.  P
  raising, timing out or being killed makes x unusable (reasons ``source_exception``,
  ``source_timeout``, ``source_killed``; a P that does not compile or is rejected
  gives ``source_compile_error``/``source_rejected``).  Unlike the Python track,
  an exception from P is not accepted as behaviour: in Haskell most exceptions
  are ``error``/partial-pattern bottoms whose identity the language does not fix
  (see below), so a diverging input must make P produce a value.
- Q must compile and accept x (its module, which contains the call ``q x``,
  type-checks); otherwise the instance is rejected (``variant_compile_error``,
  ``variant_rejected``).  A sandbox/harness failure on either side is never
  divergence (``source_error``/``variant_error``).
- x *diverges* when Q's behaviour differs from P's value: Q returns a value with
  a different ``show`` text (``different_value``; ``show`` is compared exactly, so
  ``1`` vs ``1.0`` or ``Just 1`` vs ``Just 2`` differ), Q raises an exception
  (``variant_exception``), Q does not halt within the time limit
  (``variant_timeout``) or Q exceeds a resource limit (``variant_killed``, e.g.
  heap overflow, or a ``show`` longer than the limit).  Equal ``show`` texts are
  ``same_behaviour``.
- Both sides raising is *not* divergence, whatever the exception types or
  messages: GHC's imprecise-exception semantics let the compiler choose which
  of several possible exceptions a bottom expression raises (``error "a" + error
  "b"`` may raise either, and optimisation may change it), and ``error`` messages
  carry call-site locations that always differ between two programs.  More
  generally every non-value outcome (exception, timeout, kill) is treated as the
  same "bottom" behaviour; only a value against a non-value, or two different
  values, is a difference.  (In SINQ this case cannot even arise, since P must
  return a value; it matters for ``behaviours_agree``.)
- With ``check_determinism`` a divergence is confirmed by running both again
  (the checker caches the compiled runner, so this costs runs, not compiles); a
  P that behaves differently the second time invalidates the instance
  (``source_nondeterministic``), a Q that does makes it non-divergent
  (``variant_nondeterministic``).  A Q that timed out is not rerun (that would
  only cost another full time limit).  Reruns compare full behaviours
  (value text, or exception type, or status).

SEQ sanity (``behaviours_agree``): P and Q "agree" on an input when both return
the same ``show`` text or both fail to return a value (any exception, timeout or
kill); they disagree when exactly one returns a value or the values differ; the
answer is None (no evidence) when either side did not compile or the check
could not be carried out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .ghc_check import CheckOutcome, CheckRequest

NON_VALUE = ("exception", "timeout", "killed")


@dataclass(frozen=True)
class Comparison:
    """valid: the instance can be judged; diverges: x separates P and Q; reason: why (see module doc)."""

    valid: bool
    diverges: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "diverges": self.diverges, "reason": self.reason}


def compare_outcomes(p: CheckOutcome, q: CheckOutcome) -> Comparison:
    """SINQ verdict for one input from P's and Q's outcomes (no reruns)."""
    if p.status != "value":
        return Comparison(False, False, f"source_{p.status}")
    if q.status in ("compile_error", "rejected", "error"):
        return Comparison(False, False, f"variant_{q.status}")
    if q.status == "value":
        if q.value == p.value:
            return Comparison(True, False, "same_behaviour")
        return Comparison(True, True, "different_value")
    return Comparison(True, True, f"variant_{q.status}")


def behaviours_agree(p: CheckOutcome, q: CheckOutcome) -> bool | None:
    """SEQ sanity: do P and Q behave alike on this input?  None when it cannot be told."""
    judgeable = ("value", *NON_VALUE)
    if p.status not in judgeable or q.status not in judgeable:
        return None
    if p.status == "value" and q.status == "value":
        return p.value == q.value
    return p.status != "value" and q.status != "value"


@dataclass(frozen=True)
class PairCheck:
    """One SINQ question: do P (``entry_p`` in ``code_p``) and Q differ on ``args``?"""

    code_p: str
    entry_p: str
    code_q: str
    entry_q: str
    args: tuple[str, ...]
    timeout: float | None = None


def check_pairs(
    checker: Any, pairs: Sequence[PairCheck], check_determinism: bool = True
) -> list[dict[str, Any]]:
    """Verify many (P, Q, x) instances with one batch of checks (plus one batch of confirmations).

    Returns, per pair, a dict like the Python track's ``check_pair``: ``timeout``,
    ``p`` and ``q`` (outcome dicts), ``valid``, ``diverges``, ``reason``.
    """
    reqs: list[CheckRequest] = []
    for pair in pairs:
        args = tuple(pair.args)
        reqs.append(CheckRequest(pair.code_p, pair.entry_p, args, pair.timeout))
        reqs.append(CheckRequest(pair.code_q, pair.entry_q, args, pair.timeout))
    first = checker.check(reqs)
    verdicts: list[dict[str, Any]] = []
    confirm: list[tuple[int, int, int | None]] = []  # (pair index, index of P rerun, index of Q rerun)
    again_reqs: list[CheckRequest] = []
    for i, pair in enumerate(pairs):
        p, q = first[2 * i], first[2 * i + 1]
        cmp = compare_outcomes(p, q)
        timeout = pair.timeout if pair.timeout is not None else checker.settings.run_timeout
        verdicts.append(
            {
                "timeout": round(float(timeout), 4),
                "p": p.to_dict(),
                "q": q.to_dict(),
                "valid": cmp.valid,
                "diverges": cmp.diverges,
                "reason": cmp.reason,
            }
        )
        if cmp.diverges and check_determinism:
            p_at = len(again_reqs)
            again_reqs.append(reqs[2 * i])
            q_at = None
            if q.status != "timeout":
                q_at = len(again_reqs)
                again_reqs.append(reqs[2 * i + 1])
            confirm.append((i, p_at, q_at))
    if confirm:
        again = checker.check(again_reqs)
        for i, p_at, q_at in confirm:
            p, q = first[2 * i], first[2 * i + 1]
            if again[p_at].behaviour() != p.behaviour():
                verdicts[i].update(valid=False, diverges=False, reason="source_nondeterministic")
            elif q_at is not None and again[q_at].behaviour() != q.behaviour():
                verdicts[i].update(diverges=False, reason="variant_nondeterministic")
    return verdicts


def check_pair(
    checker: Any,
    code_p: str,
    entry_p: str,
    code_q: str,
    entry_q: str,
    args: Sequence[str],
    timeout: float | None = None,
    check_determinism: bool = True,
) -> dict[str, Any]:
    """Run P and Q on one input (``args``: one Haskell expression per argument); say whether it diverges."""
    return check_pairs(
        checker, [PairCheck(code_p, entry_p, code_q, entry_q, tuple(args), timeout)], check_determinism
    )[0]
