"""Behaviour of the sandbox on ordinary programs: values, exceptions, errors, timeouts.

Real executions throughout (fork servers in namespaces when run as root).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import sysconfig
import time

import pytest

from selfplay.sandbox import ExecResult, Sandbox, SandboxLimits, run_naive
from selfplay.sandbox.encoding import Opaque, decode_value


@pytest.fixture(scope="module")
def sb():
    with Sandbox(workers=2) as sandbox:
        yield sandbox


def ret(sb, expr: str, setup: str = ""):
    code = f"{setup}\ndef f():\n    return {expr}\n"
    r = sb.run(code, "f", "{}", 5.0)
    assert r.status == "ok", r
    return r


# ------------------------------------------------------------------ return values


def test_simple_call_with_arguments(sb):
    r = sb.run("def add(a, b=10):\n    return a + b\n", "add", "{'a': 1, 'b': 2}", 2.0)
    assert r.status == "ok"
    assert r.value == ["int", 3]
    assert r.value_repr == "3"
    assert r.exc_type is None and r.detail is None
    assert r.behaviour() == ("ok", json.dumps(["int", 3], separators=(",", ":")))
    assert 0 < r.seconds < 2.0


def test_dict_input_is_accepted(sb):
    r = sb.run("def f(xs, k):\n    return sorted(xs)[k]\n", "f", {"xs": (3, 1, 2), "k": 0}, 2.0)
    assert r.value == ["int", 1]


def test_one_float_true_differ(sb):
    one, flt, true = ret(sb, "1"), ret(sb, "1.0"), ret(sb, "True")
    assert len({one.behaviour(), flt.behaviour(), true.behaviour()}) == 3
    assert flt.value == ["float", "1.0"]
    assert true.value == ["bool", True]


def test_containers_and_canonical_order(sb):
    a = ret(sb, "{3, 1, 2}")
    b = ret(sb, "set([2, 3, 1])")
    assert a.behaviour() == b.behaviour()
    assert a.value == ["set", [["int", 1], ["int", 2], ["int", 3]]]
    d1 = ret(sb, "{'b': 2, 'a': (1, [2.5])}")
    d2 = ret(sb, "dict(a=(1, [2.5]), b=2)")
    assert d1.behaviour() == d2.behaviour()
    assert ret(sb, "(1, 2)").behaviour() != ret(sb, "[1, 2]").behaviour()
    assert ret(sb, "frozenset({1})").behaviour() != ret(sb, "{1}").behaviour()
    assert ret(sb, "{1: 'x'}").behaviour() != ret(sb, "{'1': 'x'}").behaviour()


def test_floats_nan_inf_bytes_bigint(sb):
    nan1, nan2 = ret(sb, "float('nan')"), ret(sb, "math.inf - math.inf", "import math")
    assert nan1.behaviour() == nan2.behaviour()
    assert ret(sb, "float('inf')").value == ["float", "inf"]
    assert ret(sb, "-math.inf", "import math").value == ["float", "-inf"]
    assert ret(sb, "0.1 + 0.2").value == ["float", repr(0.1 + 0.2)]
    assert ret(sb, "b'\\x00ab'").value == ["bytes", "006162"]
    assert ret(sb, "b'ab'").behaviour() != ret(sb, "'ab'").behaviour()
    big = ret(sb, "3 ** 200")
    assert big.value == ["int", str(3**200)]
    huge = ret(sb, "7 ** 20000")  # beyond the default int->str digit limit
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        assert huge.value == ["int", str(7**20000)]
    finally:
        sys.set_int_max_str_digits(old)
    assert ret(sb, "None").value == ["None", None]
    assert ret(sb, "1+2j").value == ["complex", "(1+2j)"]


def test_subclasses_and_other_objects(sb):
    nt = ret(sb, "P(1, 2)", "from collections import namedtuple\nP = namedtuple('P', 'x y')")
    assert nt.behaviour() == ret(sb, "(1, 2)").behaviour()
    dd = ret(sb, "d", "from collections import defaultdict\nd = defaultdict(int)\nd['a'] += 1")
    assert dd.behaviour() == ret(sb, "{'a': 1}").behaviour()
    frac = ret(sb, "Fraction(1, 3)", "from fractions import Fraction")
    assert frac.value == ["object", "fractions.Fraction", "Fraction(1, 3)"]
    obj = ret(sb, "Thing()", "class Thing:\n    pass")
    assert obj.value[0] == "object" and obj.value[1] == "solution.Thing"
    assert "0x?" in obj.value[2]  # addresses masked so equal programs compare equal


def test_hash_order_is_deterministic_across_workers_and_naive(sb):
    code = "def f():\n    return list({'apple', 'pear', 'fig', 'kiwi', 'plum', 'lime'})\n"
    results = sb.run_many([(code, "f", "{}", 2.0)] * 4)
    naive = run_naive(code, "f", "{}", 2.0)
    assert len({r.behaviour() for r in results + [naive]}) == 1


def test_stdlib_imports_beyond_preloaded(sb):
    code = "import difflib, csv, io\ndef f():\n    return round(difflib.SequenceMatcher(None, 'abc', 'abd').ratio(), 3)\n"
    r = sb.run(code, "f", "{}", 5.0)
    assert r.status == "ok", r
    assert r.value == ["float", "0.667"]
    # Submodules of packages the server loaded before forking.
    sub = "import encodings.idna, json.tool, email.utils\ndef f():\n    return 'b\u00fccher.de'.encode('idna')\n"
    r = sb.run(sub, "f", "{}", 5.0)
    assert r.status == "ok", r
    assert r.value == ["bytes", b"xn--bcher-kva.de".hex()]


def test_python_works_inside_the_filesystem_view(sb):
    """The minimal view keeps what Python needs: C extensions and their shared libraries,
    time zone data, and an interpreter started as sys.executable, which finds the
    environment's site-packages (numpy when installed)."""
    spec = importlib.util.find_spec("numpy")
    site = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]
    installed = spec is not None and any((spec.origin or "").startswith(s + os.sep) for s in site)
    mod = "numpy" if installed else "json"
    code = (
        "import sys, subprocess, sqlite3, ctypes, decimal, ssl, zoneinfo, lzma, bz2, zlib, unicodedata\n"
        "def f(mod):\n"
        "    db = sqlite3.connect(':memory:')\n"
        "    db.execute('create table t(x)')\n"
        "    zone = zoneinfo.ZoneInfo('Europe/Paris').key\n"
        "    child = subprocess.run([sys.executable, '-c', f'import {mod}; print({mod}.__name__)'],\n"
        "                           capture_output=True, text=True, timeout=60)\n"
        "    return [zone, child.returncode, child.stdout.strip()]\n"
    )
    r = sb.run(code, "f", repr({"mod": mod}), 60.0)
    assert r.status == "ok", r
    assert decode_value(r.value) == ["Europe/Paris", 0, mod]


