"""Every benchmark download is pinned by revision and sha256 (selfplay.evaluate.pins): a
branch is refused when the config is checked, the first download of an unpinned file
records its digest in the lock file, and any later mismatch stops with one line naming
the file and both digests."""

from __future__ import annotations

import hashlib
import logging

import pytest

from selfplay.errors import UserError
from selfplay.evaluate import pins
from selfplay.evaluate.registry import ADAPTERS, benchmark
from selfplay.evaluate.settings import check_download_pins

LOG = logging.getLogger("test")


def _fetched(tmp_path, data: bytes):
    tmp = tmp_path / ".f.unchecked"
    tmp.write_bytes(data)
    return tmp


def test_every_benchmark_download_names_a_commit_or_release():
    for name in ADAPTERS:
        for spec in benchmark(name).downloads:
            url = spec["url"].format(revision="28441b6024e71d4a1c1c0f6bf171c935cd5a43f2")
            assert pins.check_revision(url)
            assert spec["sha256"] is None or pins.SHA256.match(spec["sha256"])


@pytest.mark.parametrize(
    "url",
    [
        "https://huggingface.co/datasets/nuprl/MultiPL-E/resolve/main/humaneval-hs/test-00000-of-00001.parquet",
        "https://raw.githubusercontent.com/o/r/master/x.csv",
        "https://example.org/data.jsonl",
    ],
)
def test_a_branch_or_an_unknown_host_is_refused(url):
    with pytest.raises(UserError):
        pins.check_revision(url)


def test_the_config_check_refuses_a_branch_revision_and_a_pin_for_no_file():
    # MultiPL-E's URL takes its revision from config: `main` stops the plan, naming the key
    with pytest.raises(UserError, match=r"humaneval_hs\.revision: .*'main' is not a commit"):
        check_download_pins({"revision": "main", "sha256": {}}, "humaneval_hs")
    check_download_pins(
        {"revision": "28441b6024e71d4a1c1c0f6bf171c935cd5a43f2", "sha256": {}}, "humaneval_hs"
    )
    with pytest.raises(UserError, match="not a file livecodebench downloads"):
        check_download_pins({"sha256": {"test7.jsonl": "0" * 64}}, "livecodebench")


def test_first_download_records_the_pin_and_later_ones_must_match(tmp_path):
    lock, dest = tmp_path / "pins.tsv", tmp_path / "out" / "f.jsonl"
    dest.parent.mkdir()
    url = "https://huggingface.co/datasets/a/b/resolve/0123456789abcdef0123456789abcdef01234567/f.jsonl"
    got = pins.settle(_fetched(tmp_path, b"first"), dest, "bench/f.jsonl", url, None, None, lock, LOG)
    assert got == hashlib.sha256(b"first").hexdigest() and dest.read_bytes() == b"first"
    assert pins.read_lock(lock) == {("bench/f.jsonl", url): got}
    # the same bytes again: fine; other bytes: one line with the file and both digests
    pins.settle(_fetched(tmp_path, b"first"), dest, "bench/f.jsonl", url, None, None, lock, LOG)
    with pytest.raises(UserError) as err:
        pins.settle(_fetched(tmp_path, b"changed"), dest, "bench/f.jsonl", url, None, None, lock, LOG)
    message = str(err.value)
    assert "\n" not in message and message.startswith("f.jsonl: sha256 mismatch")
    assert got in message and hashlib.sha256(b"changed").hexdigest() in message
    assert dest.read_bytes() == b"first" and not (tmp_path / ".f.unchecked").exists()


def test_a_config_pin_wins_and_is_checked(tmp_path):
    lock, dest = tmp_path / "pins.tsv", tmp_path / "f.bin"
    url = "https://github.com/o/r/releases/download/v0.1.10/f.bin"
    wrong = "ab" * 32
    with pytest.raises(UserError, match=f"pinned {wrong} \\(config\\)"):
        pins.settle(_fetched(tmp_path, b"x"), dest, "b/f.bin", url, wrong, None, lock, LOG)
    assert not lock.exists()  # a pinned file never writes the lock
    right = hashlib.sha256(b"x").hexdigest()
    assert pins.settle(_fetched(tmp_path, b"x"), dest, "b/f.bin", url, right, None, lock, LOG) == right


def test_the_lock_is_keyed_by_url_and_rejects_malformed_lines(tmp_path):
    lock = tmp_path / "pins.tsv"
    pins.record_pin(lock, "b/f", "https://x/1", "a" * 64)
    assert pins.record_pin(lock, "b/f", "https://x/1", "b" * 64) == "a" * 64  # the first pin stays
    pins.record_pin(lock, "b/f", "https://x/2", "c" * 64)  # another revision: its own pin
    assert len(pins.read_lock(lock)) == 2 and lock.read_text().startswith("#")
    lock.write_text("b/f\thttps://x/1\tnot-a-digest\n")
    with pytest.raises(UserError, match="pins.tsv:1"):
        pins.read_lock(lock)


def test_the_download_rule_passes_pins_and_the_lock_through_params():
    from pathlib import Path

    rule = (Path(__file__).resolve().parents[1] / "rules" / "evaluate.smk").read_text()
    block = rule[rule.index("rule eval_download:") : rule.index("rule eval_supplied:")]
    for param in ("config_sha256=", "spec_sha256=", "lock=DOWNLOAD_PINS", "eval_download.py"):
        assert param in block
