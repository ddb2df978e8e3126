"""The EvolveCoder track's workflow steps (paper 002, Sec. 2). Each reads files and writes
its outputs atomically; ``cfg`` is the whole config (the track's section is ``evolve``).

Layout under ``results/evolve/<experiment>/``:

* ``seeds/seeds.jsonl`` (+ ``seeds.skipped.jsonl``): the seed problems, one record per
  problem, every dropped row with its reason;
* ``seeds/dedup.jsonl`` and ``seeds/dedup.json``: the problems kept by the semantic
  de-duplication, and the numbers behind Table 1 and Figures 1-2 (with every dropped
  id and the representative it collapsed to);
* ``round0/refine.jsonl``: the recorded refinement answers (A.1);
  ``round0/suite.jsonl``: the refined problems, each with its suite of tests (every
  test carries the round and method that made it) or the reason it has none;
* ``pool/<model>.jsonl``: each candidate model's recorded answers;
  ``pool/solutions.jsonl``: every problem's pool of candidate programs (an answer that
  holds no program stays in the pool as a program that fails every test);
* ``round<r>/matrix.jsonl``: per problem, the pass matrix of the pool (and of the seed's
  reference solution, when it defines the function the tests call) over round r's
  suite; columns already judged in round r-1 are carried over, not run again;
* ``round<r>/dataset.jsonl``: per problem, what the end-of-round filter keeps;
* ``round<r>/evolve.jsonl`` (r >= 1): the recorded adversarial and discriminative
  answers made from round r-1's matrix; ``round<r>/suite.jsonl``: round r-1's suite
  plus the new tests.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

from ..containers.runtime import runtime_record
from ..errors import UserError
from ..records import derive_seed, read_json, read_jsonl, sha256_file, write_json, write_jsonl
from ..tracks.evolve import game
from ..tracks.evolve.parse import guess_entry, parse_new_tests, parse_refinement, parse_solution
from ..tracks.evolve.rounds import METHODS, generation_picks, round_entry, submatrix
from ..tracks.evolve.selection import Pick, split_tests
from .agents import generate_to_file

log = logging.getLogger("selfplay")

NO_PROGRAM = "no_program"


# --- seeds ----------------------------------------------------------------------


def download_seed_source(cfg: dict, source: str, out_dir: str, log_) -> None:
    """Fetch one seed source's files (paper scale; needs network) into ``out_dir``, at
    the revision config ``evolve.seeds.revisions.<download>`` names or the pinned one (a
    branch, or none where no commit is confirmed, resolved once and recorded; every file's
    sha256 checked against, or first recorded in, config/download-pins.tsv);
    a listing of the repository picks the files of a source pinned only by pattern.
    Writes ``files.json``: per split, the local files in order, for ``prepare_seeds``."""
    from ..data.sources import download_pinned
    from ..tracks.evolve.downloads import DOWNLOADS

    spec = cfg["evolve"]["seeds"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    index: dict[str, dict[str, list[str]]] = {}
    from ..evaluate.pins import LOCK_FILE
    from ..llm.model_prep import resolve_commit
    from ..tracks.evolve.downloads import UNCONFIRMED

    for name, dl in DOWNLOADS.items():
        if dl.source != source:
            continue
        revision = spec["revisions"].get(name) or (None if dl.revision == UNCONFIRMED else dl.revision)
        # a branch (or no confirmed revision: the default branch) is resolved to a commit once and
        # recorded in config/revision-pins.tsv; later downloads fetch that commit
        revision = resolve_commit(dl.repo, revision, "dataset", log_=log_)
        listing = None
        if not dl.files_complete:
            from huggingface_hub import list_repo_files

            listing = list_repo_files(dl.repo, repo_type="dataset", revision=revision or None)
        from ..tracks.evolve.downloads import rule_downloads

        for row in rule_downloads(name, revision, spec["sha256"], listing):
            dest = out / name / row["file"]
            download_pinned(
                row["url"],
                str(dest),
                row["sha256"],
                f"evolve.seeds.sha256.{row['file']}",
                log_,
                lock_path=LOCK_FILE,
            )
            index.setdefault(name, {}).setdefault(row["split"], []).append(str(dest))
    write_json(out / "files.json", index)


def prepare_seeds(cfg: dict, out: str, skipped_out: str, downloaded: dict[str, str] | None = None) -> None:
    """The seed problems of every configured source (shipped, or the folder rule
    ``evolve_download`` filled per source), with a seeded sample of ``per_source`` per
    source when set."""
    from ..tracks.evolve import seeds as seed_sets

    spec = cfg["evolve"]["seeds"]
    records, skipped = [], []
    for source in spec["sources"]:
        if spec["source"] == "embedded":
            got, dropped = seed_sets.load_files(
                source, [seed_sets.shipped_file(source, spec["shipped_set"])], "train"
            )
        else:
            folder = (downloaded or {}).get(source)
            if not folder or not (Path(folder) / "files.json").is_file():
                raise UserError(
                    f"seed source {source}: its downloaded files are missing (rule evolve_download)"
                )
            index = read_json(Path(folder) / "files.json")
            main = next((v for k, v in index.items() if k != "codeforces_problems"), {})
            got, dropped = [], []
            for split, paths in main.items():
                g, d = seed_sets.load_files(
                    source, paths, split, problem_paths=index.get("codeforces_problems", {}).get(split, [])
                )
                got += g
                dropped += d
        count = spec.get("per_source")
        if count is not None and count < len(got):
            rng = random.Random(derive_seed(cfg["seed"], "evolve-seeds", source))
            chosen = set(r["id"] for r in rng.sample(got, count))
            got = [r for r in got if r["id"] in chosen]
        records += got
        skipped += dropped
        log.info("seed source %s: %d problems, %d rows dropped", source, len(got), len(dropped))
    write_jsonl(out, records)
    write_jsonl(skipped_out, skipped)


def embed_seeds(
    cfg: dict, seeds_path: str, out_vectors: str, out_meta: str, model: str | None = None
) -> None:
    """Sentence embeddings of the seed questions (config ``evolve.dedup.model``): a .npy
    matrix, one unit-length row per seed in file order, and a JSON beside it naming the
    seeds, the model and its hash. A bundle carries both, so its replay de-duplicates
    the same vectors without the embedding model (``restore_embeddings``). ``model`` is
    the folder to load (a hub model spec's download, passed by the rule); without it
    config's folder or null (the packaged model) is used."""
    import numpy as np

    from .. import embeddings as embed

    if model is None:
        model = cfg["evolve"]["dedup"]["model"]
        if isinstance(model, dict):
            raise UserError("evolve.dedup.model is a hub model spec: pass the folder rule prepare_model made")
    records = read_jsonl(seeds_path)
    if not records:
        raise UserError(f"{seeds_path}: no seed problems to embed")
    vectors = embed.embed_texts([r["question"] for r in records], model, key="evolve.dedup.model")
    tmp = Path(out_vectors).with_suffix(".partial.npy")
    np.save(tmp, vectors.astype(np.float32))
    tmp.replace(out_vectors)
    write_json(
        out_meta,
        {
            "ids": [r["id"] for r in records],
            "model": embed.model_identity(model, key="evolve.dedup.model"),
            "shape": list(vectors.shape),
            "sha256": sha256_file(out_vectors),
        },
    )


def restore_embeddings(
    seeds_path: str, bundled_vectors: str, bundled_meta: str, out_vectors: str, out_meta: str
) -> None:
    """A bundle's embeddings put in place, after checking they belong to these seeds."""
    import shutil

    meta = read_json(bundled_meta)
    ids = [r["id"] for r in read_jsonl(seeds_path)]
    if meta.get("ids") != ids:
        raise UserError(
            f"{bundled_meta}: the bundled embeddings are of other seed problems than {seeds_path}; "
            "the replay diverged upstream of de-duplication"
        )
    if sha256_file(bundled_vectors) != meta.get("sha256"):
        raise UserError(f"{bundled_vectors}: does not hash to the sha256 its metadata records")
    shutil.copyfile(bundled_vectors, out_vectors)
    write_json(out_meta, {**meta, "restored_from_bundle": str(bundled_meta)})


def deduplicate_seeds(
    cfg: dict, seeds_path: str, vectors_path: str, meta_path: str, out: str, stats_out: str
) -> None:
    """Semantic de-duplication of the seeds on their embeddings (threshold and neighbours
    from config ``evolve.dedup``); the statistics name the embedding model and its hash."""
    import numpy as np

    from ..tracks.evolve import dedup

    d = cfg["evolve"]["dedup"]
    records = read_jsonl(seeds_path)
    meta = read_json(meta_path)
    if meta["ids"] != [r["id"] for r in records]:
        raise UserError(f"{meta_path}: the embeddings are of other seed problems than {seeds_path}")
    vectors = np.load(vectors_path)
    result, stats = dedup.summary(
        records,
        vectors,
        threshold=float(d["threshold"]),
        seed=derive_seed(cfg["seed"], "evolve-dedup"),
        k=int(d["neighbours"]),
        order=list(cfg["evolve"]["seeds"]["sources"]),
    )
    kept = set(result.kept)
    write_jsonl(out, [r for r in records if r["id"] in kept])
    write_json(
        stats_out, {**stats, "model": meta["model"], "dropped": result.dropped, "groups": result.groups}
    )
    log.info("de-duplication: %d of %d seed problems kept", len(kept), len(records))


# --- round 0: refinement ------------------------------------------------------------


def generator_backend(cfg: dict, model_dir: str | None) -> tuple[dict, str | None]:
    """(cfg, model_dir) of the refiner and test writer: the configured backend and model,
    or with ``evolve.generator_served`` the openai backend to that server (unless the run
    replays recordings)."""
    from .evaluate import other_backend_config

    served = cfg["evolve"].get("generator_served")
    if not served or cfg["backend"]["name"] == "replay":
        return cfg, model_dir
    return other_backend_config(cfg, served), served["model"]


def refine_generate(cfg: dict, seeds_path: str, model_dir: str | None, out: str) -> None:
    cfg, model_dir = generator_backend(cfg, model_dir)
    problems = read_jsonl(seeds_path)
    requests = [game.refine_request(cfg, p) for p in problems]
    metas = [{"step": "refine", "problem_id": p["id"], "source": p["source"]} for p in problems]
    generate_to_file(cfg, model_dir, requests, metas, out, "evolve refine")


def refined_suites(seeds_path: str, generations_path: str, out: str) -> None:
    """Round 0's suites: each refinement answer read into a question, its entry function
    and its tests (origin: round 0, method ``seed``); a problem whose answer cannot be
    read is kept with its reason and no tests."""
    seeds = {p["id"]: p for p in read_jsonl(seeds_path)}
    rows = []
    for rec in read_jsonl(generations_path):
        pid = rec["meta"]["problem_id"]
        seed = seeds.get(pid)
        if seed is None:
            raise UserError(f"{generations_path}: names problem {pid}, which is not in {seeds_path}")
        answer = parse_refinement(rec["outputs"][0])
        entry = guess_entry(answer.tests) if answer.tests else None
        rows.append(
            {
                "id": pid,
                "source": seed["source"],
                "question": answer.question,
                "entry": entry,
                "reference": (seed.get("solutions") or [None])[0],
                "tests": [{"text": t, "round": 0, "method": "seed"} for t in answer.tests],
                "rejected": [
                    {"text": t, "reason": why, "round": 0, "method": "seed"} for t, why in answer.rejected
                ],
                "reason": answer.reason or (None if entry else "parse:no_entry_function"),
            }
        )
    write_jsonl(out, rows)
    log.info("refinement: %d of %d problems have a suite", sum(r["reason"] is None for r in rows), len(rows))


def usable_problems(suite: list[dict]) -> list[dict]:
    return [p for p in suite if p["reason"] is None]


# --- the solution pool --------------------------------------------------------------


def pool_block(problems: list, shard: int, shards: int) -> list:
    """Shard ``shard`` of ``shards`` contiguous blocks of the problems, so that the shards'
    files, concatenated in order, hold the records one unsharded job writes (each request
    draws its own seeded stream; only per-job fields, the timings and the backend's job
    statistics, differ). Used by the pool's jobs and by each round's test generation."""
    if not 0 <= shard < shards:
        raise UserError(f"evolve: shard {shard} is not in 0..{shards - 1}")
    size = -(-len(problems) // shards)
    return problems[shard * size : (shard + 1) * size]


def pool_generate(
    cfg: dict,
    suite_path: str,
    model_name: str,
    samples: int,
    model_dir: str | None,
    adapter: str | None,
    out: str,
    shard: int = 0,
    shards: int = 1,
) -> None:
    problems = pool_block(usable_problems(read_jsonl(suite_path)), shard, shards)
    requests = [game.pool_request(cfg, p, model_name, samples, adapter) for p in problems]
    metas = [{"step": "pool", "problem_id": p["id"], "model": model_name} for p in problems]
    generate_to_file(cfg, model_dir, requests, metas, out, f"evolve pool {model_name}")


def merge_shards(shard_paths: list[str], out: str) -> None:
    """One recording from its shards' files (:func:`pool_block`'s blocks), concatenated in
    shard order (streamed: at paper scale a pool model's recording is gigabytes)."""
    import shutil

    with open(out, "wb") as dst:
        for path in shard_paths:
            with open(path, "rb") as src:
                shutil.copyfileobj(src, dst, 1 << 20)


def pool_solutions(suite_path: str, generation_paths: list[str], out: str) -> None:
    """Every problem's pool: one entry per sample of every pool model, with its program
    or the reason it has none (such an entry fails every test)."""
    entries = {p["id"]: p["entry"] for p in usable_problems(read_jsonl(suite_path))}
    pools: dict[str, list[dict]] = {pid: [] for pid in entries}
    for path in generation_paths:
        for rec in read_jsonl(path):
            pid = rec["meta"]["problem_id"]
            if pid not in pools:
                raise UserError(f"{path}: names problem {pid}, which has no suite")
            for i, text in enumerate(rec["outputs"]):
                code, why = parse_solution(text, entries[pid])
                pools[pid].append({"model": rec["meta"]["model"], "sample": i, "code": code, "reason": why})
    write_jsonl(out, [{"id": pid, "solutions": sols} for pid, sols in pools.items()])


# --- pass matrices -------------------------------------------------------------------


def _sandbox(cfg: dict):
    from ..sandbox import Sandbox, SandboxLimits
    from ..verifier_canary import checked_sandbox

    m = cfg["evolve"]["matrix"]
    return checked_sandbox(
        Sandbox(workers=int(m["workers"]), limits=SandboxLimits(memory_mb=int(m["memory_mb"])))
    )


def _reference_code(problem: dict) -> str | None:
    """The seed's reference solution, when it defines the function the tests call (a
    stdin program or one for another signature cannot be run against the tests)."""
    import ast

    code, entry = problem.get("reference"), problem.get("entry")
    if not code or not entry:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    return code if any(isinstance(n, ast.FunctionDef) and n.name == entry for n in tree.body) else None


def round_matrices(
    cfg: dict,
    suite_path: str,
    pool_path: str,
    out: str,
    previous_path: str | None = None,
    shard: int = 0,
    shards: int = 1,
) -> None:
    """The pass matrix of every problem's pool over its suite, plus the reference's row;
    columns of tests already judged in ``previous_path`` (same pool) are reused. Shard
    ``shard`` of ``shards`` judges one contiguous block of the problems (:func:`pool_block`)."""
    from ..tracks.evolve.pass_matrix import pass_matrix

    limit = float(cfg["evolve"]["matrix"]["time_limit"])
    problems = pool_block(usable_problems(read_jsonl(suite_path)), shard, shards)
    wanted = {p["id"] for p in problems}
    pools = {p["id"]: p["solutions"] for p in read_jsonl(pool_path) if p["id"] in wanted}
    previous = {m["id"]: m for m in read_jsonl(previous_path) if m["id"] in wanted} if previous_path else {}
    rows = []
    with _sandbox(cfg) as sb:
        for problem in problems:
            pool = pools.get(problem["id"], [])
            tests = [t["text"] for t in problem["tests"]]
            old = previous.get(problem["id"])
            start = len(old["tests"]) if old else 0
            if old and old["tests"] != tests[:start]:
                raise UserError(f"problem {problem['id']}: round suites must extend the previous round's")
            programs = [s["code"] for s in pool]
            reference = _reference_code(problem)
            runnable = [c for c in programs if c is not None] + ([reference] if reference else [])
            new = pass_matrix(runnable, tests[start:], problem["entry"], sb, limit) if tests[start:] else None
            rows.append(_merge_matrix(problem, pool, reference, old, new, tests))
    runtime = runtime_record()  # names the sandbox canary this job ran
    for row in rows:
        row["runtime"] = runtime
    write_jsonl(out, rows)
    log.info("pass matrices: %d problems -> %s", len(rows), out)


def _merge_matrix(
    problem: dict, pool: list[dict], reference: str | None, old: dict | None, new, tests: list[str]
) -> dict:
    """One problem's matrix row: the previous columns, then the newly judged ones; pool
    entries without a program fail every test."""
    n_new = len(tests) - (len(old["tests"]) if old else 0)
    passed, reasons = [], []
    k = 0
    for s, sol in enumerate(pool):
        before_p = old["passed"][s] if old else []
        before_r = old["reasons"][s] if old else []
        if sol["code"] is None:
            passed.append(before_p + [False] * n_new)
            reasons.append(before_r + [NO_PROGRAM] * n_new)
        else:
            passed.append(before_p + (new.passed[k] if new else []))
            reasons.append(before_r + (new.reasons[k] if new else []))
            k += 1
    ref_row = None
    if reference is not None:
        ref_row = (old["reference"] if old and old["reference"] is not None else []) + (
            new.passed[k] if new else []
        )
    return {
        "id": problem["id"],
        "source": problem["source"],
        "entry": problem["entry"],
        "tests": tests,
        "malformed": (old["malformed"] if old else []) + (new.malformed if new else []),
        "kinds": (old["kinds"] if old else []) + (new.kinds if new else []),
        "models": [s["model"] for s in pool],
        "passed": passed,
        "reasons": reasons,
        "reference": ref_row,
    }


def usable_mask(matrix: dict) -> list[bool]:
    return [why is None for why in matrix["malformed"]]


# --- rounds >= 1: new tests ----------------------------------------------------------


def _picks(cfg: dict, matrix: dict, pool: list[dict], round_: int) -> dict[str, Pick]:
    methods = {m: cfg["evolve"][m] for m in METHODS}
    return generation_picks(
        matrix["passed"],
        usable_mask(matrix),
        derive_seed(cfg["seed"], "evolve-pick", round_, matrix["id"]),
        methods,
        has_program=[sol["code"] is not None for sol in pool],
    )


def evolve_generate(
    cfg: dict,
    round_: int,
    suite_path: str,
    pool_path: str,
    matrix_path: str,
    model_dir: str | None,
    out: str,
    shard: int = 0,
    shards: int = 1,
) -> None:
    """Round ``round_``'s adversarial and discriminative requests, made from round
    ``round_ - 1``'s suite, pool and matrix (of shard ``shard`` of ``shards``: one
    contiguous block of the matrix's problems, :func:`pool_block`)."""
    cfg, model_dir = generator_backend(cfg, model_dir)
    suites = {p["id"]: p for p in usable_problems(read_jsonl(suite_path))}
    pools = {p["id"]: p["solutions"] for p in read_jsonl(pool_path)}
    requests, metas = [], []
    for matrix in pool_block(read_jsonl(matrix_path), shard, shards):
        problem, pool = suites[matrix["id"]], pools[matrix["id"]]
        for method, pick in _picks(cfg, matrix, pool, round_).items():
            shown = pick.solutions  # entries with a program only (generation_picks)
            if not shown:
                continue
            programs = [pool[s]["code"] for s in shown]
            rows = [[matrix["passed"][s][t] for t in pick.tests] for s in shown]
            requests.append(game.evolve_request(cfg, problem, method, round_, pick, programs, rows))
            metas.append(
                {
                    "step": method,
                    "round": round_,
                    "problem_id": problem["id"],
                    "shown_solutions": shown,
                    "shown_tests": pick.tests,
                    "why": pick.why,
                }
            )
    generate_to_file(cfg, model_dir, requests, metas, out, f"evolve round {round_}")


def extend_suites(round_: int, suite_path: str, generations_path: str, out: str) -> None:
    """Round ``round_``'s suites: the previous suites plus every new test that parses (an
    assert calling the problem's function, new to the suite); each rejected test is kept
    with its reason."""
    suites = read_jsonl(suite_path)
    by_id = {p["id"]: p for p in suites}
    for rec in read_jsonl(generations_path):
        meta = rec["meta"]
        problem = by_id[meta["problem_id"]]
        answer = parse_new_tests(rec["outputs"][0], problem["entry"], [t["text"] for t in problem["tests"]])
        origin = {"round": round_, "method": meta["step"], "shown_solutions": meta["shown_solutions"]}
        problem["tests"] += [{"text": t, **origin} for t in answer.tests]
        problem["rejected"] += [{"text": t, "reason": why, **origin} for t, why in answer.rejected]
        if answer.reason:
            problem["rejected"].append({"text": None, "reason": answer.reason, **origin})
    write_jsonl(out, suites)


# --- each round's dataset ----------------------------------------------------------


def round_dataset(cfg: dict, round_: int, suite_path: str, matrix_path: str, out: str) -> None:
    """What round ``round_``'s filter keeps of each problem. With
    ``discriminative.enforce_split``, a discriminative test (of this round or an earlier
    one: a refused test stays refused) that the solutions it was written for do not split
    is dropped first (``no_split``)."""
    suites = {p["id"]: p for p in usable_problems(read_jsonl(suite_path))}
    enforce = cfg["evolve"]["discriminative"]["enforce_split"]
    rows = []
    for matrix in read_jsonl(matrix_path):
        problem = suites[matrix["id"]]
        usable = usable_mask(matrix)
        no_split = []
        if enforce:
            for t, test in enumerate(problem["tests"]):
                if test["method"] == "discriminative" and test["round"] <= round_ and usable[t]:
                    shown = test["shown_solutions"]
                    if not split_tests(submatrix([matrix["passed"][s] for s in shown], [t]))[0]:
                        no_split.append(t)
        mask = [ok and t not in no_split for t, ok in enumerate(usable)]
        entry = round_entry(matrix["passed"], mask, cfg["evolve"])
        dropped = {**entry.dropped, **{t: "no_split" for t in no_split}}
        rows.append(
            {
                "id": matrix["id"],
                "source": matrix["source"],
                "round": round_,
                "kept": entry.kept_problem,
                "reason": entry.reason,
                "tests": entry.tests,
                "dropped": {str(t): why for t, why in sorted(dropped.items())},
                "perfect_solutions": entry.perfect_solutions,
            }
        )
    write_jsonl(out, rows)
    log.info("round %d dataset: %d of %d problems kept", round_, sum(r["kept"] for r in rows), len(rows))


# --- GRPO on a round's dataset (Table 3) ----------------------------------------------


def grpo_prompts(suite_path: str, dataset_path: str) -> list[dict]:
    """One GRPO prompt per problem the round keeps: the solving prompt, and the kept
    tests the reward runs (as JSON text, a plain dataset column)."""
    from ..tracks.evolve.prompts import solve_messages

    suites = {p["id"]: p for p in read_jsonl(suite_path)}
    records = []
    for d in read_jsonl(dataset_path):
        if not d["kept"]:
            continue
        problem = suites[d["id"]]
        records.append(
            {
                "prompt": solve_messages(problem["question"], problem["entry"]),
                "problem_id": d["id"],
                "entry": problem["entry"],
                "tests": json.dumps([problem["tests"][t]["text"] for t in d["tests"]]),
                "task": "code",
                "role": "solver",
            }
        )
    return records


def suite_reward(sandbox, time_limit: float, mode: str):
    """The reward TRL calls: each completion's program (the last python block) run on its
    problem's kept tests in the sandbox; ``all_pass`` gives 1 when every test passes and
    0 otherwise, ``pass_rate`` the share passed. An answer without a program scores 0."""
    from ..tracks.evolve.pass_matrix import pass_matrix

    def reward(prompts, completions, entry, tests, **_):
        out = []
        for completion, name, suite in zip(completions, entry, tests):
            text = completion[-1]["content"] if isinstance(completion, list) else str(completion)
            code, _why = parse_solution(text, name)
            cases = json.loads(suite)
            if code is None or not cases:
                out.append(0.0)
                continue
            m = pass_matrix([code], cases, name, sandbox, time_limit)
            row = [ok for ok, usable in zip(m.passed[0], m.usable) if usable]
            if not row:
                out.append(None)
            elif mode == "all_pass":
                out.append(float(all(row)))
            else:
                out.append(sum(row) / len(row))
        return out

    reward.__name__ = f"tests_{mode}"
    return reward


def grpo_round(
    cfg: dict,
    round_: int,
    suite_path: str,
    dataset_path: str,
    model_dir: str,
    out_dir: str,
    rollouts_out: str,
    gpus: int = 0,
) -> dict:
    """GRPO from the base model on round ``round_``'s dataset (paper 002 Table 3: one
    policy per round's data, r0..r3). With no kept problem, the record says so and the
    evaluation uses the base model. The policy trains on the job's GPU when it has one
    (``gpus``: what the job asked the cluster for; asked for and missing stops the job).
    Under ``accelerate launch`` every process calls this; only the main one writes."""
    from ..train.rl.grpo import is_main_process, train_grpo
    from ..train.rl.settings import MASTER_DTYPE
    from ..train.settings import training_device
    from ..train.sft import RECORD_NAME, TrainingSkipped

    ev = cfg["evolve"]
    prompts = grpo_prompts(suite_path, dataset_path)
    settings = {**ev["grpo"], "seed": derive_seed(cfg["seed"], "evolve-grpo", round_)}
    with _sandbox(cfg) as sb:
        try:
            record = train_grpo(
                model_dir,
                prompts,
                suite_reward(sb, float(ev["matrix"]["time_limit"]), ev["reward"]),
                settings,
                out_dir,
                recordings_path=rollouts_out,
                device=training_device("auto", gpus_requested=gpus),
                dtype=MASTER_DTYPE,
            )
            if record is None:  # another process than the main one of a launched group
                return {}
            record["trained"] = True
        except TrainingSkipped as exc:
            record = {"trained": False, "reason": str(exc), "use_adapter": None, "n_prompts": len(prompts)}
            if not is_main_process():
                return record
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            write_jsonl(rollouts_out, [])
            log.warning("GRPO round %d: %s; the evaluation uses the base model", round_, exc)
    record["round"] = round_
    record["trainset"] = str(dataset_path)
    record["trainset_sha256"] = sha256_file(dataset_path)  # what a bundle's restore checks
    write_json(Path(out_dir) / RECORD_NAME, record)
    return record


def launch_grpo_round(
    cfg: dict,
    round_: int,
    suite_path: str,
    dataset_path: str,
    model_dir: str,
    out_dir: str,
    rollouts_out: str,
    *,
    gpus: int,
    log_path: str | None = None,
) -> None:
    """:func:`grpo_round` in ``gpus`` processes, one per GPU, under ``accelerate launch``
    with the shipped config for the round's fine-tuning (config/accelerate/, see
    ``selfplay.train.rl.launch``); their output is appended to ``log_path``."""
    from ..train.rl.launch import config_file, run_launched
    from ..train.rl.settings import GRPOSettings

    finetune = GRPOSettings.from_dict(cfg["evolve"]["grpo"]).finetune
    kwargs = {
        "cfg": cfg,
        "round_": round_,
        "suite_path": str(suite_path),
        "dataset_path": str(dataset_path),
        "model_dir": str(model_dir),
        "out_dir": str(out_dir),
        "rollouts_out": str(rollouts_out),
        "gpus": gpus,
    }
    run_launched(
        f"{__name__}:grpo_round", kwargs, processes=gpus, config=config_file(finetune), log_path=log_path
    )


def restore_grpo_round(
    cfg: dict, dataset_path: str, bundled_record: str, out_dir: str, rollouts_out: str, bundled_rollouts: str
) -> dict:
    """The GRPO step when config ``replay_training_from`` is set: the bundle's record (and
    weights, when bundled) restored after checking the round's dataset is the one it was
    trained on, and its recorded rollouts copied; no model is loaded."""
    import shutil

    from ..bundle.restore import restore_training_output

    record = restore_training_output(bundled_record, out_dir, dataset_path, cfg["backend"]["name"])
    shutil.copyfile(bundled_rollouts, rollouts_out)
    return record
