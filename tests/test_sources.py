"""Source programs: HumanEval from its PyPI package, split in two halves; MBPP parsing."""

import ast

import pytest

from selfplay.data import sources
from selfplay.errors import UserError


def test_humaneval_halves_are_disjoint_complete_programs():
    train, test = sources.humaneval_sources("train"), sources.humaneval_sources("test")
    assert len(train) == len(test) == 82
    assert not {s["id"] for s in train} & {s["id"] for s in test}
    for s in train + test:
        tree = ast.parse(s["code"])
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert s["entry_point"] in names
        assert '"""' not in s["code"]  # docstrings dropped: code only, as MBPP's code field


def test_humaneval_sources_run(tmp_path):
    # A canonical solution must behave: has_close_elements is the first train task.
    src = sources.humaneval_sources("train")[0]
    ns = {}
    exec(compile(src["code"], "<humaneval>", "exec"), ns)  # trusted packaged data, not model output
    assert ns[src["entry_point"]]([1.0, 2.0, 2.05], 0.1) is True


def test_ids_are_stable():
    assert [s["id"] for s in sources.humaneval_sources("test")] == [
        s["id"] for s in sources.humaneval_sources("test")
    ]


def test_bad_split_is_a_user_error():
    with pytest.raises(UserError, match="split"):
        sources.humaneval_sources("validation")


def test_mbpp_entry_point_is_the_tested_function():
    code = "def helper(x):\n    return x\n\ndef remove_Occ(s, ch):\n    return helper(s).replace(ch, '')\n"
    assert sources.mbpp_entry_point(code, ['assert remove_Occ("hello","l") == "heo"']) == "remove_Occ"
    assert sources.mbpp_entry_point(code, []) == "remove_Occ"


def test_mbpp_parquet_is_read(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        [
            {
                "task_id": 601,
                "text": "t",
                "code": "def f(a):\r\n    return a + 1",
                "test_list": ["assert f(1) == 2"],
            },
            {"task_id": 602, "text": "t", "code": "def g(:", "test_list": []},  # broken: skipped
        ]
    )
    path = tmp_path / "train.parquet"
    frame.to_parquet(path)
    out = sources.mbpp_sources(path, "train")
    assert [s["entry_point"] for s in out] == ["f"]
    assert out[0]["code"] == "def f(a):\n    return a + 1"


def test_download_checksum_mismatch_keeps_nothing(tmp_path):
    src = tmp_path / "data.bin"
    src.write_bytes(b"hello")
    dest = tmp_path / "out" / "data.bin"
    with pytest.raises(UserError, match="checksum mismatch"):
        sources.download_checked(src.as_uri(), dest, "0" * 64)
    assert not dest.exists()
    got = sources.download_checked(src.as_uri(), dest, None)
    assert dest.read_bytes() == b"hello" and len(got) == 64
