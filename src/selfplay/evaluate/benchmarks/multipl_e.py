"""Haskell code generation (paper 000's Table 3 and its per-round figures): HumanEval and
MBPP in Haskell from MultiPL-E, and this project's ten shipped problems for the default;
pass@1 and compilation errors, averaged over samples.

MultiPL-E (humaneval_hs, mbpp_hs), as its harness judges it. The row's ``prompt`` is a
Haddock comment, the type signature and the head of the equation (``f a b =``); the
model continues it (a completion, not a whole function: the chat prompt shows that text
and asks for what follows). The continuation is cut at the first of the row's
``stop_tokens`` (MultiPL-E's Haskell translator: ``\n\n``, ``\n{-``, ``\ntype``,
``\ndata``, ``\nnewtype``), and the program is ``prompt + continuation + "\n" +
tests``, the row's ``tests`` kept verbatim: one ``main`` that checks every
``candidate ARGS == EXPECTED`` line with ``if ... then pure () else error ...``. The
harness runs that program with ``runghc`` and passes it when it exits with status 0,
15 seconds for the whole program. Here the same text runs through the confined GHC
checker (haskell/ghc_check.py), which evaluates pure values: ``main :: IO ()`` becomes
``selfplayTests :: Maybe ()`` (every line of the do-block unchanged; ``Maybe``'s bind
forces each ``if`` in turn, and ``error`` raises as it would in IO), and the sample
passes when that value is ``Just ()``, within ``timeout`` (15 s) for the whole
program. No test line is parsed, so none can be dropped; a row whose tests are not one
``main`` is kept and each of its samples fails with that reason.

The shipped problems (``data/haskell_bench/mini.jsonl``, haskell_mini) are written for
this project as ``{name, entry_point, description, signature, tests: [{args,
expected}]}``: the model writes the whole function, and each test is one GHC check of
``entry_point args`` whose ``show`` must equal ``expected``, compared in the host.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ...haskell.answers import parse_haskell_answer
from ...haskell.ghc_check import CheckRequest, GhcChecker, GhcSettings
from ...verifier_canary import check_ghc
from ..benchmark import CodegenBenchmark, Sample, fenced, fenced_blocks
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
    code, reason = parse_haskell_answer(text)
    if code is None:
        return None, reason
    if not re.search(rf"(?m)^{re.escape(problem['entry_point'])}\s*::", code):
        code = problem["signature"] + "\n" + code
    return code, None


def ghc_settings(settings: dict) -> GhcSettings:
    """The GHC checker a benchmark's settings ask for (per-test seconds and memory)."""
    return GhcSettings(run_timeout=float(settings["timeout"]), run_memory_mb=int(settings["memory_mb"]))


def evaluate(
    problems: dict[str, dict], samples: list[Sample], settings: dict, workers: int = 2
) -> list[dict]:
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
            requests += [
                CheckRequest(code, problem["entry_point"], tuple(t["args"]), timeout)
                for t in problem["tests"]
            ]
            spans.append((row, start, len(requests)))
        rows.append(row)
    if requests:
        with GhcChecker(ghc_settings(settings), workers=workers) as checker:
            check_ghc(checker)  # the compiler must accept a good program and refuse a bad one first
            outcomes = checker.check(requests)
        for row, start, end in spans:
            tests = problems[row["id"]]["tests"]
            results = outcomes[start:end]
            row["tests"] = [
                {"status": o.status, "value": o.value, "expected": t["expected"]}
                for o, t in zip(results, tests)
            ]
            row["compile_error"] = any(o.status == "compile_error" for o in results)
            row["passed"] = all(
                o.status == "value" and o.value == t["expected"] for o, t in zip(results, tests)
            )
            row["reason"] = (
                None if row["passed"] else ("compile_error" if row["compile_error"] else "wrong_or_failed")
            )
    return rows


# MultiPL-E's Haskell translator's stop sequences (used when a row carries none).
STOP_TOKENS = ("\n\n", "\n{-", "\ntype", "\ndata", "\nnewtype")
TESTS_ENTRY = "selfplayTests"
_MAIN_SIG = re.compile(r"(?m)^main[ \t]*::[ \t]*IO[ \t]*\([ \t]*\)[ \t]*$")
_MAIN_DEF = re.compile(r"(?m)^main(?=[ \t]*=)")

