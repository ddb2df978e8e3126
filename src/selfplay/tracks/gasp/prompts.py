"""What the GASP teacher and student are asked (paper 004, Sec. 3.3; the wording is ours).

The paper publishes no prompt text. It fixes the roles (one model, teacher and student
differing only by the role prompt), what each sees, and the task shape it takes from
Absolute Zero: a task is a Python function ``f`` with input/output pairs, induction
(question and shown pairs -> ``f``), deduction (``f`` and an input -> the output) and
abduction (``f`` and an output -> an input). What the prompts here fix, because
parse.py and formats.py read it:

* the teacher answers ``Question: <text>``, one ```python block defining ``f``, then
  five ```input blocks, each holding one call's arguments as they stand between the
  parentheses of ``f(...)`` (AZR's ```input convention, one block per input);
* the student answers with one ```python block (induction), one ```output block holding
  a literal (deduction) or one ```input block holding arguments (abduction);
* pairs are shown the way a Python session shows them: ``>>> f(3, [1, 2])`` and the
  returned value's repr on the next line.

Who sees what (Sec. 3.3): the lemma teacher sees a goalpost (title, statement, starter
code) and writes an easier related task along the drawn difficulty axis, "io" (the
input schema and the examples) or "f" (the mapping itself); the lift teacher sees only
an accepted lemma (its question, its code and its two shown pairs, never the goalpost)
and writes a harder task along the same axis. Two prompts serve the ablations: the
one-step teacher (goalpost in view, one target difficulty) and the unguided teacher
(no goalpost; a few earlier tasks shown as examples to differ from, as Absolute Zero
shows its proposer reference programs).

No think/answer tags: Absolute Zero wraps answers in them for its own format reward,
but the paper fixes none, the tiny default model would spend its few hundred tokens on
them, and with the skeleton constrained the answer starts at the format. Free text
before the answer is still allowed when decoding is free (parse.py skips it: the
teacher's question starts at its ``Question:`` line, the student's answer is its last
block of the asked kind), so a large model may reason first.
"""

from __future__ import annotations

import ast

from ...errors import UserError
from . import parse

Message = dict[str, str]
AXES = ("io", "f")
N_INPUTS = parse.N_INPUTS

TEACHER_SYSTEM = """\
You design small programming exercises for a student. An exercise is a Python function \
f and a question that says in words what f computes. The student sees the question and \
two examples of what f returns, and has to write f; three more examples, kept hidden, \
check the student's function. So f must give the same result every time for the same \
input (no randomness, clock, files or network), it must return plain data (numbers, \
strings, booleans, None, and lists, tuples, dicts or sets of them), and the question \
must say enough to make the exercise solvable.

Answer in exactly this layout, because a program reads it:
- a line starting with "Question:" and the question;
- one ```python block defining one function named f (any helper goes inside f);
- five ```input blocks, one per example input, each holding the arguments of one call \
of f as Python literals, written as they stand between the parentheses of f(...).

For example:

Question: Given a list of integers and a number k, count the items of the list that are larger than k.
```python
def f(nums, k):
    return sum(1 for x in nums if x > k)
```

```input
[3, 8, 1, 9], 4
```

```input
[], 0
```

```input
[5, 5, 5], 5
```

```input
[-2, 7, 0], -1
```

```input
[10, 20, 30], 15
```

Choose five different inputs that together show what f does, including unusual ones.\
"""

STUDENT_SYSTEM = """\
You are a careful Python programmer. Each request asks for one answer in one code block \
of a given kind (```python, ```output or ```input); write that block. If you think \
before it, keep it short: the last block of the asked kind is taken as your answer.\
"""

LAYOUT_REMINDER = (
    'Answer in the layout described above: the "Question:" line, one ```python block '
    f"defining f, and {N_INPUTS} ```input blocks."
)

