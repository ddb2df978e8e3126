"""The PSV track's workflow steps (paper 003, Algorithm 1). Each reads files and writes
one output atomically.

Layout under ``results/psv/<experiment>/``, for a setting S (a seed set and its
evaluation sets), a loop method M and a run seed R:

* ``S/seedR/iter0/{solve,solutions}.jsonl``: the base model solving the seed set,
  shared by every method of S (iteration 0 is the same for all of them);
* ``S/M/seedR/iter<t>/{solve,solutions}.jsonl`` (t >= 1): the solver theta_t solving the
  pool X_t; ``iter<t>/{propose,proposals}.jsonl``: proposals made after solving X_t,
  and ``iter<t+1>/pool.jsonl`` = X_t plus the accepted ones;
* ``S/M/seedR/model<t>/{train_solver.jsonl,adapter/}``: theta_t (t >= 1), trained from
  the base model on one verified solution per problem solved in iteration t-1;
* ``.../eval_<set>/{generations,scores}.jsonl``: n samples per evaluation problem and
  their verdicts, for the base model (``base/seedR/model0``), the prompting baseline
  (``S/fewshot/seedR/model0``) and every theta_t.
"""

from __future__ import annotations

import logging
import random

from ..containers.runtime import runtime_record
from ..errors import UserError
from ..records import derive_seed, read_jsonl, write_jsonl
from ..tracks.psv import parse
from ..tracks.psv.completion import read_answer
from ..tracks.psv.difficulty import difficulty_class, pass_rate
from ..tracks.psv.examples import solver_example
from ..tracks.psv.game import propose_request, solve_request, solver_completion
from ..tracks.psv.methods import method_settings, train_settings
from ..tracks.psv.prompts import FENCE, solver_messages
from ..tracks.psv.proposer import Deduplicator, proposal_targets, sample_examples, spec_id
from ..tracks.psv.verifier import check_specs, spec_target_name, verifier_description, verify_solutions
from .agents import generate_to_file, resolve_adapter

log = logging.getLogger("selfplay")


# --- problem sets --------------------------------------------------------------


def prepare_problem_set(cfg: dict, name: str, out: str, downloaded: str | None = None) -> None:
    """Write problem set ``name`` (config ``psv.problem_sets``): specs only, never a
    reference solution. Shipped problems are checked by the real verifier first (each
    spec valid, each reference solution verified); a failing one stops the run, named."""
    spec = cfg["psv"]["problem_sets"][name]
    if spec["source"] == "embedded":
        problems = [
            p
            for p in _embedded_problems(cfg, spec["split"])
            if not spec.get("difficulties") or p["difficulty"] in spec["difficulties"]
        ]
    elif spec["source"] == "download":
        from ..data.verus_sets import load_verus_problems

        if not downloaded:
            raise UserError(f"problem set {name}: its downloaded files are missing")
        problems, report = load_verus_problems(downloaded, spec["dataset"])
        log.info("problem set %s: %s", name, report)
        # the release cuts a spec after the target's open brace; the pool keeps specs as the
        # proposer's are kept, without it (parse.proposed_spec)
        problems = [{**p, "spec": _without_open_brace(p["spec"])} for p in problems]
    else:
        raise UserError(f"problem set {name}: unknown source {spec['source']!r}")
    problems = sorted(problems, key=lambda p: p["id"])
    count = spec.get("count")
    if count is not None and count < len(problems):
        rng = random.Random(derive_seed(cfg["seed"], "psv-problem-set", name))
        problems = sorted(rng.sample(problems, count), key=lambda p: p["id"])
    if spec["source"] == "embedded":
        _check_shipped(cfg, name, problems)
    rows = [
        {
            "id": p["id"],
            "name": p["name"],
            "target": p["target"],
            "spec": p["spec"],
            "set": name,
            "origin": "seed",
        }
        for p in problems
    ]
    write_jsonl(out, rows)
    log.info("problem set %s: %d problems -> %s", name, len(rows), out)


def _without_open_brace(spec: str) -> str:
    body = spec.rstrip()
    return (body[:-1].rstrip() if body.endswith("{") else body) + "\n"


def _embedded_problems(cfg: dict, split: str) -> list[dict]:
    if cfg["psv"]["language"] != "dafny":
        raise UserError("the shipped problems are Dafny: set psv.language to dafny, or use downloaded sets")
    from ..data.dafny_problems import load_problems

    return load_problems(split)


