"""BigCodeBench-Instruct (Zhuo et al., 2024), Full and Hard, pass@k.

The data: the HF datasets ``bigcode/bigcodebench`` (1140 tasks) and
``bigcode/bigcodebench-hard`` (148 of them), one split per release (``v0.1.4``), stored
as parquet; the same rows are published as ``BigCodeBench[-Hard].jsonl.gz`` release
files and cached as jsonl by the ``bigcodebench`` package. Fields: task_id,
complete_prompt, instruct_prompt, canonical_solution (the function body),
code_prompt (imports and the signature), test (a ``unittest`` class ``TestCases``),
entry_point, doc_struct, libs (text of a Python list of module names); the Hard set
adds q_idx, question, score and _id. ``prepare`` reads .jsonl, .jsonl.gz or .parquet.

The task: the model reads ``instruct_prompt`` and writes a self-contained program.
BigCodeBench's "calibrated" scoring (its leaderboard's) runs
``code_prompt + "\\n    pass\\n" + answer``, so imports the prompt showed are there even
when the answer forgot them; ``calibrated: false`` runs the answer alone.

The verdict. BigCodeBench's tests are unittest classes that run in the same process as
the solution, so the process that computes the verdict is the one that runs the
model's code. Here:

- The host reads the test source with ``ast`` (it is dataset text, never model text)
  and lists the test methods ``TestCases`` has (with those of its bases defined in the
  same source). A sample passes only if every one of them is reported passed, by name.
- Each test method is one sandboxed execution of a trusted runner (``RUNNER``). Before
  the solution runs, the runner captures the identity of what a verdict depends on:
  every attribute of ``unittest.TestCase``, ``TestResult``, ``TestSuite`` and the
  internal ``_Outcome``, the public names of ``unittest`` and ``unittest.mock`` (with
  ``patch.object`` / ``patch.dict`` / ``patch.multiple``), the ``unittest`` modules in
  ``sys.modules``, builtins such as ``AssertionError``, ``__import__``, ``isinstance``
  and ``exit``, ``sys.exit`` and ``os._exit``, and the ``assert*`` functions of
  ``numpy.testing`` / ``pandas.testing`` when the tests import numpy / pandas. It then
  runs the solution and the test source in one module (as BigCodeBench does), runs the
  one named test through a ``TestSuite`` (class and module fixtures included) into a
  ``TestResult`` of the captured class, and checks the captured identities again after
  the solution's import and after the test; an audit hook (which cannot be removed)
  refuses rewriting the ``__code__`` or defaults of any captured function, which would
  keep its identity; and the running test object must not have grown instance
  attributes that hide TestCase methods. Last it runs a canary: a test case whose
  every test must fail (``assertEqual(1, 2)``, ``assertTrue(False)``, an
  ``assertRaises`` that sees nothing raised, ``fail()``, ``sys.exit(3)``, ...); a canary
  that passes means the assertion machinery was disabled.
- The runner returns a small structure (the method, the outcome, the violations, the
  host's per-run nonce). The host accepts a test only when the execution returned
  normally, the structure is well-formed, the nonce and method are the ones it sent, no
  integrity violation was reported, and the outcome is "passed" (or "skipped" /
  "expected failure" for a method the source itself decorates that way). A skip raised
  from the solution (``raise unittest.SkipTest``) passes, as in BigCodeBench's harness,
  which counts every skip as a pass (setting ``answer_skips``: "fail" refuses it); each
  such test is recorded (``skipped_by_answer``).

What this stops: a solution that exits the process (``os._exit``, ``sys.exit`` or
``SystemExit`` at import or inside the tested function: no structure comes back, or the
test errors), prints a fake report (stdout is not read), loops forever (per-test wall
clock), replaces or deletes assertion methods, the result or suite
classes, ``unittest.mock.patch``, the ``unittest`` module in ``sys.modules``,
``AssertionError`` or ``__import__`` (an integrity violation, caught after import and
after the test), rewrites a captured function's code (refused), patches the running
test object's assertion methods and leaves them there, or disables assertions in a
way the canary notices; and a failure in one test cannot leak into another (each runs
in a fresh process).

What it does not stop (documented limits, inherent to running the tests in the
solution's process): code written against this runner, which can reach the runner's
frames or globals (``sys._getframe``, ``gc``) and rewrite its captured references or
its result, read the nonce, write a forged result frame to the result pipe and exit,
or use ``ctypes`` to change anything; a patch (of a class or of the running test
object) that is installed inside the tested function and removed before the test ends,
and that spares the canary; objects whose
``__eq__`` always answers True (``assertEqual`` compares with the solution's own
``__eq__``); patches of third-party helpers other than the ``assert*`` functions listed
above (``numpy.allclose``, ``pandas.DataFrame.equals``). The sandbox bounds what such
code can do to the machine; it cannot make an in-process test verdict trustworthy.

Time: BigCodeBench gives a sample's whole ``TestCases`` suite one limit,
``max(240, the ground truth's time) + 1`` seconds (``untrusted_check``); here the test
methods of one sample share the budget ``timeout`` (default 240) + 1 s: each method's
execution gets what the earlier ones left.

Libraries and the denominator: BigCodeBench's tasks use installed libraries, so its
sandboxes let programs import the environment's site-packages
(``Sandbox(site_packages=True)``); its jobs run in the ``bigcodebench`` image
(containers/bigcodebench.def), which holds BigCodeBench's own pinned environment. Every
task counts, as in the official harness. ``prepare`` asks the sandbox which of a task's
``libs`` and the test's top-level imports are importable and records the missing ones
in the item (``missing_libs``): each sample of such a task is a failure with that
reason, never a task left out. With ``check_reference`` (default on) it also runs the
canonical solution (``complete_prompt + "\\n" + canonical_solution``, as BigCodeBench's
ground-truth check does) and records a failure in the item (``reference_failure``);
the summary reports the ground truth's pass rate separately, as BigCodeBench does, and
such tasks stay in the denominator.

Where the verdict differs from ``untrusted_check``: the integrity checks above fail
answers that tamper with the test machinery, where BigCodeBench's verdict follows
whatever the tampered machinery reports. A ``SkipTest`` raised by the solution's code
passes by default, as BigCodeBench counts it, so the headline number is the official
one; the summary counts the samples that passed only through such skips
(``passed_through_skips``), and ``answer_skips: fail`` scores them as failures.
"""

