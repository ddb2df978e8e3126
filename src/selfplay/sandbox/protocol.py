"""Length-prefixed JSON frames: the only format that crosses a sandbox boundary.

A frame is a 4-byte magic, a 4-byte big-endian length and that many bytes of
UTF-8 JSON.  Nothing is ever pickled.  Readers take a hard size cap and an
absolute deadline (``time.monotonic()`` based), so a silent or babbling peer
cannot block or flood the reader.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

MAGIC = b"SBX1"
HEADER = struct.Struct(">4sI")


class FrameError(Exception):
    """The peer sent something that is not a well-formed frame within the limits."""


class FrameTimeout(FrameError):
    """No complete frame arrived before the deadline."""


class FrameEOF(FrameError):
    """The peer closed the channel before a complete frame."""


def encode_frame(obj: Any) -> bytes:
    body = json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")
    return HEADER.pack(MAGIC, len(body)) + body


def write_all(fd: int, data: bytes, _write=os.write) -> None:
    """Write every byte; ``os.write`` is bound when this module loads, so a program that
    replaces it later (in a loader, see ``fork_per_call``) does not change this."""
    view = memoryview(data)
    while view:
        written = _write(fd, view)
        view = view[written:]


def write_frame(fd: int, obj: Any) -> None:
    write_all(fd, encode_frame(obj))


def parse_frame(data: bytes, max_bytes: int) -> Any:
    """Decode exactly one frame occupying all of ``data``; anything else is FrameError."""
    if len(data) < HEADER.size:
        raise FrameError("truncated frame header")
    magic, length = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise FrameError("bad frame magic")
    if length > max_bytes:
        raise FrameError("frame larger than allowed")
    if len(data) != HEADER.size + length:
        raise FrameError("frame length mismatch")
    try:
        return json.loads(data[HEADER.size :].decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FrameError(f"frame body is not JSON ({type(exc).__name__})") from None


def _read_exact(fd: int, count: int, deadline: float | None) -> bytes:
    chunks = bytearray()
    while len(chunks) < count:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FrameTimeout("deadline passed while waiting for a frame")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                raise FrameTimeout("deadline passed while waiting for a frame")
        block = os.read(fd, min(count - len(chunks), 1 << 20))
        if not block:
            raise FrameEOF("channel closed")
        chunks += block
    return bytes(chunks)


def read_frame(fd: int, max_bytes: int, deadline: float | None = None) -> Any:
    """Read one frame from a blocking fd, honouring ``deadline`` (monotonic seconds)."""
    header = _read_exact(fd, HEADER.size, deadline)
    magic, length = HEADER.unpack(header)
    if magic != MAGIC:
        raise FrameError("bad frame magic")
    if length > max_bytes:
        raise FrameError("frame larger than allowed")
    body = _read_exact(fd, length, deadline)
    try:
        return json.loads(body.decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FrameError(f"frame body is not JSON ({type(exc).__name__})") from None
