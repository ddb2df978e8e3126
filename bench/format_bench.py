"""Yields with and without format-constrained decoding, on the same sources and seeds.

For each role the pipeline's own request builders make the requests (config.yaml's
settings, the round-1 seeds), once with `answer_format.constrained` off (free decoding,
as in the papers) and once on; the tiny model answers through the transformers backend,
and the pipeline's own steps parse and verify the answers:

- SInQ Alice: generated / parsed / verified divergent (sandboxed execution);
- SInQ Bob: on the instances Alice's constrained answers made verifiable (the same
  instances for both ways), answers parsed / with a diverging input / correct;
- Haskell track Alice, both games on the same programs: generated / parsed / verified
  (SINQ: divergence confirmed with GHC; SEQ: past the sanity check, since Liquid
  Haskell is missing here); Bob on her constrained instances: parsed / correct;

plus the tokens generated per second of each run. Results go to
bench/results/format.json and format.md.

    HF_HUB_OFFLINE=1 python bench/format_bench.py [--sources 8] [--model DIR]
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from selfplay.config import validate_config  # noqa: E402
from selfplay.data.sources import humaneval_sources  # noqa: E402
from selfplay.llm.transformers_backend import TransformersBackend  # noqa: E402
from selfplay.records import write_json, write_text_atomic  # noqa: E402
from selfplay.sandbox import Sandbox, SandboxLimits  # noqa: E402
from selfplay.tracks.sinq.game import alice_request, bob_request  # noqa: E402
from selfplay.tracks.sinq.verify import candidates_from_generation, score_bob  # noqa: E402


def with_format(cfg: dict, track: str, roles: tuple[str, ...], on: bool) -> dict:
    out = copy.deepcopy(cfg)
    for role in roles:
        out[track][role]["answer_format"]["constrained"] = on
    return out


def run(backend: TransformersBackend, requests) -> tuple[list[list[str]], dict]:
    before = dict(backend.stats)
    started = time.perf_counter()
    outputs = backend.generate(requests)
    seconds = time.perf_counter() - started
    tokens = backend.stats["generated_tokens"] - before["generated_tokens"]
    return outputs, {
        "seconds": round(seconds, 1),
        "generated_tokens": tokens,
        "tokens_per_second": round(tokens / seconds, 1) if seconds else None,
    }


def records_of(requests, outputs) -> list[dict]:
    return [
        {"key": r.key, "outputs": o, "answer_format": r.answer_format.record() if r.answer_format else None}
        for r, o in zip(requests, outputs)
    ]


def sinq(backend: TransformersBackend, cfg: dict, sources: list[dict]) -> dict:
    result: dict = {}
    sandbox = Sandbox(workers=2, limits=SandboxLimits(memory_mb=1024))
    verified_by_constrained: list[dict] = []
    with sandbox:
        for mode in ("free", "constrained"):
            c = with_format(cfg, "sinq", ("alice",), mode == "constrained")
            requests = [alice_request(s, "round1", c, None) for s in sources]
            outputs, speed = run(backend, requests)
            cands = [
                cand
                for rec, s in zip(records_of(requests, outputs), sources)
                for cand in candidates_from_generation(rec, s, "round1", c, sandbox)
            ]
            result[f"alice_{mode}"] = {
                "generated": len(cands),
                "parsed": sum(x["parse"]["ok"] for x in cands),
                "verified": sum(x["verified"] for x in cands),
                **speed,
            }
            if mode == "constrained":
                verified_by_constrained = [x for x in cands if x["verified"]]
        for mode in ("free", "constrained"):
            c = with_format(cfg, "sinq", ("bob",), mode == "constrained")
            requests = [bob_request(i, "round1", "untrained", c, None) for i in verified_by_constrained]
            outputs, speed = (
                run(backend, requests)
                if requests
                else ([], {"seconds": 0.0, "generated_tokens": 0, "tokens_per_second": None})
            )
            labeled = [
                score_bob(i, rec, "round1", "untrained", c, sandbox)
                for i, rec in zip(verified_by_constrained, records_of(requests, outputs))
            ]
            samples = [s for lab in labeled for s in lab["bob"]["samples"]]
            result[f"bob_{mode}"] = {
                "instances": len(labeled),
                "answers": len(samples),
                "parsed": sum(s["parse"]["ok"] for s in samples),
                "with_input": sum(s["input_literal"] is not None for s in samples),
                "correct": sum(s["correct"] for s in samples),
                **speed,
            }
    return result


def seq(backend: TransformersBackend, cfg: dict, n_sources: int) -> dict:
    """The Haskell track: Alice in both games on the same reference programs, then Bob on
    the instances her constrained answers made (SINQ verified by GHC, SEQ past the sanity
    check; no Liquid Haskell here, so no SEQ proof is ever accepted)."""
    import tempfile

    from selfplay.pipeline.seq import reference_sources
    from selfplay.records import read_jsonl
    from selfplay.tracks.seq.game import GAMES, alice_request, bob_request
    from selfplay.tracks.seq.verify import candidates_from_generations, score_bob

    with tempfile.TemporaryDirectory() as tmp:
        reference_sources(cfg, "train", f"{tmp}/ref.jsonl", f"{tmp}/rejected.jsonl")
        sources = read_jsonl(f"{tmp}/ref.jsonl")[:n_sources]
    by_id = {s["id"]: s for s in sources}
    result: dict = {}
    instances: list[dict] = []
    for game in GAMES:
        for mode in ("free", "constrained"):
            c = with_format(cfg, "seq", ("alice",), mode == "constrained")
            requests = [alice_request(s, "round1", game, c, None) for s in sources]
            outputs, speed = run(backend, requests)
            records = [
                {**rec, "meta": {"source_id": s["id"], "game": game}}
                for rec, s in zip(records_of(requests, outputs), sources)
            ]
            cands = candidates_from_generations(records, by_id, "round1", c)
            passed = [x for x in cands if x["verified"] or x["status"] == "awaiting_proof"]
            result[f"alice.{game}_{mode}"] = {
                "generated": len(cands),
                "parsed": sum(x["parse"]["ok"] for x in cands),
                "verified": len(passed),
                **speed,
            }
            if mode == "constrained":
                instances += passed
    for mode in ("free", "constrained"):
        c = with_format(cfg, "seq", ("bob",), mode == "constrained")
        requests = [bob_request(i, "round1", "untrained", c, None) for i in instances]
        outputs, speed = (
            run(backend, requests)
            if requests
            else ([], {"seconds": 0.0, "generated_tokens": 0, "tokens_per_second": None})
        )
        labeled = [score_bob(i, rec, "untrained") for i, rec in zip(instances, records_of(requests, outputs))]
        samples = [x for lab in labeled for x in lab["bob"]["samples"]]
        result[f"bob_{mode}"] = {
            "instances": len(labeled),
            "answers": len(samples),
            "parsed": sum(x["verdict"] is not None for x in samples),
            "correct": sum(x["correct"] for x in samples),
            **speed,
        }
    return result


def markdown(result: dict) -> str:
    lines = [
        f"# Format-constrained decoding: yields ({result['date']}, {result['machine']['nproc']} cores)",
        "",
        f"Model {result['model']}, {result['sources']} sources per role, config.yaml's sampling, round-1 seeds.",
        "",
        "| track | role | decoding | generated | parsed | verified / correct | tokens/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for track, roles in result["tracks"].items():
        for key, row in roles.items():
            role, mode = key.rsplit("_", 1)
            done = row.get("generated", row.get("answers"))
            good = row.get("verified", row.get("correct"))
            lines.append(
                f"| {track} | {role} | {mode} | {done} | {row['parsed']} | {good} | {row['tokens_per_second']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "resources" / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--sources", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    from selfplay.llm.model_prep import ensure_default_model

    model = ensure_default_model(args.model)
    cfg = validate_config(yaml.safe_load((ROOT / "config.yaml").read_text()))
    backend = TransformersBackend(str(model), batch_size=8, threads=args.threads, progress=False)
    tracks = {
        "sinq": sinq(backend, cfg, humaneval_sources("train")[: args.sources]),
        "seq": seq(backend, cfg, args.sources),
    }
    result = {
        "date": dt.date.today().isoformat(),
        "model": Path(model).name,
        "sources": args.sources,
        "machine": {"nproc": os.cpu_count(), "python": platform.python_version()},
        "tracks": tracks,
    }
    out = ROOT / "bench" / "results"
    write_json(out / "format.json", result)
    write_text_atomic(out / "format.md", markdown(result))
    print(json.dumps(tracks, indent=1))


if __name__ == "__main__":
    main()