def _check_shipped(cfg: dict, name: str, problems: list[dict]) -> None:
    specs = check_specs(cfg, [p["spec"] for p in problems])
    for p, rec in zip(problems, specs):
        if not rec["ok"]:
            raise UserError(
                f"shipped problem {p['name']} (set {name}): its spec fails the spec check: "
                f"{rec['reason']} {rec.get('detail', '')}".strip()
            )
    solved = verify_solutions(cfg, [(p["spec"], p["solution"]) for p in problems])
    for p, rec in zip(problems, solved):
        if not rec["verified"]:
            raise UserError(
                f"shipped problem {p['name']} (set {name}): its reference solution does not "
                f"verify: {rec['reason']}"
            )


# --- solving -------------------------------------------------------------------


def model_tag(setting: str, method: str, run_seed: int, t: int) -> str:
    """Names the model theta_t of a run (t = 0: the base model, whatever the method)."""
    return f"base/seed{run_seed}" if t == 0 else f"{setting}/{method}/seed{run_seed}/model{t}"


def solve_generate(
    cfg: dict, tag: str, pool_path: str, model_dir: str | None, adapter_dir: str | None, out: str
) -> None:
    """k_trn samples per pool problem from the solver ``tag`` names."""
    solve = cfg["psv"]["solve"]
    pool = read_jsonl(pool_path)
    adapter = resolve_adapter(adapter_dir)
    requests = [
        solve_request(cfg, p, tag, int(solve["samples"]), solve["sampling"], adapter, solve["answer_format"])
        for p in pool
    ]
    metas = [{"role": "solver", "model": tag, "problem_id": p["id"], "adapter_dir": adapter} for p in pool]
    generate_to_file(cfg, model_dir, requests, metas, out, f"solve {tag}")


def score_generations(cfg: dict, generations_path: str, problems_path: str, out: str) -> dict:
    """Parse and verify every sample; one record per problem with its pass rate and class."""
    problems = {p["id"]: p for p in read_jsonl(problems_path)}
    language, completion = cfg["psv"]["language"], solver_completion(cfg)
    records = read_jsonl(generations_path)
    pairs, where = [], []
    rows = []
    for rec in records:
        problem = problems.get(rec["meta"]["problem_id"])
        if problem is None:
            raise UserError(
                f"{generations_path}: names problem {rec['meta']['problem_id']}, "
                f"which is not in {problems_path}"
            )
        samples = []
        for j, output in enumerate(rec["outputs"]):
            # the answer as written, and the program it stands for (the spec + a body, or
            # the whole program): the program is what is screened and verified
            read = read_answer(language, problem["spec"], output, completion)
            sample = {
                "index": j,
                "parsed": read.program is not None,
                "verified": False,
                "reason": read.reason,
                "solution": read.program,
                "answer": read.answer,
            }
            if read.detail:
                sample["detail"] = read.detail
            if read.program is not None:
                pairs.append((problem["spec"], read.program))
                where.append((len(rows), j))
            samples.append(sample)
        rows.append(
            {
                "problem_id": problem["id"],
                "name": problem["name"],
                "origin": problem.get("origin"),
                "spec": problem["spec"],
                "prompt": rec["messages"],
                "outputs": rec["outputs"],
                "answer_format": rec.get("answer_format"),
                "completion": completion,
                "samples": samples,
            }
        )
    for (r, j), verdict in zip(where, verify_solutions(cfg, pairs) if pairs else []):
        sample = rows[r]["samples"][j]
        sample["verified"] = bool(verdict["verified"])
        sample["reason"] = verdict["reason"]
    tau = cfg["psv"]["difficulty"]
    for row in rows:
        flags = [s["verified"] for s in row["samples"]]
        row["n"], row["c"] = len(flags), sum(flags)
        row["pass_rate"] = pass_rate(flags) if flags else 0.0
        row["difficulty"] = difficulty_class(
            row["pass_rate"], float(tau["tau_easy"]), float(tau["tau_medium"])
        )
    runtime = runtime_record()
    verifier = verifier_description(cfg)
    for row in rows:
        row["runtime"], row["verifier"] = runtime, verifier
    write_jsonl(out, rows)
    stats = {
        "problems": len(rows),
        "samples": sum(r["n"] for r in rows),
        "parsed": sum(s["parsed"] for r in rows for s in r["samples"]),
        "verified": sum(r["c"] for r in rows),
    }
    log.info("scored %s: %s", generations_path, stats)
    return stats


