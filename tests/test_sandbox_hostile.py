"""Hostile programs (tests/hostile/) must be contained and leave the host unharmed.

After every hostile execution the sandbox must still work and no process of the
sandbox's unprivileged uids may survive; after the Sandbox closes, no server may
survive either.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from selfplay.sandbox import Sandbox, SandboxLimits, run_naive
from selfplay.sandbox.encoding import decode_value

HOSTILE = Path(__file__).resolve().parent / "hostile"
REPO = Path(__file__).resolve().parents[1]
LIMITS = SandboxLimits(memory_mb=512)
SECRET_NAME = "SELFPLAY_TEST_SECRET_TOKEN"
SECRET_VALUE = "hunter2-" + uuid.uuid4().hex


def source(name: str) -> str:
    return (HOSTILE / f"{name}.py").read_text()


def _proc_uid(pid: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def processes_owned_by(uids: set[int]) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _proc_uid(p) in uids]


def my_children() -> list[int]:
    kids = []
    me = os.getpid()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == me and fields[0] != "Z":
            kids.append(int(p))
    return kids


def sandbox_uids(sb: Sandbox) -> set[int]:
    return {s.lease.uid for s in sb._servers if s.lease is not None}


@pytest.fixture(scope="module")
def strong():
    """True when the full isolation (namespaces + separate uid) is available here."""
    with Sandbox(workers=1) as probe:
        iso = probe.isolation
    return bool(iso["netns"] and iso["pidns"] and iso["mountns"] and isinstance(iso["uid"], int))


@pytest.fixture(scope="module")
def sb():
    os.environ[SECRET_NAME] = SECRET_VALUE
    try:
        with Sandbox(workers=2, limits=LIMITS) as sandbox:
            yield sandbox
    finally:
        os.environ.pop(SECRET_NAME, None)


@pytest.fixture
def run(sb):
    """Run a hostile entry, then check containment and that the sandbox still works."""

    def go(name: str, entry: str = "main", literal: str = "{}", timeout: float = 1.0):
        start = time.monotonic()
        result = sb.run(source(name), entry, literal, timeout)
        elapsed = time.monotonic() - start
        assert elapsed < timeout + 5.0, f"{name}:{entry} took {elapsed:.1f}s"
        uids = sandbox_uids(sb)
        assert uids == set() or processes_owned_by(uids) == [], f"{name}:{entry} left processes"
        health = sb.run("def f(n):\n    return n * 2\n", "f", "{'n': 21}", 2.0)
        assert health.value == ["int", 42], health
        return result

    return go


def test_fork_bomb(run):
    r = run("fork_bomb")
    assert r.status in ("exception", "timeout", "killed")
    r = run("fork_bomb_persistent", timeout=1.0)
    assert r.status in ("timeout", "killed")


def test_memory_bomb(run):
    r = run("memory_bomb", timeout=5.0)
    assert r.status in ("exception", "killed")
    if r.status == "exception":
        assert r.exc_type == "MemoryError" and "MiB" in r.detail
    r = run("memory_bomb", "one_shot")
    assert (r.status, r.exc_type) == ("exception", "MemoryError")


def test_memory_spread_over_processes(run, strong):
    if not strong:
        pytest.skip("the combined-memory watchdog needs the PID namespace")
    r = run("memory_bomb", "many_processes", timeout=8.0)
    assert r.status == "killed" and "memory limit" in r.detail, r
    assert r.seconds < 6.0


def test_infinite_loop(run):
    r = run("infinite_loop", timeout=0.5)
    assert r.status == "timeout" and r.seconds < 1.5


def test_signal_tampering_cannot_stop_the_timeout(run):
    r = run("signal_tamper", timeout=0.5)
    assert r.status == "timeout" and r.seconds < 1.5


def test_writing_outside_the_work_dir(run, strong):
    if not strong:
        pytest.skip("needs the mount namespace and a separate uid (run as root with unshare)")
    token = uuid.uuid4().hex
    targets = [
        f"/tmp/pwned_{token}",
        f"/var/tmp/pwned_{token}",
        f"/dev/shm/pwned_{token}",
        str(REPO / f"pwned_{token}"),
        str(REPO / "src" / f"pwned_{token}"),
        f"/etc/pwned_{token}",
        f"/root/pwned_{token}",
    ]
    r = run("write_outside", literal=repr({"paths": targets}))
    assert r.status == "ok", r
    report = decode_value(r.value)
    assert report == {"landed": [], "cwd_ok": True}
    for path in targets:
        assert not os.path.exists(path), f"{path} was created on the host"


def test_network_is_unreachable(run, strong):
    if not strong:
        pytest.skip("needs a network namespace (run as root with unshare)")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    try:
        r = run("network", literal=repr({"port": port}), timeout=4.0)
        listener.settimeout(0.3)
        with pytest.raises(socket.timeout):
            listener.accept()
        udp.settimeout(0.1)
        with pytest.raises(socket.timeout):
            udp.recvfrom(100)
    finally:
        listener.close()
        udp.close()
    assert r.status == "ok", r
    outcomes = decode_value(r.value)
    assert set(outcomes) == {"loopback", "external", "dns_name", "udp"}
    assert "connected" not in outcomes.values() and "sent" not in outcomes.values(), outcomes


def test_exit_without_result(run):
    r = run("exit_without_result")
    assert r.status == "killed" and "without a result" in r.detail
    assert r.behaviour() == ("killed",)
    r = run("exit_without_result", "sys_exit")
    assert (r.status, r.exc_type) == ("exception", "SystemExit")
    assert run("exit_without_result", "close_channel").status == "killed"
    garbage = run("exit_without_result", "garbage_channel")
    assert garbage.status == "killed" and "garbage" in garbage.detail
    assert run("exit_without_result", "forged_frame").status == "killed"
    deep = run("exit_without_result", "deep_json_frame")
    assert deep.status == "killed" and "garbage" in deep.detail
    patched = run("exit_without_result", "patch_os")
    assert patched.value == ["str", "patched"]
    flood = run("exit_without_result", "flood_channel", timeout=3.0)
    assert flood.status == "killed" and "overflow" in flood.detail
    once = run("exit_without_result", "fork_and_return")
    assert once.value == ["str", "once"]


def test_killing_the_parent_and_pid1(run, strong):
    r = run("kill_parent")
    assert r.status == "ok", r
    if strong:
        outcomes = decode_value(r.value)
        assert outcomes["parent"] == "PermissionError"
        assert outcomes["pid1"] == "PermissionError"
    r = run("kill_parent", "suicide_all")
    assert r.status in ("killed", "exception")


def test_host_survives_and_sandbox_restarts_a_dead_server(sb):
    victim = sb._servers[0]
    os.killpg(victim.proc.pid, signal.SIGKILL)
    victim.proc.wait(timeout=5)
    results = sb.run_many([("def f():\n    return 5\n", "f", "{}", 2.0)] * 4)
    assert all(r.status in ("ok", "error") for r in results)
    assert [r.value for r in sb.run_many([("def f():\n    return 5\n", "f", "{}", 2.0)] * 4)] == [
        ["int", 5]
    ] * 4


def test_huge_stdout(run):
    r = run("huge_stdout", timeout=10.0)
    assert r.status == "ok" and r.value == ["str", "done"]


def test_deep_recursion(run):
    r = run("deep_recursion", "c_stack", timeout=3.0)
    assert r.status in ("killed", "exception")
    if r.status == "killed":
        assert r.detail == "SIGSEGV"
    r = run("deep_recursion", "pure_python", timeout=1.0)
    assert r.status in ("killed", "exception", "timeout")


@pytest.mark.parametrize(
    "entry, needle",
    [
        ("pickle_bomb", "not encodable"),
        ("gigantic_nested", "deeper"),
        ("self_reference", "self-referential"),
        ("repr_loops", "did not finish"),
        ("repr_raises", "raised RuntimeError"),
        ("huge_string", "KiB"),
    ],
)
def test_unencodable_returns_are_errors(run, entry, needle):
    r = run("bad_returns", entry, timeout=1.5)
    assert r.status == "error", r
    assert needle in r.detail


def test_lying_builtin_subclass_is_read_by_value(run):
    r = run("bad_returns", "lying_subclass")
    assert r.value == ["int", 7]


def test_environment_is_scrubbed(run, strong):
    r = run("env_snoop")
    assert r.status == "ok", r
    text = str(r.value)
    assert SECRET_VALUE not in text and SECRET_NAME not in text
    found = decode_value(r.value)
    env = found["environ"]
    assert env["PYTHONHASHSEED"] == "0"
    assert set(env) <= {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "PYTHONHASHSEED",
        "PYTHONDONTWRITEBYTECODE",
        "MALLOC_ARENA_MAX",
    }
    assert not env["HOME"].startswith("/root")
    if strong:
        assert found["/proc/1/environ"] == "PermissionError"
        assert found["root_listing"] == "PermissionError"
        assert found["uid"] != 0 and found["groups"] == []


def test_environment_is_scrubbed_in_naive_mode():
    os.environ[SECRET_NAME] = SECRET_VALUE
    try:
        r = run_naive(source("env_snoop"), "main", "{}", 5.0, LIMITS)
    finally:
        os.environ.pop(SECRET_NAME, None)
    assert r.status == "ok", r
    assert SECRET_VALUE not in str(r.value)


def test_setsid_escapee_is_reaped(run, sb):
    r = run("setsid_escape")  # `run` asserts no sandbox-uid process is left
    assert r.value == ["str", "parent done"]


def test_threads(run):
    r = run("threads", literal="{'n': 8}", timeout=3.0)
    assert r.status == "ok" and len(decode_value(r.value)) == 8
    flood = run("threads", "flood", timeout=3.0)
    assert (flood.status, flood.exc_type) == ("exception", "RuntimeError")
    left = run("threads", "leave_running", timeout=2.0)
    assert left.value == ["str", "returned"]


def test_huge_file_is_stopped(run):
    r = run("huge_file", timeout=5.0)
    assert r.status in ("exception", "killed")
    if r.status == "exception":
        assert r.exc_type == "OSError" and "too large" in r.exc_message


def test_naive_runner_contains_escapees_too():
    before = set(my_children())
    r = run_naive(source("setsid_escape"), "main", "{}", 2.0, LIMITS)
    assert r.value == ["str", "parent done"]
    assert set(my_children()) <= before


def test_nothing_survives_close():
    before = set(my_children())
    sb = Sandbox(workers=2, limits=LIMITS)
    uids = sandbox_uids(sb)
    sb.run_many(
        [(source("setsid_escape"), "main", "{}", 2.0), (source("fork_bomb_persistent"), "main", "{}", 0.5)]
    )
    servers = [s.proc.pid for s in sb._servers]
    sb.close()
    assert not processes_owned_by(uids)
    assert set(my_children()) <= before
    for pid in servers:
        assert (
            not os.path.exists(f"/proc/{pid}")
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
        )
    with pytest.raises(RuntimeError):
        sb.run("def f():\n    return 1\n", "f", "{}", 1.0)


# ------------------------------------------------------------------ what the sandbox can see


def minimal_view(sb: Sandbox) -> dict:
    """The sandbox's filesystem view (skips where there is no mount namespace to build one)."""
    if sb.isolation.get("fs_view") != "minimal":
        pytest.skip("needs the mount namespace (the sandbox's own filesystem view)")
    return sb.isolation["fs_exposed"]


