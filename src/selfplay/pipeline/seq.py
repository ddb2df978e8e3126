"""The Haskell track's workflow steps. Each reads files and writes its outputs atomically.

Layout under ``results/seq/<experiment>/<stage>/`` (stage = roundN, eval_train,
eval_test): ``alice/shardS.jsonl`` (recorded generations, each with its game),
``checked/shardS.jsonl`` (parsed and executed: rejected, verified SINQ, or SEQ awaiting
a proof), ``proof_gen<k>/`` and ``proof_check<k>/`` (attempt k's proofs and verdicts),
``candidates/shardS.jsonl`` (every output decided), ``bob_<who>/`` and ``labeled_<who>/``.
Sources: ``resources/data/seq/<dataset>_<split>.jsonl`` with a ``.rejected.jsonl`` beside.
"""

from __future__ import annotations

import logging

from ..containers.runtime import runtime_record
from ..curriculum.selection import select_hard_and_easy
from ..errors import UserError
from ..records import content_id, read_jsonl, write_jsonl
from ..tracks.seq import examples
from ..tracks.seq.game import alice_request, bob_request, choose_game, proof_request
from ..tracks.seq.proofs import check_attempts, liquid_settings, needs_attempt, settle
from ..tracks.seq.regimes import apply_regime
from ..tracks.seq.sources import filter_programs
from ..tracks.seq.translate import parse_translation, translate_request
from ..tracks.seq.verify import candidates_from_generations, score_bob
from ..tracks.stages import select_stage_sources, shard_of
from .agents import answered_instance, bob_generate_for, generate_to_file, resolve_adapter, verified_instances
from .trainsets import accumulated_labeled, write_bob_trainset

log = logging.getLogger("selfplay")


def _write_split(kept: list[dict], rejected: list[dict], out: str, out_rejected: str, what: str) -> None:
    write_jsonl(out, kept)
    write_jsonl(out_rejected, rejected)
    log.info(
        "%s: %d kept, %d rejected (%s)",
        what,
        len(kept),
        len(rejected),
        ", ".join(sorted({r["reject_reason"].split(":")[0] for r in rejected})) or "none",
    )


# --- sources -------------------------------------------------------------------


def reference_sources(cfg: dict, split: str, out: str, out_rejected: str, workers: int = 2) -> None:
    """The shipped reference programs of one half, through the compile-and-run filter."""
    from ..data.haskell_sources import load_reference_programs, split_reference_programs

    programs = split_reference_programs(load_reference_programs(), split)
    kept, rejected = filter_programs(
        [{k: p[k] for k in ("id", "entry_point", "code", "origin", "reflectable")} for p in programs],
        cfg,
        workers=workers,
    )
    _write_split(kept, rejected, out, out_rejected, f"reference programs ({split})")


def opinstruct_python(cfg: dict, parquet: str, out: str) -> None:
    from ..data.haskell_datasets import opinstruct_python_sources

    src = cfg["seq"]["sources"]
    rows = opinstruct_python_sources(parquet, src["opinstruct_limit"], int(src["opinstruct_max_chars"]))
    write_jsonl(out, rows)
    log.info("OpenCodeInstruct: %d Python programs after the pre-filter", len(rows))


def hsx_sources(cfg: dict, parquet: str, split: str, out: str, out_rejected: str, workers: int = 2) -> None:
    from ..data.haskell_datasets import hsx_programs, split_half

    programs = hsx_programs(parquet, cfg["seq"]["sources"]["hsx_code_column"])
    for prog in programs:
        prog["id"] = content_id({"code": prog["code"], "origin": "hsx"})
    kept, rejected = filter_programs(split_half(programs, split), cfg, workers=workers)
    _write_split(kept, rejected, out, out_rejected, f"OpInstruct-HSx ({split})")


def translated_sources(translated_path: str, split: str, out: str, out_rejected: str) -> None:
    from ..data.haskell_datasets import split_half

    _write_split(
        split_half(read_jsonl(translated_path), split), [], out, out_rejected, f"translations ({split})"
    )


