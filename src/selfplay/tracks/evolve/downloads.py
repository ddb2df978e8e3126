"""Where EvolveCoder's paper-scale seed data comes from (paper 002, Sec. 2.1): per source,
the Hugging Face dataset, the commit to fetch it at, and its data files.

A download rule fetches each file with ``selfplay.data.sources.download_pinned`` (the
house helper: atomic download, sha256 checked when one is pinned, the observed hash
logged for pinning when none is). ``rule_downloads`` gives the rows that rule needs, in
the shape the benchmark adapters use (``{"url", "file", "sha256"}``, plus the ``split``
and the ``path`` inside the dataset).

Confidence. ``revision`` is a full commit hash where one is known to hold the listed
files, else ``UNCONFIRMED``: then config must name a revision (a commit, or ``main``
for a run that is not exactly repeatable) and ``rule_downloads`` refuses to build URLs
without one. ``files_complete`` is False when the data files could only be described by
a pattern; ``files_from_listing`` then picks them from a listing of the repository at
the chosen revision (``huggingface_hub.list_repo_files``, on the machine that
downloads). ``notes`` says what was and was not confirmed for each source.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ...errors import UserError

UNCONFIRMED = "unconfirmed"
HUB = "https://huggingface.co/datasets"


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: its path in the repository, the split it holds, and its
    sha256 when known (None: the first download logs it, to pin in config)."""

    path: str
    split: str
    sha256: str | None = None


@dataclass(frozen=True)
class SourceDownload:
    """The download of one seed source (or of a part of one: Codeforces has two)."""

    name: str
    source: str
    repo: str
    revision: str
    files: tuple[DataFile, ...]
    files_complete: bool
    patterns: dict[str, str] = field(default_factory=dict)  # split -> glob inside the repo
    notes: str = ""


def _cc_train(hashes: Iterable[str]) -> tuple[DataFile, ...]:
    return tuple(DataFile(f"data/train-{i:05d}-of-00039-{h}.parquet", "train") for i, h in enumerate(hashes))


# CodeContests' 39 training shards carry a content suffix in their names.
_CC_TRAIN_SUFFIXES = (
    "e991a271dbfa9925",
    "e092fe56fda18715",
    "9cea23812e920e41",
    "e3822fccad6e083a",
    "cefe355b4667b27e",
    "b7580d2d846c2136",
    "65184bb9f7d61fde",
    "05785de21e8b8429",
    "7246e6b7423b404f",
    "b8c920f6629b57b2",
    "6de28ba20654f69b",
    "5de236be5188959d",
    "da9476a39a1bdbb7",
    "30b8c3829ee3b962",
    "dc3ebb07a3cba8e4",
    "19ccd7331d695677",
    "bf38b0908b322307",
    "ae5533a2f822e6ef",
    "8c793837880f5507",
    "d688fad5ee604390",
    "5d59387098675b73",
    "b257bf03d6876780",
    "1cfd39fa43c1917c",
    "d078bcb55e45cbf0",
    "f4e3da0e5661e6d1",
    "3f6ebfbaba5f4c70",
    "7d4898300894cbbe",
    "f8196766547533a2",
    "79a302af3c924863",
    "2b6615897d038115",
    "4135cc54050afc22",
    "40309dd907c042b7",
    "7b7d2068a3d9c359",
    "53b0f749aacff9c1",
    "a36ff0bff7d2a76f",
    "d28f9be60314601f",
    "146e1a11c054aeab",
    "995207c374a4e6f2",
    "96a59dd6a98cd075",
)