def view_paths(view: dict) -> list[str]:
    return [*view["read_only"], *view["devices"], *view["generated"], *view["private"], *view["links"]]


def allowed_entries(view: dict, folder: str) -> set[str]:
    """The names a listing of ``folder`` may show: the next step towards something in the view."""
    prefix = folder.rstrip("/") + "/"
    return {p[len(prefix) :].split("/")[0] for p in view_paths(view) if p.startswith(prefix)}


def check_hidden(view: dict, path: str, outcome: list) -> None:
    """``outcome`` (see hostile/read_host.py) shows nothing of ``path`` beyond the view."""
    if outcome[0] == "dir":
        assert set(outcome[1]) <= allowed_entries(view, path), (path, outcome)
    else:
        assert outcome[0] in ("FileNotFoundError", "PermissionError", "NotADirectoryError"), (path, outcome)


def host_readable(path: str) -> bool:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            Path(path).read_bytes()
        return True
    except OSError:
        return False


def secret_dir(parent: str, token: str) -> Path:
    """A world-readable folder holding a world-readable secret (the sandbox uid could read it)."""
    folder = Path(parent) / f".sandbox-secret-{token}"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    secret = folder / "answer.txt"
    secret.write_text(f"expected output {token}\n")
    secret.chmod(0o644)
    return folder


