"""GASP tasks and judging (selfplay.tracks.gasp.judge): right, wrong and hostile answers
for induction, deduction and abduction, and PASSRATE's batched counts. Real sandbox runs;
one pool (and one pair of seeded pools to make the tasks) for the whole module."""

from __future__ import annotations

import json
import os

import pytest

from selfplay.errors import UserError
from selfplay.sandbox import Sandbox
from selfplay.tracks.gasp.judge import (
    JudgeSettings,
    judge_abduction,
    judge_deduction,
    judge_induction,
    make_task,
    pass_count,
    pass_counts,
)
from selfplay.tracks.gasp.validity import ValiditySettings, Verdict, check_proposals, seeded_sandboxes

J = JudgeSettings(timeout_s=1.0, run_timeout_s=2.0)
SORT_DESC = {
    "question": "Sort the numbers from largest to smallest.",
    "code": "def f(xs):\n    return sorted(xs, reverse=True)\n",
    "inputs": ["([1, 3, 2],)", "([5],)", "([2, 2, 9, 1],)", "([],)", "([-1, 4, 0],)"],
}
PAIR_SUM = {
    "question": "Add two numbers and a bonus when both are even.",
    "code": "def f(a, b):\n    return a + b + (10 if a % 2 == 0 and b % 2 == 0 else 0)\n",
    "inputs": ["(1, 2)", "(2, 4)", "(3, 3)", "(6, 8)", "(5, 0)"],
}
RIGHT = "def f(xs):\n    return sorted(xs)[::-1]\n"
WRONG = "def f(xs):\n    return sorted(xs)\n"


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(workers=2) as sb:
        yield sb


@pytest.fixture(scope="module")
def tasks():
    settings = ValiditySettings(timeout_s=2.0)
    with seeded_sandboxes(settings, workers=1) as pools:
        verdicts = check_proposals([SORT_DESC, PAIR_SUM], pools, settings)
    assert all(v.valid for v in verdicts), verdicts
    return (
        make_task(SORT_DESC, verdicts[0], "t-sort", "lemma", "f", "goal-1", 0),
        make_task(PAIR_SUM, verdicts[1], "t-sum", "lift", "io", "t-sort", 1),
    )


def test_make_task_has_two_shown_and_three_private_pairs(tasks):
    task = tasks[0]
    assert task["shown"] == [0, 1] and task["private"] == [2, 3, 4]
    assert [p["input"] for p in task["pairs"]] == [
        "([1, 3, 2],)",
        "([5],)",
        "([2, 2, 9, 1],)",
        "([],)",
        "([-1, 4, 0],)",
    ]
    assert task["pairs"][2]["output"] == ["list", [["int", 9], ["int", 2], ["int", 2], ["int", 1]]]
    assert (task["id"], task["kind"], task["axis"], task["parent"], task["iteration"]) == (
        "t-sort",
        "lemma",
        "f",
        "goal-1",
        0,
    )
    json.dumps(task)  # a plain JSON object
    with pytest.raises(ValueError, match="valid"):
        make_task(SORT_DESC, Verdict(False, "timeout"), "x", "lemma", "f", "g", 0)
    with pytest.raises(ValueError, match="kind"):
        make_task(SORT_DESC, Verdict(True, pairs=task["pairs"]), "x", "goal", "f", "g", 0)
    with pytest.raises(ValueError, match="shown"):
        make_task(SORT_DESC, Verdict(True, pairs=task["pairs"]), "x", "lemma", "f", "g", 0, shown=5)


def test_settings_refuse_unknown_keys_and_bad_rules():
    with pytest.raises(UserError, match=r"gasp\.judge\.rule") as err:
        JudgeSettings.from_dict({"rule": "any"})
    assert "\n" not in str(err.value)
    with pytest.raises(UserError, match=r"gasp\.judge\.pass_rule"):
        JudgeSettings.from_dict({"pass_rule": "most"})
    assert JudgeSettings.from_dict({"pass_rule": "any"}).pass_rule == "any"


# ---------------------------------------------------------------- induction