COMPLETION_SYSTEM = """\
You are an expert Haskell programmer. You are shown the start of a Haskell program: a \
comment, a type signature and the head of an equation that ends with '='. Continue the \
program from exactly where it stops: write the right-hand side (helpers may follow in \
a where clause). Use only the Prelude and the base library. Answer with the \
continuation alone in one ```haskell block."""


def completion_messages(item: dict, cot: bool = False) -> list[dict]:
    user = f"Continue this Haskell program:\n```haskell\n{item['prompt'].rstrip()}\n```\n"
    if cot:
        user += "Explain your approach briefly first, then give the continuation.\n"
    return [{"role": "system", "content": COMPLETION_SYSTEM}, {"role": "user", "content": user}]


def answer_text(text: str) -> str:
    """The code of an answer: the body of its last fenced block labelled haskell / hs or
    unlabelled (an unclosed one at the end counts), else the whole text."""
    blocks, still_open = fenced_blocks(text, ("haskell", "hs"))
    if still_open is not None and still_open[0] in ("haskell", "hs", ""):
        blocks.append(still_open[1])
    return blocks[-1] if blocks else text


def continuation(prompt: str, text: str, stop_tokens=STOP_TOKENS) -> str:
    """What the answer adds to the prompt, cut at the first stop sequence (as MultiPL-E
    cuts a completion). A chat model often repeats the prompt: when the answer holds the
    prompt's last line (the equation's head), what follows it is the continuation."""
    code = answer_text(text)
    head = prompt.rstrip().split("\n")[-1].strip()
    if head:
        at = code.find(head)
        if at >= 0:
            code = code[at + len(head) :]
    cut = len(code)
    for stop in stop_tokens:
        at = code.find(stop)
        if at >= 0:
            cut = min(cut, at)
    return code[:cut]


def tests_as_value(tests: str) -> tuple[str | None, str | None]:
    """The row's test program with ``main :: IO ()`` turned into ``selfplayTests :: Maybe ()``
    (the do-block itself unchanged), or (None, reason) when it is not one such ``main``."""
    if len(_MAIN_SIG.findall(tests)) != 1 or len(_MAIN_DEF.findall(tests)) != 1:
        return None, "tests are not one `main :: IO ()` program"
    return _MAIN_DEF.sub(TESTS_ENTRY, _MAIN_SIG.sub(f"{TESTS_ENTRY} :: Maybe ()", tests)), None


def program_of(item: dict, text: str) -> str:
    """MultiPL-E's program for one sample: prompt + continuation + newline + tests."""
    return (
        item["prompt"]
        + continuation(item["prompt"], text, item.get("stop_tokens") or STOP_TOKENS)
        + "\n"
        + item["tests_value"]
    )


def evaluate_programs(
    items: dict[str, dict], samples: list[Sample], settings: dict, workers: int = 2
) -> list[dict]:
    """One scored row per sample of a MultiPL-E item: the whole program checked at once."""
    rows, requests, pending = [], [], []
    timeout = float(settings["timeout"])
    for s in samples:
        item = items[s.item_id]
        row = {"id": s.item_id, "sample": s.index, "tests": []}
        if item.get("tests_problem"):
            row.update(passed=False, compile_error=False, reason=f"tests:{item['tests_problem']}")
        else:
            pending.append(row)
            requests.append(CheckRequest(program_of(item, s.text), TESTS_ENTRY, (), timeout))
        rows.append(row)
    if requests:
        with GhcChecker(ghc_settings(settings), workers=workers) as checker:
            check_ghc(checker)  # the compiler must accept a good program and refuse a bad one first
            outcomes = checker.check(requests)
        for row, o in zip(pending, outcomes):
            row["passed"] = o.status == "value" and o.value == "Just ()"
            row["compile_error"] = o.status == "compile_error"
            row["reason"] = (
                None
                if row["passed"]
                else (
                    "compile_error"
                    if row["compile_error"]
                    else f"exception:{o.exc_type}"
                    if o.status == "exception"
                    else o.status
                )
            )
            row["tests"] = [{"status": o.status, "value": o.value, "detail": o.exc_message or o.detail}]
    return rows


