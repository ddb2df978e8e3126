"""``Sandbox.run_each``: a program loaded once, each input called in a process forked from it.

The contract is ``run_each(code, entry, inputs, t) == [run(code, entry, i, t) for i in inputs]``
(by ``ExecResult.behaviour()``), for ordinary programs and for the ones that make the
loaded state differ from a fresh run's (the sandbox then runs them one at a time).
Real executions throughout.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from selfplay.sandbox import Sandbox, SandboxLimits
from selfplay.sandbox.encoding import decode_value

HOSTILE = Path(__file__).resolve().parent / "hostile"
TIMEOUT = 2.0


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2, limits=SandboxLimits(memory_mb=512)) as sandbox:
        yield sandbox


def one_at_a_time(sb, code, entry, inputs, timeout=TIMEOUT):
    return [sb.run(code, entry, literal, timeout) for literal in inputs]


def assert_same(sb, code, entry, inputs, timeout=TIMEOUT, forked=None):
    """run_each and one run per input agree on every input; returns run_each's results.
    ``forked``: whether every call must (True) or must not (False) come from the loaded program."""
    each = sb.run_each(code, entry, inputs, timeout)
    if forked is not None:
        assert [r.isolation["forked_from_loaded"] for r in each] == [forked] * len(inputs), each
    single = one_at_a_time(sb, code, entry, inputs, timeout)
    assert [r.behaviour() for r in each] == [r.behaviour() for r in single], (each, single)
    assert [shown(r) for r in each] == [shown(r) for r in single]
    assert [r.exc_message for r in each] == [r.exc_message for r in single]
    healthy = sb.run("def f(n):\n    return n * 2\n", "f", "{'n': 21}", TIMEOUT)
    assert healthy.value == ["int", 42], healthy
    return each


def shown(result) -> str | None:
    """The value's repr without object addresses (which differ between any two processes)."""
    return re.sub(r" at 0x[0-9a-f]+", "", result.value_repr or "")


def sandbox_uids(sb: Sandbox) -> set[int]:
    return {s.lease.uid for s in sb._servers if s.lease is not None}


def processes_owned_by(uids: set[int]) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid in uids:
                found.append(int(pid))
        except OSError:
            pass
    return found


NUMBERS = [{"n": n} for n in range(6)]

ORDINARY = {
    "values": ("def f(n):\n    return [n, (n, 1.5), {n: 'x'}, {n}, None, n > 2]\n", "f"),
    "raises_on_some": ("def f(n):\n    if n % 2:\n        raise ValueError(n)\n    return n\n", "f"),
    "entry_missing": ("def g(n):\n    return n\n", "f"),
    "entry_not_callable": ("f = 3\n", "f"),
    "does_not_bind": ("def f(m):\n    return m\n", "f"),
    "unencodable": ("def f(n):\n    x = []\n    x.append(x)\n    return x\n", "f"),
    "object_value": (
        "class A:\n    def __eq__(self, o):\n        return True\n\ndef f(n):\n    return A()\n",
        "f",
    ),
    "random_and_hash": (
        "import random\nSEED = random.random()\n\ndef f(n):\n    return [SEED, random.random(),"
        " random.randint(0, 10**9), hash('abc'), hash((n, 'x'))]\n",
        "f",
    ),
    "recursion_limit_raised_at_import": (
        "import sys\nsys.setrecursionlimit(5000)\n\ndef f(n):\n    return sys.getrecursionlimit()\n",
        "f",
    ),
    "heavy_import": (
        "import json, fractions, decimal, collections\nTABLE = {i: i * i for i in range(10000)}\n\n"
        "def f(n):\n    return TABLE[n] + len(json.dumps([n]))\n",
        "f",
    ),
}


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_same_results_as_one_run_per_input(sb, name):
    code, entry = ORDINARY[name]
    assert_same(sb, code, entry, NUMBERS, forked=True)


def test_each_call_starts_from_the_state_right_after_import(sb):
    code = (
        "import os\nCALLS = []\n\ndef f(n):\n    CALLS.append(n)\n    seen = sorted(os.listdir('.'))\n"
        "    with open(f'out{n}.txt', 'w') as fh:\n        fh.write('x')\n    return [len(CALLS), seen]\n"
    )
    results = assert_same(sb, code, "f", NUMBERS, forked=True)
    assert [decode_value(r.value) for r in results] == [[1, []]] * len(NUMBERS)


def test_a_call_that_crashes_or_exits_does_not_touch_the_next(sb):
    code = (
        "import os, sys\n\ndef f(n):\n    if n == 1:\n        os._exit(3)\n    if n == 2:\n        sys.exit(0)\n"
        "    if n == 3:\n        raise KeyboardInterrupt\n    if n == 4:\n        import ctypes\n"
        "        ctypes.string_at(0)\n    return n\n"
    )
    results = assert_same(sb, code, "f", NUMBERS, forked=True)
    assert [r.status for r in results] == ["ok", "killed", "exception", "exception", "killed", "ok"]