def test_child_sys_path_holds_only_visible_folders(sb):
    r = ret(sb, "[(p, os.path.isdir(p)) for p in sys.path]", "import os, sys")
    entries = decode_value(r.value)
    assert entries and all(visible for _, visible in entries)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    assert all(not p.startswith(src) for p, _ in entries)


def test_tool_dirs_cannot_replace_the_sandboxs_own_folders():
    for bad in ("/", "/tmp", "/etc", "/proc/self", "/dev"):
        with pytest.raises(ValueError, match="tool_dirs"):
            Sandbox(workers=1, tool_dirs=[bad])


def test_random_is_seeded(sb):
    code = "import random\ndef f():\n    return random.random()\n"
    a, b = sb.run_many([(code, "f", "{}", 2.0)] * 2)
    assert a.behaviour() == b.behaviour()


# ------------------------------------------------------------------ exceptions


def test_exception_types(sb):
    r = sb.run("def f(n):\n    return 1 // n\n", "f", "{'n': 0}", 2.0)
    assert r.status == "exception"
    assert r.exc_type == "ZeroDivisionError"
    assert "division" in r.exc_message
    assert r.behaviour() == ("exception", "ZeroDivisionError")
    custom = sb.run("class Oops(Exception):\n    pass\ndef f():\n    raise Oops('x')\n", "f", "{}", 2.0)
    assert custom.exc_type == "solution.Oops"
    exit_ = sb.run("import sys\ndef f():\n    sys.exit(2)\n", "f", "{}", 2.0)
    assert exit_.status == "exception" and exit_.exc_type == "SystemExit"
    builtin_exit = sb.run("def f():\n    exit(1)\n", "f", "{}", 2.0)
    assert builtin_exit.exc_type == "SystemExit"


