"""Paper 002's refiner and test writer as a served model (evolve.generator_served: the
paper refines with GPT-4.1-mini behind OpenAI's API): its requests go through the openai
backend to that server while the rest of the run keeps config backend; a replay of the
run's recordings needs no server; naming the generator twice is refused in one line."""

from __future__ import annotations

import copy

import pytest
from test_llm_backends import FakeChatServer
from test_plan_pool_shards import SAMPLING
from test_plan_pool_shards import cfg as evolve_cfg  # noqa: F401 (a fixture)

from selfplay.errors import UserError
from selfplay.pipeline import evolve
from selfplay.records import read_jsonl, write_jsonl
from selfplay.tracks.evolve.settings import check

GPT = "gpt-4.1-mini-2025-04-14"


@pytest.fixture()
def server():
    srv = FakeChatServer()
    yield srv
    srv.close()


@pytest.fixture()
def seeds(tmp_path):
    path = tmp_path / "dedup.jsonl"
    rows = [
        {
            "id": f"taco-{i}",
            "source": "taco",
            "question": f"Add {i} to x.",
            "solutions": [f"def f(x): return x+{i}"],
        }
        for i in range(3)
    ]
    write_jsonl(path, rows)
    return path


def served(cfg, url):
    out = copy.deepcopy(cfg)
    out["backend"] = {"name": "transformers", "model": "unused"}  # the run's own backend
    out["model"] = {"name": "policy", "source": "local", "path": "/nonexistent/policy"}
    out["evolve"]["generator_served"] = {
        "model": GPT,
        "base_url": url,
        "api_key_env": "SELFPLAY_TEST_KEY",
        "concurrency": 2,
        "reasoning": False,
    }
    return out


def test_the_refinements_come_from_the_served_model_with_the_refine_sampling(
    evolve_cfg,  # noqa: F811
    server,
    seeds,
    tmp_path,
    monkeypatch,
):
    monkeypatch.setenv("SELFPLAY_TEST_KEY", "sekrit")
    cfg = served(evolve_cfg, server.url)
    out = tmp_path / "refine.jsonl"
    evolve.refine_generate(cfg, str(seeds), None, str(out))  # no model folder: none is loaded
    records = read_jsonl(out)
    assert len(records) == 3 and len(server.bodies) == 3
    assert all(r["backend"]["name"] == "openai" and r["backend"]["model"] == GPT for r in records)
    assert all(r["outputs"][0].startswith(f"{GPT}|") for r in records)  # the server's answers
    for body in server.bodies:
        assert body["model"] == GPT and body["temperature"] == SAMPLING["temperature"]
        assert body["top_p"] == SAMPLING["top_p"] and body["max_tokens"] == SAMPLING["max_new_tokens"]
    assert all(h.get("Authorization") == "Bearer sekrit" for h in server.headers)
    # a replay of the recording answers the same requests without the server
    replay = copy.deepcopy(cfg)
    replay["backend"] = {"name": "replay", "files": [str(out)], "on_missing": "error"}
    again = tmp_path / "again.jsonl"
    evolve.refine_generate(replay, str(seeds), None, str(again))
    assert [r["outputs"] for r in read_jsonl(again)] == [r["outputs"] for r in records]
    assert len(server.bodies) == 3


def test_the_generator_named_twice_is_refused_in_one_line(evolve_cfg):  # noqa: F811
    cfg = served(evolve_cfg, "http://127.0.0.1:9/v1")
    cfg["evolve"]["generator"] = {"name": "local", "source": "local", "path": "/x"}
    with pytest.raises(UserError, match="evolve.generator and evolve.generator_served") as err:
        check(cfg)
    assert "\n" not in str(err.value)
