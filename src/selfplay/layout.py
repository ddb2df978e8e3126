"""Where a run's files live: the one place that builds the paths every track shares. The
rules (rules/common.smk binds these functions to the run's config) and the tracks' own
layouts (e.g. tracks/psv/layout.py, tracks/gasp/layout.py) build on it.

    results/<track>/<experiment>/                     a track's run (exp_dir)
        <stage>/<folder>/shard<s>.jsonl               a stage's shard files (round<k>, eval_train, eval_test)
        round<k>/adapter_alice, bob/adapter           the agents' adapters
        grpo/r<k>/adapter                             the RL policy trained on round k's data
        eval/<bench>/<model tag>/<mode>.jsonl         the benchmark layer's samples (.scored.jsonl, .json)
    logs/<track>/<experiment>/, benchmarks/<track>/<experiment>/   its logs and job timings
    resources/data/eval/<bench>.jsonl                 a benchmark's prepared items
"""

from __future__ import annotations

from .evaluate import model_tags
from .evaluate.settings import other_model, track_runs

# A policy state of the updates on recorded rollouts (train/rl/recorded.py): the folder
# holds policy_state.json and the policy in policy/. A workflow step that had nothing to
# update on writes SKIPPED_STATE instead, naming the state to keep using (null: the base).
POLICY_STATE = "policy_state.json"
SKIPPED_STATE = "skipped.json"
# A state whose weights a later job removed (GASP's gasp.update.keep_states) keeps its
# records and gains PRUNED_STATE, saying what was removed and how to get the state back.
PRUNED_STATE = "pruned.json"


def exp_dir(cfg: dict, track: str, experiment: str | None = None) -> str:
    """A track's run folder (``experiment``: another run's, default this config's)."""
    return f"results/{track}/{experiment or cfg[track]['experiment']}"


def log_dir(cfg: dict, track: str) -> str:
    return f"logs/{track}/{cfg[track]['experiment']}"


def bench_dir(cfg: dict, track: str) -> str:
    return f"benchmarks/{track}/{cfg[track]['experiment']}"


def n_rounds(cfg: dict, track: str) -> int:
    return int(cfg[track]["rounds"])


def shard_ids(cfg: dict, track: str) -> list[int]:
    return list(range(int(cfg[track]["shards"])))


def stages(cfg: dict, track: str) -> list[str]:
    """round1..roundR, then the intrinsic evaluation's two halves."""
    return [f"round{r}" for r in range(1, n_rounds(cfg, track) + 1)] + ["eval_train", "eval_test"]


def stage_split(stage: str) -> str:
    """The half of the sources a stage draws from (rounds: train)."""
    return "train" if stage.startswith("round") else stage.split("_", 1)[1]


def whos_of(stage: str) -> tuple[str, ...]:
    """Whose answers a stage has: the untrained Bob always, the trained one in the evaluation."""
    return ("untrained",) if stage.startswith("round") else ("untrained", "trained")


def shard_files(cfg: dict, track: str, stage: str, folder: str) -> list[str]:
    return [f"{exp_dir(cfg, track)}/{stage}/{folder}/shard{s}.jsonl" for s in shard_ids(cfg, track)]


def labeled(cfg: dict, track: str, stage: str, who: str) -> list[str]:
    return shard_files(cfg, track, stage, f"labeled_{who}")


def candidates(cfg: dict, track: str, stage: str) -> list[str]:
    return shard_files(cfg, track, stage, "candidates")


def rounds_labeled(cfg: dict, track: str, upto: int) -> list[str]:
    """The untrained-Bob labels of rounds 1..upto (Alice's accumulated training data)."""
    return [p for r in range(1, upto + 1) for p in labeled(cfg, track, f"round{r}", "untrained")]


# --- adapters ------------------------------------------------------------------


def alice_adapter(cfg: dict, track: str, r: int) -> str:
    return f"{exp_dir(cfg, track)}/round{r}/adapter_alice"


def bob_adapter(cfg: dict, track: str) -> str:
    return f"{exp_dir(cfg, track)}/bob/adapter"


def grpo_adapter(cfg: dict, track: str, r: int) -> str:
    """The policy trained by RL (GRPO) on round r's data."""
    return f"{exp_dir(cfg, track)}/grpo/r{r}/adapter"


# --- the benchmark layer's files --------------------------------------------------


def eval_dir(cfg: dict, track: str, experiment: str | None = None) -> str:
    return f"{exp_dir(cfg, track, experiment)}/eval"


def eval_file(
    cfg: dict, track: str, bench: str, mode: str, model: str, kind: str, experiment: str | None = None
) -> str:
    """kind: "" (generations), ".scored" (one row per sample) or ".json" (metrics)."""
    base = f"{eval_dir(cfg, track, experiment)}/{bench}/{model}/{mode}"
    return base + (".json" if kind == ".json" else f"{kind}.jsonl")


def eval_summary(
    cfg: dict, track: str, bench: str, mode: str, model: str, experiment: str | None = None
) -> str:
    return eval_file(cfg, track, bench, mode, model, ".json", experiment)


def eval_files(cfg: dict, track: str, kind: str, benches=None) -> list[str]:
    return [
        eval_file(cfg, track, b, m, t, kind)
        for b, m, t in track_runs(cfg[track])
        if benches is None or b in benches
    ]


def eval_items_files(cfg: dict, track: str) -> list[str]:
    """The prepared items of every benchmark a track runs (bundle data)."""
    return [f"resources/data/eval/{b}.jsonl" for b in cfg[track]["benchmarks"]["runs"]]


def eval_adapter(cfg: dict, track: str, tag: str, track_tags=None) -> str | list:
    """The adapter folder the evaluated model ``tag`` loads ([] for none: the base model or
    a model served elsewhere). ``track_tags``: the track's own tag kinds, a function from a
    tag to its folder ([] for none) or None when the tag is not of its kinds."""
    if tag == model_tags.BASE or other_model(cfg[track], tag):
        return []
    if track_tags is not None:
        found = track_tags(tag)
        if found is not None:
            return found
    parsed = model_tags.parse(tag)
    kind = parsed.kind if parsed else None
    if kind == model_tags.BOB:
        return bob_adapter(cfg, track)
    if kind == model_tags.ALICE:
        return alice_adapter(cfg, track, n_rounds(cfg, track))
    if kind == model_tags.ALICE_ROUND:
        return alice_adapter(cfg, track, parsed.round)
    if kind == model_tags.GRPO_ROUND:
        return grpo_adapter(cfg, track, parsed.round)
    raise ValueError(f"{track}.benchmarks.models: unknown model tag {tag!r}")