# --- rejection fine-tuning ------------------------------------------------------


def solver_trainset(cfg: dict, method: str, solutions_path: str, out: str) -> dict:
    """D_t*: at most ``max_per_problem`` solutions per problem, the first verified ones
    (``train_on: all``, the -verification ablation: the first parsed ones), re-verified
    before training; human solutions never enter (pools hold specs only)."""
    ms = train_settings(cfg, method)
    language = cfg["psv"]["language"]
    chosen = []
    for row in read_jsonl(solutions_path):
        ok = [s for s in row["samples"] if (s["verified"] if ms["train_on"] == "verified" else s["parsed"])]
        for s in ok[: int(ms["max_per_problem"])]:
            chosen.append((row, s))
    dropped = 0
    if ms["train_on"] == "verified" and chosen:
        again = verify_solutions(cfg, [(row["spec"], s["solution"]) for row, s in chosen])
        kept = [(row, s) for (row, s), v in zip(chosen, again) if v["verified"]]
        dropped = len(chosen) - len(kept)
        if dropped:
            log.warning("%d chosen solutions failed re-verification and were dropped", dropped)
        chosen = kept
    completion = solver_completion(cfg)
    rows = [
        {
            "kind": "solver",
            "problem_id": row["problem_id"],
            "verified": s["verified"],
            **solver_example(language, row["spec"], row["outputs"][s["index"]], completion),
        }
        for row, s in chosen
    ]
    write_jsonl(out, rows)
    stats = {"examples": len(rows), "dropped_on_reverification": dropped, "train_on": ms["train_on"]}
    log.info("solver training set: %s", stats)
    return stats


# --- proposing ------------------------------------------------------------------


def propose_generate(
    cfg: dict,
    method: str,
    run_tag: str,
    labelled_path: str,
    fixed_path: str | None,
    model_dir: str | None,
    out: str,
) -> None:
    """B proposals after solving X_t. ``labelled_path``: X_t with this iteration's classes;
    ``fixed_path``: X_0's, for the fixed-prompt (-diversity) ablation."""
    ms = method_settings(cfg, method)
    rng = random.Random(derive_seed(cfg["seed"], "psv-targets", run_tag))
    targets = proposal_targets(int(ms["budget"]), list(ms["target_classes"]), rng)
    labelled = _labelled(labelled_path)
    requests, metas = [], []
    fixed = None
    if not ms["refresh_examples"]:  # one prompt's examples, drawn once from X_0 for the whole run
        if not fixed_path:
            raise UserError("the fixed-prompt ablation needs iteration 0's labelled pool")
        fixed_rng = random.Random(
            derive_seed(cfg["seed"], "psv-fixed-examples", run_tag.rsplit("/iter", 1)[0])
        )
        fixed = sample_examples(
            _labelled(fixed_path),
            list(ms["input_classes"]),
            int(ms["examples_per_class"]),
            bool(ms["difficulty_labels"]),
            fixed_rng,
        )
    for i, target in enumerate(targets):
        ex_rng = random.Random(derive_seed(cfg["seed"], "psv-examples", run_tag, i))
        examples = (
            fixed
            if fixed is not None
            else sample_examples(
                labelled,
                list(ms["input_classes"]),
                int(ms["examples_per_class"]),
                bool(ms["difficulty_labels"]),
                ex_rng,
            )
        )
        requests.append(propose_request(cfg, run_tag, i, target, examples))
        metas.append(
            {
                "role": "proposer",
                "run": run_tag,
                "index": i,
                "target": target,
                "examples": [s for s, _ in examples],
            }
        )
    generate_to_file(cfg, model_dir, requests, metas, out, f"propose {run_tag}")


def _labelled(path: str) -> list[dict]:
    return sorted(
        ({"id": r["problem_id"], "spec": r["spec"], "difficulty": r["difficulty"]} for r in read_jsonl(path)),
        key=lambda p: p["id"],
    )


