"""The GASP track's workflow steps (paper 004, Algorithm 1). Each reads files and writes
its outputs atomically; ``cfg`` is the whole config (the track's section is ``gasp``).

Layout of one run, ``results/gasp/<experiment>/<method>/s<seed>/``::

    iter<i>/<phase>/            a teacher phase (lemma, lift, onestep or propose)
        teacher.jsonl           recorded teacher generations (every attempt)
        student.jsonl           recorded student tries (PASSRATE, induction form, N each)
        candidates.jsonl        one row per candidate: parse, validity, novelty, k of N,
                                band, reward, accepted (docs/gasp.md has the fields)
        accepted.jsonl          the accepted tasks (with their 5 I/O pairs)
        buffer.jsonl            the global buffers after the phase: the ones it read, plus
                                its accepted tasks (what the next teacher phase reads)
        rollouts.jsonl          the teacher's rollout records for the update
        phase.json              attempts, candidates, accepted, how the phase ended
        state/                  the policy state after the phase's update
    iter<i>/solver/
        requests.jsonl ...      tasks (accepted lemmas and lifts in a drawn form),
        student.jsonl           recorded answers, answers.jsonl (verdicts), rollouts.jsonl,
        state/                  the iteration's checkpoint
    iter<i>/dissimilarity.json  Eq. 7 of this iteration's accepted items per buffer

A phase job generates, runs the sandbox and scores inside one job (the teacher and the
student are one policy, so one loaded model serves both), and loops until M candidates
are accepted or ``max_attempts`` are spent; every generation call is recorded, with a
seed of its own per candidate and task, so a bundle replays the whole loop.
"""

from __future__ import annotations

import logging
import shutil
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..records import derive_seed, read_json, read_jsonl, write_json, write_jsonl
from ..tracks.gasp.methods import Phase, method, phase_of
from .agents import PRUNED_STATE, SKIPPED_STATE, generate_to_file, resolve_state, state_policy

log = logging.getLogger("selfplay")


# --- settings -----------------------------------------------------------------------


def _sampling(section: dict, n: int, seed: int):
    from ..llm.base import SamplingParams

    return SamplingParams.from_config(section, n=n, seed=seed)


def _format(section: dict, build):
    """The answer format a role's requests carry: ``build(section)`` when its config turns
    constrained decoding on, else None."""
    from ..llm.answer_format import format_when_constrained

    return format_when_constrained(section, build)


# --- one teacher phase ----------------------------------------------------------------


def _text_pairs(items: list[dict]) -> tuple[list[str], list[str]]:
    return [it["question"] for it in items], [it["code"] for it in items]


class Embedder:
    """The novelty embedder (the de-duplication layer's sentence-transformers model),
    loaded once per job; vectors come back L2-normalised."""

    def __init__(self, model: str | None):
        self.model = model
        self._encoder = None

    def __call__(self, texts: list[str]):
        import numpy as np

        from ..embeddings import embed_texts, load_encoder, normalise_rows

        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        if self._encoder is None:
            self._encoder = load_encoder(self.model, key="gasp.novelty.model")
        return normalise_rows(np.asarray(embed_texts(texts, encoder=self._encoder), dtype=np.float32))


def item_vectors(embedder: Embedder, items: list[dict], how: str):
    """Per item the vectors novelty compares: question and code separately, or joined."""
    from ..tracks.gasp.novelty import joined_text

    questions, codes = _text_pairs(items)
    if how == "joined":
        return {"joined": embedder([joined_text(q, c) for q, c in zip(questions, codes)])}
    return {"question": embedder(questions), "code": embedder(codes)}


