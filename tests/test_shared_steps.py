"""The pieces every track's steps share: accumulated labels, Bob's training set, Bob's
accuracy for the tables, and finishing a figure."""

from __future__ import annotations

from selfplay.pipeline.trainsets import accumulated_labeled, write_bob_trainset
from selfplay.records import read_jsonl, read_jsonl_all, write_jsonl
from selfplay.report.bob import bob_accuracy
from selfplay.report.figures import finish_figure, pyplot


def inst(id_, difficulty, correct=()):
    samples = [{"output": f"{id_}-answer{k}", "correct": ok} for k, ok in enumerate(correct)]
    return {
        "id": id_,
        "difficulty": difficulty,
        "bob": {"n": len(samples), "n_correct": sum(correct), "samples": samples},
    }


def test_accumulated_labels_count_each_instance_once_in_id_order(tmp_path):
    r1, r2 = tmp_path / "r1.jsonl", tmp_path / "r2.jsonl"
    write_jsonl(r1, [inst("b", 10.0), inst("a", None), inst("c", 0.0)])
    write_jsonl(r2, [{**inst("b", 3.0), "round": 2}, inst("d", 5.0)])
    items = accumulated_labeled([str(r1), str(r2)])
    assert [i["id"] for i in items] == ["b", "c", "d"]  # unlabelled 'a' left out
    assert items[0]["difficulty"] == 10.0 and "round" not in items[0]  # the first round's label is kept


def test_bob_trainset_holds_only_his_correct_answers_in_a_fixed_order(tmp_path):
    shard0, shard1, out = tmp_path / "s0.jsonl", tmp_path / "s1.jsonl", tmp_path / "bob.jsonl"
    write_jsonl(shard0, [inst("z", 5.0, [True, False, True])])
    write_jsonl(shard1, [inst("a", 10.0, [False, False]), inst("m", 0.0, [True])])
    stats = write_bob_trainset(
        [str(shard0), str(shard1)],
        str(out),
        lambda i, text: {"completion": text, "difficulty": i["difficulty"]},
        "test",
    )
    rows = read_jsonl(out)
    assert stats == {"examples": 3}
    assert [(r["instance_id"], r["sample"], r["completion"]) for r in rows] == [
        ("m", 0, "m-answer0"),
        ("z", 0, "z-answer0"),
        ("z", 2, "z-answer2"),
    ]
    assert all(r["kind"] == "bob" for r in rows) and rows[0]["difficulty"] == 0.0


def test_bob_accuracy_is_the_share_of_all_sampled_answers():
    labeled = [inst("a", 0.0, [True, True, True]), inst("b", 10.0, [False, False, False, True])]
    assert bob_accuracy(labeled) == (100.0 * 4 / 7, 2, 7)
    assert bob_accuracy([]) == (None, 0, 0)


def test_jsonl_shards_read_as_one_list_in_order(tmp_path):
    write_jsonl(tmp_path / "0.jsonl", [{"i": 0}, {"i": 1}])
    write_jsonl(tmp_path / "1.jsonl", [{"i": 2}])
    assert [r["i"] for r in read_jsonl_all([tmp_path / "0.jsonl", tmp_path / "1.jsonl"])] == [0, 1, 2]


def test_finish_figure_writes_every_file_notes_empty_points_and_frees_the_figure(tmp_path):
    plt = pyplot()
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    png, pdf = tmp_path / "f.png", tmp_path / "f.pdf"
    finish_figure(fig, str(png), str(pdf), empty=[3], what="rounds")
    assert png.read_bytes()[:4] == b"\x89PNG" and pdf.read_bytes()[:4] == b"%PDF"
    assert [t.get_text() for t in fig.texts] == ["no verified instances in rounds [3]"]
    assert fig.number not in plt.get_fignums()
    assert not list(tmp_path.glob(".*tmp*"))  # no half-written file left beside them
