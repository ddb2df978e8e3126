"""Haskell code generation benchmark for Table 3 of paper 000: HumanEval and MBPP in
Haskell (MultiPL-E), pass@1 and compilation errors, base model vs trained adapters,
averaged over samples.

A problem is ``{name, entry_point, description, signature, tests: [{args, expected}]}``:
the model writes the whole function, and each test is one GHC check of
``entry_point args`` (haskell/ghc_check.py) whose ``show`` must equal ``expected``.
A sample passes when every test does; it is a compilation error when GHC refused the
code. The default ships ten problems written for this project
(``data/haskell_bench/mini.jsonl``); paper-scale runs read MultiPL-E's Haskell
translations, downloaded by a rule, whose assertions are turned into such tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...errors import UserError
from ...haskell.ghc_check import CheckRequest, GhcChecker
from ...haskell.literals import split_arguments
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from .parse import MODULE_HEADER
from .sources import ghc_settings
from .translate import parse_translation

MINI = Path(__file__).resolve().parents[2] / "data" / "haskell_bench" / "mini.jsonl"

CODEGEN_SYSTEM = """\
You are an expert Haskell programmer. Write the requested function in Haskell, with \
exactly the given type signature. Use only the Prelude and the base library; no IO, \
no main, no module header. Answer with the complete function (signature and \
definition, helpers in a where clause) in one ```haskell block."""


def load_mini() -> list[dict]:
    return [json.loads(line) for line in MINI.read_text().splitlines() if line.strip()]


def codegen_messages(problem: dict) -> list[dict]:
    doc = "\n".join(f"-- {line}" for line in problem["description"].splitlines())
    user = f"Write this Haskell function:\n```haskell\n{doc}\n{problem['signature']}\n```\n"
    return [{"role": "system", "content": CODEGEN_SYSTEM}, {"role": "user", "content": user}]


def codegen_request(problem: dict, agent: str, cfg: dict, adapter: str | None = None) -> GenerationRequest:
    c = cfg["seq"]["codegen"]
    seed = derive_seed(cfg["seed"], "seq-codegen", agent, problem["name"])
    return GenerationRequest(messages=codegen_messages(problem),
                             sampling=SamplingParams.from_config(c["sampling"], int(c["samples"]), seed),
                             adapter=adapter)


def completion_program(problem: dict, text: str) -> tuple[str | None, str | None]:
    """The program to compile for one sample: the answer's block, with the signature
    added when the model wrote only equations. (None, reason) when there is no code."""
    code, reason = parse_translation(text)
    if code is None:
        return None, reason
    if not re.search(rf"(?m)^{re.escape(problem['entry_point'])}\s*::", code):
        code = problem["signature"] + "\n" + code
    return code, None


def evaluate(problems: dict[str, dict], records: list[dict], cfg: dict, workers: int = 2) -> list[dict]:
    """One scored row per sample: passed, compile_error, per-test outcomes."""
    rows, requests, spans = [], [], []
    timeout = float(cfg["seq"]["verify"]["timeout"])
    for rec in records:
        problem = problems[rec["meta"]["problem"]]
        for k, text in enumerate(rec["outputs"]):
            row = {"problem": problem["name"], "sample": k, "gen_key": rec["key"], "output": text,
                   "adapter": (rec.get("meta") or {}).get("adapter_dir")}  # None: the base model
            code, reason = completion_program(problem, text)
            if code is None:
                row.update(passed=False, compile_error=False, reason=f"parse:{reason}")
            else:
                row["program"] = code
                start = len(requests)
                requests += [CheckRequest(code, problem["entry_point"], tuple(t["args"]), timeout)
                             for t in problem["tests"]]
                spans.append((row, start, len(requests)))
            rows.append(row)
    if requests:
        with GhcChecker(ghc_settings(cfg), workers=workers) as checker:
            outcomes = checker.check(requests)
        for row, start, end in spans:
            tests = problems[row["problem"]]["tests"]
            results = outcomes[start:end]
            row["tests"] = [{"status": o.status, "value": o.value, "expected": t["expected"]}
                            for o, t in zip(results, tests)]
            row["compile_error"] = any(o.status == "compile_error" for o in results)
            row["passed"] = all(o.status == "value" and o.value == t["expected"] for o, t in zip(results, tests))
            row["reason"] = None if row["passed"] else ("compile_error" if row["compile_error"] else "wrong_or_failed")
    return rows


def summary(scored: list[dict]) -> dict:
    """pass@1 (%) = mean over problems of the share of passing samples; compilation
    errors = failed compiles per sampling trial (total / samples per problem)."""
    by_problem: dict[str, list[dict]] = {}
    for row in scored:
        by_problem.setdefault(row["problem"], []).append(row)
    if not by_problem:
        return {"pass_at_1": None, "compile_errors": None, "problems": 0, "samples": 0}
    n = max(len(v) for v in by_problem.values())
    pass1 = 100.0 * sum(sum(r["passed"] for r in v) / len(v) for v in by_problem.values()) / len(by_problem)
    errors = sum(r["compile_error"] for r in scored) / n
    return {"pass_at_1": pass1, "compile_errors": errors, "problems": len(by_problem), "samples": n}


def _balanced_prefix(text: str) -> str:
    """``text`` up to where a closing bracket would close something opened before it."""
    depth, quote, i = 0, None, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'" and not (c == "'" and i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                return text[:i]
            depth -= 1
        i += 1
    return text


def parse_test_line(line: str) -> tuple[str, str] | None:
    """(arguments, expected expression) of a test line ``... candidate ARGS == EXPECTED ...``
    (bare, inside ``assert (...)`` or ``if ... then ... else ...``), or None."""
    at = re.search(r"\bcandidate\s+", line)
    if at is None:
        return None
    rest = _balanced_prefix(line[at.end():])
    rest = re.split(r"\s+then\s+", rest, maxsplit=1)[0]
    depth, quote = 0, None
    for i, c in enumerate(rest):
        if quote:
            quote = None if c == quote and rest[i - 1] != "\\" else quote
        elif c in "\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and rest.startswith(" == ", i):
            return rest[:i].strip(), rest[i + 4:].strip()
    return None


def multipl_e_problems(parquet_path: str) -> tuple[list[dict], list[dict]]:
    """MultiPL-E Haskell rows as problems: the prompt's last signature, and each test line
    ``candidate ARGS == EXPECTED`` as a check. Rows whose tests cannot be read this way
    are returned separately with a reason, not guessed at."""
    import pandas as pd

    frame = pd.read_parquet(parquet_path)
    problems, skipped = [], []
    for row in frame.to_dict("records"):
        prompt = MODULE_HEADER.sub("", str(row["prompt"]))
        sigs = re.findall(r"(?m)^([a-z_][\w']*)\s*::\s*(.+)$", prompt)
        if not sigs:
            skipped.append({"name": row.get("name"), "reason": "no signature in the prompt"})
            continue
        name, sig = sigs[-1]
        tests = []
        for line in str(row["tests"]).splitlines():
            parsed = parse_test_line(line)
            if parsed:
                try:
                    args = split_arguments(parsed[0])
                except UserError:
                    continue
                tests.append({"args": args, "expected_expr": parsed[1]})
        if not tests:
            skipped.append({"name": row.get("name"), "reason": "no `candidate ... == ...` test lines"})
            continue
        doc = "\n".join(line.lstrip("- ").rstrip() for line in prompt.splitlines() if line.strip().startswith("--"))
        problems.append({"name": str(row.get("name", name)), "entry_point": name, "description": doc or name,
                         "signature": f"{name} :: {sig.strip()}", "tests": tests})
    return problems, skipped


def resolve_expected(problems: list[dict], cfg: dict, workers: int = 2) -> tuple[list[dict], list[dict]]:
    """Turn each test's ``expected_expr`` (a Haskell expression from MultiPL-E) into the
    ``show`` text it evaluates to at the function's result type, by running it with GHC.
    Problems with an expression GHC cannot evaluate are returned with a reason."""
    from ...haskell.signature import find_signature
    from ...haskell.types import render_type

    pending = []
    for p in problems:
        result = render_type(find_signature(p["signature"], p["entry_point"]).result_type)
        for t in p["tests"]:
            if "expected_expr" in t:
                src = f"selfplayExpected :: {result}\nselfplayExpected = {t['expected_expr']}\n"
                pending.append((p, t, CheckRequest(src, "selfplayExpected", (), 10.0)))
    if pending:
        with GhcChecker(ghc_settings(cfg), workers=workers) as checker:
            outcomes = checker.check([req for _, _, req in pending])
        for (_, t, _), o in zip(pending, outcomes):
            t["expected"] = o.value if o.status == "value" else None
    ok, bad = [], []
    for p in problems:
        broken = [t for t in p["tests"] if t.get("expected") is None]
        if broken:
            bad.append({"name": p["name"], "reason": f"{len(broken)} expected value(s) GHC could not evaluate"})
        else:
            ok.append(p)
    return ok, bad