def check_proposals(cfg: dict, method: str, generations_path: str, pool_path: str, out: str) -> dict:
    """Parse and spec-check every proposal, then de-duplicate the valid ones in order
    (against the pool too, with ``dedup_scope: run``), as the paper's release does: an
    invalid proposal never blocks a later valid one of the same name. Each record says
    where it stopped; ``unique`` ones join the pool."""
    ms = method_settings(cfg, method)
    language = cfg["psv"]["language"]
    seen = Deduplicator()
    if ms["dedup_scope"] == "run":
        for p in read_jsonl(pool_path):
            seen.add(p["spec"], p.get("target"))
    rows = []
    for rec in read_jsonl(generations_path):
        output = rec["outputs"][0]
        parsed = parse.proposed_spec(output, FENCE[language])
        row = {
            "index": rec["meta"]["index"],
            "target_class": rec["meta"]["target"],
            "output": output,
            "parsed": parsed.text is not None,
            "spec": parsed.text,
            "unique": False,
            "valid": False,
            "reason": parsed.reason,
            "id": None,
            "name": None,
        }
        if parsed.text is not None:
            row["name"] = spec_target_name(language, parsed.text)
        rows.append(row)
    readable = [r for r in rows if r["parsed"]]
    for row, verdict in zip(readable, check_specs(cfg, [r["spec"] for r in readable]) if readable else []):
        row["valid"] = bool(verdict["ok"])
        row["reason"] = verdict["reason"]
        row["target"] = verdict.get("target") or row["name"]
    for row in rows:
        if not row["valid"]:
            continue
        dup = seen.duplicate_of(row["spec"], row["name"])
        if dup:
            row["reason"] = f"duplicate:{dup}"
        else:
            row["unique"] = True
            row["id"] = spec_id(row["spec"])
            seen.add(row["spec"], row["name"])
    verifier = verifier_description(cfg)
    for row in rows:
        row["verifier"] = verifier
    write_jsonl(out, rows)
    stats = {
        "proposed": len(rows),
        "parsed": len(readable),
        "valid": sum(r["valid"] for r in rows),
        "unique": sum(r["unique"] for r in rows),
    }
    log.info("proposals %s: %s", generations_path, stats)
    return stats


def grow_pool(pool_path: str, proposals_path: str, iteration: int, out: str) -> int:
    """X_{t+1} = X_t plus the valid new specs of iteration t."""
    pool = read_jsonl(pool_path)
    have = {p["id"] for p in pool}
    for row in read_jsonl(proposals_path):
        if row["valid"] and row["unique"] and row["id"] not in have:
            pool.append(
                {
                    "id": row["id"],
                    "name": row["target"],
                    "target": row["target"],
                    "spec": row["spec"],
                    "set": "proposed",
                    "origin": f"iter{iteration}",
                }
            )
            have.add(row["id"])
    write_jsonl(out, pool)
    log.info("pool: %d problems -> %s", len(pool), out)
    return len(pool)


# --- evaluation -------------------------------------------------------------------


def fewshot_exemplars(cfg: dict, solutions_path: str) -> list[tuple[str, str, str]]:
    """In-domain worked examples for the prompting baseline: the base model's own verified
    solutions on the seed set, one per problem, as (problem id, spec, answer as written)."""
    out = []
    for row in sorted(read_jsonl(solutions_path), key=lambda r: r["problem_id"]):
        good = [s for s in row["samples"] if s["verified"]]
        if good:
            out.append((row["problem_id"], row["spec"], good[0].get("answer") or good[0]["solution"]))
    return out


def exemplars_for(
    exemplars: list[tuple[str, str, str]], problem: dict, count: int | None = None
) -> list[tuple[str, str, str]]:
    """The worked examples one problem may be shown (at most ``count``), in id order,
    never the problem itself (the release leaves the evaluated problem out of its own
    prompt)."""
    own = (problem["id"], problem["spec"].strip())
    mine = [e for e in exemplars if e[0] != own[0] and e[1].strip() != own[1]]
    return mine if count is None else mine[:count]


def fewshot_context(cfg: dict, model_dir: str | None) -> int | None:
    """The context, in tokens, the prompting baseline's prompts and answers must share:
    ``psv.fewshot.max_model_len``, else ``backend.max_model_len``, else the backend's own
    default (vLLM's), else the model's ``max_position_embeddings``; None when unknown
    (answers replayed without a model)."""
    import inspect
    import json
    from pathlib import Path

    from ..llm.factory import backend_class

    own = cfg["psv"].get("fewshot", {}).get("max_model_len")
    if own:
        return int(own)
    backend = cfg.get("backend") or {"name": "replay"}
    if backend.get("max_model_len"):
        return int(backend["max_model_len"])
    if backend["name"] == "replay":
        return None
    param = inspect.signature(backend_class(backend["name"]).__init__).parameters.get("max_model_len")
    if param is not None and param.default not in (None, inspect.Parameter.empty):
        return int(param.default)
    config = Path(str(model_dir or ""), "config.json")
    if model_dir and config.is_file():
        limit = json.loads(config.read_text()).get("max_position_embeddings")
        return int(limit) if limit else None
    return None


