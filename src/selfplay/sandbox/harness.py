"""The child side of one execution: confine this process, then run the program.

``child_main`` is entered in a freshly forked process and never returns.  It
first removes everything the process inherited that the program must not have
(file descriptors, privileges, environment, signal dispositions, limits) and
only then compiles and runs the untrusted code.  The verdict is written as one
frame to the result pipe; the parent decides 'timeout' and 'killed' itself, so
this side only ever reports 'ok', 'exception' or 'error'.
"""

from __future__ import annotations

import ast
import fcntl
import inspect
import os
import random
import signal
import sys
import time
import types
from collections.abc import Callable
from typing import Any

from . import confine, landlock
from .encoding import EncodingLimitError, _type_name, bounded_repr, encode_value, truncate
from .limits import SandboxLimits
from .protocol import encode_frame

RESULT_FD = 3
CONTROL_FD = 4  # a loader's request channel (see ``fork_per_call``)
MODULE_NAME = "solution"

# Written when even building a report fails for lack of memory.
_OOM_FRAME = encode_frame(
    {
        "status": "exception",
        "exc_type": "MemoryError",
        "exc_message": "",
        "detail": "MemoryError: out of memory while reporting",
    }
)


class _PhaseTimeout(BaseException):
    """Raised by our own alarm when encoding the result runs out of time."""


def _on_alarm(signum, frame):  # noqa: ARG001
    raise _PhaseTimeout()


# Bound once, in the server, so a program that monkeypatches ``os`` cannot stop
# its own process from exiting or reporting the way the harness intends.
_real_exit = os._exit
_real_write = os.write


def _exit_now(code: int) -> None:
    _real_exit(code)


def _send(message: dict[str, Any]) -> None:
    try:
        data = encode_frame(message)
    except MemoryError:
        data = _OOM_FRAME
    try:
        view = memoryview(data)
        while view:
            view = view[_real_write(RESULT_FD, view) :]
    except OSError:
        _exit_now(3)


# ---------------------------------------------------------------- confinement


