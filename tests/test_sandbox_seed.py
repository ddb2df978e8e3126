"""``Sandbox(seed=...)``: a pool whose programs start under another hash seed and random
seed, so that running a program under two seeds tells whether it depends on either
(the GASP track's determinism check). The default stays seed 0."""

from __future__ import annotations

import pytest

from selfplay.sandbox import Sandbox

PROGRAMS = {
    "hash": "def f():\n    return hash('abc')\n",
    "random": "import random\ndef f():\n    return random.random()\n",
    "set_order": "def f():\n    return list({'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'})\n",
}


@pytest.fixture(scope="module")
def pools():
    with (
        Sandbox(workers=1) as zero,
        Sandbox(workers=1, seed=0) as also_zero,
        Sandbox(workers=1, seed=12345) as other,
    ):
        yield zero, also_zero, other


def _values(sb, code):
    """The value of ``f()`` by a plain run and by a load-once run (forked from a loader)."""
    single = sb.run(code, "f", "{}", 5.0)
    each = sb.run_each(code, "f", ["{}", "{}"], 5.0)
    assert single.status == "ok" and all(r.status == "ok" for r in each), (single, each)
    return [single.value] + [r.value for r in each]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_other_seed_changes_the_result_same_seed_repeats_it(pools, name):
    zero, also_zero, other = pools
    a, b, c = (_values(sb, PROGRAMS[name]) for sb in pools)
    assert a[0] == a[1] == a[2], "one seed gives one result, run after run and call after call"
    assert a == b, "two pools with seed 0 agree"
    assert c[0] == c[1] == c[2]
    assert c[0] != a[0], f"{name}: seed 12345 gave the same value as seed 0"


def test_isolation_report_states_the_seed(pools):
    zero, _, other = pools
    assert zero.isolation["hashseed"] == 0 and zero.isolation["random_seed"] == 0
    assert other.isolation["hashseed"] == 12345 and other.isolation["random_seed"] == 12345
    result = other.run("import os\ndef f():\n    return os.environ.get('PYTHONHASHSEED')\n", "f", "{}", 5.0)
    assert result.value == ["str", "12345"]
    assert result.isolation["hashseed"] == 12345


def test_default_seed_is_zero_as_before(pools):
    zero = pools[0]
    import random

    expected = random.Random(0).random()
    assert zero.run(PROGRAMS["random"], "f", "{}", 5.0).value == ["float", repr(expected)]


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, True, "3"])
def test_bad_seed_is_refused_before_anything_starts(bad):
    with pytest.raises(ValueError, match="seed"):
        Sandbox(workers=1, seed=bad)
