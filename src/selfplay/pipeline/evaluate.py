"""The benchmark layer's workflow steps, file to file: prepare a benchmark's items,
sample a model on them in one mode (recorded like every generation), score the
samples, and summarise the scores.

Files (see rules/evaluate.smk):
  resources/data/eval/<bench>.jsonl (+ .skipped.jsonl)             prepared items
  results/<track>/<exp>/eval/<bench>/<model>/<mode>.jsonl           generations
  results/<track>/<exp>/eval/<bench>/<model>/<mode>.shards<n>/<k>.jsonl
                                                                    shard k of n (merged into the above)
  results/<track>/<exp>/eval/<bench>/<model>/<mode>.scored.jsonl    one row per sample
  results/<track>/<exp>/eval/<bench>/<model>/<mode>.json            the metrics
"""

from __future__ import annotations

import logging

from ..containers.runtime import runtime_record
from ..errors import UserError
from ..evaluate.benchmark import Sample
from ..evaluate.modes import mode_of
from ..evaluate.registry import benchmark
from ..evaluate.shards import check_shard, merge_records, shard_count
from ..llm.base import GenerationRequest
from ..llm.reasoning import THINK_END, final_answer
from ..records import derive_seed, read_jsonl, write_json, write_jsonl
from ..report.decoding import decoding_of
from ..tracks.stages import shard_of
from .agents import generate_to_file, resolve_policy

log = logging.getLogger("selfplay")


def bench_settings(cfg: dict, name: str) -> dict:
    return cfg["evaluation"]["benchmarks"][name]


def source_of(paths: list[str]) -> str | None:
    """What an adapter's ``prepare`` reads: nothing (shipped data), the one file, or the
    folder holding a release's several downloaded files."""
    import os

    paths = [str(p) for p in paths]
    if not paths:
        return None
    if len(paths) == 1:
        return paths[0]
    folders = {os.path.dirname(p) for p in paths}
    if len(folders) != 1:
        raise UserError(f"a benchmark's files must lie in one folder, got {sorted(folders)}")
    return folders.pop()


def prepare(cfg: dict, name: str, source_path: str | None, out: str, skipped_out: str) -> dict:
    """The benchmark's items from a downloaded/supplied file (or its shipped data)."""
    settings = bench_settings(cfg, name)
    adapter = benchmark(name)
    items, skipped = adapter.prepare(source_path, settings, cfg)
    if not items:
        raise UserError(
            f"benchmark {name}: no usable items ({len(skipped)} skipped; see {skipped_out})"
            if skipped
            else f"benchmark {name}: the source holds no items"
        )
    ids = [i["id"] for i in items]
    if len(set(ids)) != len(ids):
        raise UserError(f"benchmark {name}: item ids are not unique")
    write_jsonl(out, items)
    write_jsonl(skipped_out, skipped)
    log.info(
        "benchmark %s: %d items, %d skipped (source: %s)",
        name,
        len(items),
        len(skipped),
        source_path or settings["source"],
    )
    return {"items": len(items), "skipped": len(skipped)}


def eval_request(
    cfg: dict, name: str, mode_name: str, model_tag: str, item: dict, adapter: str | None
) -> GenerationRequest:
    """One item's samples in one mode by one model. The model's tag is part of the seed:
    recordings are keyed by prompt and sampling, not by adapter (llm/base.py), so each
    model's answers must differ in their key to be replayed as that model's."""
    bench, mode = benchmark(name), mode_of(cfg, mode_name)
    settings = bench_settings(cfg, name)
    seed = derive_seed(cfg["seed"], "eval", name, mode_name, model_tag, item["id"])
    return GenerationRequest(
        messages=bench.messages(item, mode.cot),
        sampling=mode.sampling_params(seed, settings.get("max_new_tokens")),
        adapter=adapter,
        answer_format=bench.answer_format(item, mode.cot) if settings["constrained"] else None,
    )


def items_for(cfg: dict, model_tag: str, items: list[dict], other: dict | None) -> list[dict]:
    """The items a model answers: all of them, or for a model behind a server with a
    ``fraction`` below 1, that share drawn with the run's seed (the same draw for every
    mode, so its modes stay comparable)."""
    if not other or float(other["fraction"]) >= 1.0:
        return items
    import math
    import random

    keep = max(1, math.ceil(float(other["fraction"]) * len(items)))
    chosen = set(
        random.Random(derive_seed(cfg["seed"], "eval-fraction", model_tag)).sample(
            [i["id"] for i in items], keep
        )
    )
    return [i for i in items if i["id"] in chosen]