def run_teacher_phase(
    cfg: dict,
    method_name: str,
    seed: int,
    iteration: int,
    phase_name: str,
    model_dir: str | None,
    state: str | None,
    parents_path: str | None,
    buffer_paths: list[str],
    out_dir: str,
) -> dict:
    """One teacher phase of Algorithm 1 (module doc); returns the phase summary."""
    from ..llm.base import GenerationRequest
    from ..llm.recording import generate_and_record
    from ..tracks.gasp import draws, judge, novelty, parse, prompts, rewards, validity
    from ..tracks.gasp import formats as gformats
    from ..tracks.gasp.phase_loop import PhaseLoop
    from .agents import make_generation_backend

    started = time.perf_counter()
    g = cfg["gasp"]
    meth = method(method_name)
    phase = phase_of(method_name, phase_name)
    schedule = rewards.SCHEDULES[phase.schedule]
    t_cfg, s_cfg = g["teacher"], g["student"]
    n_tries = int(s_cfg["samples"])
    teacher_rewards = rewards.TeacherRewards.from_dict(t_cfg.get("rewards") or {}, "gasp.teacher.rewards")
    nov_settings = novelty.NoveltySettings.from_dict(
        {k: v for k, v in (g.get("novelty") or {}).items() if k != "model"}, "gasp.novelty"
    )
    val_settings = validity.ValiditySettings.from_dict(g.get("validity") or {}, "gasp.validity")
    judge_settings = judge.JudgeSettings.from_dict(g.get("judge") or {}, "gasp.judge")
    out = Path(out_dir)
    scratch = out / ".attempts"
    scratch.mkdir(parents=True, exist_ok=True)

    parents = _phase_parents(phase, parents_path)
    buffer_items = [row for p in buffer_paths for row in read_jsonl(p)]
    if phase.parent == "lemma" and not parents:
        # Algorithm 1 draws each lift's lemma from this iteration's accepted ones: none, no lift phase
        return _empty_phase(
            out,
            method_name,
            seed,
            iteration,
            phase,
            int(t_cfg["target_accepted"]),
            "no_lemmas",
            started,
            buffer_items,
        )
    model_dir, adapter = state_policy(model_dir, state)
    loop = PhaseLoop(
        target=int(t_cfg["target_accepted"]),
        max_attempts=int(t_cfg["max_attempts"]),
        count=t_cfg["count"],
        per_attempt=int(t_cfg["candidates_per_attempt"]),
    )
    embedder = Embedder((g.get("novelty") or {}).get("model"))
    how = nov_settings.embed
    buffer_vecs = item_vectors(embedder, buffer_items, how) if meth.novelty else None
    accepted_vecs: list[dict] = []

    rows: list[dict] = []
    accepted: list[dict] = []
    rollouts: list[dict] = []
    teacher_files: list[Path] = []
    student_files: list[Path] = []
    t_fmt = _format(
        t_cfg["answer_format"],
        lambda section: gformats.proposal_format({**section, "parameters": t_cfg["signature_parameters"]}),
    )

    def s_fmt(task: dict):
        """The student's induction format for ``task``: its signature fixed to the task's arity."""
        return _format(
            s_cfg["answer_format"],
            lambda section: gformats.answer_format("induction", section, gformats.task_arity(task)),
        )

    base_seed = derive_seed(cfg["seed"], "gasp", method_name, seed)

    with ExitStack() as stack:
        backend = make_generation_backend(cfg, model_dir)
        stack.callback(backend.close)
        pools = stack.enter_context(validity.seeded_sandboxes(val_settings, workers=judge_settings.workers))
        sandbox = pools[val_settings.determinism_seeds[0]]  # judging runs under the first seed
        attempt = 0
        while not loop.done:
            attempt += 1
            size = loop.next_batch_size()
            where = (iteration, phase.name, attempt)
            picks = (
                draws.draw_parents([p["id"] for p in parents], size, base_seed, *where)
                if parents
                else [None] * size
            )
            by_id = {p["id"]: p for p in parents}
            if phase.parent == "lemma":
                axes = [by_id[pid].get("axis", "f") for pid in picks]
            else:
                axes = draws.draw_axes(size, base_seed, *where, axes=meth.axes)
            requests, metas = [], []
            for index, (pid, axis) in enumerate(zip(picks, axes)):
                messages = _teacher_messages(
                    prompts, phase, by_id.get(pid), axis, buffer_items, base_seed, where, index
                )
                requests.append(
                    GenerationRequest(
                        messages=messages,
                        adapter=adapter,
                        answer_format=t_fmt,
                        sampling=_sampling(
                            t_cfg["sampling"], 1, derive_seed(base_seed, *where, index, "teacher")
                        ),
                    )
                )
                metas.append(
                    {
                        "role": "teacher",
                        "method": method_name,
                        "seed": seed,
                        "iteration": iteration,
                        "phase": phase.name,
                        "attempt": attempt,
                        "index": index,
                        "parent": pid,
                        "axis": axis,
                    }
                )
            t_file = scratch / f"teacher_a{attempt}.jsonl"
            t_records = generate_and_record(
                backend, requests, t_file, meta=metas, chunk=cfg["generation"]["chunk_requests"]
            )
            teacher_files.append(t_file)

            cands = []
            for rec, meta in zip(t_records, metas):
                text = rec["outputs"][0] if rec["outputs"] else ""
                proposal, why = parse.parse_proposal(text)
                row = {
                    "iteration": iteration,
                    "phase": phase.name,
                    "attempt": attempt,
                    "index": meta["index"],
                    "parent": meta["parent"],
                    "axis": meta["axis"],
                    "parsed": proposal is not None,
                    "parse_error": why,
                    "valid": None,
                    "invalid_reason": None,
                    "novel": None,
                    "max_similarity": None,
                    "k": None,
                    "n": n_tries,
                    "in_band": None,
                    "accepted": False,
                    "reward": None,
                    "outcome": None,
                    "task_id": None,
                }
                cands.append((row, proposal, rec))
            parsed = [(row, prop) for row, prop, _ in cands if prop is not None]
            verdicts = validity.check_proposals([p for _, p in parsed], pools, val_settings) if parsed else []
            tasks = []
            for (row, prop), verdict in zip(parsed, verdicts):
                row["valid"] = bool(verdict.valid)
                row["invalid_reason"] = verdict.reason
                if verdict.valid:
                    task_id = f"{method_name}-s{seed}-i{iteration}-{phase.name}-a{attempt}-c{row['index']}"
                    task = judge.make_task(
                        prop, verdict, task_id, phase.name, row["axis"], row["parent"], iteration
                    )
                    tasks.append((row, task))
            # novelty against the global buffers (and, with the within_batch extension, what this phase accepted so far)
            if meth.novelty and tasks:
                cand_vecs = item_vectors(embedder, [t for _, t in tasks], how)
                ref = _stack_vectors(buffer_vecs, accepted_vecs) if nov_settings.within_batch else buffer_vecs
                nv = novelty.novelty_verdicts(cand_vecs, ref, nov_settings)
                kept = []
                for i, ((row, task), (is_novel, sim)) in enumerate(zip(tasks, nv)):
                    row["novel"], row["max_similarity"] = bool(is_novel), sim
                    # a near-copy is measured too when its reward is the schedule's (not_novel: null)
                    if is_novel or teacher_rewards.not_novel is None:
                        kept.append((row, task, {k: v[i : i + 1] for k, v in cand_vecs.items()}))
            else:
                kept = [(row, task, None) for row, task in tasks]
                for row, _ in tasks:
                    row["novel"] = True if not meth.novelty else row["novel"]
            # PASSRATE: N induction tries per surviving candidate, one recorded call
            s_requests = [
                GenerationRequest(
                    messages=prompts.induction_messages(task),
                    adapter=adapter,
                    answer_format=s_fmt(task),
                    sampling=_sampling(
                        s_cfg["sampling"], n_tries, derive_seed(base_seed, *where, row["index"], "student")
                    ),
                )
                for row, task, _ in kept
            ]
            s_metas = [
                {
                    "role": "student",
                    "purpose": "passrate",
                    "task_id": task["id"],
                    "iteration": iteration,
                    "phase": phase.name,
                    "attempt": attempt,
                }
                for _, task, _ in kept
            ]
            s_file = scratch / f"student_a{attempt}.jsonl"
            s_records = (
                generate_and_record(
                    backend, s_requests, s_file, meta=s_metas, chunk=cfg["generation"]["chunk_requests"]
                )
                if s_requests
                else []
            )
            if s_requests:
                student_files.append(s_file)
            batch = [
                (task, [parse.parse_induction(o) for o in rec["outputs"]])
                for (_, task, _), rec in zip(kept, s_records)
            ]
            counts = judge.pass_counts(batch, sandbox, judge_settings) if batch else []
            for (row, task, vecs), (k, n, _) in zip(kept, counts):
                row["k"], row["n"] = int(k), int(n)
                row["in_band"] = rewards.in_band(k, n, schedule)
                if row["in_band"] and row["novel"] is not False:
                    row["accepted"] = True
                    row["task_id"] = task["id"]
                    accepted.append(task)
                    if vecs is not None:
                        accepted_vecs.append(vecs)
            n_accepted_now = 0
            for row, _, rec in cands:
                row["outcome"] = _outcome(row)
                row["reward"] = rewards.teacher_reward(
                    row["outcome"], row["k"], row["n"], schedule, teacher_rewards
                )
                n_accepted_now += int(row["accepted"])
                rows.append(row)
                if t_cfg["update_on"] == "all_scored" or row["accepted"]:
                    rollouts.append(_rollout(rec, [row["reward"]], phase.name, "teacher"))
            loop.record(len(cands), n_accepted_now)

    updated = loop.ended == "target_reached" or t_cfg["on_short"] == "update"
    if not updated:
        rollouts = []
    summary = {
        "method": method_name,
        "seed": seed,
        "iteration": iteration,
        "phase": phase.name,
        "schedule": phase.schedule,
        "attempts": attempt,
        "candidates": len(rows),
        "accepted": len(accepted),
        "target": int(t_cfg["target_accepted"]),
        "ended": loop.ended,
        "updated": updated,
        "rollouts": len(rollouts),
        "seconds": round(time.perf_counter() - started, 3),
    }
    _concat(teacher_files, out / "teacher.jsonl")
    _concat(student_files, out / "student.jsonl")
    write_jsonl(out / "candidates.jsonl", rows)
    write_jsonl(out / "accepted.jsonl", accepted)
    write_jsonl(out / "buffer.jsonl", buffer_items + accepted)
    write_jsonl(out / "rollouts.jsonl", rollouts)
    write_json(out / "phase.json", summary)
    shutil.rmtree(scratch, ignore_errors=True)
    log.info(
        "gasp %s s%d iteration %d %s: %d candidates, %d accepted (%s)",
        method_name,
        seed,
        iteration,
        phase.name,
        len(rows),
        len(accepted),
        loop.ended,
    )
    return summary


