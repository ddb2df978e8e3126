"""What every benchmark records about the machine it ran on (imported by the scripts
beside it: `python bench/<name>.py` puts this folder on the path)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine_facts(**tools: object) -> dict:
    """Cores (all, and those this process may use), CPU model, memory, Python and kernel,
    plus the tool versions the caller passes (e.g. ``ghc="9.0.2"``)."""
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "affinity_cpus": len(os.sched_getaffinity(0)),
        "cpu_model": model,
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        **tools,
        "python": platform.python_version(),
        "kernel": platform.release(),
    }