CHECKOUT_FILES = [
    "config.yaml",
    "Snakefile",
    "pyproject.toml",
    "resources",
    "results",
    "src",
    "src/selfplay/__init__.py",
    "tests/hostile/read_host.py",
    ".git",
]


def test_checkout_and_host_directories_stay_unreadable(run, sb):
    view = minimal_view(sb)
    wanted = [
        str(REPO),
        *(str(REPO / p) for p in CHECKOUT_FILES),
        str(REPO / ".venv"),
        str(REPO / ".venv" / "bin" / "activate"),
        str(REPO / ".venv" / "bin"),
        str(REPO.parent),
        "/root",
        "/root/.bashrc",
        "/home",
        "/srv",
        "/var",
        "/var/log",
        "/var/lib/dpkg/status",
        "/run",
        "/opt",
        "/mnt",
        "/media",
        "/boot",
        "/etc/shadow",
        "/etc/hostname",
        "/etc/os-release",
        "/etc/ssh",
        "/etc/resolv.conf",
    ]
    present = [p for p in wanted if os.path.lexists(p)]
    # Control: the checkout is there, readable on the host, and by anyone (the sandbox uid too).
    assert str(REPO / "config.yaml") in present and host_readable(str(REPO / "config.yaml"))
    assert (REPO / "config.yaml").stat().st_mode & 0o004
    r = run("read_host", literal=repr({"paths": present}), timeout=5.0)
    assert r.status == "ok", r
    seen = decode_value(r.value)
    for path in present:
        check_hidden(view, path, seen[path])
    assert seen[str(REPO / "config.yaml")] == ["FileNotFoundError"]
    venv = seen.get(str(REPO / ".venv"))
    if venv and venv[0] == "dir":  # the virtualenv is inside the checkout: only what Python needs of it
        assert set(venv[1]) <= {"bin", "lib", "pyvenv.cfg"}


