"""Recording and replaying generations (no model needed: a test-double backend stands in)."""

from __future__ import annotations

import json

import pytest

from selfplay.errors import UserError
from selfplay.llm.base import Backend, GenerationRequest, SamplingParams, recording_key
from selfplay.llm.factory import make_backend
from selfplay.llm.recording import generate_and_record
from selfplay.records import read_jsonl, sha256_tree


class EchoBackend(Backend):
    """Test double: deterministic texts derived from the request, counts calls."""

    name = "echo"

    def __init__(self):
        self.calls = 0

    def generate(self, requests):
        self.calls += 1
        return [
            [f"{r.messages[-1]['content']}#{r.sampling.seed}#{r.adapter}#{j}" for j in range(r.sampling.n)]
            for r in requests
        ]

    def describe(self):
        return {"name": self.name, "model": "none"}


def req(text, seed=0, n=2, adapter=None):
    return GenerationRequest(
        [{"role": "system", "content": "sys"}, {"role": "user", "content": text}],
        SamplingParams(temperature=0.7, max_new_tokens=16, n=n, seed=seed),
        adapter=adapter,
    )


@pytest.fixture()
def adapter(tmp_path):
    d = tmp_path / "adapters" / "round3"
    d.mkdir(parents=True)
    (d / "adapter_config.json").write_text('{"r": 4}')
    (d / "adapter_model.safetensors").write_bytes(b"\x00" * 32)
    return d


def test_generate_and_record_then_replay_round_trip(tmp_path, adapter):
    reqs = [req("alpha"), req("beta", n=1), req("alpha", seed=1, adapter=str(adapter))]
    out = tmp_path / "gen.jsonl"
    records = generate_and_record(EchoBackend(), reqs, out, meta={"stage": "propose"})
    assert read_jsonl(out) == records
    assert [r["key"] for r in records] == [recording_key(r.messages, r.sampling) for r in reqs]
    first = records[0]
    assert set(first) == {
        "key",
        "messages",
        "sampling",
        "adapter",
        "adapter_sha256",
        "answer_format",
        "backend",
        "outputs",
        "meta",
        "seconds",
    }
    assert first["sampling"] == reqs[0].sampling.to_dict() and first["meta"] == {"stage": "propose"}
    assert first["adapter"] is None and first["adapter_sha256"] is None and first["answer_format"] is None
    assert records[2]["adapter"] == str(adapter) and records[2]["adapter_sha256"] == sha256_tree(adapter)
    assert first["backend"] == {"name": "echo", "model": "none"} and first["seconds"] >= 0

    replay = make_backend({"name": "replay", "files": [str(out)]})
    # the adapter is not part of the key: replay works where the adapter path does not exist
    moved = [req("alpha"), req("beta", n=1), req("alpha", seed=1, adapter="/elsewhere/round3")]
    assert replay.generate(moved) == EchoBackend().generate(reqs)
    assert replay.describe()["hits"] == 3 and replay.describe()["misses"] == 0


