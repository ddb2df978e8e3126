"""Where a step runs: the container image (if any) and the versions of its tools.

Every verdict and training record carries this, so a number can be traced to the
interpreter, compiler or prover that produced it. Inside an image built from
containers/*.def, Apptainer sets APPTAINER_CONTAINER and the image's %environment
sets SELFPLAY_IMAGE / SELFPLAY_IMAGE_VERSION; on the host all are absent and the
record says "host". Tool versions are asked of the tools themselves, not taken from
labels, so a record stays true even when an image was built differently.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from importlib import metadata
from typing import Any

# tool -> command that prints its version (first line kept)
VERSION_COMMANDS: dict[str, list[str]] = {
    "ghc": ["ghc", "--numeric-version"],
    "z3": ["z3", "--version"],
    "verus": ["verus", "--version"],
    "rustc": ["rustc", "--version"],
}


def current_image() -> dict[str, str | None] | None:
    """The image this process runs in, or None on the host."""
    file = os.environ.get("APPTAINER_CONTAINER") or os.environ.get("SINGULARITY_CONTAINER")
    name = os.environ.get("SELFPLAY_IMAGE")
    if not file and not name:
        return None
    return {"name": name, "version": os.environ.get("SELFPLAY_IMAGE_VERSION"), "file": file}


@functools.cache
def tool_version(tool: str) -> str | None:
    """The version `tool` reports, or None when it is not installed or does not answer."""
    if tool == "python":
        return platform.python_version()
    command = VERSION_COMMANDS.get(tool)
    if command is None:
        raise ValueError(
            f"no version command known for {tool!r} (known: python, {', '.join(VERSION_COMMANDS)})"
        )
    if shutil.which(command[0]) is None:
        return None
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else None


def package_version(name: str) -> str | None:
    """An installed Python package's version from its metadata, without importing it (some
    packages, peft for one, take seconds to import); None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def runtime_record(tools: tuple[str, ...] = ("python",)) -> dict[str, Any]:
    """{"image": <image dict> or "host", "tools": {tool: version}} for a record, plus
    "canaries": the verifier canaries this process ran (selfplay.verifier_canary), when any."""
    from ..verifier_canary import recorded

    record: dict[str, Any] = {
        "image": current_image() or "host",
        "tools": {tool: tool_version(tool) for tool in tools},
    }
    canaries = recorded()
    if canaries:
        record["canaries"] = canaries
    return record