def _empty_phase(
    out: Path,
    method_name: str,
    seed: int,
    iteration: int,
    phase: Phase,
    target: int,
    why: str,
    started: float,
    buffer_items: list[dict],
) -> dict:
    for name in ("candidates", "accepted", "rollouts", "teacher", "student"):
        write_jsonl(out / f"{name}.jsonl", [])
    write_jsonl(out / "buffer.jsonl", buffer_items)
    summary = {
        "method": method_name,
        "seed": seed,
        "iteration": iteration,
        "phase": phase.name,
        "schedule": phase.schedule,
        "attempts": 0,
        "candidates": 0,
        "accepted": 0,
        "target": target,
        "ended": why,
        "updated": False,
        "rollouts": 0,
        "seconds": round(time.perf_counter() - started, 3),
    }
    write_json(out / "phase.json", summary)
    shutil.rmtree(out / ".attempts", ignore_errors=True)
    log.info("gasp %s s%d iteration %d %s: nothing to do (%s)", method_name, seed, iteration, phase.name, why)
    return summary


def _phase_parents(phase: Phase, parents_path: str | None) -> list[dict]:
    if phase.parent == "none":
        return []
    if not parents_path:
        raise UserError(f"GASP {phase.name} phase: no {phase.parent} file given")
    parents = read_jsonl(parents_path)
    if phase.parent == "goalpost" and not parents:
        raise UserError(f"{parents_path}: no goalposts; the teacher has nothing to be shown")
    return parents