def test_replay_reads_several_hand_written_files(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    r1, r2 = req("one", n=1), req("two", n=3)
    a.write_text(json.dumps({"key": r1.key, "outputs": ["uno"]}) + "\n\n")
    b.write_text(
        json.dumps({"key": r2.key, "outputs": ["x", "y", "z"]})
        + "\n"
        + json.dumps({"key": r1.key, "outputs": ["other"]})
        + "\n"
    )
    replay = make_backend({"name": "replay", "files": [str(a), str(b)]})
    assert replay.generate([r2, r1]) == [["x", "y", "z"], ["uno"]]  # first file wins for r1
    assert replay.describe()["conflicts"] == 1 and len(replay) == 2


def test_replay_missing_key_error_names_key_prompt_and_files(tmp_path):
    f = tmp_path / "rec.jsonl"
    generate_and_record(EchoBackend(), [req("present")], f)
    replay = make_backend({"name": "replay", "files": [str(f)], "on_missing": "error"})
    missing = req("Please write a function that reverses a list", seed=42)
    with pytest.raises(UserError) as exc:
        replay.generate([req("present"), missing])
    msg = str(exc.value)
    assert missing.key in msg and "Please write a function" in msg and str(f) in msg


def test_replay_missing_key_empty_mode_counts_misses(tmp_path):
    f = tmp_path / "rec.jsonl"
    generate_and_record(EchoBackend(), [req("present")], f)
    replay = make_backend({"name": "replay", "files": [str(f)], "on_missing": "empty"})
    out = replay.generate([req("absent", n=3), req("present"), req("also absent", n=1)])
    assert out[0] == ["", "", ""] and out[2] == [""] and out[1] == ["present#0#None#0", "present#0#None#1"]
    d = replay.describe()
    assert (
        d["misses"] == 2
        and d["hits"] == 1
        and d["missed_keys"] == [req("absent", n=3).key, req("also absent", n=1).key]
    )


@pytest.mark.parametrize(
    "content, what",
    [
        ('{"key": "k", "outputs": ["a"]}\n{"key": "k2", "outp\n', "not a JSON line"),
        ('{"key": "k", "outputs": ["a"]}\n[1, 2]\n', "expected a JSON object"),
        ('{"key": "k", "outputs": ["a"]}\n{"outputs": ["a"]}\n', "no string 'key'"),
        ('{"key": "k", "outputs": ["a"]}\n{"key": "k3", "outputs": "a"}\n', "'outputs' must be a list"),
    ],
)
def test_replay_corrupt_file_names_file_and_line(tmp_path, content, what):
    f = tmp_path / "bad.jsonl"
    f.write_text(content)
    with pytest.raises(UserError) as exc:
        make_backend({"name": "replay", "files": [str(f)]})
    assert f"{f}:2" in str(exc.value) and what in str(exc.value)


def test_replay_bad_config_and_wrong_n(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        make_backend({"name": "replay", "files": [str(tmp_path / "nope.jsonl")]})
    with pytest.raises(UserError, match="on_missing"):
        make_backend({"name": "replay", "files": [str(tmp_path / "x.jsonl")], "on_missing": "skip"})
    f = tmp_path / "rec.jsonl"
    r = req("q", n=2)
    f.write_text(json.dumps({"key": r.key, "outputs": ["only one"]}) + "\n")
    with pytest.raises(UserError, match="n=2"):
        make_backend({"name": "replay", "files": [str(f)]}).generate([r])


def test_record_rejects_missing_adapter_before_generating(tmp_path):
    backend = EchoBackend()
    with pytest.raises(UserError, match="not a directory"):
        generate_and_record(backend, [req("x", adapter=str(tmp_path / "missing"))], tmp_path / "o.jsonl")
    assert backend.calls == 0 and not (tmp_path / "o.jsonl").exists()


def test_record_meta_per_request_list(tmp_path):
    reqs = [req("a"), req("b")]
    records = generate_and_record(EchoBackend(), reqs, tmp_path / "m.jsonl", meta=[{"item": 1}, {"item": 2}])
    assert [r["meta"] for r in records] == [{"item": 1}, {"item": 2}]
    with pytest.raises(ValueError):
        generate_and_record(EchoBackend(), reqs, tmp_path / "m2.jsonl", meta=[{"item": 1}])


class ShortContextBackend(EchoBackend):
    """Test double with a context of 20 characters' worth of prompt: longer prompts do
    not fit, and a request that reaches ``generate`` anyway fails the whole call, as
    vLLM's does."""

    name = "short"

    def unfit(self, request):
        size = len(request.messages[-1]["content"])
        return f"prompt_too_long: {size} > 20" if size > 20 else None

    def generate(self, requests):
        assert all(self.unfit(r) is None for r in requests), "an over-long prompt reached the engine"
        return super().generate(requests)


def test_a_request_beyond_the_context_is_recorded_unfit_and_replays_the_same(tmp_path):
    reqs = [req("short one"), req("x" * 40, n=3), req("short two", n=1)]
    out = tmp_path / "gen.jsonl"
    records = generate_and_record(ShortContextBackend(), reqs, out, meta=None, chunk=2)
    assert [r.get("unfit") for r in records] == [None, "prompt_too_long: 40 > 20", None]
    assert "unfit" not in records[0]  # only where set: earlier recordings compare equal
    assert records[1]["outputs"] == ["", "", ""]  # n empty texts: every reader sees no answer
    assert records[0]["outputs"] == EchoBackend().generate([reqs[0]])[0]
    assert records[2]["outputs"] == EchoBackend().generate([reqs[2]])[0]
    # a bundle's replay leaves the same request out with the same reason
    replayed = tmp_path / "replayed.jsonl"
    again = generate_and_record(make_backend({"name": "replay", "files": [str(out)]}), reqs, replayed)
    strip = [{k: v for k, v in r.items() if k not in ("backend", "seconds")} for r in records]
    assert [{k: v for k, v in r.items() if k not in ("backend", "seconds")} for r in again] == strip


def test_replay_refuses_an_unfit_reason_that_is_not_text(tmp_path):
    f = tmp_path / "rec.jsonl"
    f.write_text(json.dumps({"key": "k", "outputs": [""], "unfit": 3}) + "\n")
    with pytest.raises(UserError, match="'unfit' must be a string"):
        make_backend({"name": "replay", "files": [str(f)]})
