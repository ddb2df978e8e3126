"""Look everywhere this process can reach for data of a job that ran before it.

The earlier job's input and output carry a marker (``IN`` or ``OUT``, then ``CANARY``,
then at least twelve digits). This program never holds such a string itself: the
pattern below has no digits after the marker, so anything it finds came from outside.
``main`` returns, per place searched, the sorted markers found there. Also runnable
as a script (``python3 snoop_earlier_job.py``), printing the same report as JSON,
for the command sandbox.
"""

import gc
import json
import os
import re
import sys

PATTERN = re.compile(rb"(?:IN|OUT)CANARY[0-9]{12,}")
CHUNK = 1 << 20


def _texts(value, out, seen, depth=0):
    """Feed every str/bytes reachable from ``value`` (bounded depth) to ``out``."""
    if depth > 6 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, str):
        out.update(PATTERN.findall(value.encode("utf-8", "ignore")))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        out.update(PATTERN.findall(bytes(value)))
    elif isinstance(value, dict):
        for key, item in list(value.items()):
            _texts(key, out, seen, depth + 1)
            _texts(item, out, seen, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in list(value):
            _texts(item, out, seen, depth + 1)
    else:
        try:
            attrs = vars(value)
        except TypeError:
            return
        _texts(attrs, out, seen, depth + 1)


def in_frames():
    found, seen = set(), set()
    frame = sys._getframe()
    while frame is not None:
        _texts(dict(frame.f_locals), found, seen)
        _texts(frame.f_code.co_consts, found, seen)
        frame = frame.f_back
    return found


def in_gc():
    found, seen = set(), set()
    for obj in gc.get_objects():
        _texts(obj, found, seen, depth=5)
    return found


def in_globals():
    found, seen = set(), set()
    for module in list(sys.modules.values()):
        _texts(getattr(module, "__dict__", {}), found, seen)
    return found


def _memory_of(pid):
    found = set()
    try:
        with open(f"/proc/{pid}/maps") as fh:
            regions = fh.read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", 0)
    except OSError:
        return found
    with mem:
        for line in regions:
            fields = line.split()
            if len(fields) < 2 or not fields[1].startswith("r") or "[vvar" in line or "[vsyscall" in line:
                continue
            start, end = (int(part, 16) for part in fields[0].split("-"))
            tail = b""
            while start < end:
                try:
                    mem.seek(start)
                    block = mem.read(min(CHUNK, end - start))
                except (OSError, OverflowError, ValueError):
                    break
                if not block:
                    break
                found.update(PATTERN.findall(tail + block))
                tail = block[-64:]
                start += len(block)
    return found


def in_own_memory():
    # The sandbox starts children non-dumpable, which hides /proc/self/mem from them; any
    # process may turn that back on for itself, so a hostile one would.
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, 1
    except Exception:
        pass
    return _memory_of("self")


def in_other_processes():
    found = set()
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if name.isdigit() and name != me:
            found |= _memory_of(name)
            for part in ("environ", "cmdline"):
                try:
                    with open(f"/proc/{name}/{part}", "rb") as fh:
                        found.update(PATTERN.findall(fh.read()))
                except OSError:
                    pass
    return found


def in_descriptors():
    found = set()
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        fd = int(name)
        try:
            found.update(PATTERN.findall(os.readlink(f"/proc/self/fd/{fd}").encode()))
            os.set_blocking(fd, False)
            os.lseek(fd, 0, os.SEEK_SET) if not os.isatty(fd) else None
        except OSError:
            pass
        try:
            found.update(PATTERN.findall(os.read(fd, 1 << 20)))
        except OSError:
            pass
    return found


def main():
    report = {}
    for name, search in (
        ("frames", in_frames),
        ("gc", in_gc),
        ("globals", in_globals),
        ("descriptors", in_descriptors),
        ("own_memory", in_own_memory),
        ("other_processes", in_other_processes),
    ):
        report[name] = sorted(item.decode() for item in search())
    return report


def main_each(n):
    """The same search as a ``run_each`` call (``n`` only varies the call)."""
    return main()


if __name__ == "__main__":
    print(json.dumps(main()))
