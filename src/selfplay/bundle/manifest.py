"""The manifest of a bundle: every file with its size and sha256, and the check of it.

``MANIFEST.json``::

    {"format": "selfplay-bundle-manifest/1",
     "files": [{"path": "results/...", "kind": "recording", "size": 123, "sha256": "..."}, ...],
     "not_included": [{"path": ..., "kind": "adapter", "size": ..., "sha256": ...}, ...]}

``files`` lists every file of the bundle except the manifest itself and SHA256SUMS
(its plain-text twin, for ``sha256sum -c`` on a machine without this package);
``not_included`` lists outputs whose checksums are recorded but whose bytes were
left out (adapter weights unless ``bundle.include_adapters``).

The check reports a file that is missing, has another size or sha256, or is in the
bundle without being listed, as one line naming the first such file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ..errors import UserError
from ..records import sha256_file, write_json, write_text_atomic

MANIFEST_NAME = "MANIFEST.json"
SUMS_NAME = "SHA256SUMS"
MANIFEST_FORMAT = "selfplay-bundle-manifest/1"
_UNLISTED = {MANIFEST_NAME, SUMS_NAME}


class BundleCheckError(UserError):
    """A bundle's files do not match its manifest (changed, missing or extra files)."""


def file_entry(root: str | os.PathLike, rel: str, kind: str) -> dict:
    path = Path(root) / rel
    return {"path": rel, "kind": kind, "size": path.stat().st_size, "sha256": sha256_file(path)}


def bundle_files(root: str | os.PathLike) -> list[str]:
    """Every regular file under ``root`` as a sorted POSIX relative path (manifest files excluded)."""
    root = Path(root)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            if rel not in _UNLISTED:
                found.append(rel)
    return sorted(found)


def build_manifest(
    root: str | os.PathLike, kinds: dict[str, str] | None = None, not_included: Iterable[dict] = ()
) -> dict:
    """Checksum every file under ``root``; ``kinds`` maps relative paths to a kind ("other" if absent)."""
    kinds = kinds or {}
    files = [file_entry(root, rel, kinds.get(rel, "other")) for rel in bundle_files(root)]
    return {
        "format": MANIFEST_FORMAT,
        "files": files,
        "not_included": sorted(not_included, key=lambda e: e["path"]),
    }


def write_manifest(root: str | os.PathLike, manifest: dict) -> None:
    root = Path(root)
    write_json(root / MANIFEST_NAME, manifest)
    write_text_atomic(root / SUMS_NAME, "".join(f"{e['sha256']}  {e['path']}\n" for e in manifest["files"]))


def read_manifest(root: str | os.PathLike) -> dict:
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        raise BundleCheckError(f"{root}: no {MANIFEST_NAME}; this is not a selfplay bundle")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleCheckError(f"{path}: not valid JSON ({exc}); the manifest is damaged") from exc
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != MANIFEST_FORMAT
        or not isinstance(manifest.get("files"), list)
    ):
        raise BundleCheckError(f"{path}: not a {MANIFEST_FORMAT} manifest")
    return manifest


def _safe_rel(rel) -> bool:
    if not isinstance(rel, str) or not rel:
        return False
    p = PurePosixPath(rel)
    return not p.is_absolute() and ".." not in p.parts


def manifest_problems(root: str | os.PathLike, manifest: dict) -> list[str]:
    """Every way the files under ``root`` differ from ``manifest``, one short phrase each."""
    root = Path(root)
    problems = []
    listed = set()
    for entry in manifest["files"]:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if not _safe_rel(rel):
            problems.append(f"manifest entry {entry!r:.80}: not a relative path inside the bundle")
            continue
        listed.add(rel)
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: listed in the manifest but missing")
        elif path.stat().st_size != entry.get("size"):
            problems.append(f"{rel}: size {path.stat().st_size} bytes, the manifest says {entry.get('size')}")
        elif sha256_file(path) != entry.get("sha256"):
            problems.append(f"{rel}: sha256 differs from the manifest (the file was changed after bundling)")
    for rel in bundle_files(root):
        if rel not in listed:
            problems.append(f"{rel}: in the bundle but not listed in the manifest")
    return problems


def check_manifest(root: str | os.PathLike) -> dict:
    """Raise BundleCheckError (one line: the first problem, and how many there are) or return the manifest."""
    manifest = read_manifest(root)
    problems = manifest_problems(root, manifest)
    if problems:
        more = (
            f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})"
            if len(problems) > 1
            else ""
        )
        raise BundleCheckError(f"bundle check failed: {problems[0]}{more}")
    return manifest
