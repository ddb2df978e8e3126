"""Pinning every benchmark download by revision and by content (sha256).

A benchmark's download spec (``Benchmark.downloads``) names a URL that carries the
revision: a dataset commit on the Hugging Face hub (``/resolve/<commit>/``), a commit
of a GitHub repository (``raw.githubusercontent.com/<owner>/<repo>/<commit>/``), or
the tag of a GitHub release (``/releases/download/<tag>/``). ``check_revision``
refuses a URL whose revision is a branch (``main``): its content can change under the
same name.

Content. The sha256 a file must have comes from, in this order: config
``evaluation.benchmarks.<bench>.sha256.<file>``, the adapter's spec, or the lock file
``config/download-pins.tsv``. Where none of them knows it (no network reached the host
when the spec was written, so the true digest was never seen here), the first download
records what it saw in the lock file (trust on first use) and says so in its log; every
later download, on any machine that has the lock file, must match it. Commit the lock
file after a first download so the pin travels with the code. A mismatch stops the job
with one line naming the file and both digests, and the downloaded bytes are not kept.

Lock file format: one line per file, tab-separated ``<bench>/<file>``, URL, sha256;
lines starting with ``#`` are comments. The URL is part of the key: pointing a spec at
another revision needs a new pin.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from pathlib import Path

from ..errors import UserError

LOCK_FILE = "config/download-pins.tsv"
LOCK_HEADER = (
    "# sha256 of every benchmark download, recorded by the first download where no pin was known\n"
    "# (selfplay.evaluate.pins). Commit this file. Columns: <bench>/<file>  url  sha256\n"
)

SHA256 = re.compile(r"^[0-9a-f]{64}$")
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
_HUB = re.compile(r"^https://huggingface\.co/datasets/[^/]+/[^/]+/resolve/(?P<rev>[^/]+)/")
_RAW = re.compile(r"^https://raw\.githubusercontent\.com/[^/]+/[^/]+/(?P<rev>[^/]+)/")
_RELEASE = re.compile(r"^https://github\.com/[^/]+/[^/]+/releases/download/(?P<rev>[^/]+)/")


def revision_of(url: str) -> tuple[str, str]:
    """(kind, revision) the URL pins: kind is "commit" or "release"; UserError otherwise."""
    for kind, pattern in (("commit", _HUB), ("commit", _RAW), ("release", _RELEASE)):
        m = pattern.match(url)
        if m:
            return kind, m.group("rev")
    raise UserError(
        f"{url}: not a download this project knows how to pin (a hub or GitHub commit, or a GitHub release)"
    )


def check_revision(url: str) -> str:
    """The URL's revision, when it names a commit (hex) or a release tag; else UserError."""
    kind, rev = revision_of(url)
    if kind == "commit" and not COMMIT.match(rev):
        raise UserError(
            f"{url}: revision {rev!r} is not a commit; pin a commit hash (a branch such as main "
            "can change under the same name)"
        )
    return rev


def read_lock(path: str | os.PathLike, value: re.Pattern = SHA256) -> dict[tuple[str, str], str]:
    """(key, url) -> sha256 of a lock file (empty when it does not exist). ``value`` is
    the form of the third column (a sha256; a commit for the lock of resolved branches)."""
    path = Path(path)
    if not path.is_file():
        return {}
    pins: dict[tuple[str, str], str] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3 or not value.match(parts[2]):
            raise UserError(
                f"{path}:{n}: expected '<key><TAB>url<TAB>{'sha256' if value is SHA256 else 'commit'}', "
                f"got {line[:120]!r}"
            )
        key = (parts[0], parts[1])
        if key in pins and pins[key] != parts[2]:
            raise UserError(f"{path}:{n}: {parts[0]} is pinned twice with different sha256")
        pins[key] = parts[2]
    return pins


def record_pin(
    path: str | os.PathLike,
    key: str,
    url: str,
    sha256: str,
    value: re.Pattern = SHA256,
    header: str = LOCK_HEADER,
) -> str:
    """Add a pin to the lock file (under an exclusive lock, so parallel downloads do not
    lose each other's lines) and return the pin now in force: an existing pin for the
    same key and URL wins, and a different one is reported by the caller as a mismatch."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            existing = read_lock(path, value).get((key, url))
            if existing:
                return existing
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                handle.write(header)
            handle.write(f"{key}\t{url}\t{sha256}\n")
            handle.flush()
            os.fsync(handle.fileno())
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    return sha256


def expected_pin(
    key: str, url: str, config_pin: str | None, spec_pin: str | None, lock_path: str | os.PathLike
) -> tuple[str | None, str]:
    """(sha256 or None, where it comes from) for one download."""
    if config_pin:
        return config_pin, "config"
    if spec_pin:
        return spec_pin, "the adapter's spec"
    locked = read_lock(lock_path).get((key, url))
    return (locked, str(lock_path)) if locked else (None, "")


def mismatch(file: str, expected: str, where: str, got: str) -> UserError:
    return UserError(
        f"{file}: sha256 mismatch: pinned {expected} ({where}), downloaded {got}; the file was not kept"
    )


def file_sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def settle(
    tmp: str | os.PathLike,
    dest: str | os.PathLike,
    key: str,
    url: str,
    config_pin: str | None,
    spec_pin: str | None,
    lock_path: str | os.PathLike,
    log,
) -> str:
    """Check a fetched file (at ``tmp``) against its pin, recording one where none is
    known, then move it to ``dest``. Returns its sha256; on a mismatch removes ``tmp``
    and raises the one-line error."""
    got = file_sha256(tmp)
    name = Path(dest).name
    expected, where = expected_pin(key, url, config_pin, spec_pin, lock_path)
    if expected is None:
        expected, where = record_pin(lock_path, key, url, got), str(lock_path)
        if expected == got:
            log.warning(
                "%s: no sha256 was pinned; recorded %s in %s (commit it: later downloads must match)",
                name,
                got,
                lock_path,
            )
    if expected != got:
        os.unlink(tmp)
        raise mismatch(name, expected, where, got)
    os.replace(tmp, dest)
    return got


def download(
    url: str,
    dest: str,
    key: str,
    config_pin: str | None,
    spec_pin: str | None,
    lock_path: str | os.PathLike,
    log,
) -> str:
    """A benchmark download step: the revision checked, the file fetched, then ``settle``."""
    from ..data.sources import download_checked

    check_revision(url)
    for pin in (config_pin, spec_pin):
        if pin and not SHA256.match(pin):
            raise UserError(f"{key}: pinned sha256 {pin!r} is not 64 lowercase hex digits")
    tmp = Path(dest).with_name(f".{Path(dest).name}.unchecked")
    download_checked(url, tmp, None)
    try:
        return settle(tmp, dest, key, url, config_pin, spec_pin, lock_path, log)
    finally:
        if tmp.exists():
            tmp.unlink()