from __future__ import annotations

import ast
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

from ...errors import UserError
from ...sandbox.encoding import decode_value
from ...verifier_canary import checked_sandbox
from ..benchmark import CodegenBenchmark, Sample, fenced
from ..files import read_json_lines
from ..modes import EvalMode
from .livecodebench import last_python_block

DATA = Path(__file__).resolve().parents[2] / "data" / "eval"

VERSION = "v0.1.4"
FULL_REVISION = "b74c0d0bf70d2c0bc459be537895cca163007f1a"  # bigcode/bigcodebench
HARD_REVISION = "298d2cc7b96612e15e47313c3603ee124cee0c1f"  # bigcode/bigcodebench-hard
DOWNLOADS = {
    "bigcodebench_full": [
        {
            "url": f"https://huggingface.co/datasets/bigcode/bigcodebench/resolve/{FULL_REVISION}/data/"
            f"{VERSION}-00000-of-00001.parquet",
            "file": f"bigcodebench-{VERSION}.parquet",
            "sha256": None,
        }
    ],
    "bigcodebench_hard": [
        {
            "url": f"https://huggingface.co/datasets/bigcode/bigcodebench-hard/resolve/{HARD_REVISION}/data/"
            f"{VERSION}-00000-of-00001.parquet",
            "file": f"bigcodebench-hard-{VERSION}.parquet",
            "sha256": None,
        }
    ],
}

DEFAULTS = {
    "timeout": 240.0,  # seconds for a sample's whole suite (BigCodeBench's TIMEOUT_LIMIT), plus 1
    "memory_mb": 2048,
    "calibrated": True,
    "check_reference": True,
    "check_libs": True,
    "stop_at_first_failure": True,
    "answer_skips": "pass",  # BigCodeBench counts a skip the answer raises as a pass
    "workers": 2,  # sandbox workers at prepare time
}