def _teacher_messages(
    prompts,
    phase: Phase,
    parent: dict | None,
    axis: str,
    buffer_items: list[dict],
    base_seed: int,
    where: tuple,
    index: int,
) -> list[dict]:
    if phase.name == "lemma":
        return prompts.lemma_messages(parent, axis)
    if phase.name == "lift":
        return prompts.lift_messages(parent, axis)
    if phase.name == "onestep":
        return prompts.onestep_messages(parent, axis, phase.schedule)
    if phase.name == "propose":
        from ..tracks.gasp import draws

        refs = draws.draw_references(buffer_items, 3, base_seed, *where, index)
        return prompts.unguided_messages(refs, axis)
    raise UserError(f"unknown GASP phase {phase.name!r}")


def _outcome(row: dict) -> str:
    if not row["parsed"]:
        return "format_error"
    if not row["valid"]:
        return "invalid"
    if row["novel"] is False:
        return "not_novel"
    return "scored"


def _rollout(rec: dict, rewards: list[float], task: str, role: str) -> dict:
    """A generation record as a rollout record of the update: one reward per output, and
    the (task, role) partition of Task-Relative REINFORCE++."""
    meta = dict(rec.get("meta") or {})
    meta.update({"rewards": list(rewards), "task": task, "role": role})
    return {"messages": rec["messages"], "outputs": rec["outputs"][: len(rewards)], "meta": meta}


def _write_answers_phase(
    out: Path, summary: dict, answers: list[dict], rollouts: list[dict], started: float
) -> dict:
    """The files of a phase whose rollouts are the student's answers (solver, real data)."""
    write_jsonl(out / "answers.jsonl", answers)
    write_jsonl(out / "rollouts.jsonl", rollouts)
    summary = {
        **summary,
        "answers": len(answers),
        "correct": sum(a["correct"] for a in answers),
        "seconds": round(time.perf_counter() - started, 3),
    }
    write_json(out / "phase.json", summary)
    return summary


def _stack_vectors(buffer_vecs: dict | None, extra: list[dict]):
    import numpy as np

    if not extra:
        return buffer_vecs
    out = {}
    for key in buffer_vecs or extra[0]:
        parts = ([buffer_vecs[key]] if buffer_vecs is not None and len(buffer_vecs[key]) else []) + [
            e[key] for e in extra
        ]
        out[key] = np.concatenate(parts, axis=0)
    return out


def _concat(files: list[Path], out: Path) -> None:
    rows = [r for f in files for r in read_jsonl(f)]
    write_jsonl(out, rows)


# --- the solver phase -------------------------------------------------------------------


def run_solver_phase(
    cfg: dict,
    method_name: str,
    seed: int,
    iteration: int,
    model_dir: str | None,
    state: str | None,
    accepted_paths: list[str],
    out_dir: str,
) -> dict:
    """Phase 3: every task accepted in this iteration's teacher phases, in a drawn form
    (induction, deduction, abduction), answered by the student and judged; writes the
    solver's rollouts for the iteration's last update."""
    from ..llm.base import GenerationRequest
    from ..sandbox import Sandbox
    from ..tracks.gasp import draws, judge, parse, prompts, rewards
    from ..tracks.gasp import formats as gformats

    started = time.perf_counter()
    g = cfg["gasp"]
    sv = g["solver"]
    solver_rewards = rewards.SolverRewards.from_dict(sv.get("rewards") or {}, "gasp.solver.rewards")
    judge_settings = judge.JudgeSettings.from_dict(g.get("judge") or {}, "gasp.judge")
    tasks = [t for p in accepted_paths for t in read_jsonl(p)]
    base_seed = derive_seed(cfg["seed"], "gasp", method_name, seed)
    weights = {f: float((sv.get("forms") or {}).get(f, 1.0)) for f in ("induction", "deduction", "abduction")}
    forms = draws.draw_forms(len(tasks), base_seed, iteration, "solver", weights=weights)
    pair_picks = draws.draw_pairs(len(tasks), base_seed, iteration, "solver")
    model_dir, adapter = state_policy(model_dir, state)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    requests, metas = [], []
    for task, form, pick in zip(tasks, forms, pair_picks):
        pair = task["private"][pick % len(task["private"])]
        if form == "induction":
            messages = prompts.induction_messages(task)
        elif form == "deduction":
            messages = prompts.deduction_messages(task, pair)
        else:
            messages = prompts.abduction_messages(task, pair)
        fmt = _format(
            sv["answer_format"],
            lambda section, form=form, task=task: gformats.answer_format(
                form, section, gformats.task_arity(task)
            ),
        )
        requests.append(
            GenerationRequest(
                messages=messages,
                adapter=adapter,
                answer_format=fmt,
                sampling=_sampling(
                    sv["sampling"],
                    int(sv["samples"]),
                    derive_seed(base_seed, iteration, "solver", task["id"]),
                ),
            )
        )
        metas.append(
            {
                "role": "student",
                "purpose": "solve",
                "task_id": task["id"],
                "kind": task["kind"],
                "form": form,
                "pair": pair,
                "iteration": iteration,
            }
        )
    generate_to_file(
        cfg, model_dir, requests, metas, str(out / "student.jsonl"), f"gasp solver iteration {iteration}"
    )
    records = read_jsonl(out / "student.jsonl")
    answers, rollouts = [], []
    with Sandbox(workers=judge_settings.workers) as sandbox:
        for task, rec, meta in zip(tasks, records, metas):
            form, pair = meta["form"], meta["pair"]
            verdicts = _judge_form(judge, parse, task, form, pair, rec["outputs"], sandbox, judge_settings)
            rewards_ = []
            for v in verdicts:
                r = rewards.solver_reward(v["format_ok"], v["correct"], solver_rewards)
                rewards_.append(r)
                answers.append(
                    {
                        "iteration": iteration,
                        "task_id": task["id"],
                        "kind": task["kind"],
                        "form": form,
                        "format_ok": v["format_ok"],
                        "correct": v["correct"],
                        "reason": v.get("reason"),
                        "reward": r,
                    }
                )
            rollouts.append(_rollout(rec, rewards_, form, "student"))
    return _write_answers_phase(
        out,
        {"method": method_name, "seed": seed, "iteration": iteration, "phase": "solver", "tasks": len(tasks)},
        answers,
        rollouts,
        started,
    )


