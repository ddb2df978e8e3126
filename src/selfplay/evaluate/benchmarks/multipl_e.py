"""Haskell code generation (paper 000's Table 3 and its per-round figures): HumanEval and
MBPP in Haskell from MultiPL-E, and this project's ten shipped problems for the default;
pass@1 and compilation errors, averaged over samples.

A problem is ``{name, entry_point, description, signature, tests: [{args, expected}]}``:
the model writes the whole function, and each test is one GHC check of
``entry_point args`` (haskell/ghc_check.py, confined by the sandbox) whose ``show``
must equal ``expected``; the comparison happens here, in the host. A sample passes
when every test does; it is a compilation error when GHC refused the code. The shipped
problems (``data/haskell_bench/mini.jsonl``) are written for this project in that
format; MultiPL-E's Haskell translations (downloaded by a rule, pinned revision) are
turned into it: each ``candidate ARGS == EXPECTED`` test line becomes a check, and
``EXPECTED`` is evaluated once with GHC.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ...haskell.ghc_check import CheckRequest, GhcChecker, GhcSettings
from ...haskell.literals import split_arguments
from ...llm.answer_format import AnswerFormat, fenced_body, lark_string
from ...tracks.seq.parse import MODULE_HEADER
from ...tracks.seq.translate import parse_translation
from ..benchmark import CodegenBenchmark, Sample, fenced
from ..modes import EvalMode

MINI = Path(__file__).resolve().parents[2] / "data" / "haskell_bench" / "mini.jsonl"

CODEGEN_SYSTEM = """\
You are an expert Haskell programmer. Write the requested function in Haskell, with \
exactly the given type signature. Use only the Prelude and the base library; no IO, \
no main, no module header. Answer with the complete function (signature and \
definition, helpers in a where clause) in one ```haskell block."""


def load_mini() -> list[dict]:
    return [json.loads(line) for line in MINI.read_text().splitlines() if line.strip()]


def codegen_messages(problem: dict, cot: bool = False) -> list[dict]:
    doc = "\n".join(f"-- {line}" for line in problem["description"].splitlines())
    user = f"Write this Haskell function:\n```haskell\n{doc}\n{problem['signature']}\n```\n"
    if cot:
        user += "Explain your approach briefly first, then give the code.\n"
    return [{"role": "system", "content": CODEGEN_SYSTEM}, {"role": "user", "content": user}]


def completion_program(problem: dict, text: str) -> tuple[str | None, str | None]:
    """The program to compile for one sample: the answer's block, with the signature
    added when the model wrote only equations. (None, reason) when there is no code."""
    code, reason = parse_translation(text)
    if code is None:
        return None, reason
    if not re.search(rf"(?m)^{re.escape(problem['entry_point'])}\s*::", code):
        code = problem["signature"] + "\n" + code
    return code, None


def ghc_settings(settings: dict) -> GhcSettings:
    """The GHC checker a benchmark's settings ask for (per-test seconds and memory)."""
    return GhcSettings(run_timeout=float(settings["timeout"]), run_memory_mb=int(settings["memory_mb"]))


def evaluate(problems: dict[str, dict], samples: list[Sample], settings: dict, workers: int = 2) -> list[dict]:
    """One scored row per sample: passed, compile_error, per-test outcomes."""
    rows, requests, spans = [], [], []
    timeout = float(settings["timeout"])
    for s in samples:
        problem = problems[s.item_id]
        row = {"id": s.item_id, "sample": s.index}
        code, reason = completion_program(problem, s.text)
        if code is None:
            row.update(passed=False, compile_error=False, reason=f"parse:{reason}")
        else:
            start = len(requests)
            requests += [CheckRequest(code, problem["entry_point"], tuple(t["args"]), timeout)
                         for t in problem["tests"]]
            spans.append((row, start, len(requests)))
        rows.append(row)
    if requests:
        with GhcChecker(ghc_settings(settings), workers=workers) as checker:
            outcomes = checker.check(requests)
        for row, start, end in spans:
            tests = problems[row["id"]]["tests"]
            results = outcomes[start:end]
            row["tests"] = [{"status": o.status, "value": o.value, "expected": t["expected"]}
                            for o, t in zip(results, tests)]
            row["compile_error"] = any(o.status == "compile_error" for o in results)
            row["passed"] = all(o.status == "value" and o.value == t["expected"] for o, t in zip(results, tests))
            row["reason"] = None if row["passed"] else ("compile_error" if row["compile_error"] else "wrong_or_failed")
    return rows


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


def resolve_expected(problems: list[dict], settings: dict, workers: int = 2) -> tuple[list[dict], list[dict]]:
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
        with GhcChecker(ghc_settings(settings), workers=workers) as checker:
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


class _HaskellCodegen(CodegenBenchmark):
    """The adapters' shared part: problems are items (``id`` = the problem's name)."""

    tools = ("python", "ghc")

    def messages(self, item: dict, cot: bool) -> list[dict]:
        return codegen_messages(item, cot)

    def answer_format(self, item: dict, cot: bool) -> AnswerFormat | None:
        lead = "/([^`]|`[^`]|``[^`]){0,1500}/ " if cot else ""
        grammar = (f"start: {lead}{lark_string('```haskell' + chr(10))} BODY\n"
                   f"BODY: /{fenced_body(2000)}/\n")
        return AnswerFormat(f"{self.name}:{'cot' if cot else 'plain'}", grammar)

    def score(self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict,
              workers: int = 2) -> list[dict]:
        return evaluate(items, samples, cfg["evaluation"]["benchmarks"][self.name], workers)

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        """Our shipped problems carry a reference solution; MultiPL-E ships none."""
        if not items or not all(i.get("reference") for i in items):
            return None
        return [Sample(i["id"], 0, fenced(i["reference"], "haskell")) for i in items]

    @staticmethod
    def _as_items(problems: list[dict]) -> list[dict]:
        return [{"id": p["name"], "group": None, **p} for p in problems]