def test_import_failures_run_one_at_a_time_with_the_same_verdicts(sb):
    for code in (
        "def f(n) return n\n",
        "raise SystemExit(2)\n",
        "import os\nos._exit(0)\n",
        "import os\nos.write(3, b'SBX1garbage')\ndef f(n):\n    return n\n",
        "import os, json\nbody = json.dumps({'status': 'loaded', 'threads': 0}).encode()\n"
        "os.write(3, b'SBX1' + len(body).to_bytes(4, 'big') + body)\ndef f(n):\n    return n\n",
    ):
        assert_same(sb, code, "f", NUMBERS[:3], forked=False)


def test_threads_processes_or_files_left_by_the_import_mean_one_at_a_time(sb):
    thread = (
        "import threading, time\nBOX = []\nthreading.Thread(target=lambda: (time.sleep(0.05), BOX.append(1)),"
        " daemon=True).start()\n\ndef f(n):\n    time.sleep(0.2)\n    return [n, len(BOX)]\n"
    )
    process = (
        "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n\n"
        "def f(n):\n    return n\n"
    )
    files = "open('state.txt', 'w').write('1')\n\ndef f(n):\n    return open('state.txt').read()\n"
    for code in (thread, process, files):
        results = assert_same(sb, code, "f", NUMBERS[:3], forked=False)
        assert all(r.status == "ok" for r in results), results
    assert processes_owned_by(sandbox_uids(sb)) == []


def test_a_call_that_kills_the_loader_or_everyone(sb):
    for name, entry in (("kill_parent", "main"), ("kill_parent", "suicide_all")):
        code = (HOSTILE / f"{name}.py").read_text()
        assert_same(sb, code, entry, [{}] * 3)
    assert processes_owned_by(sandbox_uids(sb)) == []


def test_the_time_limit_covers_import_and_call_together(sb):
    code = "import time\ntime.sleep(1.2)\n\ndef f(n):\n    time.sleep(1.2 if n else 0.0)\n    return n\n"
    results = sb.run_each(code, "f", [{"n": 0}, {"n": 1}, {"n": 0}], 2.0)
    assert [r.status for r in results] == ["ok", "timeout", "ok"]


def test_an_import_slower_than_the_limit_times_out_every_input(sb):
    start = time.monotonic()
    results = sb.run_each("while True:\n    pass\n", "f", NUMBERS, 0.5)
    assert [r.status for r in results] == ["timeout"] * len(NUMBERS)
    assert time.monotonic() - start < 3.0  # one import's worth of waiting, not one per input


def test_a_slow_input_times_out_alone(sb):
    code = "def f(n):\n    while n == 2:\n        pass\n    return n\n"
    results = sb.run_each(code, "f", NUMBERS, 1.0)
    assert [r.status for r in results] == ["ok", "ok", "timeout", "ok", "ok", "ok"]
    assert [decode_value(r.value) for r in results if r.status == "ok"] == [0, 1, 3, 4, 5]


def test_hostile_calls_are_contained(sb):
    cases = [
        ("fork_bomb", "main", {}),
        ("memory_bomb", "main", {}),
        ("memory_bomb", "many_processes", {}),
        ("setsid_escape", "main", {}),
        ("exit_without_result", "flood_channel", {}),
        ("exit_without_result", "patch_os", {}),
        ("signal_tamper", "main", {}),
    ]
    for name, entry, literal in cases:
        code = (HOSTILE / f"{name}.py").read_text()
        results = sb.run_each(code, entry, [literal] * 2, 1.0)
        assert len(results) == 2 and all(r.status != "ok" or r.value is not None for r in results), (
            name,
            results,
        )
        assert processes_owned_by(sandbox_uids(sb)) == [], name
    healthy = sb.run_each("def f(n):\n    return n * 2\n", "f", NUMBERS, TIMEOUT)
    assert [decode_value(r.value) for r in healthy] == [2 * n for n in range(6)]


def test_patching_os_at_import_does_not_break_the_loader(sb):
    code = (
        "import os\nos.fork = lambda: 0\nos.write = lambda fd, data: len(data)\nos._exit = lambda code: None\n\n"
        "def f(n):\n    return n + 1\n"
    )
    results = assert_same(sb, code, "f", NUMBERS[:3], forked=True)
    assert [decode_value(r.value) for r in results] == [1, 2, 3]


def test_many_jobs_keep_their_order(sb):
    jobs = [(f"def f(n):\n    return n + {k}\n", "f", NUMBERS[:3], TIMEOUT) for k in range(5)]
    out = sb.run_each_many(jobs)
    assert [[decode_value(r.value) for r in results] for results in out] == [
        [k, k + 1, k + 2] for k in range(5)
    ]


def test_inputs_are_checked_before_anything_runs(sb):
    assert sb.run_each("def f():\n    return 1\n", "f", [], TIMEOUT) == []
    with pytest.raises(ValueError):
        sb.run_each("def f(n):\n    return n\n", "f", ["{'n': 1}", "[1, 2]"], TIMEOUT)
    with pytest.raises(TypeError):
        sb.run_each("def f(n):\n    return n\n", "f", "{'n': 1}", TIMEOUT)
    with pytest.raises(ValueError):
        sb.run_each("def f(n):\n    return n\n", "f", ["{'n': 1}"], 0)