FIELDS = (
    "task_id",
    "complete_prompt",
    "instruct_prompt",
    "canonical_solution",
    "code_prompt",
    "test",
    "entry_point",
)
# Test helpers whose assert* functions the runner guards when the tests import the package.
GUARDED_HELPERS = {"numpy": "numpy.testing", "pandas": "pandas.testing"}
SKIP_DECORATORS = {"skip", "skipIf", "skipUnless"}
OUTCOMES = (
    "passed",
    "failed",
    "error",
    "skipped",
    "expected_failure",
    "unexpected_success",
    "not_run",
    "import_error",
    "test_import_error",
    "no_test_class",
    "no_such_test",
    "runner_error",
)

SYSTEM = (
    "You are a skilled Python developer. Solve the task with one self-contained Python program "
    "(imports, helpers and the requested function). Put the whole program in one ```python code block."
)

# The trusted runner (see the module docstring). It must not import anything the solution
# could have prepared, so everything it relies on is bound before the solution runs.
RUNNER = r'''
import builtins as _b
import importlib as _importlib
import os as _os
import sys as _sys
import traceback as _traceback
import types as _types
import unittest as _unittest
import unittest.case as _ucase
import unittest.mock as _mock
import unittest.result as _uresult
import unittest.suite as _usuite

_os.environ.setdefault("MPLBACKEND", "Agg")
_MISSING = object()
_vars = vars
_TestCase = _unittest.TestCase
_TestResult = _unittest.TestResult
_TestSuite = _unittest.TestSuite
_type_getattr = type.__getattribute__
_is_type = isinstance
_len = len
_str = str
_sorted = sorted
_BaseException = BaseException


def _watch(extra):
    """(label, holder, name, value): what must keep its identity."""
    out = []
    for cls, label in ((_TestCase, "TestCase"), (_TestResult, "TestResult"), (_TestSuite, "TestSuite"),
                       (_usuite.BaseTestSuite, "BaseTestSuite"), (_ucase._Outcome, "_Outcome")):
        for name, value in list(_vars(cls).items()):
            out.append((label + "." + name, cls, name, value))
    for module, label in ((_unittest, "unittest"), (_mock, "unittest.mock")):
        for name, value in list(_vars(module).items()):
            if not name.startswith("_"):
                out.append((label + "." + name, module, name, value))
    for name in ("object", "dict", "multiple", "stopall"):
        out.append(("unittest.mock.patch." + name, _mock.patch, name, getattr(_mock.patch, name, _MISSING)))
    for name in ("AssertionError", "BaseException", "Exception", "SystemExit", "KeyboardInterrupt",
                 "__import__", "isinstance", "issubclass", "getattr", "hasattr", "type", "len", "exit", "quit",
                 "super", "object", "print"):
        out.append(("builtins." + name, _b, name, _vars(_b).get(name, _MISSING)))
    out.append(("sys.exit", _sys, "exit", _sys.exit))
    out.append(("os._exit", _os, "_exit", _os._exit))
    for module in extra:
        for name, value in list(_vars(module).items()):
            if name.startswith("assert"):
                out.append((module.__name__ + "." + name, module, name, value))
    return out


_MODULES = {name: _sys.modules[name] for name in ("unittest", "unittest.case", "unittest.mock",
                                                   "unittest.result", "unittest.suite")}


def _violations(watch):
    found = []
    for label, holder, name, value in watch:
        if _vars(holder).get(name, _MISSING) is not value:
            found.append(label)
    for name, module in _MODULES.items():
        if _sys.modules.get(name) is not module:
            found.append("sys.modules." + name)
    return found


class _Canary(_TestCase):
    def test_equal(self):
        self.assertEqual(1, 2)

    def test_not_equal(self):
        self.assertNotEqual(1, 1)

    def test_true(self):
        self.assertTrue(False)

    def test_false(self):
        self.assertFalse(True)

    def test_in(self):
        self.assertIn(1, [])

    def test_is_none(self):
        self.assertIsNone(1)

    def test_instance(self):
        self.assertIsInstance(1, str)

    def test_almost(self):
        self.assertAlmostEqual(1.0, 2.0)

    def test_greater(self):
        self.assertGreater(1, 2)

    def test_count(self):
        self.assertCountEqual([1], [2])

    def test_list(self):
        self.assertListEqual([1], [2])

    def test_dict(self):
        self.assertDictEqual({1: 1}, {1: 2})

    def test_raises(self):
        with self.assertRaises(ValueError):
            pass

    def test_fail(self):
        self.fail("canary")

    def test_error(self):
        raise ValueError("canary")

    def test_exit(self):
        _sys.exit(3)


_CANARY = [name for name in _vars(_Canary) if name.startswith("test_")]


def _canary():
    result = _TestResult()
    try:
        _TestSuite([_Canary(name) for name in _CANARY]).run(result)
        bad = _len(result.failures) + _len(result.errors)
        if result.testsRun != _len(_CANARY) or bad != _len(_CANARY):
            return ["canary"]
    except _BaseException:
        return ["canary"]
    return []


def _last_line(text):
    """The exception line of a formatted traceback (its first line after the last frame)."""
    lines = _str(text).splitlines()
    last_frame = -1
    for index, line in enumerate(lines):
        if line.startswith("  File "):
            last_frame = index
    for line in lines[last_frame + 1:]:
        if line and not line.startswith(" ") and not line.startswith("Traceback"):
            return line[:300]
    rest = [line for line in lines if line.strip()]
    return rest[-1][:300] if rest else ""


def _outcome(result):
    if result.errors:
        return "error", _last_line(result.errors[0][1])
    if result.failures:
        return "failed", _last_line(result.failures[0][1])
    if result.unexpectedSuccesses:
        return "unexpected_success", None
    if result.skipped:
        return "skipped", _str(result.skipped[0][1])[:300]
    if result.expectedFailures:
        return "expected_failure", None
    if result.testsRun != 1:
        return "not_run", None
    return "passed", None


_FUNCTION_FIELDS = frozenset(("__code__", "__defaults__", "__kwdefaults__"))


def _install_hook(watch):
    """Refuse, from now on in this process, rewriting the code or defaults of a watched
    function (which keeps its identity, so the identity check alone would miss it).
    Audit hooks cannot be removed, and no reference to this one is kept."""
    protected = frozenset(id(value) for _, _, _, value in watch if _is_type(value, _types.FunctionType))
    protected = protected | frozenset(id(f) for f in (run_test, _violations, _outcome, _canary, _watch))

    def hook(event, args):
        if event == "object.__setattr__" and _len(args) >= 2 and args[1] in _FUNCTION_FIELDS \
                and id(args[0]) in protected:
            raise RuntimeError("integrity: rewriting a guarded function is not allowed")

    _sys.addaudithook(hook)


_METHOD_NAMES = frozenset(name for name in dir(_TestCase) if callable(getattr(_TestCase, name, None)))


def _instance_shadows(case):
    """Instance attributes that hide TestCase methods (a patch of the running test object)."""
    found = []
    for name in list(_vars(case)):
        if _is_type(name, _str) and name in _METHOD_NAMES:
            found.append("instance." + name)
    return found


def run_test(solution, test, method, nonce, guard):
    report = {"nonce": nonce, "method": method, "outcome": "runner_error", "detail": None, "violations": []}
    extra = []
    for name in guard:
        try:
            extra.append(_importlib.import_module(name))
        except _BaseException:
            pass
    watch = _watch(extra)
    _install_hook(watch)
    _sys.modules.pop("solution", None)
    module = _types.ModuleType("__test__")
    module.__dict__.update({"__builtins__": _b, "__file__": "__test__.py", "__package__": None,
                            "sys": _sys, "os": _os, "environ": _os.environ})
    _sys.modules["__test__"] = module
    try:
        exec(compile(solution, "<solution>", "exec"), module.__dict__)
    except _BaseException as exc:
        report["outcome"] = "import_error"
        report["detail"] = _type_getattr(type(exc), "__name__")
        return report
    report["violations"] = _violations(watch)
    try:
        exec(compile(test, "<tests>", "exec"), module.__dict__)
    except _BaseException as exc:
        report["outcome"] = "test_import_error"
        report["detail"] = _type_getattr(type(exc), "__name__")
        return report
    cls = module.__dict__.get("TestCases")
    if not (_is_type(cls, type) and _TestCase in _type_getattr(cls, "__mro__")):
        report["outcome"] = "no_test_class"
        return report
    try:
        case = cls(method)
    except _BaseException:
        report["outcome"] = "no_such_test"
        return report
    result = _TestResult()
    try:
        _TestSuite([case]).run(result)
        outcome, detail = _outcome(result)
    except _BaseException as exc:
        outcome, detail = "error", _type_getattr(type(exc), "__name__")
    report["outcome"], report["detail"] = outcome, detail
    found = report["violations"] + _violations(watch) + _instance_shadows(case) + _canary()
    report["violations"] = _sorted(set(found))
    return report


def missing_modules(names):
    import importlib.util
    missing = []
    for name in names:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except _BaseException:
            missing.append(name)
    return missing
'''