def prompt_token_counter(cfg: dict, model_dir: str | None):
    """Counts a chat's prompt tokens as the backends do (the model's chat template with the
    generation prompt, then its tokenizer), or None when no tokenizer is at hand (answers
    replayed without a local model folder)."""
    from pathlib import Path

    where = model_dir or (cfg.get("model") or {}).get("path")
    if not where or not Path(str(where), "tokenizer_config.json").is_file():
        return None
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(where))

    def count(messages: list[dict]) -> int:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return count


def pack_exemplars(
    language: str,
    completion: str,
    problem: dict,
    candidates: list[tuple[str, str, str]],
    count: int,
    budget: int,
    counter,
    costs: dict,
) -> tuple[list[tuple[str, str, str]], int, int]:
    """The prompting baseline's worked examples for one problem under a token budget.

    The rule: candidates are taken in id order, each added when it still fits, until
    ``count`` are in (an example too long for what is left is passed over, and a
    shorter later one may take its place). ``budget`` is the context minus the answer's
    ``max_new_tokens``; the problem's own prompt comes first. What an example adds is
    measured once (``costs``, by problem id) as the tokens of its two turns in a chat;
    the finished prompt is then counted whole, dropping the last example until it
    fits. Returns (chosen, passed over, prompt tokens); raises a one-line UserError when
    the problem's own prompt does not fit, or when examples exist and none fits."""
    spec = problem["spec"]
    framed = solver_messages(language, spec, [("", "")], completion)
    own = counter([framed[0], framed[-1]])  # the system turn and the problem, no example
    if own > budget:
        raise UserError(
            f"psv.fewshot: problem {problem['id']}'s own prompt takes {own} tokens, over the "
            f"{budget} left for prompts (psv.fewshot.max_model_len or backend.max_model_len minus "
            "psv.evaluation.sampling.max_new_tokens)"
        )
    chosen: list[tuple[str, str, str]] = []
    left, passed = budget - own, 0
    for pid, ex_spec, ex_answer in candidates:
        if len(chosen) >= count:
            break
        if pid not in costs:
            with_one = solver_messages(language, spec, [(ex_spec, ex_answer)], completion)
            costs[pid] = counter(with_one) - own
        if costs[pid] <= left:
            chosen.append((pid, ex_spec, ex_answer))
            left -= costs[pid]
        else:
            passed += 1

    def messages(shots):
        return solver_messages(language, spec, [(a, b) for _, a, b in shots] or None, completion)

    total = counter(messages(chosen))
    while chosen and total > budget:  # a template whose turns do not add up exactly
        chosen.pop()
        passed += 1
        total = counter(messages(chosen))
    if candidates and not chosen:
        smallest = min(costs.get(pid, 0) for pid, _, _ in candidates)
        raise UserError(
            f"psv.fewshot: not one of problem {problem['id']}'s {len(candidates)} worked examples fits: "
            f"the smallest needs {smallest} tokens, {budget - own} are left of {budget} (raise "
            "psv.fewshot.max_model_len or lower psv.evaluation.sampling.max_new_tokens)"
        )
    if total > budget:  # the shipped worked example (no verified solution to show)
        raise UserError(
            f"psv.fewshot: problem {problem['id']}'s prompt with the shipped worked example takes "
            f"{total} tokens, over the {budget} left (raise psv.fewshot.max_model_len)"
        )
    return chosen, passed, total


def _fewshot_cfg(cfg: dict) -> dict:
    """The config the prompting baseline generates with: ``psv.fewshot.max_model_len``,
    when set, is the engine's context (vLLM and transformers)."""
    own = cfg["psv"].get("fewshot", {}).get("max_model_len")
    if not own or cfg["backend"]["name"] not in ("vllm", "transformers"):
        return cfg
    return {**cfg, "backend": {**cfg["backend"], "max_model_len": int(own)}}


