"""Resource limits applied to every sandboxed execution.

One frozen dataclass holds every knob, so a Sandbox, run_naive and the command
line all describe limits the same way and the value can be shipped to a fork
server as plain JSON.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class SandboxLimits:
    """Per-execution limits.

    memory_mb       address-space cap (RLIMIT_AS) of the process running the code
    max_processes   RLIMIT_NPROC for the unprivileged sandbox user (threads count)
    max_open_files  RLIMIT_NOFILE
    max_file_mb     RLIMIT_FSIZE: the largest file the code may write
    max_result_kb   largest result message accepted from the child
    max_value_nodes / max_value_depth   bounds on the canonical encoding of a return value
    max_repr_chars  truncation length of value_repr and exc_message
    tmpfs_mb        size of the private scratch filesystem holding the work directory
    """

    memory_mb: int = 1024
    max_processes: int = 32
    max_open_files: int = 64
    max_file_mb: int = 16
    max_result_kb: int = 256
    max_value_nodes: int = 100_000
    max_value_depth: int = 200
    max_repr_chars: int = 1000
    tmpfs_mb: int = 64

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"SandboxLimits.{f.name} must be a positive int, got {value!r}")
        if self.max_open_files < 8:
            raise ValueError("SandboxLimits.max_open_files must be at least 8")
        if self.tmpfs_mb < self.max_file_mb:
            object.__setattr__(self, "tmpfs_mb", self.max_file_mb)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SandboxLimits:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @staticmethod
    def cpu_seconds(timeout: float) -> int:
        """RLIMIT_CPU soft limit for a wall-clock timeout (the wall clock is the real guard)."""
        return int(math.ceil(timeout)) + 1

    def rlimits(self, timeout: float | None = None) -> dict[str, Any]:
        """The rlimits in force, in human units, for the ``isolation`` report."""
        return {
            "cpu_s": self.cpu_seconds(timeout) if timeout is not None else "ceil(timeout)+1",
            "as_mb": self.memory_mb,
            "nproc": self.max_processes,
            "nofile": self.max_open_files,
            "fsize_mb": self.max_file_mb,
            "core": 0,
        }