def test_paper_fib_infinite_recursion_is_exception(sb):
    code = "def fib(n):\n    if n == 0 or n == 1:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"
    r = sb.run(code, "fib", "{'n': -1}", 5.0)
    assert r.status == "exception"
    assert r.exc_type == "RecursionError"
    ok = sb.run(code, "fib", "{'n': 10}", 5.0)
    assert ok.value == ["int", 55]


def test_module_level_exception_and_syntax_error(sb):
    r = sb.run("x = {}['missing']\ndef f():\n    return 1\n", "f", "{}", 2.0)
    assert (r.status, r.exc_type) == ("exception", "KeyError")
    s = sb.run("def f(:\n    pass\n", "f", "{}", 2.0)
    assert (s.status, s.exc_type) == ("exception", "SyntaxError")


def test_memory_error_is_exception_with_note():
    with Sandbox(workers=1, limits=SandboxLimits(memory_mb=256)) as small:
        r = small.run("def f():\n    return len(bytearray(10**10))\n", "f", "{}", 5.0)
    assert r.status == "exception" and r.exc_type == "MemoryError"
    assert "256 MiB" in r.detail
    assert r.isolation["rlimits"]["as_mb"] == 256


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "literal, why",
    [
        ("{'n': ", "not parseable"),
        ("[1, 2]", "not a dict"),
        ("{1: 2}", "non-string keys"),
        ("__import__('os').system('true')", "not parseable"),
        ("{'n': print('hi')}", "not parseable"),
    ],
)
def test_bad_input_literal_is_error(sb, literal, why):
    r = sb.run("def f(n=0):\n    return n\n", "f", literal, 2.0)
    assert r.status == "error"
    assert why in r.detail
    assert r.behaviour() == ("error", r.detail)


def test_missing_or_uncallable_entry_is_error(sb):
    r = sb.run("def g():\n    return 1\n", "f", "{}", 2.0)
    assert r.status == "error" and "not defined" in r.detail
    r = sb.run("f = 3\n", "f", "{}", 2.0)
    assert r.status == "error" and "not callable" in r.detail


def test_signature_mismatch_is_error(sb):
    code = "def f(a, b):\n    return a + b\n"
    assert sb.run(code, "f", "{'a': 1}", 2.0).status == "error"
    extra = sb.run(code, "f", "{'a': 1, 'b': 2, 'c': 3}", 2.0)
    assert extra.status == "error" and "bind" in extra.detail
    # An error inside the function that happens to be a TypeError is the program's own.
    own = sb.run("def f(a):\n    return a + 'x'\n", "f", "{'a': 1}", 2.0)
    assert (own.status, own.exc_type) == ("exception", "TypeError")


def test_invalid_arguments_raise_for_the_caller(sb):
    with pytest.raises(ValueError):
        sb.run("def f():\n    pass\n", "f", "{}", 0)
    with pytest.raises(TypeError):
        sb.run("def f():\n    pass\n", "f", 42, 1.0)


# ------------------------------------------------------------------ timeouts and parallelism


def test_timeout_is_honoured(sb):
    start = time.monotonic()
    r = sb.run("def f():\n    while True:\n        pass\n", "f", "{}", 0.5)
    elapsed = time.monotonic() - start
    assert r.status == "timeout"
    assert r.behaviour() == ("timeout",)
    assert 0.5 <= r.seconds < 1.5
    assert elapsed < 3.0
    assert sb.run("def f():\n    return 1\n", "f", "{}", 1.0).status == "ok"