def translate_generate(cfg: dict, python_sources_path: str, model_dir: str | None, out: str) -> None:
    """The translation model (``seq.translate.model``, else the game's) translates
    ``seq.translate.count`` Python programs into Haskell."""
    sources = sorted(read_jsonl(python_sources_path), key=lambda s: s["id"])
    count = cfg["seq"]["translate"]["count"]
    translate = cfg["seq"]["translate"]
    cfg = {
        **cfg,
        "model": translate["model"] or cfg["model"],
        "backend": {**cfg["backend"], **translate["backend"]},
    }
    chosen = sources if count is None else sources[: int(count)]
    requests = [translate_request(s, cfg) for s in chosen]
    metas = [{"role": "translator", "python_id": s["id"], "task_id": s.get("task_id")} for s in chosen]
    generate_to_file(cfg, model_dir, requests, metas, out, "seq translate")


def translate_filter(cfg: dict, generations_path: str, out: str, out_rejected: str, workers: int = 2) -> None:
    """Translations that compile and run on a generated input become sources."""
    programs, rejected = [], []
    for rec in read_jsonl(generations_path):
        for k, text in enumerate(rec["outputs"]):
            base = {
                "origin": "translated",
                "python_id": rec["meta"]["python_id"],
                "gen_key": rec["key"],
                "sample": k,
            }
            code, reason = parse_translation(text)
            if code is None:
                rejected.append({**base, "output": text, "reject_reason": f"parse:{reason}"})
            else:
                programs.append({**base, "code": code})
    kept, more = filter_programs(programs, cfg, workers=workers)
    _write_split(kept, rejected + more, out, out_rejected, "translations")


# --- the game ------------------------------------------------------------------


def alice_generate(
    cfg: dict,
    stage: str,
    shard: int,
    sources_path: str,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
    regime_path: str | None = None,
) -> None:
    """Alice's answers for one shard of a stage. With ``seq.regime`` (E2/E3) the SEQ share
    and P come from ``regime_path``, E0's regimes file, read here rather than at planning."""
    if cfg["seq"]["regime"]:
        cfg = apply_regime(cfg, regime_path)
    # Appendix E.2: one reference set D of P programs serves every round
    sources = select_stage_sources(read_jsonl(sources_path), stage, cfg, track="seq", same_every_round=True)
    mine = shard_of(sources, shard, int(cfg["seq"]["shards"]))
    adapter = resolve_adapter(adapter_dir)
    games = [choose_game(cfg, stage, s["id"]) for s in mine]
    requests = [alice_request(s, stage, g, cfg, adapter) for s, g in zip(mine, games)]
    metas = [
        {
            "role": "alice",
            "stage": stage,
            "shard": shard,
            "source_id": s["id"],
            "game": g,
            "adapter_dir": adapter,
        }
        for s, g in zip(mine, games)
    ]
    generate_to_file(cfg, model_dir, requests, metas, out, f"seq alice {stage} shard {shard}")


def check_programs(
    cfg: dict, stage: str, generations_path: str, sources_path: str, out: str, workers: int = 2
) -> None:
    by_id = {s["id"]: s for s in read_jsonl(sources_path)}
    records = read_jsonl(generations_path)
    for rec in records:
        if rec["meta"]["source_id"] not in by_id:
            raise UserError(
                f"{generations_path}: generation names source {rec['meta']['source_id']} "
                f"that is not in {sources_path}"
            )
    cands = candidates_from_generations(records, by_id, stage, cfg, workers=workers)
    runtime = runtime_record(("python", "ghc"))
    for cand in cands:
        cand["runtime"] = runtime
    write_jsonl(out, cands)
    log.info(
        "seq %s: %d outputs, %d parsed, %d SINQ verified, %d SEQ awaiting proof",
        stage,
        len(cands),
        sum(c["parse"]["ok"] for c in cands),
        sum(c["verified"] for c in cands),
        sum(c["status"] == "awaiting_proof" for c in cands),
    )


def proof_generate(
    cfg: dict,
    stage: str,
    attempt: int,
    checked_path: str,
    previous_checks_path: str | None,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
) -> None:
    previous = read_jsonl(previous_checks_path) if previous_checks_path else None
    todo = needs_attempt(read_jsonl(checked_path), previous)
    adapter = resolve_adapter(adapter_dir)
    requests = [proof_request(c, attempt, fb, cfg, adapter) for c, fb in todo]
    metas = [
        {
            "role": "alice_proof",
            "stage": stage,
            "attempt": attempt,
            "candidate_id": c["id"],
            "adapter_dir": adapter,
        }
        for c, _ in todo
    ]
    generate_to_file(cfg, model_dir, requests, metas, out, f"seq proofs {stage} attempt {attempt}")