def _judge_form(
    judge, parse, task: dict, form: str, pair: int, outputs: list[str], sandbox, settings
) -> list[dict]:
    if form == "induction":
        return judge.judge_induction(task, [parse.parse_induction(o) for o in outputs], sandbox, settings)
    if form == "deduction":
        return judge.judge_deduction(task, pair, [parse.parse_deduction(o) for o in outputs])
    return judge.judge_abduction(task, pair, [parse.parse_abduction(o) for o in outputs], sandbox, settings)


# --- the real-data phase -----------------------------------------------------------------


def run_real_phase(
    cfg: dict,
    method_name: str,
    seed: int,
    iteration: int,
    model_dir: str | None,
    state: str | None,
    rows_path: str,
    out_dir: str,
) -> dict:
    """An RLVR phase on real training problems (Sec. 3.4; the Real-data RL baseline when
    it is a method's only phase): a seeded batch of problems, ``real_data.samples`` answers
    each (one group per problem), every answer judged on all the problem's LiveCodeBench
    tests in the sandbox; writes the rollouts of the phase's update."""
    from ..llm.base import GenerationRequest
    from ..tracks.gasp import real_data

    started = time.perf_counter()
    rd = cfg["gasp"]["real_data"]
    rows = read_jsonl(rows_path)
    if not rows:
        raise UserError(f"{rows_path}: no real training problems for the real-data phase")
    base_seed = derive_seed(cfg["seed"], "gasp", method_name, seed)
    batch = real_data.joint_batch(
        real_data.prompt_records(rows), int(rd["problems_per_iteration"]), base_seed, iteration
    )
    model_dir, adapter = state_policy(model_dir, state)
    fmt = _format(rd["answer_format"], _code_format)
    requests = [
        GenerationRequest(
            messages=rec["prompt"],
            adapter=adapter,
            answer_format=fmt,
            sampling=_sampling(
                rd["sampling"],
                int(rd["samples"]),
                derive_seed(base_seed, iteration, "real", rec["problem_id"]),
            ),
        )
        for rec in batch
    ]
    metas = [
        {"role": "solver", "purpose": "real_data", "problem_id": rec["problem_id"], "iteration": iteration}
        for rec in batch
    ]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    generate_to_file(
        cfg, model_dir, requests, metas, str(out / "student.jsonl"), f"gasp real data iteration {iteration}"
    )
    records = read_jsonl(out / "student.jsonl")
    answers, rollouts = [], []
    sandbox = real_data.open_sandbox(
        cfg["evaluation"]["benchmarks"].get("livecodebench"), workers=int(rd["workers"])
    )
    try:
        reward = real_data.reward_function(
            rows,
            sandbox,
            format_error=float(rd["format_error"]),
            settings=cfg["evaluation"]["benchmarks"].get("livecodebench"),
            workers=int(rd["workers"]),
        )
        for rec, meta in zip(records, metas):
            outs = rec["outputs"]
            values = reward([rec["messages"]] * len(outs), outs, [meta["problem_id"]] * len(outs))
            for v in values:
                answers.append(
                    {
                        "iteration": iteration,
                        "task_id": meta["problem_id"],
                        "kind": "real",
                        "form": "real_data",
                        "format_ok": v != float(rd["format_error"]) or v == 1.0,
                        "correct": v == 1.0,
                        "reason": None,
                        "reward": v,
                    }
                )
            rollouts.append(_rollout(rec, values, "real_data", "solver"))
    finally:
        sandbox.close()
    return _write_answers_phase(
        out,
        {"method": method_name, "seed": seed, "iteration": iteration, "phase": "real", "tasks": len(batch)},
        answers,
        rollouts,
        started,
    )


def _code_format(section: dict):
    """The answer skeleton of a real-data answer: LiveCodeBench's code block, as the
    benchmark layer constrains it."""
    from ..evaluate.benchmarks.livecodebench import LiveCodeBench

    return LiveCodeBench().answer_format({}, False)