def confine_child(
    cfg: dict[str, Any],
    result_w: int,
    workdir: str,
    timeout: float,
    control_r: int | None = None,
    extra_nproc: int = 0,
) -> None:
    """Strip the forked child down before any untrusted code runs.

    ``control_r``, when given, is kept open as ``CONTROL_FD`` (a loader's request
    channel, see ``fork_per_call``); ``extra_nproc`` raises the process limit for a
    process that stays alive beside the ones it forks."""
    os.setsid()
    enforce_landlock(cfg)
    # The server only changed SIGINT; restore the interpreter's own startup
    # dispositions so programs behave as under a plain ``python``.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])

    if control_r is not None:
        control_r = fcntl.fcntl(control_r, fcntl.F_DUPFD, CONTROL_FD + 1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if result_w != RESULT_FD:
        os.dup2(result_w, RESULT_FD)
    keep = [0, 1, 2, RESULT_FD]
    if control_r is not None:
        os.dup2(control_r, CONTROL_FD)
        keep.append(CONTROL_FD)
    confine.close_fds_except(keep)

    lock_down(cfg, workdir, SandboxLimits.from_dict(cfg["limits"]), timeout, extra_nproc)

    os.environ.clear()
    seed = cfg.get("seed", 0)
    os.environ.update(confine.scrubbed_env(home=workdir, hashseed=seed))
    sys.path[:] = list(cfg["child_path"])
    sys.dont_write_bytecode = True
    sys.setrecursionlimit(1000)
    # The hash seed itself was fixed when the server's interpreter started (launch.py).
    random.seed(seed)
    for name in list(sys.modules):
        if name == MODULE_NAME or name.startswith(MODULE_NAME + "."):
            del sys.modules[name]


def enforce_landlock(cfg: dict[str, Any]) -> None:
    """Without a mount namespace, take on the server's Landlock ruleset (see ``landlock``).

    Called first thing in a child, while the ruleset's descriptor is still open.
    """
    if cfg.get("landlock_fd") is not None:
        landlock.restrict_self(cfg["landlock_fd"])


def lock_down(
    cfg: dict[str, Any], workdir: str, limits: SandboxLimits, timeout: float, extra_nproc: int = 0
) -> None:
    """The part of confinement shared by Python runs and command runs (see ``command``).

    Enters the private work directory, lowers every rlimit, switches to the
    leased unprivileged uid (or drops all capabilities when there is none), sets
    no_new_privs and a parent-death SIGKILL, and exits at once if the server is
    already gone.  The caller has already called setsid and arranged fds.
    """
    os.chdir(workdir)
    os.umask(0o077)
    uid, gid = cfg.get("uid"), cfg.get("gid")
    extra = extra_nproc
    if uid is None and os.getuid() != 0:
        # Not root and no uid of our own: the process count is shared with the host user.
        extra += confine.count_processes_of(os.getuid())
    confine.apply_rlimits(limits, timeout, extra_nproc=extra)
    if uid is not None:
        confine.drop_privileges(uid, gid)
    elif os.getuid() == 0:
        confine.drop_capabilities()  # root without a uid to switch to: keep uid, lose power
    confine.set_no_new_privs()
    server = cfg["server_pid"]
    confine.set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != server:
        _exit_now(4)


# ---------------------------------------------------------------- execution


def _parse_input(literal: Any) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(literal, str):
        return None, "input literal must be text"
    try:
        kwargs = ast.literal_eval(literal)
    except Exception as exc:  # ValueError, SyntaxError, MemoryError, RecursionError...
        return None, f"input literal is not parseable ({type(exc).__name__})"
    if not isinstance(kwargs, dict):
        return None, f"input literal is not a dict (got {type(kwargs).__name__})"
    if not all(isinstance(k, str) for k in kwargs):
        return None, "input literal has non-string keys"
    return kwargs, None


def _exception_report(exc: BaseException, limits: SandboxLimits) -> dict[str, Any]:
    name = _type_name(exc)
    try:
        message = truncate(str(exc), limits.max_repr_chars)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = "<unprintable exception message>"
    report = {"status": "exception", "exc_type": name, "exc_message": message, "detail": None}
    if isinstance(exc, MemoryError):
        report["detail"] = f"MemoryError: probably the {limits.memory_mb} MiB address-space limit"
    return report


def _value_budget(limits: SandboxLimits) -> int:
    """Bytes the encoded value may take, leaving room for the rest of the message."""
    total = limits.max_result_kb * 1024
    return max(total - 2 * limits.max_repr_chars - 1024, total // 2)


def _report_exception(
    exc: BaseException, limits: SandboxLimits, deadline: float, timeout: float
) -> dict[str, Any]:
    """Describe an exception raised by the program, bounded in time like value encoding."""
    exc.__traceback__ = None
    _arm_alarm(deadline, timeout)
    try:
        return _exception_report(exc, limits)
    except _PhaseTimeout:
        return {
            "status": "exception",
            "exc_type": _type_name(exc),
            "exc_message": "<message timed out>",
            "detail": None,
        }
    finally:
        _disarm_alarm()


def _arm_alarm(deadline: float, timeout: float) -> None:
    margin = min(0.25, 0.2 * timeout)
    remaining = max(deadline - margin - time.monotonic(), 0.01)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGALRM])
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, remaining)


def _disarm_alarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def run_program(
    code: str, entry: str, literal: Any, limits: SandboxLimits, deadline: float, timeout: float
) -> dict[str, Any]:
    """Parse the input, import the program, bind and call the entry point."""
    kwargs, problem = _parse_input(literal)
    if problem:
        return {"status": "error", "detail": problem}
    module, report = load_program(code, limits, deadline, timeout)
    if report is not None:
        return report
    return call_entry(module, entry, kwargs, limits, deadline, timeout)


