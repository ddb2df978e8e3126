"""Bob's stage, shared by the two equivalence games (SInQ and the Haskell track):
which instances he is asked about, what each request records, and a recorded answer
that names no such instance."""

from __future__ import annotations

import pytest

from selfplay.errors import UserError
from selfplay.pipeline import agents, seq, sinq
from selfplay.records import read_jsonl, write_jsonl

CANDIDATES = [
    {"id": "a", "verified": True},
    {"id": "b", "verified": False},
    {"id": "c", "verified": True},
]


def test_bob_is_asked_about_the_verified_candidates_only(tmp_path):
    path = tmp_path / "candidates.jsonl"
    write_jsonl(path, CANDIDATES)
    assert list(agents.verified_instances(str(path))) == ["a", "c"]


@pytest.mark.parametrize("steps", [sinq, seq], ids=["sinq", "seq"])
def test_each_track_records_one_request_per_verified_instance(steps, tmp_path, monkeypatch):
    path = tmp_path / "candidates.jsonl"
    write_jsonl(path, CANDIDATES)
    seen = {}

    def request(inst, stage, who, cfg, adapter):
        return ("request", inst["id"], stage, who, adapter)

    def generate(cfg, model_dir, requests, metas, out, what):
        seen.update(requests=requests, metas=metas, out=out, what=what)

    monkeypatch.setattr(steps, "bob_request", request)
    monkeypatch.setattr(agents, "generate_to_file", generate)
    steps.bob_generate({}, "round1", "trained", str(path), "model", None, str(tmp_path / "out.jsonl"))
    assert seen["requests"] == [("request", i, "round1", "trained", None) for i in ("a", "c")]
    assert [m["instance_id"] for m in seen["metas"]] == ["a", "c"]
    assert all(m["role"] == "bob" and m["who"] == "trained" and m["stage"] == "round1" for m in seen["metas"])
    assert seen["what"].endswith("bob[trained] round1")


def test_no_verified_instance_writes_an_empty_recording(tmp_path):
    path = tmp_path / "candidates.jsonl"
    write_jsonl(path, [{"id": "b", "verified": False}])
    out = tmp_path / "bob.jsonl"
    sinq.bob_generate({}, "round1", "untrained", str(path), None, None, str(out))
    assert read_jsonl(out) == []


def test_an_answer_about_an_unknown_instance_is_one_line_naming_both_files():
    record = {"meta": {"instance_id": "zz"}}
    with pytest.raises(UserError, match=r"bob\.jsonl: Bob answered instance zz .* in cands\.jsonl"):
        agents.answered_instance({"a": {}}, record, "bob.jsonl", "cands.jsonl")
    assert agents.answered_instance({"zz": {"id": "zz"}}, record, "bob.jsonl", "cands.jsonl") == {"id": "zz"}
