"""A real one-node SLURM cluster on this machine, for tests and for trying the profile.

    python -m selfplay.cluster.local_slurm start     # prints where its logs are
    python -m selfplay.cluster.local_slurm status
    python -m selfplay.cluster.local_slurm stop

or, inside one process (what the tests do)::

    with LocalSlurm() as cluster:
        subprocess.run(["sbatch", ...], env=cluster.client_env())

What it does, and why (see also shared notes on local SLURM):

* Needs root and the Debian packages ``slurm-wlm`` and ``munge``; a missing piece is
  reported in one line naming the package (``scripts/install_system_test.sh`` installs
  them).
* Writes ``/etc/slurm/slurm.conf`` and ``/etc/slurm/gres.conf``. The config has to be
  there: the SLURM executor plugin removes every ``SLURM_*`` variable (``SLURM_CONF``
  too) before its inner ``srun``. Files that were there before are copied aside and put
  back on stop.
* One node (this host, at 127.0.0.1) with all its CPUs, most of its memory and ONE FAKE
  GPU (gres ``gpu`` backed by /dev/null): rules that ask for ``gpu: 1`` are scheduled
  through the real gres path and then run on the CPU. One partition, ``debug``.
* No accounting daemon: clients must ask ``squeue`` for job states, and MinJobAge is
  long (600 s) so that finished jobs stay visible to it.
* Starts ``munged`` as user munge (unless one already answers on the default socket),
  then ``slurmctld`` and ``slurmd``, and waits until the node is idle.
* State, spool, pid and log files live in a fresh temporary directory. A small state
  file (``/run/selfplay-local-slurm.json``) lets ``stop`` and ``status`` find a cluster
  that another process started.
* ``stop`` cancels the cluster's jobs, reads the daemons' pid files BEFORE ``scontrol
  shutdown`` (the daemons delete them as they exit), then signals only the processes it
  started, checking each pid still names the daemon it started.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from selfplay.errors import MissingToolError, UserError

SLURM_ETC = Path("/etc/slurm")
MUNGE_RUN = Path("/run/munge")
MUNGE_KEY = Path("/etc/munge/munge.key")
DEFAULT_STATE_FILE = Path(os.environ.get("SELFPLAY_LOCAL_SLURM_STATE", "/run/selfplay-local-slurm.json"))

# Executable -> Debian package that ships it (what a user has to install).
REQUIRED_TOOLS = {
    "slurmctld": "slurm-wlm",
    "slurmd": "slurm-wlm",
    "scontrol": "slurm-wlm",
    "sinfo": "slurm-wlm",
    "squeue": "slurm-wlm",
    "sbatch": "slurm-wlm",
    "srun": "slurm-wlm",
    "scancel": "slurm-wlm",
    "munged": "munge",
    "munge": "munge",
}
INSTALL_HINT = "apt-get install -y slurm-wlm munge (or run scripts/install_system_test.sh as root)"


class LocalSlurmError(UserError):
    """The local cluster could not be started, checked or stopped; the message says why."""


def missing_pieces() -> list[str]:
    """What is missing to run the local cluster, one short phrase each ([] when nothing).

    Tests call this to skip with a message that names the missing piece.
    """
    problems = []
    if os.geteuid() != 0:
        problems.append("root (the cluster writes /etc/slurm/slurm.conf and starts daemons)")
    for tool, package in REQUIRED_TOOLS.items():
        if shutil.which(tool, path=_search_path()) is None:
            problems.append(f"'{tool}' (Debian package {package})")
    try:
        import pwd

        pwd.getpwnam("munge")
    except KeyError:
        problems.append("the 'munge' user (Debian package munge)")
    return problems


def _search_path() -> str:
    # The daemons live in /usr/sbin, which a non-login root shell may not have on PATH.
    parts = os.environ.get("PATH", "").split(os.pathsep)
    for extra in ("/usr/sbin", "/sbin", "/usr/bin"):
        if extra not in parts:
            parts.append(extra)
    return os.pathsep.join(p for p in parts if p)


def _tool(name: str) -> str:
    found = shutil.which(name, path=_search_path())
    if found is None:
        package = REQUIRED_TOOLS.get(name, "slurm-wlm")
        raise MissingToolError(f"'{name}' not found: install the Debian package {package} ({INSTALL_HINT})")
    return found


def _process_name(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def _is_zombie(pid: int) -> bool:
    # A daemon killed outside our control may stay a zombie when nothing reaps it
    # (e.g. in a container whose init does not): it has exited all the same.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] in ("Z", "X")


def _is_running(pid: int | None, name: str) -> bool:
    """True when `pid` is alive and still the program `name` (guards against pid reuse)."""
    if not pid:
        return False
    comm = _process_name(pid)
    return comm is not None and comm == name[:15] and not _is_zombie(pid)


def _pids_named(name: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _is_running(int(entry.name), name):
            pids.append(int(entry.name))
    return pids


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _wait_for(predicate, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def _tail(path: Path, lines: int = 5) -> str:
    try:
        content = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(content[-lines:]) or "(empty log)"


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise LocalSlurmError("cannot read MemTotal from /proc/meminfo")


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def render_slurm_conf(
    *,
    node: str,
    cpus: int,
    real_memory_mb: int,
    def_mem_per_cpu_mb: int,
    gpus: int,
    gpu_type: str | None,
    partition: str,
    run_dir: Path,
    min_job_age: int,
    ctld_port: int,
    slurmd_port: int,
) -> str:
    """slurm.conf for one node at 127.0.0.1 with state, spool, pids and logs under run_dir."""
    gres = ""
    if gpus:
        gres = f" Gres=gpu:{gpu_type}:{gpus}" if gpu_type else f" Gres=gpu:{gpus}"
    lines = [
        "# Written by selfplay.cluster.local_slurm for a throw-away test cluster;",
        "# the file that was here before (if any) is put back when the cluster stops.",
        "ClusterName=selfplay-local",
        f"SlurmctldHost={node}(127.0.0.1)",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        "SlurmUser=root",
        "AuthType=auth/munge",
        f"StateSaveLocation={run_dir / 'state'}",
        f"SlurmdSpoolDir={run_dir / 'spool'}",
        f"SlurmctldPidFile={run_dir / 'slurmctld.pid'}",
        f"SlurmdPidFile={run_dir / 'slurmd.pid'}",
        f"SlurmctldLogFile={run_dir / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={run_dir / 'log' / 'slurmd.log'}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        # No cgroups in containers: track processes by parent id, no task binding.
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SchedulerType=sched/backfill",
        # Cores and memory are consumable, so several small jobs share the node.
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        # Without a default, a job with no --mem takes the whole node.
        f"DefMemPerCPU={def_mem_per_cpu_mb}",
        # A node that was down comes back by itself once slurmd registers.
        "ReturnToService=2",
        # No slurmdbd: sacct has nothing; squeue sees finished jobs for MinJobAge seconds.
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        f"MinJobAge={min_job_age}",
        "GresTypes=gpu",
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={real_memory_mb}{gres} State=UNKNOWN",
        f"PartitionName={partition} Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ]
    return "\n".join(lines)


def render_gres_conf(*, node: str, gpus: int, gpu_type: str | None) -> str:
    """gres.conf declaring the fake GPU (0 or 1); /dev/null stands in for its device file."""
    if gpus not in (0, 1):
        raise LocalSlurmError("the local cluster has 0 or 1 fake GPU")
    lines = ["# Written by selfplay.cluster.local_slurm: a fake GPU for a test cluster."]
    type_part = f" Type={gpu_type}" if gpu_type else ""
    if gpus:
        lines.append(f"NodeName={node} Name=gpu{type_part} File=/dev/null")
    return "\n".join(lines) + "\n"


@dataclass
class LocalSlurm:
    """Start (`start()` / `with`) and stop a one-node SLURM cluster on this machine."""

    partition: str = "debug"
    gpus: int = 1
    gpu_type: str | None = "fake"
    min_job_age: int = 600
    ctld_port: int = 6817
    slurmd_port: int = 6818
    start_timeout: float = 60.0
    state_file: Path = DEFAULT_STATE_FILE
    keep_run_dir: bool = False
    # Filled by start() (and by from_state_file() in another process).
    run_dir: Path | None = None
    node: str = field(default_factory=lambda: socket.gethostname().split(".")[0])
    started: dict = field(default_factory=dict)  # daemon name -> pid we started
    backups: dict = field(default_factory=dict)  # /etc path -> backup copy ("" = there was none)
    start_seconds: float | None = None

    # ----------------------------------------------------------------- paths
    @property
    def log_dir(self) -> Path:
        return self._require_run_dir() / "log"

    @property
    def slurmctld_log(self) -> Path:
        return self.log_dir / "slurmctld.log"

    @property
    def slurmd_log(self) -> Path:
        return self.log_dir / "slurmd.log"

    def _require_run_dir(self) -> Path:
        if self.run_dir is None:
            raise LocalSlurmError("the local SLURM cluster has not been started")
        return self.run_dir

    def client_env(self, base: dict | None = None) -> dict:
        """Environment for SLURM clients (and snakemake) that use this cluster's config."""
        env = dict(os.environ if base is None else base)
        env.pop("SLURM_CONF", None)  # the config is at /etc/slurm/slurm.conf, as the plugin needs
        env["PATH"] = _search_path() if base is None else env.get("PATH", _search_path())
        return env

    def _run(
        self, *cmd: str, timeout: float = 20, check: bool = True, **kwargs
    ) -> subprocess.CompletedProcess:
        argv = [_tool(cmd[0]), *cmd[1:]]
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout, env=self.client_env(), **kwargs
            )
        except subprocess.TimeoutExpired as exc:
            raise LocalSlurmError(f"'{' '.join(cmd)}' did not answer within {timeout:.0f} s") from exc
        if check and proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            raise LocalSlurmError(
                f"'{' '.join(cmd)}' failed ({proc.returncode}): {detail[-1] if detail else ''}"
            )
        return proc

    # ----------------------------------------------------------------- start
    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> LocalSlurm:
        problems = missing_pieces()
        if problems:
            raise MissingToolError(
                f"cannot start a local SLURM cluster: it needs {'; '.join(problems)}. Install: {INSTALL_HINT}"
            )
        self._refuse_if_running()
        t0 = time.monotonic()
        self.run_dir = Path(tempfile.mkdtemp(prefix="selfplay-slurm-"))
        self.run_dir.chmod(0o755)
        for sub in ("state", "spool", "log", "backup"):
            (self.run_dir / sub).mkdir()
        try:
            self._write_state()
            self._start_munge()
            self._write_configs()
            self._write_state()
            self._start_daemon("slurmctld", self.run_dir / "slurmctld.pid", self.slurmctld_log)
            self._wait_controller()
            self._start_daemon("slurmd", self.run_dir / "slurmd.pid", self.slurmd_log)
            self._wait_node_idle()
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - t0
        self._write_state()
        return self

    def _refuse_if_running(self) -> None:
        if self.state_file.exists():
            other = LocalSlurm.from_state_file(self.state_file)
            if any(_is_running(other.started.get(name), name) for name in ("slurmctld", "slurmd")):
                raise LocalSlurmError(
                    f"a local SLURM cluster is already running (state in {self.state_file}); "
                    "stop it first: python -m selfplay.cluster.local_slurm stop"
                )
        clear_stale(self.state_file)
        for daemon in ("slurmctld", "slurmd"):
            pids = _pids_named(daemon)
            if pids:
                raise LocalSlurmError(
                    f"a {daemon} that this tool did not start is running (pid {pids[0]}); "
                    "this tool only manages a cluster it starts itself"
                )

    def _munge_answers(self) -> bool:
        try:
            proc = subprocess.run([_tool("munge"), "-n"], capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            return False
        return proc.returncode == 0

    def _start_munge(self) -> None:
        if self._munge_answers():
            return  # a munged is already serving the default socket: use it, never stop it
        if not MUNGE_KEY.exists():
            proc = subprocess.run(
                [_tool("mungekey"), "--create", f"--keyfile={MUNGE_KEY}"],
                user="munge",
                group="munge",
                extra_groups=[],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if proc.returncode != 0:
                raise LocalSlurmError(f"cannot create the munge key {MUNGE_KEY}: {proc.stderr.strip()}")
        for directory, mode in (
            (MUNGE_RUN, 0o755),
            (Path("/var/log/munge"), 0o700),
            (Path("/var/lib/munge"), 0o711),
        ):
            directory.mkdir(parents=True, exist_ok=True)
            shutil.chown(directory, "munge", "munge")
            directory.chmod(mode)
        pid_file = MUNGE_RUN / "munged.pid"
        # munged forks into the background and its first process exits once it is ready.
        out = self._require_run_dir() / "log" / "munged.stdout"
        rc = self._launch([_tool("munged")], out, user="munge", group="munge", extra_groups=[])
        if rc != 0:
            raise LocalSlurmError(f"munged did not start ({rc}): {_tail(out)}")
        if not _wait_for(lambda: _is_running(_read_pid(pid_file), "munged"), 10):
            raise LocalSlurmError(
                f"munged did not write {pid_file}; log: {_tail(Path('/var/log/munge/munged.log'))}"
            )
        self.started["munged"] = _read_pid(pid_file)
        if not _wait_for(self._munge_answers, 10):
            raise LocalSlurmError(
                f"munged runs but 'munge -n' fails; log: {_tail(Path('/var/log/munge/munged.log'))}"
            )

    def _write_configs(self) -> None:
        run_dir = self._require_run_dir()
        cpus = _cpu_count()
        total = _memory_mb()
        real_memory = max(256, total - max(512, total // 20))
        conf = render_slurm_conf(
            node=self.node,
            cpus=cpus,
            real_memory_mb=real_memory,
            def_mem_per_cpu_mb=max(100, min(2048, real_memory // (2 * cpus))),
            gpus=self.gpus,
            gpu_type=self.gpu_type,
            partition=self.partition,
            run_dir=run_dir,
            min_job_age=self.min_job_age,
            ctld_port=self.ctld_port,
            slurmd_port=self.slurmd_port,
        )
        files = {
            SLURM_ETC / "slurm.conf": conf,
            SLURM_ETC / "gres.conf": render_gres_conf(node=self.node, gpus=self.gpus, gpu_type=self.gpu_type),
        }
        SLURM_ETC.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            if str(path) not in self.backups:
                if path.exists():
                    backup = run_dir / "backup" / path.name
                    shutil.copy2(path, backup)
                    self.backups[str(path)] = str(backup)
                else:
                    self.backups[str(path)] = ""
                self._write_state()  # record the backup before touching the original
            path.write_text(text)
            path.chmod(0o644)

    @staticmethod
    def _launch(argv: list[str], output: Path, **kwargs) -> int:
        """Run a daemon's launcher and return its exit status once it has forked away.

        Its output goes to a file, not a pipe: a daemon that kept an inherited pipe open
        would make us wait for it forever.
        """
        with open(output, "ab") as sink:
            try:
                return subprocess.run(
                    argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, timeout=30, **kwargs
                ).returncode
            except subprocess.TimeoutExpired as exc:
                raise LocalSlurmError(
                    f"{Path(argv[0]).name} did not go to the background within 30 s"
                ) from exc

    def _start_daemon(self, name: str, pid_file: Path, log: Path) -> None:
        out = log.with_suffix(".stdout")
        rc = self._launch([_tool(name)], out, env=self.client_env())
        if rc != 0:
            raise LocalSlurmError(f"{name} did not start ({rc}): {_tail(out)} {_tail(log)}")
        if not _wait_for(lambda: _is_running(_read_pid(pid_file), name), 15):
            raise LocalSlurmError(f"{name} exited right after starting; its log says: {_tail(log)}")
        self.started[name] = _read_pid(pid_file)
        self._write_state()

    def _wait_controller(self) -> None:
        def up() -> bool:
            proc = self._run("scontrol", "ping", check=False, timeout=10)
            return proc.returncode == 0 and "UP" in proc.stdout

        if not _wait_for(up, self.start_timeout, 0.2):
            raise LocalSlurmError(
                f"slurmctld does not answer 'scontrol ping'; log: {_tail(self.slurmctld_log)}"
            )

    def node_state(self) -> str:
        proc = self._run("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", check=False, timeout=10)
        return (
            proc.stdout.strip().splitlines()[0] if proc.returncode == 0 and proc.stdout.strip() else "unknown"
        )

    def _wait_node_idle(self) -> None:
        def idle() -> bool:
            for name in ("slurmctld", "slurmd"):
                if not _is_running(self.started.get(name), name):
                    log = self.slurmctld_log if name == "slurmctld" else self.slurmd_log
                    raise LocalSlurmError(f"{name} died while the node came up; its log says: {_tail(log)}")
            return self.node_state() == "idle"

        if not _wait_for(idle, self.start_timeout, 0.2):
            reason = self._run("scontrol", "show", "node", self.node, check=False).stdout
            reason = next((part for part in reason.split() if part.startswith("Reason=")), "")
            raise LocalSlurmError(
                f"node {self.node} is '{self.node_state()}', not idle, after "
                f"{self.start_timeout:.0f} s {reason}; slurmd log: {_tail(self.slurmd_log)}"
            )

    # ------------------------------------------------------------------ stop
    def stop(self) -> None:
        """Stop what start() started and put /etc/slurm back as it was. Safe to call twice."""
        ctld, slurmd = self.started.get("slurmctld"), self.started.get("slurmd")
        if self.run_dir is not None:
            # Pid files first: the daemons delete them while shutting down.
            ctld = ctld or _read_pid(self.run_dir / "slurmctld.pid")
            slurmd = slurmd or _read_pid(self.run_dir / "slurmd.pid")
        ours = {
            name: pid for name, pid in (("slurmctld", ctld), ("slurmd", slurmd)) if _is_running(pid, name)
        }
        if ours.get("slurmctld"):
            self._cancel_all_jobs()
            self._run("scontrol", "shutdown", check=False, timeout=15)
        for name, pid in ours.items():
            self._end_process(pid, name)
        munged = self.started.get("munged")
        if _is_running(munged, "munged"):
            self._end_process(munged, "munged", grace=0)
        self._restore_configs()
        self.started = {}
        if self.state_file.exists():
            try:
                if json.loads(self.state_file.read_text()).get("run_dir") == str(self.run_dir):
                    self.state_file.unlink()
            except (OSError, ValueError):
                pass
        if self.run_dir is not None and not self.keep_run_dir:
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def _cancel_all_jobs(self) -> None:
        """Every job on this cluster was submitted to a cluster this tool started: cancel them."""
        proc = self._run("squeue", "-h", "-o", "%i", check=False, timeout=10)
        ids = proc.stdout.split() if proc.returncode == 0 else []
        if ids:
            self._run("scancel", *ids, check=False, timeout=15)
            _wait_for(
                lambda: (
                    not self._run(
                        "squeue", "-h", "-t", "PD,R,CG", "-o", "%i", check=False, timeout=10
                    ).stdout.strip()
                ),
                10,
                0.3,
            )

    @staticmethod
    def _end_process(pid: int, name: str, grace: float = 5.0) -> None:
        """Wait `grace` seconds for `pid` to go, then TERM, then KILL it (while it is still `name`)."""
        if _wait_for(lambda: not _is_running(pid, name), grace):
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not _is_running(pid, name):
                return
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            if _wait_for(lambda: not _is_running(pid, name), 5):
                return

    def _restore_configs(self) -> None:
        for path_text, backup in self.backups.items():
            path = Path(path_text)
            if backup and Path(backup).exists():
                shutil.copy2(backup, path)
            elif not backup and path.exists():
                path.unlink()
        self.backups = {}

    # ----------------------------------------------------------------- state
    def _write_state(self) -> None:
        state = {
            "run_dir": str(self.run_dir) if self.run_dir else None,
            "node": self.node,
            "partition": self.partition,
            "started": self.started,
            "backups": self.backups,
            "start_seconds": self.start_seconds,
            "gpus": self.gpus,
            "gpu_type": self.gpu_type,
        }
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.state_file)

    @classmethod
    def from_state_file(cls, state_file: Path = DEFAULT_STATE_FILE) -> LocalSlurm:
        try:
            state = json.loads(Path(state_file).read_text())
        except FileNotFoundError as exc:
            raise LocalSlurmError(f"no local SLURM cluster recorded in {state_file}") from exc
        except (OSError, ValueError) as exc:
            raise LocalSlurmError(f"cannot read {state_file}: {exc}") from exc
        return cls(
            state_file=Path(state_file),
            run_dir=Path(state["run_dir"]) if state.get("run_dir") else None,
            node=state.get("node") or socket.gethostname().split(".")[0],
            partition=state.get("partition", "debug"),
            gpus=state.get("gpus", 1),
            gpu_type=state.get("gpu_type"),
            started=dict(state.get("started") or {}),
            backups=dict(state.get("backups") or {}),
            start_seconds=state.get("start_seconds"),
        )

    def status(self) -> dict:
        alive = {name: pid for name, pid in self.started.items() if _is_running(pid, name)}
        up = "slurmctld" in alive and "slurmd" in alive
        return {
            "running": up,
            "processes": alive,
            "node": self.node,
            "partition": self.partition,
            "node_state": self.node_state() if up else "down",
            "run_dir": str(self.run_dir),
            "start_seconds": self.start_seconds,
        }


def clear_stale(state_file: Path = DEFAULT_STATE_FILE) -> bool:
    """Undo what a cluster whose process died left behind (its state file, the /etc/slurm
    files it replaced, a munged it started) when none of its daemons runs; True if there
    was such a cluster. A cluster that still runs is left alone (start() refuses it)."""
    state_file = Path(state_file)
    if not state_file.exists():
        return False
    other = LocalSlurm.from_state_file(state_file)
    if any(_is_running(other.started.get(name), name) for name in ("slurmctld", "slurmd")):
        return False
    other.stop()
    state_file.unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m selfplay.cluster.local_slurm",
        description="Start, check or stop a one-node SLURM cluster on this machine "
        "(root; Debian packages slurm-wlm and munge).",
    )
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument(
        "--state-file",
        type=Path,
        default=DEFAULT_STATE_FILE,
        help=f"where the running cluster is recorded (default {DEFAULT_STATE_FILE})",
    )
    parser.add_argument(
        "--gpus", type=int, choices=[0, 1], default=1, help="fake GPUs on the node (default 1)"
    )
    parser.add_argument("--keep-logs", action="store_true", help="stop: keep the run directory with the logs")
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            cluster = LocalSlurm(state_file=args.state_file, gpus=args.gpus).start()
            print(
                f"local SLURM cluster up in {cluster.start_seconds:.1f} s: node {cluster.node}, partition "
                f"{cluster.partition}, {_cpu_count()} CPUs, {cluster.gpus} fake GPU(s); logs in {cluster.log_dir}"
            )
            print("stop it with: python -m selfplay.cluster.local_slurm stop")
        elif args.action == "stop":
            if not args.state_file.exists():
                print("no local SLURM cluster is recorded: nothing to stop")
                return 0
            cluster = LocalSlurm.from_state_file(args.state_file)
            cluster.keep_run_dir = args.keep_logs
            cluster.stop()
            kept = f"; logs kept in {cluster.run_dir}/log" if args.keep_logs else ""
            print(f"local SLURM cluster stopped, /etc/slurm restored{kept}")
        else:
            if not args.state_file.exists():
                print("local SLURM cluster: not running")
                return 3
            info = LocalSlurm.from_state_file(args.state_file).status()
            if not info["running"]:
                print(
                    f"local SLURM cluster: not running (recorded in {args.state_file}; "
                    "'stop' cleans up what is left)"
                )
                return 3
            procs = ", ".join(f"{name} {pid}" for name, pid in info["processes"].items())
            print(
                f"local SLURM cluster: running; node {info['node']} is {info['node_state']}, partition "
                f"{info['partition']}; processes: {procs}; logs in {info['run_dir']}/log"
            )
    except UserError as exc:
        print(f"local_slurm: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
