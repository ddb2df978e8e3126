"""What counts as a verified SInQ instance (real sandboxed executions)."""

import pytest

from selfplay.sandbox import Sandbox
from selfplay.tracks.sinq.verify import check_pair, score_bob

P = "def f(n):\n    if n <= 0:\n        return 0\n    return n + f(n - 1)\n"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2) as box:
        yield box


def check(sb, q, x, p=P, det=True):
    return check_pair(sb, p, q, "f", x, 1.0, det)


def test_different_values_diverge(sb):
    out = check(sb, "def f(n):\n    return 1 if n == 3 else 0\n", "{'n': 3}")
    assert out["valid"] and out["diverges"] and out["p"]["status"] == "ok"


def test_same_values_do_not(sb):
    out = check(sb, "def f(n):\n    return n * (n + 1) // 2 if n > 0 else 0\n", "{'n': 5}")
    assert out["valid"] and not out["diverges"] and out["reason"] == "same_behaviour"


def test_paper_example_recursion_vs_value(sb):
    # P returns 0 for n = -1; Q recurses until Python's recursion limit.
    q = "def f(n):\n    if n == 0:\n        return 0\n    return n + f(n - 1)\n"
    out = check(sb, q, "{'n': -1}")
    assert out["diverges"] and out["q"]["exc_type"] == "RecursionError"


def test_non_halting_variant_diverges(sb):
    out = check(sb, "def f(n):\n    while True:\n        pass\n", "{'n': 1}")
    assert out["diverges"] and out["q"]["status"] == "timeout"


def test_type_exact_comparison(sb):
    out = check(sb, "def f(n):\n    return 1.0\n", "{'n': 1}", p="def f(n):\n    return 1\n")
    assert out["diverges"]


def test_exception_types_compared(sb):
    p = "def f(n):\n    raise ValueError('x')\n"
    assert not check(sb, "def f(n):\n    raise ValueError('other message')\n", "{'n': 1}", p=p)["diverges"]
    assert check(sb, "def f(n):\n    raise KeyError('x')\n", "{'n': 1}", p=p)["diverges"]


def test_input_that_does_not_fit_p_is_invalid(sb):
    out = check(sb, "def f(n):\n    return 5\n", "{'m': 1}")
    assert not out["valid"] and out["reason"] == "source_error"


def test_p_timing_out_is_invalid(sb):
    p = "def f(n):\n    while n > 0:\n        pass\n    return 0\n"
    out = check(sb, "def f(n):\n    return 1\n", "{'n': 1}", p=p)
    assert not out["valid"] and out["reason"] == "source_timeout"


def test_variant_without_entry_point_is_rejected(sb):
    out = check(sb, "def g(n):\n    return 1\n", "{'n': 1}")
    assert not out["diverges"] and out["reason"] == "variant_not_callable"


def test_nondeterministic_variant_is_rejected(sb):
    # `random` is seeded the same way in every sandboxed run (so verdicts replay exactly);
    # the clock is not.
    q = "import time\ndef f(n):\n    return time.perf_counter_ns()\n"
    out = check(sb, q, "{'n': 1}")
    assert not out["diverges"] and out["reason"] == "variant_nondeterministic"


def test_bob_scored_by_execution_not_by_his_yes_no(sb):
    inst = {
        "id": "i1",
        "code_p": P,
        "code_q": "def f(n):\n    return 1 if n == 3 else (0 if n <= 0 else n + f(n - 1))\n",
        "entry_point": "f",
    }
    cfg = {"seed": 1, "sinq": {"verify": {"timeout_min": 0.5, "timeout_max": 1.0, "check_determinism": True}}}
    answers = [
        "# Analysis\nx\n# Equivalent?\nNo\n# Diverging input example\n```python\n{'n': 3}\n```\n",  # right
        "# Analysis\nx\n# Equivalent?\nNo\n# Diverging input example\n```python\n{'n': 2}\n```\n",  # wrong input
        "# Analysis\nx\n# Equivalent?\nYes\n# Diverging input example\n```python\n{'n': 3}\n```\n",  # says Yes, input right
        "garbage",
    ]
    out = score_bob(inst, {"key": "k", "outputs": answers}, "round1", "untrained", cfg, sb)
    assert [s["correct"] for s in out["bob"]["samples"]] == [True, False, True, False]
    assert out["difficulty"] == pytest.approx(5.0) and out["difficulty_rounded"] == 5