def multipl_e_items(parquet_path: str) -> tuple[list[dict], list[dict]]:
    """MultiPL-E Haskell rows as items, prompt and tests verbatim (nothing parsed out of
    the tests); rows without the fields are returned separately with a reason."""
    import pandas as pd

    frame = pd.read_parquet(parquet_path)
    items, skipped = [], []
    for row in frame.to_dict("records"):
        name, prompt, tests = row.get("name"), row.get("prompt"), row.get("tests")
        if not isinstance(name, str) or not isinstance(prompt, str) or not isinstance(tests, str):
            skipped.append(
                {
                    "id": name if isinstance(name, str) else None,
                    "reason": "malformed row: needs name, prompt and tests as text",
                }
            )
            continue
        stops = row.get("stop_tokens")
        stops = [str(t) for t in stops] if stops is not None and len(stops) else list(STOP_TOKENS)
        heads = re.findall(r"(?m)^([a-z_][\w']*)\s*::", prompt)
        value, problem = tests_as_value(tests)
        items.append(
            {
                "id": name,
                "group": None,
                "name": name,
                "entry_point": heads[-1] if heads else None,
                "prompt": prompt,
                "tests": tests,
                "stop_tokens": stops,
                "tests_value": value,
                "tests_problem": problem,
            }
        )
    return items, skipped


class _HaskellCodegen(CodegenBenchmark):
    """The adapters' shared part: problems are items (``id`` = the problem's name)."""

    tools = ("python", "ghc")

    def messages(self, item: dict, cot: bool) -> list[dict]:
        return codegen_messages(item, cot)

    # the answer format: one ```haskell block (CodegenBenchmark.answer_format)
    answer_language = "haskell"
    reasoning_chars = 1500
    code_chars = 2000

    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
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
    release_items = 10
    title = "Haskell mini (shipped)"
    smoke = "../haskell_bench/mini.jsonl"
    source_note = (
        "ten problems written for this project (data/haskell_bench/mini.jsonl), in MultiPL-E's spirit"
    )

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        problems = load_mini()
        if settings.get("limit"):
            problems = problems[: int(settings["limit"])]
        return self._as_items(problems), []


class _MultiplE(_HaskellCodegen):
    """MultiPL-E's completion task and whole-program verdict (module docstring)."""

    split: ClassVar[str]

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        if source is None:
            raise UserError(
                f"{self.name}: MultiPL-E's Haskell problems are downloaded by a rule "
                f"(evaluation.benchmarks.{self.name}.source: download)"
            )
        items, skipped = multipl_e_items(source)
        if settings.get("limit"):
            for item in items[int(settings["limit"]) :]:
                skipped.append({"id": item["id"], "reason": f"beyond limit {int(settings['limit'])}"})
            items = items[: int(settings["limit"])]
        return items, skipped

    def messages(self, item: dict, cot: bool) -> list[dict]:
        return completion_messages(item, cot)

    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
        return evaluate_programs(items, samples, cfg["evaluation"]["benchmarks"][self.name], workers)

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        return None  # MultiPL-E ships no solutions


# The dataset commit the downloads default to (config evaluation.benchmarks.<b>.revision):
# one that holds the <split>-<language>/test-00000-of-00001.parquet layout.
REVISION = "28441b6024e71d4a1c1c0f6bf171c935cd5a43f2"


def _multipl_e_download(split: str) -> dict:
    return {
        "url": "https://huggingface.co/datasets/nuprl/MultiPL-E/resolve/{revision}/"
        f"{split}-hs/test-00000-of-00001.parquet",
        "file": f"{split}-hs.parquet",
        "sha256": None,
        "revision_key": "revision",
    }


class HumanEvalHs(_MultiplE):
    name = "humaneval_hs"
    release_items = 161  # at most HumanEval's 161 problems MultiPL-E translates
    title = "HumanEval (Haskell)"
    split = "humaneval"
    downloads = (_multipl_e_download("humaneval"),)
    source_note = f"MultiPL-E's humaneval-hs split (Hugging Face nuprl/MultiPL-E at {REVISION} by default)"


class MbppHs(_MultiplE):
    name = "mbpp_hs"
    release_items = 397  # at most MBPP's 397 problems MultiPL-E translates
    title = "MBPP (Haskell)"
    split = "mbpp"
    downloads = (_multipl_e_download("mbpp"),)
    source_note = f"MultiPL-E's mbpp-hs split (Hugging Face nuprl/MultiPL-E at {REVISION} by default)"