def eval_generate(
    cfg: dict,
    tag: str,
    problems_path: str,
    model_dir: str | None,
    adapter_dir: str | None,
    out: str,
    exemplars_path: str | None = None,
) -> None:
    """n samples per evaluation problem from the model ``tag`` names. The prompting
    baseline (``exemplars_path``: the base model's solutions of the seed set) shows each
    problem up to ``psv.fewshot.exemplars`` worked examples that fit the context with
    room for the answer (:func:`pack_exemplars`); its records say how many."""
    ev = cfg["psv"]["evaluation"]
    language, completion = cfg["psv"]["language"], solver_completion(cfg)
    problems = read_jsonl(problems_path)
    adapter = resolve_adapter(adapter_dir)
    shown: list[list[tuple[str, str, str]]] = [[] for _ in problems]
    notes: list[dict] = [{} for _ in problems]
    if exemplars_path:
        cfg = _fewshot_cfg(cfg)
        exemplars = fewshot_exemplars(cfg, exemplars_path)
        count = int(cfg["psv"]["fewshot"]["exemplars"])
        context = fewshot_context(cfg, model_dir)
        counter = prompt_token_counter(cfg, model_dir) if context else None
        log.info(
            "prompting baseline: %d in-domain worked examples%s, up to %d per prompt, context %s tokens",
            len(exemplars),
            "" if exemplars else " (none verified: the shipped worked example is used)",
            count,
            context or "unknown",
        )
        if counter is None:
            log.warning(
                "prompting baseline: no context length or tokenizer (answers replayed without a model): "
                "the first %d worked examples are shown, unmeasured",
                count,
            )
        costs: dict = {}
        for i, p in enumerate(problems):
            candidates = exemplars_for(exemplars, p)
            if counter is None:
                shown[i] = candidates[:count]
                continue
            budget = context - int(ev["sampling"]["max_new_tokens"])
            shown[i], passed, tokens = pack_exemplars(
                language, completion, p, candidates, count, budget, counter, costs
            )
            notes[i] = {"exemplars_passed_over": passed, "prompt_tokens": tokens, "context_tokens": context}
        used = [len(m) for m in shown]
        if used:
            log.info(
                "prompting baseline: %d to %d worked examples per problem (mean %.1f)",
                min(used),
                max(used),
                sum(used) / len(used),
            )
    requests = [
        solve_request(
            cfg,
            p,
            f"eval/{tag}",
            int(ev["samples"]),
            ev["sampling"],
            adapter,
            cfg["psv"]["solve"]["answer_format"],
            [(a, b) for _, a, b in mine] or None,
        )
        for p, mine in zip(problems, shown)
    ]
    metas = [
        {
            "role": "solver",
            "model": tag,
            "problem_id": p["id"],
            "adapter_dir": adapter,
            "exemplars": len(mine),
            "exemplar_ids": [pid for pid, _, _ in mine],
            **note,
        }
        for p, mine, note in zip(problems, shown, notes)
    ]
    generate_to_file(cfg, model_dir, requests, metas, out, f"evaluate {tag}")


# --- Table 6 ----------------------------------------------------------------------


def table6_trainset(cfg: dict, solutions_paths: list[str], out: str) -> dict:
    """One verified solution per problem over a run's iterations (the earliest), as RFT
    examples for another model; verified again before training."""
    language = cfg["psv"]["language"]
    chosen: dict[str, tuple[dict, dict]] = {}
    for path in solutions_paths:
        for row in read_jsonl(path):
            good = [s for s in row["samples"] if s["verified"]]
            if good and row["problem_id"] not in chosen:
                chosen[row["problem_id"]] = (row, good[0])
    items = [chosen[k] for k in sorted(chosen)]
    again = verify_solutions(cfg, [(row["spec"], s["solution"]) for row, s in items]) if items else []
    completion = solver_completion(cfg)
    rows = [
        {
            "kind": "solver",
            "problem_id": row["problem_id"],
            "verified": True,
            **solver_example(language, row["spec"], row["outputs"][s["index"]], completion),
        }
        for (row, s), v in zip(items, again)
        if v["verified"]
    ]
    write_jsonl(out, rows)
    log.info("table 6 training set: %d solutions from %d files", len(rows), len(solutions_paths))
    return {"examples": len(rows), "dropped_on_reverification": len(items) - len(rows)}