def other_backend_config(cfg: dict, other: dict) -> dict:
    """``cfg`` with the generation backend pointed at a model behind an OpenAI-compatible
    server (``<track>.benchmarks.other_models``)."""
    out = dict(cfg)
    out["backend"] = {"name": "openai", "base_url": other["base_url"], "api_key_env": other["api_key_env"]}
    if other.get("reasoning"):
        out["backend"]["reasoning_model"] = True
    if other.get("concurrency"):
        out["backend"]["concurrency"] = int(other["concurrency"])
    out["model"] = {"name": other["model"], "source": "hf", "path": other["model"]}
    return out


def generate(
    cfg: dict,
    name: str,
    mode_name: str,
    model_tag: str,
    items_path: str,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
    other: dict | None = None,
    shard: tuple[int, int] | None = None,
) -> None:
    """``other``: the model is served elsewhere (generation goes through the openai
    backend, unless the run replays recordings). ``shard`` (k, n): answer only shard k
    of the cell's n (evaluate/shards.py); each item's request is the same either way."""
    items = items_for(cfg, model_tag, read_jsonl(items_path), other)
    what = f"{name} / {mode_name} / {model_tag}"
    if shard is not None:
        check_shard(cfg, name, *shard)
        items = shard_of(items, *shard)
        what += f" / shard {shard[0]} of {shard[1]}"
    model_dir, adapter = resolve_policy(model_dir, adapter_dir)  # a fully fine-tuned policy replaces the base
    if other and cfg["backend"]["name"] != "replay":
        cfg, model_dir = other_backend_config(cfg, other), other["model"]
    requests = [eval_request(cfg, name, mode_name, model_tag, item, adapter) for item in items]
    metas = [
        {
            "role": "evaluation",
            "benchmark": name,
            "mode": mode_name,
            "model": model_tag,
            "item": item["id"],
            "adapter_dir": adapter,
        }
        for item in items
    ]
    generate_to_file(cfg, model_dir, requests, metas, out, what)


def merge(
    cfg: dict, name: str, mode_name: str, model_tag: str, items_path: str, shard_paths: list[str], out: str
) -> int:
    """One cell's generations from its shards (in shard order), in item order: the file
    the unsharded job would have written, less each record's timing."""
    items = items_for(cfg, model_tag, read_jsonl(items_path), None)
    if len(shard_paths) != shard_count(cfg, name):
        raise UserError(
            f"{name} / {mode_name} / {model_tag}: {len(shard_paths)} shard files for "
            f"evaluation.benchmarks.{name}.shards = {shard_count(cfg, name)}"
        )
    records = merge_records(
        [read_jsonl(p) for p in shard_paths], [i["id"] for i in items], f"{name} / {mode_name} / {model_tag}"
    )
    write_jsonl(out, records)
    log.info(
        "%s / %s / %s: %d records from %d shards -> %s",
        name,
        mode_name,
        model_tag,
        len(records),
        len(shard_paths),
        out,
    )
    return len(records)


def samples_of(records: list[dict]) -> list[Sample]:
    """The answers to score. An item whose prompt did not fit the model's context (its
    record's ``unfit`` reason) has none: it is left out of the cell, as paper 001 drops
    the patches beyond its model's context, and counted in the summary."""
    return [
        Sample(rec["meta"]["item"], k, text)
        for rec in records
        if not rec.get("unfit")
        for k, text in enumerate(rec["outputs"])
    ]


def answers_of(samples: list[Sample], mode) -> tuple[list[Sample], int]:
    """(what is scored, how many outputs never finished thinking). In a ``thinking`` mode
    an answer is what follows ``</think>``, and an output without it has none (an empty
    answer, unparsed): its reasoning, drafts included, is not the answer."""
    if not mode.thinking:
        return samples, 0
    out, unfinished = [], 0
    for s in samples:
        if THINK_END in s.text:
            out.append(Sample(s.item_id, s.index, final_answer(s.text)))
        else:
            unfinished += 1
            out.append(Sample(s.item_id, s.index, ""))
    return out, unfinished