class HaskellMini(_HaskellCodegen):
    name = "haskell_mini"
    title = "Haskell mini (shipped)"
    smoke = "../haskell_bench/mini.jsonl"
    source_note = "ten problems written for this project (data/haskell_bench/mini.jsonl), in MultiPL-E's spirit"

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        problems = load_mini()
        if settings.get("limit"):
            problems = problems[: int(settings["limit"])]
        return self._as_items(problems), []


class _MultiplE(_HaskellCodegen):
    split: ClassVar[str]

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        if source is None:
            raise UserError(f"{self.name}: MultiPL-E's Haskell problems are downloaded by a rule "
                            "(evaluation.benchmarks.{self.name}.source: download)")
        problems, skipped = multipl_e_problems(source)
        if settings.get("limit"):
            problems = problems[: int(settings["limit"])]
        problems, bad = resolve_expected(problems, settings, workers=int(cfg["evaluation"]["workers"]))
        return self._as_items(problems), [{"id": s.get("name"), "reason": s["reason"]} for s in skipped + bad]


def _multipl_e_download(split: str) -> dict:
    return {"url": "https://huggingface.co/datasets/nuprl/MultiPL-E/resolve/{revision}/"
                   f"{split}-hs/test-00000-of-00001.parquet",
            "file": f"{split}-hs.parquet", "sha256": None, "revision_key": "revision"}


class HumanEvalHs(_MultiplE):
    name = "humaneval_hs"
    title = "HumanEval (Haskell)"
    split = "humaneval"
    downloads = (_multipl_e_download("humaneval"),)
    source_note = "MultiPL-E's humaneval-hs split (Hugging Face nuprl/MultiPL-E, pinned revision)"


class MbppHs(_MultiplE):
    name = "mbpp_hs"
    title = "MBPP (Haskell)"
    split = "mbpp"
    downloads = (_multipl_e_download("mbpp"),)
    source_note = "MultiPL-E's mbpp-hs split (Hugging Face nuprl/MultiPL-E, pinned revision)"