# How to move the difficulty, by axis and direction (Sec. 3.3.1, "Choosing the difficulty axis").
EASIER = {
    "io": (
        "Make it easier through its inputs: keep the kind of computation, but give f a simpler "
        "input (for example one flat list instead of nested lists or several lists, fewer "
        "parameters, small and regular values), and pick example inputs that make the rule easy to see."
    ),
    "f": (
        "Make it easier through the function itself: keep the kind of input, but make the mapping "
        "simpler (for example drop a condition, a special case or a step of the computation)."
    ),
}
HARDER = {
    "io": (
        "Make it harder through its inputs: keep the idea of the rule, but give f a richer input "
        "(for example nested lists instead of a flat one, several lists, extra parameters), or pick "
        "example inputs from which the rule is harder to guess."
    ),
    "f": (
        "Make it harder through the function itself: keep the kind of input, but make the mapping "
        "more demanding (for example add a condition, or combine it with a further operation that "
        "needs extra logic)."
    ),
}
# The unguided teacher has no task to move from: the axis says where the difficulty lies.
DIFFICULTY_IN = {
    "io": (
        "Put the difficulty in the inputs: a rich input (nested lists, several arguments, "
        "mixed kinds of values) and examples from which the rule is not obvious."
    ),
    "f": "Put the difficulty in the function itself: a mapping that needs a few steps of real logic.",
}
# One-step ablations (Appendix C.3): one variant, at the difficulty the reward peaks at.
ONESTEP_TARGET = {
    "onestep_medium": "the student should solve it about one time in three",
    "onestep_hard": "the student should solve it only about one time in ten",
}


def _axis(axis: str) -> str:
    if axis not in AXES:
        raise UserError(f"unknown GASP difficulty axis {axis!r}; known: {', '.join(AXES)}")
    return axis


def _block(code: str, label: str = "python") -> str:
    return f"```{label}\n{str(code).strip(chr(10))}\n```"