def prepare_real_rows(cfg: dict, source_path: str | None, out: str) -> list[dict]:
    """The real training problems (LiveCodeBench rows): the training split of the
    evaluation's LiveCodeBench items, or, with ``real_data.source: goalposts``, the
    goalpost rows (the embedded default; the paper's H is a subset of the same split)."""
    from ..tracks.gasp import goalposts

    rd = cfg["gasp"]["real_data"]
    if rd["source"] == "goalposts":
        section = cfg["gasp"]["goalposts"]
        rows = goalposts.load_rows(section["path"] if section["source"] == "path" else None)
    else:
        rows = [goalposts.row_of_item(item) for item in read_jsonl(source_path)]
    if not rows:
        raise UserError(f"config key gasp.real_data.source: {rd['source']} gives no training problems")
    write_jsonl(out, rows)
    return rows


# --- updates -----------------------------------------------------------------------------


def update_settings(cfg: dict, method_name: str, seed: int, phase: str = "") -> dict:
    """The recorded update's settings for one phase: ``gasp.update``, with the real-data
    phase's own estimator (GRPO: one group per problem) where it runs."""
    from ..tracks.gasp.prune import recorded_settings

    settings = recorded_settings(cfg["gasp"].get("update"))
    settings.setdefault("seed", derive_seed(cfg["seed"], "gasp", method_name, seed, "update") % (2**32))
    if phase == "real":
        settings["estimator"] = cfg["gasp"]["real_data"]["estimator"]
        if settings["estimator"] != "grpo":
            settings.pop("scale_rewards", None)
    return settings


def run_update(
    cfg: dict,
    method_name: str,
    seed: int,
    model_dir: str,
    previous: str | None,
    rollouts: str,
    out_dir: str,
    gpus: int = 0,
    log_path: str | None = None,
    phase: str = "",
    evaluated: list[str] | None = None,
) -> dict:
    """One update on a phase's recorded rollouts: the next state folder, or, when the phase
    has nothing to train on, a folder whose ``skipped.json`` names the state to keep. With
    more than one GPU the update runs in one process per GPU under ``accelerate launch``:
    config/accelerate/lora_ddp.yaml for the data-parallel engine, full_fsdp.yaml for the
    fsdp engine (which shards the model itself; see selfplay.train.rl.recorded).

    With ``gasp.update.keep_states: checkpoints``, before it trains the update prunes the
    state one step behind the one it starts from (its optimizer state, and its weights
    unless one of the run's ``evaluated`` checkpoints loads it; selfplay.tracks.gasp.prune)."""
    from ..tracks.gasp.prune import keep_states
    from ..train.settings import training_device

    pruning = keep_states(cfg["gasp"].get("update")) == "checkpoints"
    if pruning and evaluated is None:
        raise ValueError("gasp.update.keep_states: checkpoints needs the run's evaluated checkpoints")
    prev = resolve_state(previous, to_train=True) if previous else None
    out = Path(out_dir)
    if pruning:
        from ..tracks.gasp.prune import prune_behind

        prune_behind(prev, evaluated, out)
    if not read_jsonl(rollouts):
        return _skip(out, prev, "the phase has no rollouts (nothing to score, or on_short: skip)")
    device = training_device(cfg["gasp"]["device"], gpus_requested=gpus)
    return _train(cfg, method_name, seed, model_dir, prev, rollouts, out, device, gpus, log_path, phase)


def _train(
    cfg: dict,
    method_name: str,
    seed: int,
    model_dir: str,
    prev: Path | None,
    rollouts: str,
    out: Path,
    device: str,
    gpus: int,
    log_path: str | None,
    phase: str,
) -> dict:
    from ..train.rl.recorded import RecordedUpdateSettings, update_from_files
    from ..train.sft import TrainingSkipped

    settings = update_settings(cfg, method_name, seed, phase)
    kwargs = {
        "base_model": str(model_dir),
        "updates": [[str(rollouts)]],
        "settings": settings,
        "out_state": str(out),
        "previous_state": str(prev) if prev else None,
        "device": device,
        "dtype": "float32",
    }
    try:
        if gpus > 1:
            from ..train.rl.launch import config_file, run_launched

            # the launch config by engine, not by finetune: full fine-tuning may run data parallel
            engine = RecordedUpdateSettings.from_dict(settings).engine
            run_launched(
                "selfplay.train.rl.recorded:update_from_files",
                kwargs,
                processes=gpus,
                config=config_file("full" if engine == "fsdp" else "lora"),
                log_path=log_path,
            )
            return read_json(out / "training_record.json")
        return update_from_files(**kwargs)
    except TrainingSkipped as exc:
        return _skip(out, prev, str(exc))


def restore_update(bundled: str, out_dir: str) -> dict:
    """The update when config ``replay_training_from`` is set: the bundle's copy of the
    state folder put in place (its records, the adapter's config, and the weights when
    the bundle has them); no model is loaded. Generation replays its recordings, so a
    policy folder without weights serves: it names the adapter the requests carry."""
    src, out = Path(bundled), Path(out_dir)
    if not any((src / n).is_file() for n in (SKIPPED_STATE, "policy_state.json")):
        raise UserError(
            f"{src}: the bundle holds no record of this update (no policy_state.json or skipped.json)"
        )
    if out.exists():
        shutil.rmtree(out)
    # a state the run pruned (gasp.update.keep_states) comes without its marker: replayed
    # generation loads no weights, it only names the adapter; the record says it was pruned
    shutil.copytree(src, out, ignore=shutil.ignore_patterns(".snakemake*", PRUNED_STATE))
    record = read_json(out / "training_record.json") if (out / "training_record.json").is_file() else {}
    record["restored_from_bundle"] = str(src)
    if (src / PRUNED_STATE).is_file():
        record["pruned_in_run"] = read_json(src / PRUNED_STATE)
    write_json(out / "training_record.json", record)
    return record


