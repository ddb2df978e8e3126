"""Deciding what is true in SInQ: execution of P and Q on a proposed diverging input.

Definitions (tested in tests/test_sinq_verify.py):

- A run of P on x is *valid* when P returned a value or raised an ordinary exception
  (a ``ValueError`` from P is behaviour; the paper's example diverges through a
  ``RecursionError``). P timing out, being killed, hitting the memory limit
  (``MemoryError``) or not being callable with x (status ``error``: x does not bind
  to the signature) makes x unusable: the instance is rejected, not counted.
- Q is compared only if it could be called with x (status ``error`` means Q's entry
  point is missing or its signature no longer accepts x: rejected).
- x *diverges* when the two behaviours differ: different return values (type-exact:
  ``1``, ``1.0`` and ``True`` differ), different exception types, or one side
  returning while the other raises, times out (does not halt within the limit) or
  dies. A harness failure is never divergence.
- With ``check_determinism`` a divergence is confirmed by running both programs a
  second time; if either behaves differently from its first run (randomness, time,
  hash order), the instance is rejected as nondeterministic. A Q that timed out is
  not rerun (that would only cost another full time limit).
"""

from __future__ import annotations

from typing import Any

from ...curriculum.difficulty import difficulty, round_difficulty
from ...records import content_id
from .game import check_timeout
from .parse import parse_alice, parse_bob


def instance_id(code_p: str, code_q: str, input_literal: str) -> str:
    """An instance is identified by its content: P, Q and Alice's diverging input."""
    return content_id({"p": code_p, "q": code_q, "x": input_literal})


def p_run_is_valid(res) -> tuple[bool, str | None]:
    if res.status == "ok":
        return True, None
    if res.status == "exception":
        if res.exc_type == "MemoryError":
            return False, "source_memory_error"
        return True, None
    return False, f"source_{res.status}"


def check_pair(
    sandbox,
    code_p: str,
    code_q: str,
    entry: str,
    input_literal: str,
    timeout: float,
    check_determinism: bool = True,
) -> dict[str, Any]:
    """Run P and Q on one input; say whether it is a valid, diverging input."""
    rp, rq = sandbox.run_many(
        [(code_p, entry, input_literal, timeout), (code_q, entry, input_literal, timeout)]
    )
    out = {
        "timeout": round(timeout, 4),
        "p": rp.to_dict(),
        "q": rq.to_dict(),
        "valid": False,
        "diverges": False,
        "reason": None,
    }
    ok, why = p_run_is_valid(rp)
    if not ok:
        out["reason"] = why
        return out
    if rq.status == "error":
        out["reason"] = "variant_not_callable"
        return out
    out["valid"] = True
    if rp.behaviour() == rq.behaviour():
        out["reason"] = "same_behaviour"
        return out
    if check_determinism:
        jobs = [(code_p, entry, input_literal, timeout)]
        if rq.status != "timeout":
            jobs.append((code_q, entry, input_literal, timeout))
        again = sandbox.run_many(jobs)
        if again[0].behaviour() != rp.behaviour():
            out.update(valid=False, reason="source_nondeterministic")
            return out
        if len(again) > 1 and again[1].behaviour() != rq.behaviour():
            out["reason"] = "variant_nondeterministic"
            return out
    out["diverges"] = True
    return out


def candidates_from_generation(record: dict, source: dict, stage: str, cfg: dict, sandbox) -> list[dict]:
    """Parse and verify every Alice output of one generation record."""
    out = []
    check_det = bool(cfg["sinq"]["verify"]["check_determinism"])
    for k, text in enumerate(record["outputs"]):
        cand = {
            "stage": stage,
            "source_id": source["id"],
            "task_id": source["task_id"],
            "entry_point": source["entry_point"],
            "code_p": source["code"],
            "gen_key": record["key"],
            "answer_format": record.get("answer_format"),
            "sample": k,
            "alice_output": text,
            "verified": False,
        }
        parsed = parse_alice(text, source["entry_point"])
        cand["parse"] = {"ok": parsed.ok, "reason": parsed.reason, "detail": parsed.detail}
        if not parsed.ok:
            cand["reject_reason"] = f"parse:{parsed.reason}"
            cand["id"] = content_id({"stage": stage, "key": record["key"], "sample": k})
            out.append(cand)
            continue
        cand["code_q"] = parsed.program
        cand["input_literal"] = parsed.input_literal
        cand["id"] = instance_id(source["code"], parsed.program, parsed.input_literal)
        if parsed.program == source["code"]:
            cand["reject_reason"] = "verify:identical_program"
            out.append(cand)
            continue
        timeout = check_timeout(cfg, "alice", stage, cand["id"])
        check = check_pair(
            sandbox,
            source["code"],
            parsed.program,
            source["entry_point"],
            parsed.input_literal,
            timeout,
            check_det,
        )
        cand["check"] = check
        cand["verified"] = bool(check["diverges"])
        cand["reject_reason"] = None if cand["verified"] else f"verify:{check['reason']}"
        out.append(cand)
    return out


def score_bob(instance: dict, record: dict, stage: str, who: str, cfg: dict, sandbox) -> dict:
    """Execute each of Bob's N answers; label the instance with its difficulty.

    Bob is right only when his input really diverges (by execution); his Yes/No is
    recorded but not trusted.
    """
    check_det = bool(cfg["sinq"]["verify"]["check_determinism"])
    samples = []
    for k, text in enumerate(record["outputs"]):
        parsed = parse_bob(text)
        sample = {
            "output": text,
            "parse": {"ok": parsed.ok, "reason": parsed.reason, "detail": parsed.detail},
            "equivalent": parsed.equivalent,
            "input_literal": parsed.input_literal,
            "correct": False,
        }
        if parsed.ok and parsed.input_literal is not None:
            timeout = check_timeout(cfg, "bob", who, stage, instance["id"], k)
            check = check_pair(
                sandbox,
                instance["code_p"],
                instance["code_q"],
                instance["entry_point"],
                parsed.input_literal,
                timeout,
                check_det,
            )
            sample["check"] = check
            sample["correct"] = bool(check["diverges"])
        samples.append(sample)
    n = len(samples)
    n_correct = sum(s["correct"] for s in samples)
    labeled = dict(instance)
    labeled.update(
        {
            "bob": {
                "who": who,
                "gen_key": record["key"],
                "answer_format": record.get("answer_format"),
                "samples": samples,
                "n": n,
                "n_correct": n_correct,
            },
            "difficulty": difficulty(n_correct, n) if n else None,
        }
    )
    labeled["difficulty_rounded"] = round_difficulty(labeled["difficulty"]) if n else None
    return labeled