# --- reading the dataset --------------------------------------------------------


def read_rows(path: str | Path) -> list[dict]:
    """Rows of a .jsonl / .jsonl.gz / .parquet BigCodeBench file."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: BigCodeBench file not found")
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise UserError(f"{path}: reading parquet needs pyarrow (pip install pyarrow)") from None
        return [dict(row) for row in pq.read_table(path).to_pylist()]
    return read_json_lines(path, "BigCodeBench")


def parse_libs(value: Any) -> list[str]:
    """``libs`` as a list of module names (the dataset stores the text of a Python list)."""
    if isinstance(value, str):
        value = ast.literal_eval(value) if value.strip() else []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"libs is not a list of names: {value!r:.80}")
    return [v.strip() for v in value if v.strip()]


def _top_imports(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _decorator_names(node: ast.AST) -> set[str]:
    names = set()
    for deco in getattr(node, "decorator_list", []):
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def test_methods(test_source: str) -> tuple[list[str], dict[str, list[str]]]:
    """The test methods of ``TestCases`` (own and inherited from classes of the same
    source), sorted as unittest's loader sorts them, and for each the outcomes besides
    "passed" its source allows (a skip decorator: "skipped"; expectedFailure:
    "expected_failure")."""
    tree = ast.parse(test_source)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if "TestCases" not in classes:
        return [], {}
    methods: dict[str, set[str]] = {}

    def collect(cls: ast.ClassDef, seen: set[str], inherited: set[str]) -> None:
        if cls.name in seen:
            return
        seen.add(cls.name)
        class_decos = inherited | _decorator_names(cls)
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                collect(classes[base.id], seen, class_decos)
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("test"):
                methods[stmt.name] = class_decos | _decorator_names(stmt)

    collect(classes["TestCases"], set(), set())
    allowed = {}
    for name, decos in methods.items():
        extra = []
        if decos & SKIP_DECORATORS:
            extra.append("skipped")
        if "expectedFailure" in decos:
            extra.append("expected_failure")
        allowed[name] = extra
    return sorted(methods), allowed


def guard_modules(test_source: str) -> list[str]:
    imports = _top_imports(test_source)
    return sorted(GUARDED_HELPERS[name] for name in imports if name in GUARDED_HELPERS)


def item_from_row(row: dict, group: str | None) -> tuple[dict | None, str | None]:
    missing = [f for f in FIELDS if not isinstance(row.get(f), str)]
    if missing:
        return None, f"malformed row: missing {', '.join(missing)}"
    try:
        libs = parse_libs(row.get("libs", "[]"))
    except (ValueError, SyntaxError) as exc:
        return None, f"malformed row: {exc}"
    try:
        methods, allowed = test_methods(row["test"])
        needed = set(libs) | _top_imports(row["test"])
    except SyntaxError as exc:
        return None, f"test source does not parse ({exc.msg})"
    try:  # the code prompt ends with a bare signature
        needed |= _top_imports(row["code_prompt"] + "\n    pass\n")
    except SyntaxError:
        pass
    needed = sorted(needed)
    if not methods:
        return None, "no test methods found in TestCases"
    return {
        "id": row["task_id"],
        "group": group,
        "instruct_prompt": row["instruct_prompt"],
        "code_prompt": row["code_prompt"],
        "entry_point": row["entry_point"],
        "test": row["test"],
        "test_methods": methods,
        "allowed": allowed,
        "guard": guard_modules(row["test"]),
        "libs": libs,
        "needs": [n for n in needed if n],
        "reference": row["complete_prompt"] + "\n" + row["canonical_solution"],
    }, None


# --- judging --------------------------------------------------------------------


def judge_test(
    result, method: str, nonce: str, allowed: list[str], answer_skips: str = "pass"
) -> tuple[bool, str | None, dict]:
    """(passed, reason, report) for one test method's execution, decided in the host. A
    skip the source does not declare was raised by the answer: it passes with
    ``answer_skips`` "pass" (BigCodeBench's verdict), else fails as ``skipped``."""
    if result.status == "timeout":
        return False, "timeout", {}
    if result.status == "killed":
        return False, "killed", {}
    if result.status == "error":
        return False, "error", {}
    if result.status == "exception":  # the runner itself never raises: something broke it
        return False, f"exception:{result.exc_type}", {}
    try:
        report = decode_value(result.value)
    except ValueError:
        return False, "integrity:malformed_report", {}
    keys = {"nonce", "method", "outcome", "detail", "violations"}
    if (
        not isinstance(report, dict)
        or set(report) != keys
        or report["outcome"] not in OUTCOMES
        or not isinstance(report["violations"], list)
        or not all(isinstance(v, str) for v in report["violations"])
        or not (report["detail"] is None or isinstance(report["detail"], str))
    ):
        return False, "integrity:malformed_report", {}
    if report["nonce"] != nonce or report["method"] != method:
        return False, "integrity:nonce", report
    if report["violations"]:
        return False, "integrity:" + ",".join(report["violations"])[:300], report
    outcome = report["outcome"]
    if outcome == "passed" or outcome in allowed:
        return True, None, report
    if outcome == "skipped" and answer_skips == "pass":
        return True, None, dict(report, skipped_by_answer=True)
    if outcome == "failed":
        return False, "wrong_output", report
    if outcome in ("import_error", "error"):
        detail = report["detail"] or "?"
        name = detail.split(":", 1)[0].strip().split(".")[-1] or "?"
        return False, f"exception:{name}", report
    return False, outcome, report


class _BigCodeBench(CodegenBenchmark):
    def _rows(self, source: str | None) -> list[dict]:
        return read_rows(DATA / self.smoke if source is None else source)

    def prepare(self, source: str | None, settings: dict, cfg: dict) -> tuple[list[dict], list[dict]]:
        from ...sandbox import Sandbox, SandboxLimits

        s = {**DEFAULTS, **(settings or {})}
        items, skipped, seen = [], [], set()
        for row in self._rows(source):
            item, why = item_from_row(row, None)
            if item is None:
                skipped.append({"id": row.get("task_id"), "reason": why})
            elif item["id"] in seen:
                skipped.append({"id": item["id"], "reason": "duplicate task_id"})
            else:
                seen.add(item["id"])
                items.append(item)
        if s.get("limit"):
            for item in items[int(s["limit"]) :]:
                skipped.append({"id": item["id"], "reason": f"beyond limit {int(s['limit'])}"})
            items = items[: int(s["limit"])]
        if not items or not (s["check_libs"] or s["check_reference"]):
            return items, skipped
        limits = SandboxLimits(memory_mb=int(s["memory_mb"]))
        with checked_sandbox(
            Sandbox(workers=max(1, int(s["workers"])), limits=limits, site_packages=True)
        ) as sandbox:
            if s["check_libs"]:
                names = sorted({n for item in items for n in item["needs"]})
                result = sandbox.run(RUNNER, "missing_modules", {"names": names}, 60.0)
                if result.status != "ok":
                    raise UserError(
                        f"{self.name}: could not ask the sandbox which libraries it has "
                        f"({result.status}: {result.detail or result.exc_type})"
                    )
                absent = set(decode_value(result.value))
                for item in items:  # kept: every sample of such a task is a recorded failure
                    item["missing_libs"] = [n for n in item["needs"] if n in absent]
            if s["check_reference"]:
                runnable = [item for item in items if not item.get("missing_libs")]
                rows = run_tests(
                    sandbox,
                    [(item, item["reference"]) for item in runnable],
                    float(s["timeout"]),
                    int(s["workers"]),
                    stop_at_first_failure=True,
                )
                for item, (passed, reason, tests) in zip(runnable, rows):
                    failing = next((t for t in tests if not t["passed"]), {})
                    item["reference_failure"] = None if passed else f"{failing.get('test')}: {reason}"
        return items, skipped

    def messages(self, item: dict, cot: bool) -> list[dict]:
        task = item["instruct_prompt"].strip()
        if cot:
            task += "\n\nReason about the task step by step first, then give the complete program."
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]

    # the answer format: one ```python block (CodegenBenchmark.answer_format)
    reasoning_chars = 3000
    code_chars = 6000

    def program(self, item: dict, code: str, calibrated: bool) -> str:
        if calibrated:
            return item["code_prompt"] + "\n    pass\n" + code
        return code

    def reference_answers(self, items: list[dict]) -> list[Sample] | None:
        """The canonical solutions, as an answer would hold them (the prompt's code with the
        body), of the tasks whose ground truth ran here (the others are reported apart)."""
        return [
            Sample(i["id"], 0, fenced(i["reference"]))
            for i in items
            if not i.get("missing_libs") and not i.get("reference_failure")
        ] or None

    def summarise(self, items: dict[str, dict], rows: list[dict], mode: EvalMode, **kwargs) -> dict:
        """The codegen summary, every task in the denominator, plus BigCodeBench's separate
        ground-truth report: tasks whose libraries were missing or whose reference failed."""
        summary = super().summarise(items, rows, mode, **kwargs)
        ids = {row["id"] for row in rows}
        missing = sorted(i for i in ids if items[i].get("missing_libs"))
        failing = sorted(i for i in ids if items[i].get("reference_failure"))
        summary["ground_truth"] = {
            "tasks": len(ids),
            "missing_libs": missing,
            "reference_fails": failing,
            "pass_rate": (len(ids) - len(set(missing) | set(failing))) / len(ids) if ids else None,
        }
        return summary

    def score(
        self, items: dict[str, dict], samples: list[Sample], mode: EvalMode, cfg: dict, workers: int = 2
    ) -> list[dict]:
        from ...sandbox import Sandbox, SandboxLimits

        s = {
            **DEFAULTS,
            **((((cfg or {}).get("evaluation") or {}).get("benchmarks") or {}).get(self.name) or {}),
        }
        rows: list[dict | None] = [None] * len(samples)
        jobs = []
        for n, sample in enumerate(samples):
            base = {"id": sample.item_id, "sample": sample.index}
            code = last_python_block(sample.text)
            if code is None or not code.strip():
                rows[n] = {
                    **base,
                    "passed": False,
                    "reason": "parse:no_code",
                    "compile_error": False,
                    "tests": [],
                }
                continue
            item = items[sample.item_id]
            if item.get("missing_libs"):  # the official environment has them: a failure, never a skip
                rows[n] = {
                    **base,
                    "passed": False,
                    "compile_error": False,
                    "tests": [],
                    "reason": "libraries not importable here: " + ", ".join(item["missing_libs"]),
                    "tests_total": len(item["test_methods"]),
                }
                continue
            jobs.append((n, item, self.program(item, code, bool(s["calibrated"]))))
        if jobs:
            with checked_sandbox(
                Sandbox(
                    workers=max(1, int(workers)),
                    limits=SandboxLimits(memory_mb=int(s["memory_mb"])),
                    site_packages=True,
                )
            ) as sb:
                results = run_tests(
                    sb,
                    [(item, program) for _, item, program in jobs],
                    float(s["timeout"]),
                    int(workers),
                    bool(s["stop_at_first_failure"]),
                    str(s["answer_skips"]),
                )
            for (n, item, _), (passed, reason, tests) in zip(jobs, results):
                compile_error = bool(tests) and tests[0].get("compile_error", False)
                rows[n] = {
                    "id": samples[n].item_id,
                    "sample": samples[n].index,
                    "passed": passed,
                    "reason": reason,
                    "compile_error": compile_error,
                    "tests": tests,
                    "tests_total": len(item["test_methods"]),
                    "passed_through_skips": passed and any(t.get("skipped_by_answer") for t in tests),
                }
        return rows  # type: ignore[return-value]


