"""Workflow steps' bookkeeping: adapter hand-over between rounds, skipped training, errors."""

import pytest

from selfplay.errors import UserError
from selfplay.pipeline.sinq import TRAINING_RECORD, resolve_adapter, train_agent
from selfplay.pipeline.step import optional_path, step
from selfplay.records import read_json, read_jsonl, write_json, write_jsonl


def cfg():
    return {"seed": 3, "sinq": {"training": {"alice": {"lora_r": 4}, "bob": {"lora_r": 4}}}}


def test_round_without_examples_keeps_the_previous_adapter(tmp_path):
    prev = tmp_path / "round1" / "adapter_alice"
    write_json(prev / TRAINING_RECORD, {"trained": True})
    trainset = tmp_path / "round2" / "train_alice.jsonl"
    write_jsonl(trainset, [])
    out = tmp_path / "round2" / "adapter_alice"
    rec = train_agent(cfg(), "alice", str(trainset), "no-model-needed", str(out), "round2", str(prev))
    assert rec["trained"] is False and "no" in rec["reason"].lower()
    assert read_json(out / TRAINING_RECORD)["use_adapter"] == str(prev)
    assert resolve_adapter(str(out)) == str(prev)  # round 3 generates with round 1's adapter


def test_first_round_without_examples_means_base_model(tmp_path):
    trainset = tmp_path / "t.jsonl"
    write_jsonl(trainset, [])
    out = tmp_path / "adapter"
    train_agent(cfg(), "alice", str(trainset), "m", str(out), "round1", None)
    assert resolve_adapter(str(out)) is None


def test_unfinished_training_is_an_error(tmp_path):
    (tmp_path / "adapter").mkdir()
    with pytest.raises(UserError, match="did not finish"):
        resolve_adapter(str(tmp_path / "adapter"))


def test_corrupt_file_is_one_line_naming_file_and_line(tmp_path):
    bad = tmp_path / "cands.jsonl"
    bad.write_text('{"ok": 1}\n{"truncated": \n')
    with pytest.raises(UserError, match=r"cands.jsonl:2: not a JSON line"):
        read_jsonl(bad)


def test_step_turns_user_errors_into_one_line_exit(tmp_path):
    log = tmp_path / "x.log"
    with pytest.raises(SystemExit) as ex:
        with step("demo", str(log)):
            raise UserError("the thing is broken; fix it")
    assert str(ex.value) == "error in demo: the thing is broken; fix it"
    assert "the thing is broken" in log.read_text()


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "out.jsonl"
    write_jsonl(target, [{"a": 1}])

    def rows():
        yield {"a": 2}
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError):
        write_jsonl(target, rows())
    assert read_jsonl(target) == [{"a": 1}]
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_optional_path():
    assert optional_path([]) is None and optional_path(["a"]) == "a" and optional_path("b") == "b"
