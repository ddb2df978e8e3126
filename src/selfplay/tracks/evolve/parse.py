"""Reading the EvolveCoder track's model output. Never raises on model output: a failure
is a reason code (``parse:<code>``) kept with the answer, and each rejected test keeps
its own reason, so nothing the model wrote is lost without a word.

* refinement answers: one JSON object with a string ``question`` and a list ``tests``;
* test-generation answers: one JSON object with a list ``tests``;
* each test must be exactly one Python ``assert`` statement that calls the problem's
  function; duplicates (same syntax tree) of earlier tests or of tests already in the
  suite are dropped as ``duplicate``;
* solutions: the program in the answer's last ```python block that defines the problem's
  function (else its last block; an answer without a fence only when it defines the
  function). This is the track's own reading: the benchmark layer's EvalPlus reader
  follows EvalPlus's sanitizer, which keeps prose it cannot parse as the program.

Models often wrap the JSON in a code fence or add a sentence around it; the reader takes
the first complete JSON object in the text that has the wanted keys.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...llm.reasoning import final_answer

# A fenced block (```python, ```py or a bare fence) up to its closing fence or the end.
_BLOCK = re.compile(r"```[ \t]*(?:python|py|Python)?[ \t]*\n(.*?)(?:\n```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class TestsAnswer:
    question: str | None
    tests: list[str]  # accepted asserts, in the model's order
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (text, reason)
    reason: str | None = None  # why nothing could be read (None when read)


def _json_objects(text: str) -> Iterable[dict]:
    """Every JSON object that starts at some '{' in the text, in order."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            yield value
        start = text.find("{", start + 1)


def _find_object(text: str, keys: tuple[str, ...]) -> tuple[dict | None, str | None]:
    """The first JSON object with ``keys`` in the answer after any reasoning (a thinking
    model's drafts inside ``<think>`` are not its answer)."""
    text = final_answer(text or "")
    if not text.strip():
        return None, "parse:empty_output"
    seen_any = False
    for obj in _json_objects(text):
        seen_any = True
        if all(k in obj for k in keys):
            return obj, None
    return None, ("parse:missing_keys" if seen_any else "parse:no_json_object")


def test_key(test: str) -> str | None:
    """A syntax-tree fingerprint of one assert (spacing and quoting ignored)."""
    try:
        return ast.dump(ast.parse(test.strip()))
    except (SyntaxError, ValueError):
        return None


def check_test(test: object, entry: str | None = None) -> str | None:
    """Why one test cannot be used (None when it can)."""
    if not isinstance(test, str):
        return "not_a_string"
    try:
        tree = ast.parse(test.strip())
    except (SyntaxError, ValueError):
        return "syntax_error"
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return "not_one_assert"
    calls = {
        n.func.id
        for n in ast.walk(tree.body[0].test)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    if entry is not None and entry not in calls:
        return "does_not_call_entry"
    if entry is None and not calls:
        return "calls_no_function"
    return None


def _read_tests(
    raw: object, entry: str | None, existing: Iterable[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    if not isinstance(raw, list):
        return [], [(str(raw)[:200], "tests_not_a_list")]
    seen = {k for k in (test_key(t) for t in existing) if k is not None}
    kept, rejected = [], []
    for item in raw:
        why = check_test(item, entry)
        if why is None:
            key = test_key(item)
            if key in seen:
                why = "duplicate"
            else:
                seen.add(key)
        if why is None:
            kept.append(item.strip())
        else:
            rejected.append((item if isinstance(item, str) else json.dumps(item)[:200], why))
    return kept, rejected


def parse_refinement(text: str, entry: str | None = None) -> TestsAnswer:
    """A.1 answer -> question and tests."""
    obj, reason = _find_object(text, ("question", "tests"))
    if obj is None:
        return TestsAnswer(None, [], reason=reason)
    question = obj["question"]
    if not isinstance(question, str) or not question.strip():
        return TestsAnswer(None, [], reason="parse:empty_question")
    tests, rejected = _read_tests(obj["tests"], entry or guess_entry(obj["tests"]), ())
    return TestsAnswer(question.strip(), tests, rejected, reason=None if tests else "parse:no_usable_tests")


def parse_new_tests(text: str, entry: str, existing: Iterable[str]) -> TestsAnswer:
    """A.2/A.3 answer -> new tests (duplicates of the suite dropped)."""
    obj, reason = _find_object(text, ("tests",))
    if obj is None:
        return TestsAnswer(None, [], reason=reason)
    tests, rejected = _read_tests(obj["tests"], entry, existing)
    return TestsAnswer(None, tests, rejected, reason=None if tests else "parse:no_usable_tests")


def guess_entry(tests: object) -> str | None:
    """The function most asserts call (the problem's entry point), or None."""
    if not isinstance(tests, list):
        return None
    counts: Counter[str] = Counter()
    for t in tests:
        if check_test(t) is not None:
            continue
        tree = ast.parse(t.strip())
        names = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in _BUILTIN_NAMES
        }
        counts.update(names)
    if not counts:
        return None
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


# Names a test may call around the entry point (sorted(f(x)) == ..., isclose(f(x), y)).
_BUILTIN_NAMES = frozenset(dir(builtins)) | {"isclose"}


def _program_in(text: str, entry: str) -> str | None:
    defines = re.compile(rf"(?m)^\s*def\s+{re.escape(entry)}\s*\(")
    blocks = _BLOCK.findall(text)
    for block in reversed(blocks):
        if defines.search(block):
            return block
    if blocks:
        return blocks[-1]
    return text if re.search(rf"(?m)^def\s+{re.escape(entry)}\s*\(", text) else None


def parse_solution(text: str, entry: str) -> tuple[str | None, str | None]:
    """(program, None), or (None, reason) when the answer holds no program. Only the part
    after any reasoning is read (``selfplay.llm.reasoning``)."""
    text = final_answer(text or "")
    if not text.strip():
        return None, "parse:empty_output"
    code = _program_in(text, entry)
    if code is None:
        return None, "parse:no_code_block"
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return None, "parse:syntax_error"
    return code, None