def call_text(args_source: str) -> str:
    """``f(...)`` for one input, from the source of its argument tuple (``"(3, [1, 2])"``
    -> ``"f(3, [1, 2])"``, ``"(5,)"`` -> ``"f(5)"``)."""
    try:
        node = ast.parse(args_source, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        node = None
    if isinstance(node, ast.Tuple):
        return f"{parse.ENTRY}(" + ", ".join(ast.unparse(e) for e in node.elts) + ")"
    return f"{parse.ENTRY}(*{args_source})"


def pair_text(pair: dict) -> str:
    """One input/output pair as a Python session shows it."""
    return f">>> {call_text(pair['input'])}\n{pair['output_repr']}"


def shown_pairs(task: dict) -> str:
    return "\n".join(pair_text(task["pairs"][i]) for i in task["shown"])


def goalpost_text(goalpost: dict) -> str:
    """A goalpost as the teacher sees it: title, statement, starter code (when it has one)."""
    text = f"Title: {goalpost['title']}\n\n{str(goalpost['text']).strip()}"
    if str(goalpost.get("starter_code") or "").strip():
        text += f"\n\nStarter code:\n{_block(goalpost['starter_code'])}"
    return text


def task_text(task: dict) -> str:
    """An accepted task as a later teacher sees it: question, code, shown pairs."""
    return f"Question: {task['question']}\n{_block(task['code'])}\n\nExamples:\n{shown_pairs(task)}"


def _teacher(body: str) -> list[Message]:
    return [{"role": "system", "content": TEACHER_SYSTEM}, {"role": "user", "content": body}]


def lemma_messages(goalpost: dict, axis: str) -> list[Message]:
    """The lemma teacher: a goalpost -> an easier related task along ``axis``."""
    body = (
        f"Here is a hard problem that the student cannot solve yet:\n\n{goalpost_text(goalpost)}\n\n"
        "Write an exercise that is easier than this problem but keeps its central idea, so that "
        f"learning to solve it is a step towards solving the problem. {EASIER[_axis(axis)]}\n\n"
        + LAYOUT_REMINDER
    )
    return _teacher(body)


def lift_messages(lemma_task: dict, axis: str) -> list[Message]:
    """The lift teacher: an accepted lemma only (never its goalpost) -> a harder task along ``axis``."""
    body = (
        f"Here is an exercise that the student solves about half of the time:\n\n{task_text(lemma_task)}\n\n"
        "Write a new exercise that grows out of this one and is harder than it. "
        f"{HARDER[_axis(axis)]}\n\n" + LAYOUT_REMINDER
    )
    return _teacher(body)


def onestep_messages(goalpost: dict, axis: str, schedule: str) -> list[Message]:
    """The one-step teacher (ablation): a goalpost -> one related, easier task at the
    difficulty ``schedule`` (onestep_medium or onestep_hard) aims for."""
    if schedule not in ONESTEP_TARGET:
        raise UserError(f"unknown one-step schedule {schedule!r}; known: {', '.join(ONESTEP_TARGET)}")
    body = (
        f"Here is a hard problem that the student cannot solve yet:\n\n{goalpost_text(goalpost)}\n\n"
        "Write an exercise that keeps this problem's central idea but is easier, so that learning to "
        f"solve it is a step towards solving the problem; {ONESTEP_TARGET[schedule]}. "
        f"{EASIER[_axis(axis)]}\n\n" + LAYOUT_REMINDER
    )
    return _teacher(body)


def unguided_messages(references: list[dict], axis: str) -> list[Message]:
    """The unguided teacher (our stand-in for AZR): no goalpost; earlier tasks, if any, to
    differ from."""
    if references:
        shown = "\n\n".join(f"Exercise {i}:\n{task_text(t)}" for i, t in enumerate(references, 1))
        intro = f"Here are exercises written earlier:\n\n{shown}\n\nWrite a new exercise, different from all of them, "
    else:
        intro = "Write a new exercise "
    body = (
        intro
        + f"that is challenging but solvable for the student. {DIFFICULTY_IN[_axis(axis)]}\n\n"
        + LAYOUT_REMINDER
    )
    return _teacher(body)


# --------------------------------------------------------------------------- the student


def _student(body: str) -> list[Message]:
    return [{"role": "system", "content": STUDENT_SYSTEM}, {"role": "user", "content": body}]


def _pair(task: dict, pair_index: int) -> dict:
    pairs = task["pairs"]
    if isinstance(pair_index, bool) or not isinstance(pair_index, int) or not 0 <= pair_index < len(pairs):
        raise UserError(f"task {task.get('id')!r} has no pair {pair_index!r} (it has {len(pairs)})")
    return pairs[pair_index]


def induction_messages(task: dict) -> list[Message]:
    """Question and the shown pairs -> write ``f``."""
    body = (
        f"Write the Python function f that this question describes.\n\nQuestion: {task['question']}\n\n"
        f"Examples:\n{shown_pairs(task)}\n\n"
        "Answer with one ```python block that defines f:\n```python\ndef f(...):\n    ...\n```"
    )
    return _student(body)


def deduction_messages(task: dict, pair_index: int) -> list[Message]:
    """``f`` and one input -> the output, as one Python literal."""
    pair = _pair(task, pair_index)
    body = (
        f"Here is a Python function:\n\n{_block(task['code'])}\n\nWhat does this call return?\n\n"
        f">>> {call_text(pair['input'])}\n\n"
        "Answer with the returned value, written as one Python literal, in one ```output block:\n"
        "```output\n<the value>\n```"
    )
    return _student(body)


def abduction_messages(task: dict, pair_index: int) -> list[Message]:
    """``f`` and one output -> arguments for which ``f`` returns it."""
    pair = _pair(task, pair_index)
    body = (
        f"Here is a Python function:\n\n{_block(task['code'])}\n\n"
        f"Find arguments for which f returns this value:\n\n{pair['output_repr']}\n\n"
        "Answer with the arguments as Python literals, written as they stand between the "
        "parentheses of f(...), in one ```input block:\n```input\n<the arguments>\n```"
    )
    return _student(body)


def student_messages(task: dict, form: str, pair_index: int | None = None) -> list[Message]:
    """The student's request for ``task`` in ``form`` (induction needs no pair)."""
    if form == "induction":
        return induction_messages(task)
    if form == "deduction":
        return deduction_messages(task, pair_index)
    if form == "abduction":
        return abduction_messages(task, pair_index)
    raise UserError(f"unknown GASP task form {form!r}; known: induction, deduction, abduction")
