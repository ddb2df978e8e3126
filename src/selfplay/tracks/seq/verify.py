"""Turning Alice's outputs into verified instances, and Bob's answers into labels.

SINQ: Q must compile and the pair must diverge on Alice's input: both run with GHC
(one confined process per run) and their outcomes are compared; a divergence is
confirmed by running both again (haskell/divergence.py defines divergence).
SEQ: Q must compile and agree with P on ``verify.sanity_inputs`` generated inputs
(a cheap filter before the expensive proof); the candidate then
waits for its Liquid Haskell proof (tracks/seq/proofs.py), and only an accepted proof
makes it an instance.

Bob's label: an SEQ instance is equivalent, a SINQ one is not; his answer is correct
when its verdict matches, and the difficulty is 10 x (1 - correct / N).
"""

from __future__ import annotations

from ... import verifier_canary
from ...curriculum.difficulty import difficulty, round_difficulty
from ...haskell.divergence import PairCheck, behaviours_agree, check_pairs
from ...haskell.ghc_check import CheckRequest, GhcChecker
from ...haskell.literals import generate_arguments
from ...haskell.types import parse_type
from ...records import content_id, derive_seed
from .parse import parse_alice, parse_bob
from .sources import ghc_settings

AWAITING_PROOF = "awaiting_proof"


def instance_id(game: str, code_p: str, code_q: str, input_args: list[str]) -> str:
    return content_id({"track": "seq", "game": game, "p": code_p, "q": code_q, "x": list(input_args)})


def _base(record: dict, source: dict, stage: str, k: int, text: str) -> dict:
    return {
        "stage": stage,
        "game": record["meta"]["game"],
        "source_id": source["id"],
        "entry_point": source["entry_point"],
        "arg_types": source["arg_types"],
        "result_type": source["result_type"],
        "code_p": source["code"],
        "gen_key": record["key"],
        "answer_format": record.get("answer_format"),
        "sample": k,
        "alice_output": text,
        "verified": False,
        "status": "rejected",
    }


def _sanity_inputs(cfg: dict, cand: dict) -> list[list[str]]:
    count = int(cfg["seq"]["verify"]["sanity_inputs"])
    types = [parse_type(t) for t in cand["arg_types"]]
    return [
        list(generate_arguments(types, seed=derive_seed(cfg["seed"], "seq-sanity", cand["id"], i)))
        for i in range(count)
    ]


def candidates_from_generations(
    records: list[dict], sources_by_id: dict[str, dict], stage: str, cfg: dict, workers: int = 2
) -> list[dict]:
    """Every Alice output of ``records`` as a candidate: rejected with a reason, a
    verified SINQ instance, or an SEQ pair awaiting its proof."""
    cands: list[dict] = []
    for record in records:
        source = sources_by_id[record["meta"]["source_id"]]
        for k, text in enumerate(record["outputs"]):
            cand = _base(record, source, stage, k, text)
            answer = parse_alice(text, cand["game"], source["entry_point"], source["arg_types"])
            cand["parse"] = answer.to_dict()
            if not answer.ok:
                cand["reject_reason"] = f"parse:{answer.reason}"
                cand["id"] = content_id({"stage": stage, "key": record["key"], "sample": k})
                cands.append(cand)
                continue
            cand.update(code_q=answer.program, name_q=answer.name_q, input_args=answer.input_args)
            cand["id"] = instance_id(cand["game"], cand["code_p"], cand["code_q"], cand["input_args"])
            cands.append(cand)

    timeout = float(cfg["seq"]["verify"]["timeout"])
    sinq = [c for c in cands if "code_q" in c and c["game"] == "sinq"]
    seq = [(c, _sanity_inputs(cfg, c)) for c in cands if "code_q" in c and c["game"] == "seq"]
    if not sinq and not seq:
        return cands
    with GhcChecker(ghc_settings(cfg), workers=workers) as checker:
        verifier_canary.check_ghc(checker)  # a compiler that gets it wrong stops the job here
        pairs = [
            PairCheck(
                c["code_p"], c["entry_point"], c["code_q"], c["name_q"], tuple(c["input_args"]), timeout
            )
            for c in sinq
        ]
        for cand, verdict in zip(sinq, check_pairs(checker, pairs) if pairs else []):
            cand["check"] = verdict  # a divergence was confirmed by a second run of both
            if verdict["diverges"]:
                cand.update(verified=True, status="verified", reject_reason=None)
            else:
                cand["reject_reason"] = f"verify:{verdict['reason']}"
        requests = [
            CheckRequest(code, name, tuple(args), timeout)
            for cand, inputs in seq
            for args in inputs
            for code, name in ((cand["code_p"], cand["entry_point"]), (cand["code_q"], cand["name_q"]))
        ]
        outcomes = iter(checker.check(requests) if requests else [])
        for cand, inputs in seq:
            _judge_sanity(cand, [(args, next(outcomes), next(outcomes)) for args in inputs])
    return cands


def _judge_sanity(cand: dict, runs: list) -> None:
    """SEQ: Q must compile, and P and Q must agree wherever P returns a value."""
    cand["sanity"] = [{"args": list(args), "p": p.to_dict(), "q": q.to_dict()} for args, p, q in runs]
    for _, p, q in runs:
        if not q.compiled:
            cand["reject_reason"] = f"verify:variant_{q.status}"
            return
        if p.status == "value" and behaviours_agree(p, q) is False:
            cand["reject_reason"] = "verify:sanity_differs"
            return
    if runs and not any(p.status == "value" for _, p, _ in runs):
        cand["reject_reason"] = "verify:sanity_no_valid_input"
        return
    cand.update(status=AWAITING_PROOF, reject_reason=None)


def score_bob(instance: dict, record: dict, who: str) -> dict:
    """The instance with Bob's N verdicts, their correctness and the difficulty."""
    truth = "yes" if instance["game"] == "seq" else "no"
    samples = []
    for text in record["outputs"]:
        verdict, reason = parse_bob(text)
        samples.append(
            {"output": text, "verdict": verdict, "parse_reason": reason, "correct": verdict == truth}
        )
    n_correct = sum(s["correct"] for s in samples)
    labeled = dict(instance)
    labeled["bob"] = {
        "who": who,
        "gen_key": record["key"],
        "answer_format": record.get("answer_format"),
        "n": len(samples),
        "n_correct": n_correct,
        "truth": truth,
        "samples": samples,
    }
    d = difficulty(n_correct, len(samples))
    labeled["difficulty"] = d
    labeled["difficulty_rounded"] = round_difficulty(d)
    return labeled
