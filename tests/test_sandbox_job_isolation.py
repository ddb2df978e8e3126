"""A sandboxed program sees nothing of any job that ran before it on the same worker.

One worker, so the earlier job certainly ran there. The earlier job (trusted code, as
when the pass matrix computes a test's expected value, or another solution) takes an
input and returns an output that each carry a marker; then a hostile program
(tests/hostile/snoop_earlier_job.py) searches its stack frames, the garbage collector's
objects, every module's globals, its inherited file descriptors, its own memory through
/proc/self/mem and every other process's memory it can open. It must find nothing, for
each way of running code (a single run, ``run_each``, a command) before and after, with
the full isolation and with the fallback that has no namespaces (Landlock and a
subreaper). A control run proves the search finds a marker its own job holds.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import pytest

from selfplay.sandbox import Sandbox, SandboxLimits
from selfplay.sandbox.encoding import decode_value

HOSTILE = Path(__file__).resolve().parent / "hostile" / "snoop_earlier_job.py"
LIMITS = SandboxLimits(memory_mb=1024)
PLACES = ("frames", "gc", "globals", "descriptors", "own_memory", "other_processes")
PYTHON = os.path.realpath(sys.executable)

# Trusted code of the earlier job: the output's digits appear in no request.
EARLIER = "def f(s):\n    return 'OUT' + 'CANARY' + str(int(s[8:]) * 3 + 1)\n"
EARLIER_SCRIPT = 'read s < in.txt; echo "OUT""CANARY$(( ${s#IN*Y} * 3 + 1 ))"\n'


def _secret() -> tuple[str, str]:
    digits = str(random.SystemRandom().randrange(10**17, 10**18))
    return "IN" + "CANARY" + digits, "OUT" + "CANARY" + str(int(digits) * 3 + 1)


def _earlier_job(sb: Sandbox, kind: str, given: str, expected: str) -> None:
    if kind == "run":
        result = sb.run(EARLIER, "f", {"s": given}, 5.0)
        assert result.status == "ok" and decode_value(result.value) == expected, result
    elif kind == "each":
        results = sb.run_each(EARLIER, "f", [{"s": given}, {"s": given}], 5.0)
        assert all(decode_value(r.value) == expected for r in results), results
    else:
        result = sb.run_command(["/bin/sh", "-c", EARLIER_SCRIPT], 10.0, files={"in.txt": given})
        assert result.ok and result.text().strip() == expected, result


def _snoop(sb: Sandbox, kind: str, extra: str = "") -> dict[str, list[str]]:
    code = extra + HOSTILE.read_text()
    if kind == "run":
        result = sb.run(code, "main", {}, 30.0)
        assert result.status == "ok", result
        return decode_value(result.value)
    if kind == "each":
        results = sb.run_each(code, "main_each", [{"n": 1}, {"n": 2}], 30.0)
        assert all(r.status == "ok" for r in results), results
        first, second = (decode_value(r.value) for r in results)
        return {place: sorted(set(first[place]) | set(second[place])) for place in PLACES}
    result = sb.run_command([PYTHON, "snoop.py"], 30.0, files={"snoop.py": code})
    if (
        result.status == "error"
        and "could not execute" in (result.detail or "")
        and not sb.isolation["mountns"]
    ):
        pytest.skip(f"without a mount namespace the sandbox uid cannot execute {PYTHON}: {result.detail}")
    assert result.ok, (result, result.text("stderr"))
    return json.loads(result.text())


@pytest.fixture(scope="module", params=["namespaces", "no-namespaces"])
def worker(request):
    """One worker with the full isolation, or forced onto the fallback without namespaces."""
    if request.param == "no-namespaces":
        from selfplay.sandbox import landlock, launch

        if landlock.abi_version() < 1:
            pytest.skip("the kernel has no Landlock")
        patch = pytest.MonkeyPatch()
        patch.setattr(
            launch,
            "_strategy",
            launch.Strategy(
                (), False, False, False, False, os.geteuid() == 0, "forced for a test: no namespaces"
            ),
        )
        try:
            with Sandbox(workers=1, limits=LIMITS) as sb:
                assert not sb.isolation["pidns"] and not sb.isolation["mountns"]
                yield sb
        finally:
            patch.undo()
    else:
        with Sandbox(workers=1, limits=LIMITS) as sb:
            yield sb


@pytest.mark.parametrize("earlier", ["run", "each", "command"])
@pytest.mark.parametrize("hostile", ["run", "each", "command"])
def test_a_program_finds_nothing_of_the_job_before_it(worker, earlier, hostile):
    given, expected = _secret()
    _earlier_job(worker, earlier, given, expected)
    report = _snoop(worker, hostile)
    assert set(report) == set(PLACES)
    leaked = {place: found for place, found in report.items() if found}
    assert leaked == {}, f"{hostile} after {earlier} found the earlier job's data: {leaked}"


@pytest.mark.parametrize("hostile", ["run", "each", "command"])
def test_the_search_finds_what_its_own_job_holds(worker, hostile):
    """Control: the same search run on a job that holds a marker itself finds it, so an
    empty report above means the data was not there, not that the search is blind."""
    mine = "IN" + "CANARY" + "".join(random.choice("0123456789") for _ in range(15))
    extra = f"MINE = ''.join({list(mine)!r})\n"
    report = _snoop(worker, hostile, extra)
    assert mine in report["globals"], report
    assert mine in report["own_memory"], report


def _parent(pid: int) -> int | None:
    """The parent of ``pid``; None when it has exited since /proc was listed (other
    processes of the machine, e.g. the other pytest worker's, come and go meanwhile)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _descendants(pid: int) -> list[int]:
    children = [int(name) for name in os.listdir("/proc") if name.isdigit() and _parent(int(name)) == pid]
    return children + [grand for child in children for grand in _descendants(child)]


def _started(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def _forked_from_server(server_pid: int) -> list[int]:
    """The idle server's template and its spare job process (the processes with the same
    command line as their parent, the server's interpreter), oldest first: the template
    was forked when the server started."""
    found = [
        pid
        for pid in _descendants(server_pid)
        if Path(f"/proc/{pid}/cmdline").read_bytes() == Path(f"/proc/{_parent(pid)}/cmdline").read_bytes()
    ]
    return sorted(found, key=_started)


@pytest.mark.parametrize("kind", ["run", "each", "command"])
def test_a_job_survives_the_loss_of_the_template(kind):
    """Between jobs, an idle server's other processes are its template and the spare job
    process it prepared. When the template is gone the server cannot make a clean one
    again: the spare still serves one job, and the job that finds no job process is
    re-sent to a fresh server and gets its true verdict, not an error."""
    with Sandbox(workers=1, limits=LIMITS) as sb:
        assert sb.isolation["forked_from"] == "template"
        server = sb._servers[0]
        given, expected = _secret()
        _earlier_job(sb, kind, given, expected)
        template, spare = _forked_from_server(server.proc.pid)
        os.kill(template, 9)
        time.sleep(0.2)
        assert server.alive()
        for _ in range(2):
            given, expected = _secret()
            _earlier_job(sb, kind, given, expected)  # asserts the right answer
        assert sb._servers[0] is not server and not server.alive()


def test_a_job_survives_the_loss_of_the_spare():
    """Only a process of the server's uid could kill the spare (the fallback without a uid
    of its own); the job it was meant for goes to another one."""
    with Sandbox(workers=1, limits=LIMITS) as sb:
        server = sb._servers[0]
        _earlier_job(sb, "run", *_secret())
        template, spare = _forked_from_server(server.proc.pid)
        os.kill(spare, 9)
        time.sleep(0.2)
        given, expected = _secret()
        _earlier_job(sb, "run", given, expected)
        assert sb._servers[0] is server and server.alive()


def test_a_pool_never_runs_more_programs_than_the_job_has_cpus(monkeypatch):
    """Paper 002's pass matrix asked for 16 workers in a job given 2 CPUs: wall-clock time
    limits then fail correct programs. The pool follows the job's CPUs."""
    from selfplay.sandbox import pool

    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")
    assert pool.job_cpus() == 1
    with Sandbox(workers=4, limits=LIMITS) as sb:
        assert sb.workers == 1 and sb.workers_asked == 4 and len(sb._servers) == 1
        assert decode_value(sb.run("def f():\n    return 7\n", "f", {}, 5.0).value) == 7
    monkeypatch.delenv("SLURM_CPUS_PER_TASK")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert pool.job_cpus() == 3
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "16")
    assert pool.job_cpus() == 3  # the affinity the job really has