def load_program(
    code: str, limits: SandboxLimits, deadline: float, timeout: float
) -> tuple[types.ModuleType, dict[str, Any] | None]:
    """Execute the program as the module ``solution``; (module, None), or (module, the
    report of what it raised).  A process the program forked never returns from here."""
    my_pid = os.getpid()
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = f"<{MODULE_NAME}>"
    sys.modules[MODULE_NAME] = module
    try:
        compiled = compile(code, f"<{MODULE_NAME}>", "exec", dont_inherit=True)
        exec(compiled, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - anything the program raises is its behaviour
        if os.getpid() != my_pid:
            _exit_now(0)
        if isinstance(exc, MemoryError):
            module.__dict__.clear()
        return module, _report_exception(exc, limits, deadline, timeout)
    if os.getpid() != my_pid:
        _exit_now(0)
    return module, None


def call_entry(
    module: types.ModuleType,
    entry: str,
    kwargs: dict[str, Any],
    limits: SandboxLimits,
    deadline: float,
    timeout: float,
) -> dict[str, Any]:
    """Bind and call ``entry(**kwargs)`` of a loaded program and report its encoded value."""
    my_pid = os.getpid()
    func = module.__dict__.get(entry)
    if func is None and entry not in module.__dict__:
        return {"status": "error", "detail": f"entry point {entry!r} is not defined"}
    if not callable(func):
        return {"status": "error", "detail": f"entry point {entry!r} is not callable"}
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        signature = None
    except BaseException:  # noqa: BLE001
        signature = None
    if signature is not None:
        try:
            signature.bind(**kwargs)
        except TypeError as exc:
            return {
                "status": "error",
                "detail": f"input does not bind to {entry}(): {truncate(str(exc), 200)}",
            }

    try:
        value = func(**kwargs)
    except BaseException as exc:  # noqa: BLE001
        if os.getpid() != my_pid:
            _exit_now(0)
        if isinstance(exc, MemoryError):
            module.__dict__.clear()
        return _report_exception(exc, limits, deadline, timeout)
    if os.getpid() != my_pid:
        _exit_now(0)
    return _report_value(value, limits, deadline, timeout)


def _report_value(value: Any, limits: SandboxLimits, deadline: float, timeout: float) -> dict[str, Any]:
    """The 'ok' report of a returned value, encoded within the time left."""
    _arm_alarm(deadline, timeout)
    try:
        try:
            encoded = encode_value(
                value,
                max_nodes=limits.max_value_nodes,
                max_depth=limits.max_value_depth,
                max_bytes=_value_budget(limits),
                max_repr=limits.max_repr_chars,
            )
        except EncodingLimitError as exc:
            return {"status": "error", "detail": f"return value not encodable: {exc}"}
        except MemoryError:
            return {"status": "error", "detail": "return value not encodable: out of memory"}
        except _PhaseTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. a container mutated by a thread
            return {"status": "error", "detail": f"return value not encodable: {_type_name(exc)}"}
        try:
            shown = bounded_repr(value, limits.max_repr_chars)
        except _PhaseTimeout:
            shown = "<repr timed out>"
        return {"status": "ok", "value": encoded, "value_repr": shown}
    except _PhaseTimeout:
        return {"status": "error", "detail": "return value not encodable: repr did not finish in time"}
    finally:
        _disarm_alarm()


def warm_up(limits: SandboxLimits) -> None:
    """Exercise the execution path once in the server with a fixed, trusted program.

    Lazily built caches (regular expressions, inspect, json, reprlib) then exist
    before the fork, so each child does not rebuild them page by page.
    """
    old = signal.getsignal(signal.SIGALRM)
    try:
        run_program(
            "def f(n):\n    return [n, (n, 1.5), {n: b'x'}, {'k'}]\n",
            "f",
            "{'n': 1}",
            limits,
            time.monotonic() + 5.0,
            5.0,
        )
        run_program(
            "def f(n):\n    raise ValueError(n)\n", "f", "{'n': 1}", limits, time.monotonic() + 5.0, 5.0
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        sys.modules.pop(MODULE_NAME, None)


def child_main(
    cfg: dict[str, Any], req: dict[str, Any], result_w: int, workdir: str, deadline: float
) -> None:
    """Entry point of the forked child.  Never returns."""
    timeout = float(req["timeout"])
    try:
        confine_child(cfg, result_w, workdir, timeout)
    except BaseException as exc:  # noqa: BLE001
        frame = encode_frame(
            {"status": "error", "detail": f"sandbox setup failed: {type(exc).__name__}: {exc}"}
        )
        for fd in (RESULT_FD, result_w):
            try:
                _real_write(fd, frame)
                break
            except OSError:
                continue
        _exit_now(5)
    finish(
        lambda: run_program(
            req["code"], req["entry"], req["input"], SandboxLimits.from_dict(cfg["limits"]), deadline, timeout
        )
    )


def finish(work: Callable[[], dict[str, Any]]) -> None:
    """Send the report ``work`` makes (a MemoryError or a fault of the harness reported as
    such), then exit.  Never returns."""
    try:
        report = work()
    except MemoryError:
        report = None
    except BaseException as exc:  # noqa: BLE001 - e.g. our alarm firing outside its window
        report = {"status": "error", "detail": f"harness failure: {type(exc).__name__}"}
    if report is None:
        _send({"status": "exception", "exc_type": "MemoryError", "exc_message": "", "detail": "MemoryError"})
    else:
        _send(report)
    _exit_now(0)
