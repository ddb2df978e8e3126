"""SEQ proofs: which candidates get a proof attempt, checking the attempts, and the
final word on each SEQ candidate.

Attempt 1 is asked for every SEQ candidate that passed the sanity check. Attempt k+1
is asked only when attempt k was refused with something Alice can fix (the checker's
error, or the reasons the proof was refused before checking); the new request carries
that text (config ``seq.proof.attempts`` bounds the attempts). A candidate becomes an
instance when one attempt is accepted by Liquid Haskell: the statement must be exactly
P == Q over all arguments and no escape hatch may appear (haskell/liquid/escape_hatches.py). When
Liquid Haskell is not installed, nothing is accepted and the verdict says so.
"""

from __future__ import annotations

import os

from ... import verifier_canary
from ...haskell.liquid import LiquidSettings, check_proof, resolve_command, retry_feedback
from ...haskell.liquid.settings import tool_dirs as liquid_tool_dirs
from .verify import AWAITING_PROOF

MISSING = "not checked: Liquid Haskell missing"


def liquid_settings(cfg: dict) -> LiquidSettings:
    """The LH command: config seq.proof.liquid, else $SELFPLAY_LIQUID (the Haskell image
    sets it), else `liquid` on PATH; None (never accepted) when none of them exists."""
    from ...haskell.liquid import resolve_command

    proof = cfg["seq"]["proof"]
    wanted = proof.get("liquid") or os.environ.get("SELFPLAY_LIQUID") or "liquid"
    return LiquidSettings.from_config(
        {"command": resolve_command(wanted), "timeout_s": float(proof["timeout"])}
    )


def needs_attempt(
    candidates: list[dict], previous_checks: list[dict] | None
) -> list[tuple[dict, str | None]]:
    """(candidate, feedback) for each candidate that gets this attempt.

    Attempt 1 (``previous_checks`` None): every candidate awaiting a proof, no feedback.
    Later attempts: those whose last check was refused with feedback Alice can act on.
    """
    awaiting = {c["id"]: c for c in candidates if c.get("status") == AWAITING_PROOF}
    if previous_checks is None:
        return [(c, None) for c in sorted(awaiting.values(), key=lambda c: c["id"])]
    out = []
    for check in sorted(previous_checks, key=lambda r: r["candidate_id"]):
        feedback = check.get("feedback")
        if not check["verdict"]["accepted"] and feedback and check["candidate_id"] in awaiting:
            out.append((awaiting[check["candidate_id"]], feedback))
    return out


def check_attempts(
    generations: list[dict],
    candidates_by_id: dict[str, dict],
    attempt: int,
    settings: LiquidSettings,
    memory_mb: int = 4096,
) -> list[dict]:
    """One check record per proof generation: the verdict and the feedback for a retry.

    Liquid Haskell compiles the proof with GHC, so it runs in the sandbox like every
    other run of model-written code (haskell/liquid/runner.py: run_liquid_confined)."""
    from contextlib import nullcontext

    from ...sandbox import Sandbox, SandboxLimits

    limits = SandboxLimits(
        memory_mb=memory_mb, max_processes=64, max_open_files=256, max_file_mb=256, tmpfs_mb=768
    )
    out = []
    argv = resolve_command(settings.command)
    # The sandbox shows the checker's folders (its own, its package environment's) read-only.
    tool_dirs = liquid_tool_dirs(argv) if argv else []
    with (
        Sandbox(workers=1, limits=limits, tool_dirs=tool_dirs)
        if settings.command and generations
        else nullcontext()
    ) as sandbox:
        if sandbox is not None and argv:  # LH is there and will be believed: it must pass its canary
            verifier_canary.check_liquid(settings, sandbox=sandbox, sandbox_limits=limits)
        for record in generations:
            cand = candidates_by_id[record["meta"]["candidate_id"]]
            text = record["outputs"][0] if record["outputs"] else ""
            verdict = check_proof(
                text,
                p_source=cand["code_p"],
                p_name=cand["entry_point"],
                q_source=cand["code_q"],
                q_name=cand["name_q"],
                settings=settings,
                sandbox=sandbox,
                sandbox_limits=limits,
            )
            if verdict.get("status") == "missing":
                verdict["reason"] = MISSING
            out.append(
                {
                    "candidate_id": cand["id"],
                    "attempt": attempt,
                    "gen_key": record["key"],
                    "answer_format": record.get("answer_format"),
                    "proof_output": text,
                    "verdict": verdict,
                    "feedback": retry_feedback(verdict) or None,
                }
            )
    return out


def settle(candidates: list[dict], checks: list[list[dict]]) -> list[dict]:
    """Candidates with every SEQ pair decided: verified by its first accepted proof, or
    rejected with the last attempt's reason (``proof:<reason>``)."""
    by_cand: dict[str, list[dict]] = {}
    for attempt_checks in checks:
        for check in attempt_checks:
            by_cand.setdefault(check["candidate_id"], []).append(check)
    out = []
    for cand in candidates:
        cand = dict(cand)
        if cand.get("status") == AWAITING_PROOF:
            attempts = sorted(by_cand.get(cand["id"], []), key=lambda c: c["attempt"])
            cand["proof_attempts"] = [
                {
                    "attempt": a["attempt"],
                    "gen_key": a["gen_key"],
                    "status": a["verdict"]["status"],
                    "reason": a["verdict"]["reason"],
                }
                for a in attempts
            ]
            accepted = next((a for a in attempts if a["verdict"]["accepted"]), None)
            if accepted:
                cand.update(
                    verified=True,
                    status="verified",
                    reject_reason=None,
                    proof=accepted["proof_output"],
                    proof_lemma=accepted["verdict"].get("proof"),
                    proof_attempt=accepted["attempt"],
                )
            elif attempts:
                cand.update(status="rejected", reject_reason=f"proof:{attempts[-1]['verdict']['reason']}")
            else:
                cand.update(status="rejected", reject_reason="proof:no_attempt")
        out.append(cand)
    return out