def _skip(out: Path, prev: Path | None, why: str) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    record = {"trained": False, "skipped": True, "reason": why, "use_state": str(prev) if prev else None}
    write_json(out / SKIPPED_STATE, record)
    write_json(out / "training_record.json", record)
    log.warning("%s: update skipped (%s)", out, why)
    return record


def write_dissimilarity(cfg: dict, accepted: list[str], out: str) -> list[dict]:
    """Eq. 7 per iteration of one run: for the items accepted in an iteration, per buffer
    (the phase: lemma, lift, ...), the mean over them of the mean over the earlier buffer
    of the same kind of 1 - cosine; null where the batch or the earlier buffer is empty.
    ``accepted``: the run's ``iter<i>/<phase>/accepted.jsonl`` files; writes one JSON line
    per iteration."""
    from ..tracks.gasp import novelty

    section = cfg["gasp"]["novelty"]
    how = novelty.NoveltySettings.from_dict(
        {k: v for k, v in section.items() if k != "model"}, "gasp.novelty"
    ).embed
    embedder = Embedder(section.get("model"))
    by_iteration: dict[int, dict[str, list[dict]]] = {}
    for path in accepted:
        p = Path(path)
        iteration = int(p.parent.parent.name.removeprefix("iter"))
        by_iteration.setdefault(iteration, {})[p.parent.name] = read_jsonl(p)
    rows, earlier = [], {}
    for iteration in sorted(by_iteration):
        row: dict[str, Any] = {"iteration": iteration}
        for kind, batch in by_iteration[iteration].items():
            before = earlier.get(kind, [])
            if batch and before:
                b, e = item_vectors(embedder, batch, how), item_vectors(embedder, before, how)
                vals = [novelty.buffer_dissimilarity(b[key], e[key]) for key in b]
                row[kind] = round(float(sum(vals) / len(vals)), 6)
            else:
                row[kind] = None
        for kind, batch in by_iteration[iteration].items():
            earlier[kind] = earlier.get(kind, []) + batch
        rows.append(row)
    write_jsonl(out, rows)
    return rows


def prepare_goalposts(cfg: dict, rows_path: str | None, out: str) -> list[dict]:
    """The goalposts file the teacher phases read: the shipped problems (``rows_path``
    None), or a file of LiveCodeBench rows (the configured one, or the goalpost filter's
    output), as goalposts (id, title, text, starter code)."""
    from ..tracks.gasp import goalposts

    rows = goalposts.load_rows(rows_path)
    items = goalposts.goalposts_from_rows(rows)
    if not items:
        raise UserError(
            "config key gasp.goalposts: no goalposts (the file holds no usable LiveCodeBench row)"
        )
    write_jsonl(out, items)
    return items


# --- tables and figures of the evaluated checkpoints -----------------------------------

# Which methods each pass@k figure compares (paper 004's captions); the ones a config does
# not run are left out of the figure (the table notes say which).
# Goalpost heatmaps: Figure 5 draws GASP and GASP + Real-data RL (its caption), Figure 14
# GASP without rejection sampling; a method the config does not run gets no panel.
HEATMAP_FIGURES = {5: ("gasp", "gasp_real_rl"), 14: ("no_rejection",)}
PASSK_FIGURES = {
    4: ("pass@20", ("gasp", "gasp_real_rl", "real_rl", "azr", "unguided", "base")),
    8: ("pass@1", ("gasp", "gasp_real_rl", "real_rl", "azr", "unguided", "base")),
    9: ("pass@20", ("no_rejection", "real_rl", "azr", "unguided", "base")),
    11: ("pass@20", ("no_io_axis", "real_rl", "azr", "unguided", "base")),
    13: ("pass@20", ("onestep_medium", "onestep_hard", "real_rl", "azr", "unguided", "base")),
}


def _tag_key(tag: str) -> tuple[str, int, int]:
    from ..tracks.gasp.layout import parse_tag

    return (tag, 0, 0) if tag in ("base", "azr") else parse_tag(tag)


def selection_k(pass_at_k: list[int], wanted: int = 20) -> int:
    """The k the 'best pass@20' selection uses: 20, or the largest k the evaluation mode
    reports when it samples fewer than 20 (the embedded default)."""
    below = [k for k in pass_at_k if k <= wanted]
    return max(below) if below else min(pass_at_k)


def selection_rule(sampled_mode: dict) -> str:
    """The rule Table 3's checkpoints are selected by ("pass@20", see :func:`selection_k`),
    from the sampled evaluation mode's settings."""
    return f"pass@{selection_k(list(sampled_mode.get('pass_at_k', [1])))}"