def score(
    cfg: dict,
    name: str,
    mode_name: str,
    items_path: str,
    generations_path: str,
    scored_out: str,
    summary_out: str,
    skipped_path: str | None = None,
) -> dict:
    """Score one mode's samples; pass@k for the k values the mode names. ``skipped_path``:
    the benchmark's skipped rows, whose items that cannot run count as failed in the
    official pass@k."""
    bench, mode = benchmark(name), mode_of(cfg, mode_name)
    items = {i["id"]: i for i in read_jsonl(items_path)}
    records = read_jsonl(generations_path)
    unknown = {r["meta"]["item"] for r in records} - set(items)
    if unknown:
        raise UserError(
            f"{generations_path}: answers to items the benchmark does not have "
            f"(e.g. {sorted(unknown)[0]}); regenerate them"
        )
    samples, unfinished = answers_of(samples_of(records), mode)
    rows = bench.score(items, samples, mode, cfg, workers=int(cfg["evaluation"]["workers"]))
    write_jsonl(scored_out, rows)
    if bench.task == "codegen":
        skipped = read_jsonl(skipped_path) if skipped_path else []
        summary = bench.summarise(
            items,
            rows,
            mode,
            unrunnable_ids=[r["id"] for r in skipped if r.get("counts")],
            runnable_only=bool(bench_settings(cfg, name).get("runnable_only")),
        )
    else:
        summary = bench.summarise(items, rows, mode)
    summary = {
        "benchmark": name,
        "title": bench.title,
        "task": bench.task,
        "model": (records[0]["meta"].get("model") if records else None),
        "adapter": (records[0]["meta"].get("adapter_dir") if records else None),
        "decoding": decoding_of(r.get("answer_format") for r in records),
        "samples": mode.samples,
        "runtime": runtime_record(bench.tools),
        **summary,
    }
    if mode.thinking:
        summary["unfinished_thinking"] = unfinished
    over_context = [r["meta"]["item"] for r in records if r.get("unfit")]
    if over_context:
        summary["over_context"] = len(over_context)
        log.warning(
            "%s / %s: %d items left out, their prompts do not fit the model's context (e.g. %s)",
            name,
            mode_name,
            len(over_context),
            over_context[0],
        )
    write_json(summary_out, summary)
    log.info(
        "%s / %s: %s",
        name,
        mode_name,
        {k: summary.get(k) for k in ("accuracy", "f1", "pass@1") if k in summary},
    )
    return summary


def ground_truth(cfg: dict, name: str, items_path: str, scored_out: str, summary_out: str) -> dict:
    """Score the benchmark's own right answers (gold labels, reference solutions) through
    the same reading and scoring as model answers: every one must be right. Writes the
    summary either way (``checked: false`` when the benchmark ships no right answers)."""
    from ..evaluate.modes import EvalMode

    bench = benchmark(name)
    items = read_jsonl(items_path)
    answers = bench.reference_answers(items)
    mode = EvalMode("reference", 1, False, "single", {})
    if not answers:
        write_jsonl(scored_out, [])
        summary = {"benchmark": name, "title": bench.title, "task": bench.task, "checked": False, "n": 0}
        write_json(summary_out, summary)
        return summary
    by_id = {i["id"]: i for i in items}
    rows = bench.score(by_id, answers, mode, cfg, workers=int(cfg["evaluation"]["workers"]))
    write_jsonl(scored_out, rows)
    right = [bool(r.get("passed", r.get("correct"))) for r in rows]
    summary = {
        "benchmark": name,
        "title": bench.title,
        "task": bench.task,
        "checked": True,
        "n": len(rows),
        "items": len(items),
        "right": sum(right),
        "score": sum(right) / len(rows),
        "wrong": [r["id"] for r, ok in zip(rows, right) if not ok][:20],
        "runtime": runtime_record(bench.tools),
    }
    write_json(summary_out, summary)
    log.info("%s ground truth: %d of %d right", name, sum(right), len(rows))
    if not all(right):
        log.warning(
            "%s: %d reference answers are not scored right (e.g. %s)",
            name,
            len(rows) - sum(right),
            summary["wrong"][:3],
        )
    return summary


def training_split(cfg: dict, name: str, source_path: str | None, out: str, skipped_out: str) -> dict:
    """A benchmark's training problems (LiveCodeBench: contests before ``train_before``,
    never overlapping the evaluation window), prepared like its evaluation items."""
    adapter = benchmark(name)
    if not hasattr(adapter, "training_items"):
        raise UserError(f"benchmark {name} has no training split")
    items, skipped = adapter.training_items(source_path, bench_settings(cfg, name))
    write_jsonl(out, items)
    write_jsonl(skipped_out, skipped)
    log.info("benchmark %s: %d training problems, %d skipped", name, len(items), len(skipped))
    return {"items": len(items), "skipped": len(skipped)}