def test_sleeping_program_times_out(sb):
    r = sb.run("import time\ndef f():\n    time.sleep(30)\n", "f", "{}", 0.3)
    assert r.status == "timeout"


def test_run_many_keeps_order_and_uses_workers(sb):
    jobs = [(f"def f(n):\n    return n * {i}\n", "f", f"{{'n': {i}}}", 2.0) for i in range(12)]
    results = sb.run_many(jobs)
    assert [r.value for r in results] == [["int", i * i] for i in range(12)]
    # Two sleeping jobs overlap on two workers.
    start = time.monotonic()
    sleepers = sb.run_many(
        [("import time\ndef f():\n    time.sleep(0.6)\n    return 1\n", "f", "{}", 3.0)] * 2
    )
    assert all(r.status == "ok" for r in sleepers)
    assert time.monotonic() - start < 1.15


def test_decode_value_round_trip(sb):
    value = {"a": (1, 2.5, None), "b": [True, b"\x01", {3, 4}], 5: frozenset({"x"}), "c": 2**70}
    r = sb.run(f"def f():\n    return {value!r}\n", "f", "{}", 2.0)
    assert decode_value(r.value) == value
    obj = decode_value(ret(sb, "range(3)").value)
    assert obj == Opaque("range", "range(0, 3)")


def test_result_to_dict_is_json(sb):
    r = sb.run("def f():\n    return {'a': [1.5, None]}\n", "f", "{}", 2.0)
    data = json.loads(json.dumps(r.to_dict()))
    assert data["status"] == "ok"
    again = ExecResult.from_dict(data)
    assert again.behaviour() == r.behaviour()


def test_isolation_report(sb):
    r = sb.run("def f():\n    return 1\n", "f", "{}", 2.0)
    iso = r.isolation
    assert iso["mode"] == "forkserver"
    assert iso["env"] == "scrubbed"
    assert iso["rlimits"]["nproc"] == 32 and iso["rlimits"]["cpu_s"] == 3
    if os.geteuid() == 0 and iso["netns"]:
        assert iso["pidns"] and iso["mountns"] and iso["no_new_privs"]
        assert isinstance(iso["uid"], int) and iso["uid"] != 0


# ------------------------------------------------------------------ naive baseline


def test_run_naive_matches_sandbox(sb):
    cases = [
        ("def f(n):\n    return [n, n / 2]\n", "{'n': 3}"),
        ("def f(n):\n    return 1 // n\n", "{'n': 0}"),
        ("def f(n):\n    return n\n", "{'m': 0}"),
        ("def f(n):\n    while True:\n        pass\n", "{'n': 0}"),
    ]
    for code, literal in cases:
        fast = sb.run(code, "f", literal, 0.5)
        slow = run_naive(code, "f", literal, 0.5)
        assert fast.behaviour() == slow.behaviour(), (fast, slow)
    iso = slow.isolation
    assert iso["mode"] == "naive"
    keys = ("netns", "pidns", "mountns", "no_new_privs", "env", "tmpdir", "fs_view", "fs_exposed")
    assert {k: iso[k] for k in keys} == {k: fast.isolation[k] for k in keys}


def test_installed_libraries_are_importable_only_when_the_sandbox_allows_them():
    code = "def f():\n    import numpy\n    return int(numpy.arange(4).sum())\n"
    with Sandbox(workers=1) as sb:
        plain = sb.run(code, "f", "{}", 20.0)
    with Sandbox(workers=1, site_packages=True) as sb:
        libs = sb.run(code, "f", "{}", 20.0)
        secret = sb.run("def f():\n    return open(" + repr(__file__) + ").read(10)\n", "f", "{}", 5.0)
    assert plain.status == "exception" and plain.exc_type == "ModuleNotFoundError"
    assert libs.status == "ok" and libs.value == ["int", 6], libs
    assert secret.status == "exception"  # the rest of the checkout stays out of view
