"""The benchmark layer checks its verifiers before it believes them: a scoring job opens
its sandbox (or GHC) only after the canary has told a known-good program from a
known-bad one (selfplay.verifier_canary). A broken sandbox (TEST DOUBLE: every program
'returns' 55) stops the job with one line instead of filling a table with its verdicts.
"""

from __future__ import annotations

import pytest

import selfplay.sandbox
from selfplay import verifier_canary as vc
from selfplay.containers.runtime import runtime_record
from selfplay.evaluate.benchmark import Sample, fenced
from selfplay.evaluate.benchmarks import evalplus, livecodebench
from selfplay.evaluate.modes import EvalMode
from selfplay.pipeline.step import step

MODE = EvalMode("single", 1, False, "single", {})
EVALPLUS = {"timeout": 3.0, "max_seconds": 30.0, "min_time_limit": 4.0, "time_limit_factor": 4.0}


class ForgingSandbox:
    """TEST DOUBLE of a broken sandbox: every program 'returns' 55, whatever it computes."""

    limits = None

    def __init__(self, *args, **kwargs):
        self.closed = False

    def run_many(self, jobs):
        return [selfplay.sandbox.ExecResult("ok", value=["int", 55], value_repr="55") for _ in jobs]

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@pytest.fixture(autouse=True)
def fresh_canaries():
    vc.clear()
    yield
    vc.clear()


@pytest.fixture(scope="module")
def prepared():
    """Smoke items of two benchmarks, prepared with the real sandbox."""
    lcb_items, _ = livecodebench.LiveCodeBench().prepare(None, {}, {})
    he_items, _ = evalplus.HumanEval().prepare(None, {**EVALPLUS, "limit": 1}, {})
    return {
        "livecodebench": (livecodebench.LiveCodeBench(), lcb_items, {}),
        "humaneval": (
            evalplus.HumanEval(),
            he_items,
            {"evaluation": {"benchmarks": {"humaneval": EVALPLUS}}},
        ),
    }


@pytest.mark.parametrize("name", ["livecodebench", "humaneval"])
def test_a_broken_sandbox_stops_a_scoring_job(prepared, monkeypatch, name):
    bench, items, cfg = prepared[name]
    item = items[0]
    samples = [Sample(item["id"], 0, fenced("def f():\n    return 1\n"))]
    opened = []
    monkeypatch.setattr(
        selfplay.sandbox, "Sandbox", lambda *a, **k: opened.append(ForgingSandbox()) or opened[-1]
    )
    with pytest.raises(SystemExit) as caught:
        with step(f"score {name}", None):
            bench.score({i["id"]: i for i in items}, samples, MODE, cfg, workers=1)
    message = str(caught.value)
    assert (
        "\n" not in message
        and "python-sandbox answered accepted (returned 55) to its known-bad input" in message
    )
    assert opened and all(sb.closed for sb in opened)


def test_the_real_sandbox_passes_and_the_scoring_job_records_it(prepared):
    bench, items, _ = prepared["livecodebench"]
    item = items[0]
    assert vc.recorded() == []
    bench.score(
        {i["id"]: i for i in items}, [Sample(item["id"], 0, fenced("print(1)\n"))], MODE, {}, workers=1
    )
    [outcome] = runtime_record()["canaries"]
    assert outcome["verifier"] == "python-sandbox" and outcome["passed"]