def proof_check(cfg: dict, attempt: int, generations_path: str, checked_path: str, out: str) -> None:
    by_id = {c["id"]: c for c in read_jsonl(checked_path)}
    settings = liquid_settings(cfg)
    checks = check_attempts(
        read_jsonl(generations_path),
        by_id,
        attempt,
        settings,
        memory_mb=int(cfg["seq"]["proof"]["memory_mb"]),
    )
    runtime = runtime_record(("python", "ghc", "z3"))
    for check in checks:
        check["runtime"] = runtime
    write_jsonl(out, checks)
    log.info(
        "seq proofs attempt %d: %d checked with %s; %d accepted",
        attempt,
        len(checks),
        " ".join(settings.command) if settings.command else "no Liquid Haskell (none accepted)",
        sum(c["verdict"]["accepted"] for c in checks),
    )


def settle_candidates(checked_path: str, check_paths: list[str], out: str) -> None:
    cands = settle(read_jsonl(checked_path), [read_jsonl(p) for p in check_paths])
    write_jsonl(out, cands)
    log.info(
        "seq candidates: %d verified (%d SEQ, %d SINQ) of %d",
        sum(c["verified"] for c in cands),
        sum(c["verified"] and c["game"] == "seq" for c in cands),
        sum(c["verified"] and c["game"] == "sinq" for c in cands),
        len(cands),
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
        cfg, stage, who, candidates_path, model_dir, adapter_dir, out, bob_request, f"seq bob[{who}] {stage}"
    )


def label_instances(stage: str, who: str, candidates_path: str, bob_path: str, out: str) -> None:
    instances = verified_instances(candidates_path)
    labeled = []
    for rec in read_jsonl(bob_path):
        inst = answered_instance(instances, rec, bob_path, candidates_path)
        labeled.append(score_bob(inst, rec, who))
    write_jsonl(out, labeled)
    log.info("seq %s bob[%s]: %d instances labelled", stage, who, len(labeled))


# --- training sets ---------------------------------------------------------------


def alice_trainset(cfg: dict, labeled_paths: list[str], out: str) -> dict:
    """Main examples (hard = difficulty > tau, plus easy_fraction round-robin), difficulty
    prediction (plus difficulty_easy_fraction), and a proof example per proved SEQ pair."""
    seq = cfg["seq"]
    cur, target = seq["curriculum"], int(seq["game"]["target_difficulty"])
    items = accumulated_labeled(labeled_paths)
    pick = dict(hard_threshold=cur["hard_threshold"], strictly_above=True)
    main = select_hard_and_easy(items, easy_fraction=cur["easy_fraction"], seed=cfg["seed"], **pick)
    # Sec. 3.4.1: easy examples make up difficulty_easy_fraction of the difficulty-prediction subset
    pred = select_hard_and_easy(
        items, easy_share=cur["difficulty_easy_fraction"], seed=cfg["seed"] + 1, **pick
    )
    proved = [i for i in items if i["game"] == "seq" and i.get("proof")]
    rows = (
        [
            {
                "kind": "alice_main",
                "game": i["game"],
                "instance_id": i["id"],
                **examples.alice_main_example(i, target),
            }
            for i in main
        ]
        + [
            {
                "kind": "alice_difficulty",
                "game": i["game"],
                "instance_id": i["id"],
                **examples.alice_difficulty_example(i),
            }
            for i in pred
        ]
        + [
            {
                "kind": "alice_proof",
                "game": "seq",
                "instance_id": i["id"],
                **examples.alice_proof_example(i, target),
            }
            for i in proved
        ]
    )
    write_jsonl(out, rows)
    stats = {
        "labeled": len(items),
        "main": len(main),
        "difficulty_prediction": len(pred),
        "proof": len(proved),
        "hard": sum(i["difficulty"] > cur["hard_threshold"] for i in items),
    }
    log.info("seq alice training set: %s", stats)
    return stats


def bob_trainset(labeled_paths: list[str], out: str) -> dict:
    """Bob's training set: each of his own answers whose verdict (and, for SINQ, input) was right."""
    return write_bob_trainset(
        labeled_paths,
        out,
        lambda inst, text: {"game": inst["game"], **examples.bob_example(inst, text)},
        "seq",
    )