def test_induction_right_wrong_and_format_errors(sandbox, tasks):
    answers = [
        (RIGHT, None),
        (WRONG, None),
        (None, "no_python_fence"),
        ("def f(xs):\n    return (\n", None),
        ("def g(xs):\n    return xs\n", None),
        ("def f(xs):\n    return sorted(xs, reverse=True)\n", None),
    ]
    verdicts = judge_induction(tasks[0], answers, sandbox, J)
    assert [(v["format_ok"], v["correct"], v["reason"]) for v in verdicts] == [
        (True, True, None),
        (True, False, "wrong_output"),
        (False, False, "no_python_fence"),
        (False, False, "syntax_error"),
        (False, False, "no_f"),
        (True, True, None),
    ]


def test_induction_passes_on_private_pairs_only(sandbox, tasks):
    # right on the two shown pairs, wrong on every private one
    memorised = "def f(xs):\n    return {(1, 3, 2): [3, 2, 1], (5,): [5]}.get(tuple(xs), [0])\n"
    assert judge_induction(tasks[0], [memorised], sandbox, J)[0]["correct"] is False


def test_pass_rule_any(sandbox, tasks):
    # right on the private pair [] (empty) only
    partial = "def f(xs):\n    return [] if not xs else [0]\n"
    assert judge_induction(tasks[0], [partial], sandbox, J)[0]["correct"] is False
    anyone = JudgeSettings(timeout_s=1.0, pass_rule="any")
    assert judge_induction(tasks[0], [partial, WRONG], sandbox, anyone)[0]["correct"] is True


