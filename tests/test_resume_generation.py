"""Generation jobs keep their work: a job killed midway resumes from what it wrote (issue 19).

Every generation job writes through ``selfplay.llm.recording.generate_and_record``: the
requests go to the backend in fixed chunks (config ``generation.chunk_requests``) and each
finished chunk is appended, fsynced, to ``<output>.partial``; the output itself is written
at the end. The slow test runs a real generation job (``agents.generate_to_file``, the
tiny model on the transformers backend, sampled with n=2) in a subprocess, SIGKILLs it
once some chunks are on disk, runs it again, and compares the output with an
uninterrupted run's: identical in every byte but each record's ``seconds`` (a wall
time, different in any two runs). The fast tests cover the file's edge cases (a torn
last line, a partly written chunk, work of other settings) with a counting test double.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kill_midway import kill_when

from selfplay.llm.base import Backend, GenerationRequest, SamplingParams
from selfplay.llm.recording import generate_and_record, partial_path
from selfplay.records import read_jsonl

REPO = Path(__file__).resolve().parents[1]


def chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


class Counting(Backend):
    """A test double for the file logic: answers each prompt with a text made from its
    seed, and counts the requests it was asked to generate."""

    name = "counting"

    def __init__(self, tag: str = "a"):
        self.tag, self.asked = tag, 0

    def generate(self, requests):
        self.asked += len(requests)
        return [[f"{self.tag}:{r.seed}:{k}" for k in range(r.sampling.n)] for r in requests]

    def describe(self):
        return {"name": self.name, "tag": self.tag}


def requests(count: int, seed: int = 3) -> list[GenerationRequest]:
    sp = SamplingParams(temperature=1.0, max_new_tokens=8, n=2, seed=seed)
    return [GenerationRequest(chat(f"question {i}"), sp) for i in range(count)]


def without_seconds(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        rec.pop("seconds")
        out.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    return out


def test_an_uninterrupted_run_leaves_only_its_output(tmp_path):
    out = tmp_path / "gen.jsonl"
    backend = Counting()
    records = generate_and_record(backend, requests(7), out, meta=[{"i": i} for i in range(7)], chunk=3)
    assert (
        backend.asked == 7
        and read_jsonl(out) == records
        and [r["meta"]["i"] for r in records] == list(range(7))
    )
    assert not partial_path(out).exists()


@pytest.mark.parametrize("cut", ["torn_line", "partial_chunk", "whole_chunks"])
def test_a_killed_run_resumes_from_its_whole_chunks(tmp_path, cut):
    reqs, metas = requests(7), [{"i": i} for i in range(7)]
    whole = tmp_path / "whole.jsonl"
    generate_and_record(Counting(), reqs, whole, meta=metas, chunk=3)

    out = tmp_path / "gen.jsonl"
    partial = partial_path(out)

    class Killed(Counting):
        def generate(self, part):
            if self.asked >= 6:
                raise KeyboardInterrupt  # the kill, after two chunks are on disk
            return super().generate(part)

    with pytest.raises(KeyboardInterrupt):
        generate_and_record(Killed(), reqs, out, meta=metas, chunk=3)
    lines = partial.read_bytes().split(b"\n")
    assert len(lines) == 1 + 6 + 1 and lines[-1] == b""  # header, six records, nothing torn
    header = json.loads(lines[0])
    assert header["requests"] == 7 and header["chunk"] == 3
    if cut == "torn_line":  # the kill came while the last record was being written
        partial.write_bytes(b"\n".join(lines[:6]) + b"\n" + lines[6][: len(lines[6]) // 2])
    elif cut == "partial_chunk":  # two of the second chunk's three records made it
        partial.write_bytes(b"\n".join(lines[:6]) + b"\n")

    again = Counting()
    generate_and_record(again, reqs, out, meta=metas, chunk=3)
    assert again.asked == (1 if cut == "whole_chunks" else 4)  # the unfinished chunk is generated again
    assert without_seconds(out) == without_seconds(whole)
    assert not partial.exists()


def test_a_partial_file_of_other_work_is_not_resumed(tmp_path):
    """Another round seed, other metas, another chunk size or other backend settings: start over."""
    out = tmp_path / "gen.jsonl"
    partial = partial_path(out)

    def killed_run(reqs, metas, chunk, tag="a"):
        class Killed(Counting):
            def generate(self, part):
                if self.asked >= 3:
                    raise KeyboardInterrupt
                return super().generate(part)

        with pytest.raises(KeyboardInterrupt):
            generate_and_record(Killed(tag), reqs, out, meta=metas, chunk=chunk)
        assert partial.is_file()

    metas = [{"i": i} for i in range(6)]
    for changed in [
        dict(reqs=requests(6, seed=4)),
        dict(metas=[{"i": -i} for i in range(6)]),
        dict(chunk=2),
        dict(tag="b"),
    ]:
        killed_run(
            changed.get("reqs", requests(6)),
            changed.get("metas", metas),
            changed.get("chunk", 3),
            changed.get("tag", "a"),
        )
        fresh = Counting()
        generate_and_record(fresh, requests(6), out, meta=metas, chunk=3)
        assert fresh.asked == 6, changed  # nothing of the other work was taken
        assert all(r["outputs"][0].startswith("a:") for r in read_jsonl(out))
    # the same work resumes
    killed_run(requests(6), metas, 3)
    resumed = Counting()
    generate_and_record(resumed, requests(6), out, meta=metas, chunk=3)
    assert resumed.asked == 3


def test_an_unreadable_partial_file_is_not_resumed(tmp_path):
    out = tmp_path / "gen.jsonl"
    partial_path(out).write_bytes(b'{"partial_fo')  # killed while writing the header
    fresh = Counting()
    generate_and_record(fresh, requests(4), out, chunk=3)
    assert fresh.asked == 4 and len(read_jsonl(out)) == 4


# ----------------------------------------------------------------------------- real job

JOB = r"""
import sys
from selfplay.config import validate_config
from selfplay.llm.base import GenerationRequest, SamplingParams
from selfplay.pipeline.agents import generate_to_file
from selfplay.pipeline.step import step
import yaml

