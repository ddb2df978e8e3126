"""The whole proof check: read the answer, assemble and pre-check the file, check the
statement, and run Liquid Haskell when nothing was refused."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from .answer import parse_proof_answer
from .assembly import assemble
from .declarations import default_lemma_name, find_signature
from .problems import Problem
from .runner import run_liquid, run_liquid_confined
from .settings import LiquidSettings
from .statement import check_statement
from .verdicts import make_verdict


def check_proof(
    model_output: str | bytes,
    *,
    p_source: str,
    p_name: str,
    q_source: str,
    q_name: str,
    settings: LiquidSettings | Mapping[str, Any] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: Any = None,
    sandbox_limits: Any = None,
) -> dict[str, Any]:
    """Read the proof from ``model_output``, assemble and pre-check the file, check the
    statement, and run LH when all of that passes. Returns a verdict (see :mod:`.verdicts`);
    refusals before LH have status ``rejected`` whether or not LH is available."""
    settings = LiquidSettings.coerce(settings)
    lemma = default_lemma_name(p_name)
    answer = parse_proof_answer(model_output, p_name)
    if not answer.ok:
        prob = Problem(answer.reason or "no_lemma", answer.detail, "answer")
        return make_verdict(
            "rejected",
            prob.code,
            f"rejected: {answer.detail}",
            detail=answer.detail,
            stage="parse",
            problems=[prob.to_dict()],
            lemma_name=lemma,
        )
    asm = assemble(p_source, p_name, q_source, q_name, answer.code or "", settings)
    problems = list(asm.problems)
    stmt = check_statement(
        answer.code or "",
        p_name=p_name,
        q_name_in_file=asm.q_name_in_file,
        p_type=find_signature(p_source, p_name),
        lemma_name=lemma,
    )
    if not stmt.ok and not any(p.code == stmt.reason for p in problems):
        problems.append(Problem(stmt.reason or "no_spec", stmt.detail, "proof"))
    extra = dict(
        file=asm.source,
        proof=answer.code,
        lemma_name=lemma,
        q_name_in_file=asm.q_name_in_file,
        file_name=asm.file_name,
        file_sha256=hashlib.sha256(asm.source.encode("utf-8")).hexdigest(),
        part_lines={k: list(v) for k, v in asm.part_lines.items()},
    )
    if problems:
        first = problems[0]
        return make_verdict(
            "rejected",
            first.code,
            f"rejected: {first.detail}",
            detail=first.detail,
            stage="precheck",
            problems=[p.to_dict() for p in problems],
            **extra,
        )
    if sandbox is not None:  # the pipeline's way: confined like every other run of model-written code
        verdict = run_liquid_confined(
            asm.source,
            settings.command,
            settings.timeout_s,
            sandbox,
            limits=sandbox_limits,
            file_name=asm.file_name,
            max_feedback_chars=settings.max_feedback_chars,
            part_lines=asm.part_lines,
        )
    else:
        verdict = run_liquid(
            asm.source,
            settings.command,
            settings.timeout_s,
            workdir,
            file_name=asm.file_name,
            env=env,
            max_feedback_chars=settings.max_feedback_chars,
            part_lines=asm.part_lines,
        )
    verdict.update({k: v for k, v in extra.items() if k not in ("file_name", "file_sha256")})
    return verdict