def test_commands_cannot_read_the_checkout(sb):
    view = minimal_view(sb)
    config = REPO / "config.yaml"
    assert config.read_text()  # control: readable on the host
    r = sb.run_command(["/bin/cat", str(config)], 5.0)
    assert r.status == "exited" and r.exit_code == 1 and b"No such file or directory" in r.stderr, r
    r = sb.run_command(["/bin/sh", "-c", f"cat {REPO}/resources/* {REPO}/results/* {REPO}/*.yaml"], 5.0)
    assert r.exit_code != 0 and r.stdout == b"", r
    for folder in (str(REPO), str(REPO.parent), "/home", "/srv", "/var", "/run", "/root", "/opt"):
        r = sb.run_command(["/bin/ls", "-A", folder], 5.0)
        if r.exit_code == 0:
            assert set(r.text().split()) <= allowed_entries(view, folder), (folder, r)
        else:
            assert b"No such file" in r.stderr or b"Permission denied" in r.stderr, (folder, r)


def test_listing_root_shows_only_the_view(run, sb):
    view = minimal_view(sb)
    expected = allowed_entries(view, "/")
    assert {"usr", "etc", "dev", "proc", "tmp"} <= expected
    assert not {"home", "srv", "run", "opt", "mnt", "media", "boot"} & expected
    assert set(os.listdir("/")) - expected  # control: the host has more at its root
    r = run("read_host", "listing", literal=repr({"path": "/"}))
    assert set(decode_value(r.value)) == expected
    r = sb.run_command(["/bin/ls", "-A", "/"], 5.0)
    assert r.ok and set(r.text().split()) == expected, r


