"""The SInQ track's workflow steps. Each reads files, writes one output atomically.

Stage layout under ``results/sinq/<experiment>/<stage>/`` (stage = roundN, eval_train,
eval_test): ``alice/shardS.jsonl`` (recorded generations), ``candidates/shardS.jsonl``
(every parsed/verified Alice output, rejected ones with their reason),
``bob_<who>/shardS.jsonl`` (Bob's recorded generations), ``labeled_<who>/shardS.jsonl``
(verified instances with Bob's N answers, their executions and the difficulty).
"""

from __future__ import annotations

import logging

from ..containers.runtime import runtime_record
from ..curriculum.selection import select_hard_and_easy
from ..errors import UserError
from ..records import read_jsonl, write_jsonl
from ..tracks.sinq import examples
from ..tracks.sinq.game import alice_request, bob_request, select_stage_sources, shard_of
from ..tracks.sinq.verify import candidates_from_generation, score_bob
from .agents import (  # noqa: F401
    TRAINING_RECORD,
    answered_instance,
    bob_generate_for,
    generate_to_file,
    resolve_adapter,
    restore_agent_training,
    train_agent,
    verified_instances,
)
from .trainsets import accumulated_labeled, write_bob_trainset

log = logging.getLogger("selfplay")

# --- stages ------------------------------------------------------------------


def write_sources(sources: list[dict], out: str) -> None:
    n = write_jsonl(out, sources)
    log.info("wrote %d source programs to %s", n, out)


def alice_generate(
    cfg: dict,
    stage: str,
    shard: int,
    sources_path: str,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
) -> None:
    sources = select_stage_sources(read_jsonl(sources_path), stage, cfg)
    mine = shard_of(sources, shard, cfg["sinq"]["shards"])
    adapter = resolve_adapter(adapter_dir)
    requests = [alice_request(s, stage, cfg, adapter) for s in mine]
    metas = [
        {"role": "alice", "stage": stage, "shard": shard, "source_id": s["id"], "adapter_dir": adapter}
        for s in mine
    ]
    generate_to_file(cfg, model_dir, requests, metas, out, f"alice {stage} shard {shard}")


def _sandbox(cfg: dict):
    from ..sandbox import Sandbox, SandboxLimits
    from ..verifier_canary import checked_sandbox

    v = cfg["sinq"]["verify"]
    return checked_sandbox(
        Sandbox(workers=int(v["workers"]), limits=SandboxLimits(memory_mb=int(v["memory_mb"])))
    )


def verify_candidates(cfg: dict, stage: str, generations_path: str, sources_path: str, out: str) -> None:
    by_id = {s["id"]: s for s in read_jsonl(sources_path)}
    records = read_jsonl(generations_path)
    cands: list[dict] = []
    with _sandbox(cfg) as sb:
        for rec in records:
            source = by_id.get(rec["meta"]["source_id"])
            if source is None:
                raise UserError(
                    f"{generations_path}: generation names source {rec['meta']['source_id']} "
                    f"that is not in {sources_path}"
                )
            cands.extend(candidates_from_generation(rec, source, stage, cfg, sb))
    runtime = runtime_record()
    seen: set[str] = set()
    for cand in cands:  # the same (P, Q, x) twice is one instance
        cand["runtime"] = runtime
        if cand["verified"]:
            if cand["id"] in seen:
                cand["verified"], cand["reject_reason"] = False, "verify:duplicate_instance"
            seen.add(cand["id"])
    write_jsonl(out, cands)
    n_ok = sum(c["verified"] for c in cands)
    log.info(
        "%s: %d outputs, %d parsed, %d verified",
        stage,
        len(cands),
        sum(c["parse"]["ok"] for c in cands),
        n_ok,
    )


def bob_generate(
    cfg: dict,
    stage: str,
    who: str,
    candidates_path: str,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
) -> None:
    bob_generate_for(
        cfg, stage, who, candidates_path, model_dir, adapter_dir, out, bob_request, f"bob[{who}] {stage}"
    )


def label_instances(cfg: dict, stage: str, who: str, candidates_path: str, bob_path: str, out: str) -> None:
    instances = verified_instances(candidates_path)
    labeled = []
    with _sandbox(cfg) as sb:
        for rec in read_jsonl(bob_path):
            inst = answered_instance(instances, rec, bob_path, candidates_path)
            labeled.append(score_bob(inst, rec, stage, who, cfg, sb))
    runtime = runtime_record()
    for item in labeled:
        item["label_runtime"] = runtime
    write_jsonl(out, labeled)
    log.info("%s bob[%s]: %d instances labelled", stage, who, len(labeled))


# --- training sets -------------------------------------------------------------


def alice_trainset(cfg: dict, labeled_paths: list[str], out: str) -> dict:
    """Alice's accumulated training set after a round: main + difficulty-prediction examples.

    Main examples: every hard instance plus easy ones (easy_fraction of the hard count),
    target difficulty replaced by the measured one. Difficulty-prediction examples: the
    same selection rule with difficulty_easy_fraction, target "Any", loss only on the
    answer "Difficulty level: D".
    """
    cur = cfg["sinq"]["curriculum"]
    items = accumulated_labeled(labeled_paths)
    seed = cfg["seed"]
    main = select_hard_and_easy(
        items, hard_threshold=cur["hard_threshold"], easy_fraction=cur["easy_fraction"], seed=seed
    )
    pred = select_hard_and_easy(
        items,
        hard_threshold=cur["hard_threshold"],
        easy_fraction=cur["difficulty_easy_fraction"],
        seed=seed + 1,
    )
    rows = []
    for inst in main:
        ex = examples.alice_main_example(
            inst["code_p"], inst["entry_point"], inst["alice_output"], inst["difficulty"]
        )
        rows.append({"kind": "alice_main", "instance_id": inst["id"], **ex})
    for inst in pred:
        ex = examples.alice_difficulty_example(
            inst["code_p"], inst["entry_point"], inst["alice_output"], inst["difficulty"]
        )
        rows.append({"kind": "alice_difficulty", "instance_id": inst["id"], **ex})
    write_jsonl(out, rows)
    stats = {
        "labeled": len(items),
        "main": len(main),
        "difficulty_prediction": len(pred),
        "hard": sum(i["difficulty"] >= cur["hard_threshold"] for i in items),
    }
    log.info("alice training set: %s", stats)
    return stats


def bob_trainset(labeled_paths: list[str], out: str) -> dict:
    """Bob's training set: each of his own answers that found a real diverging input."""
    return write_bob_trainset(
        labeled_paths,
        out,
        lambda inst, text: examples.bob_example(inst["code_p"], inst["code_q"], inst["entry_point"], text),
        "sinq",
    )
