"""Reference programs for the Haskell track, and the filter every program passes
(paper 000, Section 3.1): find the function and its argument types from the top-level
signature, generate a type-correct input with the recursive literal generator, compile
with GHC and run on that input; keep what compiles and returns a value.

The same filter serves the shipped reference programs, the model's translations of
Python programs and the published OpInstruct-HSx rows, so every source record has the
same fields: ``id``, ``entry_point``, ``code``, ``arg_types`` and ``result_type``
(Haskell type text, type variables instantiated), ``origin`` and ``filter`` (the input
it was run on and the outcome).
"""

from __future__ import annotations

from ... import verifier_canary
from ...errors import UserError
from ...haskell.ghc_check import CheckRequest, GhcChecker, GhcSettings
from ...haskell.literals import generate_arguments
from ...haskell.signature import find_signature
from ...haskell.types import parse_type, render_type
from ...records import content_id, derive_seed


def describe_program(code: str, name: str | None = None) -> tuple[dict | None, str | None]:
    """({entry_point, arg_types, result_type}, None) or (None, reason)."""
    try:
        sig = find_signature(code, name, require_arguments=True).instantiate()
        sig.check_arguments_supported()
    except UserError as exc:
        return None, f"signature: {exc}"
    return {
        "entry_point": sig.name,
        "arg_types": [render_type(t) for t in sig.arg_types],
        "result_type": render_type(sig.result_type),
    }, None


def ghc_settings(cfg: dict) -> GhcSettings:
    v = cfg["seq"]["verify"]
    return GhcSettings(run_timeout=float(v["timeout"]), run_memory_mb=int(v["memory_mb"]))


def filter_programs(
    programs: list[dict], cfg: dict, timeout: float | None = None, workers: int = 2
) -> tuple[list[dict], list[dict]]:
    """Split ``programs`` (each with ``code``, ``origin`` and optionally ``entry_point``
    and ``id``) into (kept source records, rejected records with ``reject_reason``)."""
    kept, rejected, pending = [], [], []
    for prog in programs:
        info, reason = describe_program(prog["code"], prog.get("entry_point"))
        record = {k: v for k, v in prog.items() if k not in ("arg_types", "result_type")}
        record.setdefault("id", content_id({"code": prog["code"], "origin": prog.get("origin")}))
        if info is None:
            rejected.append({**record, "reject_reason": reason})
            continue
        record.update(info)
        seed = derive_seed(cfg["seed"], "seq-filter", record["id"])
        try:
            args = generate_arguments([parse_type(t) for t in info["arg_types"]], seed=seed)
        except UserError as exc:
            rejected.append({**record, "reject_reason": f"input: {exc}"})
            continue
        pending.append((record, args))
    if pending:
        limit = float(timeout or cfg["seq"]["sources"]["filter_timeout"])
        with GhcChecker(ghc_settings(cfg), workers=workers) as checker:
            verifier_canary.check_ghc(checker)  # a compiler that gets it wrong stops the job here
            outcomes = checker.check(
                [CheckRequest(r["code"], r["entry_point"], tuple(a), limit) for r, a in pending]
            )
        for (record, args), outcome in zip(pending, outcomes):
            record["filter"] = {"args": list(args), "outcome": outcome.to_dict()}
            if outcome.status == "value":
                kept.append(record)
            else:
                rejected.append({**record, "reject_reason": f"run: {outcome.status}"})
    kept.sort(key=lambda r: r["id"])
    return kept, rejected
