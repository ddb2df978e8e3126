"""The Haskell track's whole workflow on recorded (hand-written) model outputs.

Generation uses the `replay` backend with answers written here, so everything after
generation runs for real: parsing, GHC compile-and-run checks in the sandbox (SINQ
divergence, SEQ sanity on generated inputs), proof checking with retries, Bob's
labels, training sets, LoRA training on the real tiny model, tables and figures.
Liquid Haskell cannot be installed here: the main scenario uses tests/fakes/liquid,
a test double that stands for "the SMT check succeeded" on whatever passes the
project's own statement and escape-hatch checks; a second run without it shows that
no SEQ proof is then ever accepted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from workflow_helpers import (
    REPO,
    bundle_and_replay,
    default_config,
    jobs_run,
    run_snakemake,
    unpack_bundle,
    write_config,
)

from selfplay.haskell.liquid import LiquidSettings, check_proof, retry_feedback
from selfplay.records import content_id, read_json, read_jsonl, write_jsonl
from selfplay.tracks.seq.game import alice_request, bob_request, choose_game, proof_request
from selfplay.tracks.seq.parse import parse_alice
from selfplay.tracks.seq.proofs import MISSING
from selfplay.tracks.seq.verify import instance_id
from selfplay.tracks.stages import select_stage_sources

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("ghc") is None,
        reason=("GHC is missing: apt-get install ghc (scripts/install_system_test.sh does it as root)"),
    ),
]
FAKE_LIQUID = REPO / "tests" / "fakes" / "liquid"
EXP = "results/seq/hstest"

# name -> (signature, definition, SEQ answer's Q, SINQ answer's (Q, input))
PROGRAMS = {
    "triangular": (
        "Int -> Int",
        "triangular n\n  | n <= 0 = 0\n  | otherwise = n + triangular (n - 1)",
        "triangular_alt n = if n <= 0 then 0 else n * (n + 1) `div` 2",
        ("triangular_alt n\n  | n <= 1 = 0\n  | otherwise = n + triangular_alt (n - 1)", "1"),
    ),
    "countAbove": (
        "Int -> [Int] -> Int",
        "countAbove t xs = length (filter (> t) xs)",
        "countAbove_alt t xs = foldr (\\x acc -> if x > t then acc + 1 else acc) 0 xs",
        ("countAbove_alt t xs = length (filter (>= t) xs)", "2 [2,3]"),
    ),
    "clampInt": (
        "Int -> Int -> Int -> Int",
        "clampInt lo hi x = max lo (min hi x)",
        "clampInt_alt lo hi x = if x > hi then max lo hi else max lo x",
        ("clampInt_alt lo hi x = min hi (max lo x)", "5 1 3"),
    ),
    "sumSquares": (
        "[Int] -> Int",
        "sumSquares xs = sum (map (\\x -> x * x) xs)",
        "sumSquares_alt xs = foldr (\\x acc -> x * x + acc) 0 xs",
        ("sumSquares_alt xs = sum (map (\\x -> x * abs x) xs)", "[-2]"),
    ),
    "absDiff": (
        "Int -> Int -> Int",
        "absDiff a b = abs (a - b)",
        "absDiff_alt a b = if a >= b then a - b else b - a",
        ("absDiff_alt a b = a - b", "1 4"),
    ),
}
TRAIN, TEST = ["triangular", "countAbove", "clampInt", "sumSquares"], ["absDiff"]


def source(name: str) -> dict:
    sig, body, _, _ = PROGRAMS[name]
    code = f"{name} :: {sig}\n{body}\n"
    arg_types = [t.strip() for t in sig.split("->")[:-1]]
    return {
        "id": content_id({"name": name, "code": code}),
        "entry_point": name,
        "code": code,
        "origin": "reference",
        "arg_types": arg_types,
        "result_type": sig.split("->")[-1].strip(),
    }


def alice_text(name: str, game: str) -> str:
    sig, _, seq_q, (sinq_q, x) = PROGRAMS[name]
    q = seq_q if game == "seq" else sinq_q
    text = (
        f"<think>Rewrite {name}.</think>\nGenerated Program `Q`:\n```haskell\n{name}_alt :: {sig}\n{q}\n```\n"
    )
    return text + (f"Diverging Input `x`:\n{x}\n" if game == "sinq" else "")


def lemma(name: str, binders: str, pre: str = "") -> str:
    sig = PROGRAMS[name][0]
    types = [t.strip() for t in sig.split("->")[:-1]]
    spec = " -> ".join(f"{b}:{pre or t}" for b, t in zip(binders.split(), types))
    return (
        f"```haskell\n{{-@ lemma_{name}_equiv :: {spec} -> {{ {name} {binders} == {name}_alt {binders} }} @-}}\n"
        f"lemma_{name}_equiv :: {' -> '.join(types)} -> Proof\nlemma_{name}_equiv {binders}\n"
        f"  =   {name} {binders}\n  === {name}_alt {binders}\n  *** QED\n```\n"
    )


def bob_text(verdict: str) -> str:
    return f"<think>compare</think>\nThey look alike.\n\n# Equivalent?\n{verdict}\n"


def build_scenario(workdir: Path, liquid: str | None) -> tuple[dict, dict]:
    cfg = default_config()
    cfg["tracks"] = ["seq"]
    cfg["model"] = {"name": "tiny", "source": "local", "path": "MODEL"}
    rec_file = workdir / "recordings.jsonl"
    cfg["backend"] = {"name": "replay", "files": [str(rec_file)], "on_missing": "empty"}
    seq = cfg["seq"]
    seq.update(experiment="hstest", rounds=1, shards=2)
    seq["sources"].update(per_round=None, eval_train=None, eval_test=None)
    seq["proof"].update(attempts=2, liquid=liquid)
    seq["alice"]["samples_per_source"] = 1  # the recordings below hold one answer per program
    seq["game"]["seq_probability"] = 0.5  # the scenario's games were drawn at the paper's 50/50
    seq["translate"]["count"] = 1
    # Table 3 on the benchmark layer: two samples per problem (the recordings below)
    cfg["evaluation"]["modes"]["sampled"]["samples"] = 2
    # the layer's own check (bundled too): the shipped problems' references, and the base
    # model on one problem of a benchmark no track runs here
    cfg["evaluation"]["check"] = {"benchmarks": ["haskell_mini"], "base_model": ["mbpp"]}
    cfg["evaluation"]["benchmarks"]["mbpp"]["limit"] = 1
    cfg["evaluation"]["benchmarks"]["haskell_mini"]["limit"] = (
        4  # the scenario's problems, whatever the default's
    )
    seq["benchmarks"] = {
        "models": ["base", "bob"],
        "runs": {"haskell_mini": {"modes": ["sampled"], "models": ["base", "bob", "alice"]}},
    }
    small = {
        "lora_r": 4,
        "lora_alpha": 8,
        "max_steps": 1,
        "batch_size": 1,
        "grad_accum": 1,
        "max_length": 1024,
    }
    seq["training"] = {"alice": small, "bob": small}
    train, test = [source(n) for n in TRAIN], [source(n) for n in TEST]
    data = workdir / "resources" / "data" / "seq"
    write_jsonl(data / "reference_train.jsonl", train)
    write_jsonl(data / "reference_test.jsonl", test)
    write_jsonl(data / "reference_train.rejected.jsonl", [])
    write_jsonl(data / "reference_test.rejected.jsonl", [])

    recs, games = [], {}

    def record(req, outputs):
        recs.append({"key": req.key, "outputs": outputs})  # the key covers the answer format too

    settings = LiquidSettings.from_config({"command": str(FAKE_LIQUID)})
    for stage, sources in (("round1", train), ("eval_test", test)):
        for src in select_stage_sources(sources, stage, cfg, track="seq"):
            game = games[(stage, src["entry_point"])] = choose_game(cfg, stage, src["id"])
            text = alice_text(src["entry_point"], game)
            if (stage, src["entry_point"]) == ("round1", "sumSquares"):
                text = "I would rather not answer in the format."  # a parse failure
            record(alice_request(src, stage, game, cfg, None), [text])
            parsed = parse_alice(text, game, src["entry_point"], src["arg_types"])
            if not parsed.ok:
                continue
            cand = {
                "id": instance_id(game, src["code"], parsed.program, parsed.input_args),
                "entry_point": src["entry_point"],
                "name_q": parsed.name_q,
                "code_p": src["code"],
                "code_q": parsed.program,
                "arg_types": src["arg_types"],
                "game": game,
            }
            if game == "seq":
                binders = " ".join(f"x{i}" for i in range(1, len(src["arg_types"]) + 1))
                first = lemma(src["entry_point"], binders, pre="{v:Int | v > 0}")  # weaker: refused
                record(proof_request(cand, 1, None, cfg, None), [first])
                verdict = check_proof(
                    first,
                    p_source=cand["code_p"],
                    p_name=cand["entry_point"],
                    q_source=cand["code_q"],
                    q_name=cand["name_q"],
                    settings=settings,
                )
                record(
                    proof_request(cand, 2, retry_feedback(verdict), cfg, None),
                    [lemma(src["entry_point"], binders)],
                )
            whos = ("untrained",) if stage == "round1" else ("untrained", "trained")
            for who in whos:
                truth = "Yes" if game == "seq" else "No"
                other = "No" if truth == "Yes" else "Yes"
                record(
                    bob_request(cand, stage, who, cfg, None), [bob_text(truth), bob_text(other), "no verdict"]
                )
    # Table 3: the base model gets countVowels right once and writes one sample that does
    # not compile; the final Alice gets it right twice; Bob's answers are not recorded.
    from selfplay.config import validate_config
    from selfplay.evaluate.benchmarks.multipl_e import load_mini
    from selfplay.pipeline.evaluate import eval_request

    filled = validate_config(json.loads(json.dumps(cfg)))
    vowels = next(p for p in load_mini() if p["name"] == "countVowels")
    item = {"id": vowels["name"], "group": None, **vowels}
    right = '```haskell\ncountVowels :: String -> Int\ncountVowels s = length (filter (`elem` "aeiouAEIOU") s)\n```'
    record(
        eval_request(filled, "haskell_mini", "sampled", "base", item, None),
        [right, "```haskell\ncountVowels s = length +\n```"],
    )
    record(eval_request(filled, "haskell_mini", "sampled", "alice_r1", item, None), [right, right])
    write_jsonl(rec_file, recs)
    return cfg, games


@pytest.fixture(scope="module")
def seq_run(tmp_path_factory, tiny_model_dir):
    workdir = tmp_path_factory.mktemp("seq_workflow")
    cfg, games = build_scenario(workdir, str(FAKE_LIQUID))
    cfg["model"]["path"] = str(tiny_model_dir)
    write_config(workdir, cfg)
    targets = [f"results/tables/seq/hstest/{t}.md" for t in ("table2", "table3", "table6")] + [
        f"results/figures/seq/hstest/{f}.png" for f in ("figure3", "figure6", "figure7")
    ]
    proc = run_snakemake(workdir, *targets)
    return workdir, proc, games


def _cands(workdir: Path, stage: str) -> dict[str, dict]:
    return {
        c["entry_point"]: c
        for s in (0, 1)
        for c in read_jsonl(workdir / f"{EXP}/{stage}/candidates/shard{s}.jsonl")
    }


def test_both_games_are_played(seq_run):
    _, proc, games = seq_run
    round1 = {n: g for (stage, n), g in games.items() if stage == "round1"}
    assert set(round1.values()) == {"seq", "sinq"}, round1  # the seeded 50/50 draw gives both here
    jobs = jobs_run(proc)
    assert jobs["seq_alice_generate"] == 6 and jobs["seq_check"] == 6  # 3 stages x 2 shards
    assert jobs["seq_proof_generate"] == 12 and jobs["seq_proof_check"] == 12  # 2 attempts
    assert jobs["train_alice"] == 1 and jobs["train_bob"] == 1  # the shared training rules


def test_sinq_instances_are_verified_by_running_both_with_ghc(seq_run):
    workdir, _, games = seq_run
    cands = _cands(workdir, "round1")
    for name, cand in cands.items():
        if games[("round1", name)] == "sinq" and name != "sumSquares":
            assert cand["verified"], cand.get("reject_reason")
            assert cand["check"]["p"]["status"] == "value" and cand["check"]["diverges"]
            assert cand["check"]["q"]["status"] in ("value", "exception")
            assert cand["runtime"]["tools"]["ghc"]  # the verdict names the compiler it ran with
            # ... and the canary the compiler passed in this job before any verdict was believed
            assert [c["verifier"] for c in cand["runtime"]["canaries"] if c["passed"]] == ["ghc"]
    assert cands["sumSquares"]["reject_reason"] == "parse:no_program_section"


def test_seq_pairs_pass_sanity_then_need_a_proper_proof(seq_run):
    workdir, _, games = seq_run
    cands = _cands(workdir, "round1")
    seq_names = [n for n in TRAIN if games[("round1", n)] == "seq" and n != "sumSquares"]
    assert seq_names
    for name in seq_names:
        cand = cands[name]
        assert all(run["p"]["status"] == "value" for run in cand["sanity"])  # generated inputs, real GHC runs
        assert cand["verified"] and cand["proof_attempt"] == 2
        first, second = cand["proof_attempts"]
        assert first["status"] == "rejected" and second["status"] == "safe"
    checks = [c for s in (0, 1) for c in read_jsonl(workdir / f"{EXP}/round1/proof_check1/shard{s}.jsonl")]
    assert checks and all(not c["verdict"]["accepted"] and c["feedback"] for c in checks)
    accepted = [c for s in (0, 1) for c in read_jsonl(workdir / f"{EXP}/round1/proof_check2/shard{s}.jsonl")]
    assert accepted and all(c["verdict"]["accepted"] for c in accepted)
    # Liquid Haskell (here its test double) passed its canary in each checking job first.
    assert all(
        [k["verifier"] for k in c["runtime"]["canaries"] if k["passed"]] == ["liquid-haskell"]
        for c in checks + accepted
    )
    # The checker ran confined, as an unprivileged sandbox user, not as this test's user.
    assert all(
        c["verdict"]["isolation"]["netns"] and c["verdict"]["isolation"].get("uid") not in (None, 0)
        for c in accepted
    )


def test_labels_trainsets_and_adapters(seq_run):
    workdir, _, games = seq_run
    labeled = [
        i for s in (0, 1) for i in read_jsonl(workdir / f"{EXP}/round1/labeled_untrained/shard{s}.jsonl")
    ]
    assert labeled and all(
        i["bob"]["n_correct"] == 1 and i["difficulty"] == pytest.approx(20 / 3) for i in labeled
    )
    rows = read_jsonl(workdir / f"{EXP}/round1/train_alice.jsonl")
    kinds = [r["kind"] for r in rows]
    n_seq = sum(i["game"] == "seq" for i in labeled)
    assert kinds.count("alice_main") == len(labeled)  # all hard (6.67 > tau = 3)
    assert kinds.count("alice_proof") == n_seq
    proof_rows = [r for r in rows if r["kind"] == "alice_proof"]
    assert all(
        "lemma_" in r["completion"][0]["content"] and "*** QED" in r["completion"][0]["content"]
        for r in proof_rows
    )
    assert all(
        r["prompt"][1]["content"].startswith("Difficulty level: 10")
        for r in rows
        if r["kind"] == "alice_main"
    )
    rec = read_json(workdir / f"{EXP}/round1/adapter_alice/training_record.json")
    assert rec["trained"] and rec["n_examples"] == len(rows)
    bob_rows = read_jsonl(workdir / f"{EXP}/bob/train_bob.jsonl")
    assert len(bob_rows) == len(labeled)  # one correct answer each
    assert read_json(workdir / f"{EXP}/bob/adapter/training_record.json")["trained"]


def test_tables_and_figures(seq_run):
    workdir, _, games = seq_run
    table6 = (workdir / "results/tables/seq/hstest/table6.md").read_text()
    assert "| SEQ" in table6 and "| SINQ" in table6 and "not available" not in table6
    table2 = (workdir / "results/tables/seq/hstest/table2.md").read_text()
    assert (
        "Reference programs (Test)" in table2 and "33.33" in table2
    )  # 1 of 3 answers right, base and trained
    table3 = (workdir / "results/tables/seq/hstest/table3.csv").read_text().splitlines()
    # 1 of 2 samples right on 1 of the 4 problems the scenario evaluates
    assert table3[1].startswith("Haskell mini (shipped),Bob,12.5,0.0,-12.5,0.5,0.0,-0.5,4,2,")
    assert table3[2].startswith("Haskell mini (shipped),Alice,12.5,25.0,+12.5,0.5,0.0,-0.5,4,2,")
    assert "no adapter was trained" not in (workdir / "results/tables/seq/hstest/table3.md").read_text()
    for fig in ("figure3", "figure6", "figure7"):
        assert (workdir / f"results/figures/seq/hstest/{fig}.png").stat().st_size > 1000


def test_without_liquid_haskell_no_proof_is_accepted(tmp_path):
    cfg, games = build_scenario(tmp_path, None)
    cfg["model"]["path"] = "unused-with-replay"
    cfg["seq"]["proof"]["liquid"] = str(tmp_path / "no-liquid-here")
    write_config(tmp_path, cfg)
    targets = [f"{EXP}/round1/candidates/shard{s}.jsonl" for s in (0, 1)] + [
        "results/tables/seq/hstest/table6.md"
    ]
    run_snakemake(tmp_path, *targets)
    cands = _cands(tmp_path, "round1")
    seq_cands = [c for n, c in cands.items() if games[("round1", n)] == "seq" and n != "sumSquares"]
    assert seq_cands and not any(c["verified"] for c in seq_cands)
    assert {c["reject_reason"] for c in seq_cands} == {f"proof:{MISSING}"}
    checks = [c for s in (0, 1) for c in read_jsonl(tmp_path / f"{EXP}/round1/proof_check1/shard{s}.jsonl")]
    assert checks and all(c["verdict"]["status"] in ("missing", "rejected") for c in checks)
    assert (
        "Liquid Haskell was not available" in (tmp_path / "results/tables/seq/hstest/table6.md").read_text()
    )


# --------------------------------------------------------------------------- the bundle round trip


@pytest.fixture(scope="module")
def seq_bundle(seq_run, tmp_path_factory):
    """`snakemake bundle` on the finished run, then `selfplay bundle replay` with no model library importable."""
    return bundle_and_replay(seq_run[0], "hstest", tmp_path_factory)


def test_bundle_holds_the_haskell_run(seq_bundle, tmp_path):
    workdir, proc, _, _ = seq_bundle
    assert jobs_run(proc)["bundle"] == 1
    root, kinds = unpack_bundle(workdir, "hstest", tmp_path)
    meta = read_json(root / "bundle.json")
    assert meta["tracks"] == ["seq"] and meta["experiments"] == {"seq": "hstest"}
    for rel, kind in [
        (f"{EXP}/round1/alice/shard0.jsonl", "recording"),
        (f"{EXP}/round1/proof_gen2/shard1.jsonl", "recording"),
        (f"{EXP}/eval_test/bob_trained/shard0.jsonl", "recording"),
        ("results/seq/translate/generations.jsonl", "recording"),
        (f"{EXP}/eval/haskell_mini/alice_r1/sampled.jsonl", "recording"),
        (f"{EXP}/round1/proof_check2/shard0.jsonl", "verdict"),
        (f"{EXP}/round1/candidates/shard1.jsonl", "verdict"),
        (f"{EXP}/eval/haskell_mini/base/sampled.scored.jsonl", "verdict"),
        ("resources/data/eval/haskell_mini.jsonl", "input-data"),
        (f"{EXP}/round1/train_alice.jsonl", "trainset"),
        (f"{EXP}/bob/adapter/training_record.json", "training-record"),
        ("resources/data/seq/reference_train.jsonl", "input-data"),
        ("results/tables/seq/hstest/table3.csv", "table"),
        ("results/figures/seq/hstest/figure7.csv", "table"),
        ("results/figures/seq/hstest/figure6.png", "figure"),
    ]:
        assert kinds.get(rel) == kind, rel
    assert not any(k.startswith("results/sinq/") for k in kinds)  # only the tracks the run built
    assert "figure3" in (root / "report.html").read_text(errors="replace")


def test_bundle_replay_reproduces_the_haskell_tables_without_a_model(seq_bundle):
    workdir, _, out, replay = seq_bundle
    assert replay.returncode == 0, replay.stdout + replay.stderr + (out / "snakemake.log").read_text()[-5000:]
    tables = read_json(out / "bundle/hstest/bundle.json")["tables"]
    # the track's 11, Alice's per-round figure (one round: alice is every round) and the layer's check table
    assert len(tables) == 14 and f"REPRODUCED: all {len(tables)} tables are byte-identical" in replay.stdout
    assert "results/tables/eval/benchmarks.csv" in tables
    for table in tables:
        assert (out / "work" / table).read_bytes() == (workdir / table).read_bytes(), table
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["ok"] and comparison["verdicts"] and all(d is None for _, d in comparison["verdicts"])
    log = (out / "snakemake.log").read_text()
    assert "prepare_model" not in log and "seq_proof_check" in log and "seq_eval_score_haskell" in log