def write_selection(sampled: dict[str, str], rule: str, out: str) -> dict:
    """One run's checkpoint for Table 3 (rule gasp_selection): of the run's evaluated
    checkpoints (``sampled``: tag -> metrics file), the one with the best ``rule`` value on
    the evaluation split (selfplay.report.gasp.select_checkpoints: ties to the earliest,
    the last one where none has a value). Written as JSON with every checkpoint's value."""
    from ..report import gasp as report
    from ..tracks.gasp.layout import parse_tag

    keys = {t: parse_tag(t) for t in sampled}
    runs = {k[:2] for k in keys.values() if k is not None}
    if len(runs) != 1 or None in keys.values():
        raise UserError(f"a selection is made among one run's checkpoints, got tags {sorted(sampled)}")
    ((method_name, seed),) = runs
    metrics = {keys[t]: path for t, path in sampled.items()}
    iteration = report.select_checkpoints(metrics, rule)[(method_name, seed)]
    tag = next(t for t, k in keys.items() if k[2] == iteration)
    values = {t: report.metric_value(path, rule) for t, path in sampled.items()}
    record = {
        "method": method_name,
        "seed": seed,
        "rule": rule,
        "iteration": iteration,
        "tag": tag,
        "values": values,
    }
    write_json(out, record)
    return record


def check_selections(selections: list[str], selected: dict[tuple[str, int], int], rule: str) -> None:
    """Each selection file (rule gasp_selection) must name the checkpoint the tables select
    by ``rule`` from the same scores (``selected``: (method, seed) -> iteration): Table 3's
    greedy scores were made at the checkpoint the file names."""
    for path in selections:
        chosen = read_json(path)
        key = (chosen["method"], int(chosen["seed"]))
        if chosen["rule"] != rule or selected.get(key) != chosen["iteration"]:
            raise UserError(
                f"{path}: selects iteration {chosen['iteration']} by {chosen['rule']}, but the scores give "
                f"{selected.get(key)} by {rule}: the selection is stale (rerun rule gasp_selection)"
            )


def write_eval_tables(
    cfg: dict,
    tags: list[str],
    sampled: dict[str, str],
    goalposts: dict[str, str],
    greedy: dict[tuple[str, str], str],
    methods: list[str],
    out: dict[str, str],
    selections: list[str] = (),
) -> None:
    """Tables 1-4 and Figures 4, 5, 7-9, 11, 13, 14 (selfplay.report.gasp) from the
    benchmark layer's files: ``sampled`` and ``goalposts`` map a model tag to its metrics or
    scored file, ``greedy`` maps (benchmark, tag) to a metrics file (the base model, AZR and
    each run's selected checkpoint); ``selections`` are the runs' selection files (rule
    gasp_selection), which must name the checkpoints the tables select; ``out`` names the
    outputs (table<i>_<ext>, figure<i>_<ext>)."""
    from ..report import gasp as report
    from ..tracks.gasp.methods import METHODS

    mode = cfg["evaluation"]["modes"][cfg["gasp"]["evaluation"]["sampled"]["mode"]]
    high = selection_rule(mode)
    k_high = int(high[5:])
    metrics = {_tag_key(t): sampled[t] for t in tags}
    goal = {_tag_key(t): goalposts[t] for t in tags}
    greedy_m = {(*_tag_key(t), b): p for (b, t), p in greedy.items()}
    meta = {
        m: {
            "label": METHODS[m].title,
            "real_data_training": METHODS[m].real_data_training,
            "real_data_guidance": METHODS[m].guided,
        }
        for m in methods
    }
    if "azr" in tags:
        meta["azr"] = {
            "label": f"AZR ({cfg['gasp']['azr_checkpoint']['name']}, released)",
            "real_data_training": False,
            "real_data_guidance": False,
        }
    meta["base"] = {
        "label": f"{cfg['model']['name']} (base)",
        "real_data_training": None,
        "real_data_guidance": None,
    }
    present = set(methods) | {"base"} | ({"azr"} if "azr" in tags else set())
    report.table1(metrics, meta, out["table1_csv"], out["table1_md"], rule=high)
    report.table2(metrics, out["table2_csv"], out["table2_md"], methods_meta=meta)
    selected = report.select_checkpoints(metrics, high)
    check_selections(selections, selected, high)
    report.table3(greedy_m, selected, out["table3_csv"], out["table3_md"], methods_meta=meta)
    report.table4(goal, out["table4_csv"], out["table4_md"], methods_meta=meta)
    for fig, wanted in HEATMAP_FIGURES.items():
        report.goalpost_heatmap(
            goal,
            [m for m in wanted if m in methods] or list(wanted[:1]),
            out[f"figure{fig}_png"],
            out[f"figure{fig}_pdf"],
            out[f"figure{fig}_csv"],
            methods_meta=meta,
        )
    for fig, (rule, wanted) in PASSK_FIGURES.items():
        rule = high if rule == "pass@20" else rule
        report.passk_figure(
            metrics,
            [m for m in wanted if m in present],
            rule,
            out[f"figure{fig}_png"],
            out[f"figure{fig}_pdf"],
            out[f"figure{fig}_csv"],
            methods_meta=meta,
        )
    report.pass20_over_training(
        metrics,
        methods,
        out["figure7_png"],
        out["figure7_pdf"],
        out["figure7_csv"],
        k=k_high,
        methods_meta=meta,
    )