def run_tests(
    sandbox,
    jobs: list[tuple[dict, str]],
    timeout: float,
    workers: int,
    stop_at_first_failure: bool = True,
    answer_skips: str = "pass",
) -> list[tuple[bool, str | None, list[dict]]]:
    """For each (item, program): run every expected test method in its own execution,
    all of them within one budget of ``timeout + 1`` seconds (BigCodeBench's limit for the
    whole suite); (passed, reason of the first failure, per-test records)."""

    def one(job: tuple[dict, str]) -> tuple[bool, str | None, list[dict]]:
        item, program = job
        records, first_reason = [], None
        budget = float(timeout) + 1.0
        for method in item["test_methods"]:
            if budget <= 0:
                records.append({"test": method, "passed": False, "reason": "timeout", "seconds": 0.0})
                first_reason = first_reason or "timeout"
                break
            nonce = secrets.token_hex(16)
            args = {
                "solution": program,
                "test": item["test"],
                "method": method,
                "nonce": nonce,
                "guard": list(item.get("guard") or []),
            }
            result = sandbox.run(RUNNER, "run_test", args, budget)
            budget -= max(float(result.seconds), 0.0)
            ok, reason, report = judge_test(
                result, method, nonce, item["allowed"].get(method, []), answer_skips
            )
            record = {"test": method, "passed": ok, "reason": reason, "seconds": round(result.seconds, 4)}
            if report.get("skipped_by_answer"):
                record["skipped_by_answer"] = True
            if report.get("detail"):
                record["detail"] = report["detail"][:300]
            if report.get("outcome") == "import_error" and (report.get("detail") or "") in (
                "SyntaxError",
                "IndentationError",
                "TabError",
            ):
                record["compile_error"] = True
            records.append(record)
            if not ok:
                first_reason = first_reason or reason
                if stop_at_first_failure:
                    break
        return first_reason is None and len(records) == len(item["test_methods"]), first_reason, records

    with ThreadPoolExecutor(max(1, int(workers))) as pool:
        return list(pool.map(one, jobs))


class BigCodeBenchFull(_BigCodeBench):
    name = "bigcodebench_full"
    release_items = 1_140
    title = "BigCodeBench-Instruct (Full)"
    smoke: ClassVar[str] = "bigcodebench_full.smoke.jsonl"
    downloads: ClassVar[tuple[dict, ...]] = tuple(DOWNLOADS["bigcodebench_full"])
    source_note = (
        f"HF dataset bigcode/bigcodebench, split {VERSION} (1140 tasks), at {FULL_REVISION}; "
        "every task counts; run in the bigcodebench image (its pinned libraries)"
    )


class BigCodeBenchHard(_BigCodeBench):
    name = "bigcodebench_hard"
    release_items = 148
    title = "BigCodeBench-Instruct (Hard)"
    smoke: ClassVar[str] = "bigcodebench_hard.smoke.jsonl"
    downloads: ClassVar[tuple[dict, ...]] = tuple(DOWNLOADS["bigcodebench_hard"])
    source_note = (
        f"HF dataset bigcode/bigcodebench-hard, split {VERSION} (148 tasks), at {HARD_REVISION}; "
        "every task counts; run in the bigcodebench image (its pinned libraries)"
    )