HOSTILE_PROGRAMS = {
    "infinite_loop": "def f(xs):\n    while True:\n        pass\n",
    "memory_bomb": "def f(xs):\n    hoard = []\n    while True:\n        hoard.append(bytearray(64 * 1024 * 1024))\n",
    "sys_exit": "import sys\ndef f(xs):\n    sys.exit(0)\n",
    "os_exit": "import os\ndef f(xs):\n    os._exit(0)\n",
    "base_exception": "class Out(BaseException):\n    pass\ndef f(xs):\n    raise Out()\n",
    "keyboard_interrupt": "def f(xs):\n    raise KeyboardInterrupt\n",
    "lying_eq": (
        "class Yes(list):\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
        "class Always:\n    def __eq__(self, other):\n        return True\n"
        "def f(xs):\n    return Always()\n"
    ),
    "huge_value": "def f(xs):\n    return 'x' * (10 ** 8)\n",
    "deep_value": "def f(xs):\n    v = []\n    for _ in range(100000):\n        v = [v]\n    return v\n",
    "fork_bomb": "import os\ndef f(xs):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",
    # rewrites the result channel's encoder: the reply no longer has the shim's shape
    "garbled_reply": (
        "import json\nreal = json.dumps\n"
        "def fake(obj, *a, **k):\n    return real({'status': 'ok', 'value': ['list', [['tuple', "
        "[['str', 'ok'], ['list', [['int', 9]]]]]] * 3], 'value_repr': 'x'})\n"
        "json.dumps = fake\n"
        "def f(xs):\n    return xs\n"
    ),
    "tampered_builtins": (
        "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: list\n"
        "builtins.repr = lambda *a: '[9, 2, 2, 1]'\n"
        "class Always:\n    def __eq__(self, other):\n        return True\n"
        "def f(xs):\n    return Always()\n"
    ),
    "kill_server": "import os, signal\ndef f(xs):\n    os.kill(1, signal.SIGKILL)\n    os.kill(os.getppid(), 9)\n",
    # prints what it hopes is expected, returns something else
    "stdout_noise": "import sys\ndef f(xs):\n    print('[9, 2, 2, 1]' * 1000)\n    sys.stdout.flush()\n    return xs\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PROGRAMS))
def test_hostile_induction_answers_never_pass_and_the_sandbox_keeps_working(sandbox, tasks, name):
    verdicts = judge_induction(tasks[0], [(HOSTILE_PROGRAMS[name], None), (RIGHT, None)], sandbox, J)
    assert verdicts[0]["format_ok"] is True and verdicts[0]["correct"] is False, verdicts[0]
    assert verdicts[0]["reason"], verdicts[0]
    assert verdicts[1] == {"format_ok": True, "correct": True, "reason": None}, (
        "the next program is judged as usual"
    )


def test_printing_does_not_change_a_right_answer(sandbox, tasks):
    noisy = (
        "import sys\ndef f(xs):\n    print('noise ' * 1000)\n    print('x', file=sys.stderr)\n"
        "    return sorted(xs, reverse=True)\n"
    )
    assert judge_induction(tasks[0], [noisy], sandbox, J)[0]["correct"] is True


def test_hostile_reasons_name_what_happened(sandbox, tasks):
    names = [
        "infinite_loop",
        "sys_exit",
        "base_exception",
        "lying_eq",
        "huge_value",
        "os_exit",
        "garbled_reply",
    ]
    verdicts = judge_induction(tasks[0], [HOSTILE_PROGRAMS[n] for n in names], sandbox, J)
    reasons = dict(zip(names, (v["reason"] for v in verdicts)))
    assert reasons["infinite_loop"].startswith("timeout")
    assert reasons["sys_exit"] == "exception:SystemExit"
    assert reasons["base_exception"] == "exception:Out"
    assert reasons["lying_eq"] == "wrong_output"
    assert reasons["huge_value"].startswith("error:")
    assert reasons["os_exit"].split(":")[0] in ("killed", "error")
    assert reasons["garbled_reply"].startswith("malformed_result:")


def test_expected_outputs_cannot_be_read_from_files(sandbox, tasks, tmp_path):
    # the expected values lie in a host file; the program looks for them and fails
    secret = tmp_path / "task.json"
    secret.write_text(json.dumps(tasks[0]))
    os.chmod(tmp_path, 0o755)
    os.chmod(secret, 0o644)
    reader = (
        "import json, ast\ndef f(xs):\n"
        f"    task = json.load(open({str(secret)!r}))\n"
        "    for pair in task['pairs']:\n"
        "        if ast.literal_eval(pair['input']) == xs:\n"
        "            return ast.literal_eval(pair['output_repr'])\n"
    )
    [verdict] = judge_induction(tasks[0], [reader], sandbox, J)
    assert verdict["correct"] is False and verdict["reason"] == "exception:FileNotFoundError"


def test_pass_counts_batch_many_tasks_and_samples(sandbox, tasks):
    sum_right = "def f(a, b):\n    return a + b + (10 if (a % 2, b % 2) == (0, 0) else 0)\n"
    sum_wrong = "def f(a, b):\n    return a + b\n"
    batch = [
        (tasks[0], [RIGHT, WRONG, RIGHT, (None, "no_fence")] + [WRONG] * 6),
        (tasks[1], [sum_right] * 3 + [sum_wrong] * 7),
    ]
    counts = pass_counts(batch, sandbox, J)
    assert [(k, n) for k, n, _ in counts] == [(2, 10), (3, 10)]
    assert counts[0][2][3] == {"format_ok": False, "correct": False, "reason": "no_fence"}
    assert pass_count(tasks[1], [sum_right, sum_wrong], sandbox, J)[:2] == (1, 2)
    undeduped = JudgeSettings(timeout_s=1.0, dedupe=False)
    assert [(k, n) for k, n, _ in pass_counts(batch, sandbox, undeduped)] == [(2, 10), (3, 10)]
    assert pass_counts([], sandbox, J) == []


def test_pass_counts_send_one_batch(tasks):
    from selfplay.sandbox import ExecResult

    class Recorder:
        """Stands in for the pool: counts the batches and answers as if every call returned []."""

        batches: list[int] = []

        def run_many(self, jobs):
            self.batches.append(len(jobs))
            return [ExecResult("ok", value=["list", []]) for _ in jobs]

    recorder = Recorder()
    pass_counts(
        [(tasks[0], [RIGHT, WRONG, WRONG]), (tasks[1], ["def f(a, b):\n    return 0\n"])], recorder, J
    )
    assert recorder.batches == [3], "every distinct (task, program) in one run_many"


# ---------------------------------------------------------------- deduction


def test_deduction_compares_literals_in_the_host(tasks):
    task = tasks[0]  # pair 2: [2, 2, 9, 1] -> [9, 2, 2, 1]
    answers = [
        "[9, 2, 2, 1]",
        " [9,2,2,1] ",
        "[9, 2, 2, 1.0]",
        "(9, 2, 2, 1)",
        "[1, 2, 2, 9]",
        (None, "no_output_fence"),
        "sorted([2, 2, 9, 1], reverse=True)",
        "[9, 2, 2, 1], [0]",
        "",
        "x" * 30_000,
    ]
    verdicts = judge_deduction(task, 2, answers, J)
    assert [(v["format_ok"], v["correct"]) for v in verdicts] == [
        (True, True),
        (True, True),
        (True, True),
        (True, False),
        (True, False),
        (False, False),
        (False, False),
        (False, False),
        (False, False),
        (False, False),
    ]
    assert verdicts[4]["reason"] == "wrong_output"
    assert [v["reason"] for v in verdicts[5:]] == [
        "no_output_fence",
        "not_literal",
        "not_literal",
        "not_literal",
        "too_long",
    ]


def test_deduction_never_evaluates_the_answer(tasks, tmp_path):
    marker = tmp_path / "pwned"
    answers = [
        f"open({str(marker)!r}, 'w').write('x')",
        f"__import__('os').system('touch {marker}')",
        "[x for x in ().__class__.__bases__[0].__subclasses__()]",
        "9" * 100_000,
        "[" * 5000 + "]" * 5000,
    ]
    verdicts = judge_deduction(tasks[0], 2, answers, JudgeSettings(max_answer_chars=200_000))
    assert all(not v["format_ok"] and v["reason"] == "not_literal" for v in verdicts), verdicts
    assert not marker.exists()


def test_deduction_of_special_values(tasks):
    task = {
        "pairs": [
            {"input": "(1,)", "output": ["dict", [[["str", "a"], ["set", [["int", 1]]]]]], "output_repr": ""},
            {"input": "(2,)", "output": ["float", "inf"], "output_repr": "inf"},
            {"input": "(3,)", "output": ["tuple", [["None", None], ["bool", True]]], "output_repr": ""},
        ]
    }
    assert judge_deduction(task, 0, ["{'a': {1}}", "{'a': [1]}"])[0]["correct"] is True
    assert judge_deduction(task, 0, ["{'a': [1]}"])[0]["correct"] is False
    assert judge_deduction(task, 1, ["inf", "float('inf')", "1e999"]) == [
        {"format_ok": True, "correct": True, "reason": None},
        {"format_ok": False, "correct": False, "reason": "not_literal"},
        {"format_ok": True, "correct": True, "reason": None},
    ]
    assert judge_deduction(task, 2, ["(None, True)", "(None, 1)"])[0]["correct"] is True
    assert (
        judge_deduction(task, 2, ["(None, 1)"])[0]["correct"] is True
    )  # 1 == True, as Python (and EvalPlus) say


# ---------------------------------------------------------------- abduction


def test_abduction_runs_the_tasks_f_on_the_proposed_arguments(sandbox, tasks):
    task = tasks[1]  # pair 3: (6, 8) -> 24
    answers = [
        "(6, 8)",
        "(8, 6)",
        "(4, 10)",
        "(14, 0)",
        "(1, 23)",
        "(7, 7)",
        (None, "no_input_block"),
        "(6,)",
        "('6', 8)",
        "6",
        " (6,8) ",
    ]
    verdicts = judge_abduction(task, 3, answers, sandbox, J)
    assert [(v["format_ok"], v["correct"]) for v in verdicts] == [
        (True, True),
        (True, True),
        (True, True),
        (True, True),
        (True, True),
        (True, False),
        (False, False),
        (True, False),
        (True, False),
        (False, False),
        (True, True),
    ]
    assert verdicts[5]["reason"] == "wrong_output"
    assert verdicts[6]["reason"] == "no_input_block"
    assert verdicts[7]["reason"] == "exception:TypeError"
    assert verdicts[8]["reason"] == "exception:TypeError"
    assert verdicts[9]["reason"] == "not_literal", "one argument is written (6,): the source of a tuple"


def test_abduction_arguments_that_are_code_are_format_errors(sandbox, tasks, tmp_path):
    marker = tmp_path / "pwned"
    answers = [
        f"(__import__('os').system('touch {marker}'), 0)",
        "(*[6, 8],)",
        "dict(a=6, b=8)",
        "(6 + 0, 8)",
        "((lambda: 6)(), 8)",
        "([x for x in (6,)][0], 8)",
        "f(6, 8)",
        "(().__class__, 8)",
        "6), (8",
    ]
    verdicts = judge_abduction(tasks[1], 3, answers, sandbox, J)
    assert all(v == {"format_ok": False, "correct": False, "reason": "not_literal"} for v in verdicts), (
        verdicts
    )
    assert not marker.exists()


def test_abduction_arguments_that_make_f_slow_or_large(sandbox):
    settings = ValiditySettings(timeout_s=2.0)
    slow = {
        "question": "Count down.",
        "code": "def f(n):\n    while n > 0:\n        n -= 1\n    return n\n",
        "inputs": ["(1,)", "(2,)", "(3,)", "(4,)", "(5,)"],
    }
    with seeded_sandboxes(settings, workers=1) as pools:
        [verdict] = check_proposals([slow], pools, settings)
    task = make_task(slow, verdict, "t-slow", "lemma", "f", "g", 0)
    verdicts = judge_abduction(
        task, 0, ["(10 ** 12,)", "(10 ** 30,)", "(1000000000000,)", "(7,)"], sandbox, J
    )
    assert [v["format_ok"] for v in verdicts] == [False, False, True, True]
    assert verdicts[2]["correct"] is False and verdicts[2]["reason"].startswith("timeout")
    assert verdicts[3]["correct"] is True


# ---------------------------------------------------------------- from parse.py's output


def test_parsed_teacher_and_student_answers_are_judged_end_to_end(sandbox):
    """parse.py's proposal (argument-tuple sources) -> validity -> task -> each answer form."""
    from selfplay.tracks.gasp.parse import parse_abduction, parse_deduction, parse_induction, parse_proposal

    inputs = "".join(
        f"```input\n{text}\n```\n" for text in ["[1, 2], 3", "[], 0", "[5], -1", "[4, 4], 1", "[7], 7"]
    )
    proposal, why = parse_proposal(
        f"Question: Sum plus k.\n```python\ndef f(xs, k):\n    return sum(xs) + k\n```\n{inputs}"
    )
    assert why is None, why
    settings = ValiditySettings(timeout_s=2.0)
    with seeded_sandboxes(settings, workers=1) as pools:
        [verdict] = check_proposals([proposal], pools, settings)
    assert verdict.valid, verdict
    task = make_task(proposal, verdict, "t", "lemma", "io", "g", 0)
    assert [p["output"][1] for p in task["pairs"]] == [6, 0, 4, 9, 14]
    program = parse_induction("```python\ndef solve(xs, k):\n    return k + sum(xs)\n```")
    assert judge_induction(task, [program], sandbox, J)[0]["correct"] is True
    assert judge_deduction(
        task, 3, [parse_deduction("```output\n9\n```"), parse_deduction("```output\n8\n```")], J
    ) == [
        {"format_ok": True, "correct": True, "reason": None},
        {"format_ok": True, "correct": False, "reason": "wrong_output"},
    ]
    answers = [
        parse_abduction("```input\n[9], 0\n```"),
        parse_abduction("```input\n[], 8\n```"),
        parse_abduction("```input\n[1], 1\n```"),
        parse_abduction("```input\nlen([1])\n```"),
    ]
    assert [(v["format_ok"], v["correct"]) for v in judge_abduction(task, 3, answers, sandbox, J)] == [
        (True, True),
        (True, False),
        (True, False),
        (False, False),
    ]
