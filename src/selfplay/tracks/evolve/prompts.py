"""The EvolveCoder track's prompts, in our own words (paper 002, Appendix A).

What the paper fixes, and the parsers rely on:

* refinement (A.1): the model gets a seed problem (and its reference program when the
  seed has one) and answers with one JSON object ``{"question": ..., "tests": [...]}``:
  a harder LeetCode-style question with a function signature, and about 20
  independent ``assert`` tests with constant inputs and expected outputs;
* adversarial generation (A.2): the question, five programs, the existing tests, and
  the evaluation results as rows = programs, columns = tests; the answer is
  ``{"tests": [...]}`` with new asserts aimed at the high-pass-rate programs;
* discriminative generation (A.3): the same inputs for five programs that behave
  alike; every new test must be passed by at least one and failed by at least one;
* solving: the question, answered with the program in one ```python block (the
  solution pool and the RL rollouts use the same prompt).

The evaluation results are printed the way the paper's template shows them: one row of
``True``/``False`` per program, one column per test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

Message = dict[str, str]

_REFINE_SYSTEM = (
    "You turn programming exercises into hard, self-contained coding problems with unit "
    "tests. You answer with a single JSON object and nothing else."
)

_REFINE_TASK = """Rewrite the exercise below as a hard LeetCode-style problem and write tests for it.

The problem:
- is difficult (the kind an experienced engineer needs 30 to 60 minutes for) and calls for real algorithmic work (dynamic programming, graphs, careful string processing, greedy choices with data structures, sliding windows, intervals, ...);
- asks for one Python function with a stated signature (no reading stdin, no printing);
- is self-contained: no files, network, system calls or machine learning;
- does not ask for complexity analysis or for tests.
{reference_note}
The tests:
- exactly {n_tests} independent Python `assert` statements, each calling the function on constant inputs and comparing with the expected result;
- no randomness and nothing outside the function itself.

Answer with JSON only, shaped like this:
{{"question": "...", "tests": ["assert ...", "assert ..."]}}

Exercise:
{instruction}
"""

_REFERENCE_NOTE = (
    "You may borrow ideas from the reference program below, drop parts of "
    "it, or go beyond it, as long as the new problem is clean and harder.\n"
)

_EVOLVE_SYSTEM = (
    "You write unit tests that tell correct programs from subtly wrong ones. You answer "
    "with a single JSON object and nothing else."
)

_ADVERSARIAL_TASK = """Below are a coding problem, five programs that try to solve it, its current tests, and which program passed which test.

Write {n_tests} new `assert` tests that make the test suite much stronger:
- aim at the programs that pass the most tests: each test should have a good chance of making at least one of them fail;
- vary the inputs across different aspects of the problem; do not repeat or lightly modify existing tests;
- every expected value must follow from the problem statement itself, never from what some program happens to return;
- each test stands alone and uses constant values only, with the inputs and the expected output written out.

Answer with JSON only: {{"tests": ["assert ...", "assert ..."]}}

{context}"""

_DISCRIMINATIVE_TASK = """Below are a coding problem, five programs that behave almost alike on its current tests, those tests, and which program passed which test.

Write {n_tests} new `assert` tests that tell these programs apart:
- every test must be passed by at least one of the five programs and failed by at least one;
- together the tests should expose different ways in which the programs differ;
- every expected value must follow from the problem statement itself, never from what some program happens to return;
- each test stands alone and uses constant values only, with the inputs and the expected output written out.

Answer with JSON only: {{"tests": ["assert ...", "assert ..."]}}

{context}"""

_SOLVE_SYSTEM = "You are a careful Python programmer."

_SOLVE_TASK = """Solve the following problem in Python. Write the complete function (with any imports and helpers it needs) in one ```python code block.

{question}
{name_note}"""


def refine_messages(instruction: str, reference: str | None, n_tests: int) -> list[Message]:
    """A.1: seed problem (and reference program, when there is one) -> question + tests."""
    body = _REFINE_TASK.format(
        reference_note=_REFERENCE_NOTE if reference else "",
        n_tests=int(n_tests),
        instruction=instruction.strip(),
    )
    if reference:
        body += f"\nReference program:\n```python\n{reference.strip()}\n```\n"
    return [{"role": "system", "content": _REFINE_SYSTEM}, {"role": "user", "content": body}]


def results_table(rows: Sequence[Sequence[bool]]) -> str:
    """The evaluation results as the paper prints them: one list per program."""
    return "[\n" + "\n".join(f"    {[bool(x) for x in row]}," for row in rows) + "\n]"


def _context(
    question: str, programs: Sequence[str], tests: Sequence[str], rows: Sequence[Sequence[bool]]
) -> str:
    shown = "\n\n".join(f"Program {i}:\n```python\n{p.strip()}\n```" for i, p in enumerate(programs, 1))
    return (
        f"Question:\n{question.strip()}\n\n"
        f"Programs ({len(programs)} Python programs):\n{shown}\n\n"
        f"Existing tests:\n{json.dumps(list(tests), indent=1, ensure_ascii=False)}\n\n"
        f"Evaluation results (rows = programs, columns = tests):\n{results_table(rows)}\n"
    )


def adversarial_messages(
    question: str, programs: Sequence[str], tests: Sequence[str], rows: Sequence[Sequence[bool]], n_tests: int
) -> list[Message]:
    """A.2: new tests aimed at the strongest programs."""
    body = _ADVERSARIAL_TASK.format(n_tests=int(n_tests), context=_context(question, programs, tests, rows))
    return [{"role": "system", "content": _EVOLVE_SYSTEM}, {"role": "user", "content": body}]


def discriminative_messages(
    question: str, programs: Sequence[str], tests: Sequence[str], rows: Sequence[Sequence[bool]], n_tests: int
) -> list[Message]:
    """A.3: new tests that split programs which behave alike."""
    body = _DISCRIMINATIVE_TASK.format(
        n_tests=int(n_tests), context=_context(question, programs, tests, rows)
    )
    return [{"role": "system", "content": _EVOLVE_SYSTEM}, {"role": "user", "content": body}]


def solve_messages(question: str, entry: str | None = None) -> list[Message]:
    """A candidate solution (the pool, and the RL rollouts). The question should state the
    function's signature (A.1 asks for one); when it does not name the function the tests
    call, the prompt names it, so a right program is not failed for its name alone."""
    note = "" if not entry or f"{entry}(" in question else f"\nName the function `{entry}`.\n"
    return [
        {"role": "system", "content": _SOLVE_SYSTEM},
        {"role": "user", "content": _SOLVE_TASK.format(question=question.strip(), name_note=note)},
    ]