def test_host_temp_and_checkout_secrets_are_not_visible(run, sb):
    view = minimal_view(sb)
    token = uuid.uuid4().hex
    folders = [secret_dir(tempfile.gettempdir(), token)]
    if os.access(REPO, os.W_OK):
        folders.append(secret_dir(str(REPO), token))
    try:
        paths = [str(f / "answer.txt") for f in folders]
        assert all(Path(p).read_text().startswith("expected output") for p in paths)  # control
        r = run("read_host", literal=repr({"paths": [*paths, *(str(f) for f in folders)]}), timeout=5.0)
        assert r.status == "ok", r
        seen = decode_value(r.value)
        assert all(seen[p] == ["FileNotFoundError"] for p in [*paths, *(str(f) for f in folders)]), seen
        for path in paths:
            c = sb.run_command(["/bin/cat", path], 5.0)
            assert c.exit_code == 1 and token.encode() not in c.stdout, c
        r = run(
            "read_host",
            "search",
            literal=repr(
                {"names": ["answer.txt", folders[0].name], "skip": ["/proc", "/sys", *view["read_only"]]}
            ),
            timeout=20.0,
        )
        assert r.status == "ok" and decode_value(r.value) == [], r
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def _fork_server_pid(server) -> int | None:
    """The fork server: the child of the ``unshare`` process the host started."""
    for task in Path(f"/proc/{server.proc.pid}/task").iterdir():
        children = (task / "children").read_text().split()
        if children:
            return int(children[0])
    return None


def test_another_jobs_work_dir_is_not_visible(run, sb, strong):
    minimal_view(sb)
    if not strong:
        pytest.skip("the host reads the other job's file through /proc/PID/root, which needs root")
    token = uuid.uuid4().hex
    writer = (
        "import os, time\ndef main(token):\n    with open('secret-' + token, 'w') as fh:\n"
        "        fh.write(token)\n    os.chmod('secret-' + token, 0o644)\n    time.sleep(30)\n"
    )
    with Sandbox(workers=1, limits=LIMITS) as other:
        job = threading.Thread(target=other.run, args=(writer, "main", repr({"token": token}), 10.0))
        job.start()
        try:
            server = _fork_server_pid(other._servers[0])
            # Control: the secret exists and the host can read it (through the job's own root).
            host_path = f"/proc/{server}/root/tmp/work/run1/secret-{token}"
            for _ in range(200):
                if os.path.exists(host_path):
                    break
                time.sleep(0.05)
            assert Path(host_path).read_text() == token
            guesses = [f"/tmp/work/run{i}/secret-{token}" for i in range(1, 6)] + [host_path, "/tmp/work"]
            r = run("read_host", literal=repr({"paths": guesses}), timeout=5.0)
            assert r.status == "ok", r
            assert all(o[0] != "file" and token not in str(o) for o in decode_value(r.value).values()), r
            r = sb.run_command(
                ["/bin/sh", "-c", f"cat /tmp/work/*/secret-{token} {host_path}; ls /proc"], 5.0
            )
            assert token.encode() not in r.stdout and str(server).encode() not in r.stdout.split(), r
        finally:
            other.close()
            job.join(timeout=20)


def test_without_a_mount_namespace_landlock_refuses_the_rest(monkeypatch):
    """The fallback where no namespaces can be made: each child enforces a Landlock
    ruleset allowing what the view would show, so the checkout stays unreadable."""
    from selfplay.sandbox import landlock, launch

    if landlock.abi_version() < 1:
        pytest.skip("the kernel has no Landlock")
    monkeypatch.setattr(
        launch,
        "_strategy",
        launch.Strategy(
            (), False, False, False, False, os.geteuid() == 0, "forced for a test: no namespaces"
        ),
    )
    config = str(REPO / "config.yaml")
    assert host_readable(config)  # control
    with Sandbox(workers=1, limits=LIMITS) as fallback:
        assert fallback.isolation["fs_view"] == "landlock" and not fallback.isolation["mountns"]
        r = fallback.run(source("read_host"), "main", repr({"paths": [config, str(REPO)]}), 5.0)
        assert r.status == "ok", r
        assert decode_value(r.value) == {config: ["PermissionError"], str(REPO): ["PermissionError"]}
        c = fallback.run_command(["/bin/cat", config], 5.0)
        assert c.exit_code == 1 and b"Permission denied" in c.stderr, c
        c = fallback.run_command(["/bin/sh", "-c", "echo fine > here && cat here"], 5.0)
        assert c.ok and c.text() == "fine\n", c