DOWNLOADS: dict[str, SourceDownload] = {
    d.name: d
    for d in (
        SourceDownload(
            name="taco",
            source="taco",
            repo="BAAI/TACO",
            revision="b900853d75a4f64bc41e80472cc231fc5118c307",
            files=tuple(DataFile(f"train/data-{i:05d}-of-00009.arrow", "train") for i in range(9))
            + (DataFile("test/data-00000-of-00001.arrow", "test"),),
            files_complete=True,
            notes="Arrow files as datasets' save_to_disk writes them (read with seeds.read_rows). The revision is "
            "a commit whose TACO.py lists these nine train files; that the test file sits beside them there, "
            "and whether this commit already has the authors' later test-set correction, is unconfirmed. "
            "The repository also has a parquet copy under ALL/ (config ALL).",
        ),
        SourceDownload(
            name="apps",
            source="apps",
            repo="codeparrot/apps",
            revision=UNCONFIRMED,
            files=(DataFile("train.jsonl", "train"), DataFile("test.jsonl", "test")),
            files_complete=True,
            notes="JSON lines at the repository root (confirmed by many scripts that fetch them); no commit hash "
            "confirmed. problem_id restarts at 0 in each split, so record ids carry the split.",
        ),
        SourceDownload(
            name="primeintellect",
            source="primeintellect",
            repo="PrimeIntellect/verifiable-coding-problems",
            revision=UNCONFIRMED,
            files=(),
            files_complete=False,
            patterns={"train": "data/train-*.parquet"},
            notes="SYNTHETIC-1's coding tasks. Shard names and the commit are unconfirmed (the repository's main "
            "branch was last seen at a commit beginning 45220c9). The paper's 16,252 PrimeIntellect problems "
            "may instead be the primeintellect split of agentica-org/DeepCoder-Preview-Dataset (unconfirmed; "
            "a different row format).",
        ),
        SourceDownload(
            name="code_contests",
            source="code_contests",
            repo="deepmind/code_contests",
            revision="802411c3010cb00d1b05bad57ca77365a3c699d6",
            files=_cc_train(_CC_TRAIN_SUFFIXES)
            + (
                DataFile(
                    "data/valid-00000-of-00001-5e672c5751f060d3.parquet",
                    "valid",
                    "02e8c1ccedae716f1e43cc813fcb7823c3db666ea92638820aba80e8cef451ab",
                ),
                DataFile(
                    "data/test-00000-of-00001-9c49eeff30aacaa8.parquet",
                    "test",
                    "aa426cbdb202bf8703b658bcb31fd1878ca7cfd33ca07d3b703dc94ca6a2b651",
                ),
            ),
            files_complete=True,
            notes="Revision used by many projects; shard names as listed by projects that read them. The two "
            "sha256 values are as another project pinned them (not observed here); the others are logged on "
            "first download. 13,328 + 117 + 165 rows, Table 1's 13,610.",
        ),
        SourceDownload(
            name="codeforces",
            source="codeforces",
            repo="open-r1/codeforces-cots",
            revision=UNCONFIRMED,
            files=(),
            files_complete=False,
            patterns={"train": "solutions_py/train-*.parquet"},
            notes="Python generations (config solutions_py, 9.56k rows) whose last ```python block is the solution. "
            "Folder name, shard names and commit unconfirmed.",
        ),
        SourceDownload(
            name="codeforces_problems",
            source="codeforces",
            repo="open-r1/codeforces",
            revision=UNCONFIRMED,
            files=(),
            files_complete=False,
            patterns={"train": "data/train-*.parquet", "test": "data/test-*.parquet"},
            notes="The problems and their official tests, joined to the generations by id (seeds.load_files "
            "problem_paths). Shard names and commit unconfirmed; its train and test splits together (about "
            "10k problems) would match Table 1's 10,024 (exact split sizes unconfirmed).",
        ),
    )
}


def local_name(path: str) -> str:
    """The file name a download gets on disk: its repository path with / as __."""
    return path.replace("/", "__")


def files_from_listing(spec: SourceDownload, listing: Iterable[str]) -> tuple[DataFile, ...]:
    """The data files of ``spec`` among a repository listing (for a spec whose files are
    given by patterns), sorted by path."""
    if spec.files_complete:
        return spec.files
    found = []
    for path in sorted(set(listing)):
        for split, pattern in spec.patterns.items():
            if fnmatch.fnmatchcase(path, pattern):
                found.append(DataFile(path, split))
                break
    if not found:
        raise UserError(f"{spec.repo}: no file in the listing matches {sorted(spec.patterns.values())}")
    return tuple(found)


def file_url(spec: SourceDownload, path: str, revision: str | None = None) -> str:
    rev = revision or spec.revision
    if not rev or rev == UNCONFIRMED:
        raise UserError(
            f"{spec.repo} has no confirmed revision: set one in config (a commit hash, or main for a "
            f"run that cannot be repeated exactly)"
        )
    return f"{HUB}/{spec.repo}/resolve/{rev}/{path}"


def rule_downloads(
    name: str,
    revision: str | None = None,
    sha256: Mapping[str, str] | None = None,
    listing: Iterable[str] | None = None,
) -> list[dict]:
    """One row per file for the download rule: ``{"url", "file" (local name), "sha256",
    "split", "path"}``. ``revision`` overrides the spec's; ``sha256`` (local name ->
    hash, from config) overrides the pinned hashes; ``listing`` supplies the files of a
    spec that only has patterns."""
    if name not in DOWNLOADS:
        raise UserError(f"no seed download named {name!r}; one of {', '.join(DOWNLOADS)}")
    spec = DOWNLOADS[name]
    if not spec.files_complete and listing is None:
        raise UserError(
            f"{spec.repo}: the data files are not pinned; list the repository at the chosen revision "
            f"and pass the listing (patterns {sorted(spec.patterns.values())})"
        )
    files = spec.files if spec.files_complete else files_from_listing(spec, listing or ())
    pins = dict(sha256 or {})
    return [
        {
            "url": file_url(spec, f.path, revision),
            "file": local_name(f.path),
            "sha256": pins.get(local_name(f.path)) or f.sha256,
            "split": f.split,
            "path": f.path,
        }
        for f in files
    ]