model_dir, out, log = sys.argv[1:4]
cfg = yaml.safe_load(open("config.yaml"))
cfg["backend"] = {"name": "transformers", "dtype": "float32", "batch_size": 2, "threads": 1}
cfg["generation"] = {"chunk_requests": 2}
validate_config(cfg)
sp = SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=12, n=2, seed=17)
topics = ["the sea", "a cat", "rain", "bread", "a river", "the moon", "snow", "a clock", "tea", "a bridge"]
reqs = [GenerationRequest([{"role": "user", "content": f"Write one short sentence about {t}."}], sp)
        for t in topics]
metas = [{"role": "test", "topic": t} for t in topics]
with step("resume test generation", log):
    generate_to_file(cfg, model_dir, reqs, metas, out, "resume test")
"""


def run_job(
    model_dir: Path, out: Path, kill_after_records: int | None = None
) -> subprocess.CompletedProcess | None:
    args = [sys.executable, "-c", JOB, str(model_dir), str(out), str(out) + ".log"]
    if kill_after_records is None:
        return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
    partial = partial_path(out)
    kill_when(
        args,
        lambda: partial.is_file() and partial.read_bytes().count(b"\n") >= 1 + kill_after_records,
        timeout=600,
        cwd=REPO,
    )
    return None


@pytest.mark.slow
def test_a_real_generation_job_killed_midway_resumes_to_the_same_output(tiny_model_dir, tmp_path):
    whole = tmp_path / "whole" / "gen.jsonl"
    done = run_job(tiny_model_dir, whole)
    assert done.returncode == 0, done.stderr[-3000:]

    out = tmp_path / "killed" / "gen.jsonl"
    run_job(tiny_model_dir, out, kill_after_records=4)  # two chunks of two on disk, then SIGKILL
    assert not out.exists()
    kept = partial_path(out).read_bytes().count(b"\n") - 1
    assert 4 <= kept < 10
    again = run_job(tiny_model_dir, out)
    assert again.returncode == 0, again.stderr[-3000:]
    log = Path(str(out) + ".log").read_text()
    resumed = kept // 2 * 2 if kept < 10 else 10
    assert f"resuming after {resumed} of 10 requests already generated" in log
    assert without_seconds(out) == without_seconds(whole)
    assert len({r["outputs"][0] for r in read_jsonl(out)}) == 10  # really sampled, per prompt
    assert not partial_path(out).exists()
