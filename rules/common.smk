# What every track's rules share: the config (checked when the workflow starts), the
# track registry, the model, the per-stage file lists, the input functions of the
# generation and training rules, and the resources each kind of job asks for.
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from selfplay import layout as results_layout
from selfplay.config import configured_tracks, prepare_config
from selfplay.evaluate import model_tags
from selfplay.config.slices import config_slice
from selfplay.evaluate.registry import ADAPTERS, downloads_of
from selfplay.evaluate.registry import benchmark as benchmark_adapter
from selfplay.evaluate.settings import other_model, other_tags, track_runs
from selfplay.containers.registry import load_images
from selfplay.errors import UserError
from selfplay.bundle.pack import merge_parts
from selfplay.records import read_json
from selfplay.tracks.registry import TRACKS as REGISTRY


def _model_dir_of(cfg):
    model = cfg.get("model") or {}
    if model.get("source") == "local":
        return model.get("path")
    return f"resources/models/{model.get('name')}"


try:
    # Checks every value and builds every component's settings (backend, trainer,
    # sandbox, verifiers), so a dry run fails on a combination a job would refuse.
    prepare_config(config, _model_dir_of(config))
    IMAGES = load_images(workflow.basedir, config["containers"])
except UserError as _exc:
    sys.exit(f"Configuration error: {_exc}")

try:
    # Each GPU job's memory need, from the config, against the GPU its resources ask for
    # (selfplay.plan.gpu_memory): a job that cannot fit is refused before anything runs.
    from selfplay.plan.gpu_memory import check as _check_gpu_memory

    _unchecked = []
    _check_gpu_memory(config, unchecked=_unchecked)
    for _line in _unchecked:  # e.g. a local model folder the run writes before it starts
        print(f"Resources note: {_line}", file=sys.stderr)
except UserError as _exc:
    sys.exit(f"Resources error: {_exc}")


def image(name):
    """The container a rule runs in with --sdm apptainer (containers/images.yaml,
    overridden by config containers.<name>); without --sdm the rule runs on the host."""
    return IMAGES[name].ref


TRACKS = config["tracks"]  # what `all` builds
LOADED_TRACKS = configured_tracks(config)  # every track with a config section: its rules are loaded
MODEL_NAME = config["model"]["name"]

# Filled by each track's rules file: name -> {"report": fn() -> targets, "bundle": fn() -> parts}
TRACK_OUTPUTS = {}
# track -> a function from an evaluated model tag to the folder it names, for tags of the
# track's own kinds (selfplay.evaluate.model_tags.TrackTagKind, e.g. GASP's checkpoints
# ck_<method>_s<seed>_i<k>); None: not its tag. selfplay.layout.eval_adapter asks it first.
TRACK_MODEL_TAGS = {}
# track -> a function from an evaluated model tag to the model spec it loads in place of the
# track's model (a released checkpoint), or None
TRACK_TAG_MODELS = {}


def cfg_of(*paths):
    """The config values a job uses (`params: cfg=cfg_of(...)`): Snakemake tracks them."""
    return config_slice(config, *paths)


def resources_of(kind):
    """What a kind of job asks a cluster for (config resources.<kind>). The scaled ones
    (config resources.retry.scaled: runtime and mem_mb) grow with Snakemake's attempt, so a
    retry of a job killed for time or memory asks for more (selfplay.cluster.attempts)."""
    from selfplay.cluster.attempts import attempt_scaled

    return attempt_scaled(config["resources"][kind], config["resources"]["retry"])


def train_gpus():
    """The GPUs a training job asks its cluster for (resources.train.gpu): the trainer
    refuses to fall back to the CPU when it asked for one and sees none."""
    return int(config["resources"]["train"].get("gpu", 0))


# --- a track's files ----------------------------------------------------------


# The results layout (selfplay.layout) bound to this run's config.
exp_dir = partial(results_layout.exp_dir, config)
log_dir = partial(results_layout.log_dir, config)
bench_dir = partial(results_layout.bench_dir, config)
n_rounds = partial(results_layout.n_rounds, config)
shard_ids = partial(results_layout.shard_ids, config)
stages = partial(results_layout.stages, config)
stage_split = results_layout.stage_split
whos_of = results_layout.whos_of
shard_files = partial(results_layout.shard_files, config)
labeled = partial(results_layout.labeled, config)
candidates = partial(results_layout.candidates, config)
rounds_labeled = partial(results_layout.rounds_labeled, config)
alice_adapter = partial(results_layout.alice_adapter, config)
bob_adapter = partial(results_layout.bob_adapter, config)
grpo_adapter = partial(results_layout.grpo_adapter, config)
eval_file = partial(results_layout.eval_file, config)
eval_files = partial(results_layout.eval_files, config)
eval_items_files = partial(results_layout.eval_items_files, config)
eval_summary = partial(results_layout.eval_summary, config)


def stage_count_key(track, stage):
    """The config key that sets how many sources a stage uses."""
    key = "per_round" if stage.startswith("round") else f"eval_{stage_split(stage)}"
    return f"{track}.sources.{key}"


def alice_adapter_input(track):
    """Round r generates with round r-1's adapter; the evaluation with the last round's."""

    def _adapter(wildcards):
        if wildcards.stage.startswith("round"):
            r = int(wildcards.stage[len("round") :])
            return [] if r == 1 else alice_adapter(track, r - 1)
        return alice_adapter(track, n_rounds(track))

    return _adapter


def bob_adapter_input(track):
    return lambda wildcards: bob_adapter(track) if wildcards.who == "trained" else []


# --- models ------------------------------------------------------------------

# Every model a job loads, by name (made in resources/models/<name> by prepare_model):
# the game's model (config model); a track may add its own (e.g. a translation model).
MODELS = {MODEL_NAME: config["model"]}


def model_dir(spec=None):
    """Where a model lives (default: the game's): prepared by a rule, or a local folder."""
    spec = spec or config["model"]
    if spec["source"] == "local":
        return spec["path"]
    return f"resources/models/{spec['name']}"


def model_input(wildcards=None, spec=None):
    """The model as a rule input ([] for a local folder, which is not a workflow product)."""
    spec = spec or config["model"]
    return [] if spec["source"] == "local" else model_dir(spec)


def generation_model_input(wildcards=None, spec=None):
    """Generation needs the model unless answers are replayed from recordings."""
    if config["backend"]["name"] == "replay":
        return []
    return model_input(spec=spec)


def generation_model_param(wildcards=None, spec=None):
    return None if config["backend"]["name"] == "replay" else model_dir(spec)


GENERATION_KEYS = (
    "seed",
    "backend",
    "model",
    "generation",
)  # what every generation job reads besides its track's keys
# Cores a generation job holds: the backend's `threads` (what torch is told to use), or 2
# when the backend leaves that to the library. With `threads: 1` two generation jobs run
# side by side on a 2-core machine (config.yaml says why).
GENERATION_THREADS = int(config["backend"].get("threads") or 2)


def training_restore_root():
    """The folder whose training records replace training (config replay_training_from), or None.

    It is laid out like a working directory (an unpacked bundle): the record for the
    training output OUT is read from <root>/OUT/training_record.json.
    """
    root = config["replay_training_from"]
    return str(Path(root).resolve()) if root else None


def training_model_input(wildcards=None):
    """Training needs the base model, unless its records are restored from a bundle."""
    return [] if training_restore_root() else model_input()


def training_model_param(wildcards=None):
    return None if training_restore_root() else model_dir()


def training_restore_input(output_pattern):
    """An input function: the bundled training record for the training output
    `output_pattern` (formatted with the job's wildcards), or [] when training for real."""

    def _bundled_record(wildcards):
        root = training_restore_root()
        if not root:
            return []
        out = output_pattern.format(**dict(wildcards.items()))
        return str(Path(root) / out / "training_record.json")

    return _bundled_record


# --- bundles -------------------------------------------------------------------


def track_bundle_parts(track, data, recordings, verdicts, tables, figures, trainsets=None, adapters=None):
    """A track's files for the bundle, by part (selfplay.bundle.pack): what the track
    lists, plus what every track has (training sets, adapters, logs and benchmarks).
    Training sets and adapters default to the Alice-rounds-then-Bob layout of rules/agents.smk."""
    if trainsets is None or adapters is None:
        rounds = range(1, n_rounds(track) + 1)
        trainsets = [f"{exp_dir(track)}/round{r}/train_alice.jsonl" for r in rounds] + [
            f"{exp_dir(track)}/bob/train_bob.jsonl"
        ]
        adapters = [alice_adapter(track, r) for r in rounds] + [bob_adapter(track)]
    return {
        "data": data,
        "recordings": recordings,
        "verdicts": verdicts,
        "trainsets": trainsets,
        "adapters": adapters,
        "tables": tables,
        "figures": figures,
        "log_dirs": [
            log_dir(track),
            f"logs/{track}/sources",
            bench_dir(track),
            f"benchmarks/{track}/sources",
        ],
    }


# --- the benchmark layer (rules/evaluate.smk) ----------------------------------------

EVAL = config["evaluation"]
EVAL_NAME = r"[a-z][a-z0-9_]*"  # a mode or model tag in the layer's file names
EVAL_CHECK = "results/eval/check"  # the layer's own base-model runs
# the layer's check table, built by `all` when the config asks for a check
EVAL_REPORTS = (
    ["results/tables/eval/benchmarks.md"]
    if EVAL["check"]["benchmarks"] or EVAL["check"]["base_model"]
    else []
)
# Benchmarks scored with GHC run in the haskell image; BigCodeBench in its own image
# (its tasks' ~70 libraries at BigCodeBench's pins); the rest run Python in the sandbox,
# in the python image: one rule for each, told apart by the benchmark's name.
HASKELL_BENCHES = [b for b in ADAPTERS if b in ("humaneval_hs", "mbpp_hs", "haskell_mini")]
BIGCODEBENCH_BENCHES = [b for b in ADAPTERS if b.startswith("bigcodebench_")]
EVAL_IMAGES = {
    "python": "|".join(b for b in ADAPTERS if b not in HASKELL_BENCHES + BIGCODEBENCH_BENCHES),
    "haskell": "|".join(HASKELL_BENCHES) or "^$",
    "bigcodebench": "|".join(BIGCODEBENCH_BENCHES) or "^$",
}
# Preparing the items only reads files (MultiPL-E's parquet with pandas, which the haskell
# image lacks), except BigCodeBench's, which checks its tasks' libraries in its own image.
EVAL_ITEM_IMAGES = {
    "python": "|".join(b for b in ADAPTERS if b not in BIGCODEBENCH_BENCHES),
    "bigcodebench": EVAL_IMAGES["bigcodebench"],
}


def checkpointed_bundle_parts():
    """The bundle's parts known only after the tracks' Snakemake checkpoints (GASP: the
    greedy evaluations of each run's selected checkpoint). Call from an input or params
    function of a job that lists the checkpoints' outputs as input. Until they are made
    this raises Snakemake's incomplete-checkpoint exception, which makes the job wait."""
    return merge_parts(
        [
            TRACK_OUTPUTS[t]["bundle_checkpointed"]()
            for t in TRACKS
            if "bundle_checkpointed" in TRACK_OUTPUTS[t]
        ],
        {},
    )


def checkpoint_json(rule, key, wildcard_sets):
    """``key`` of the JSON output of the checkpoint ``rule`` for each wildcard set. Call
    from an input or params function of a job that lists all those outputs as input, so
    that Snakemake makes them together (a missing one raises Snakemake's
    incomplete-checkpoint exception, which makes the job wait for it)."""
    return [read_json(getattr(checkpoints, rule).get(**w).output[0])[key] for w in wildcard_sets]


def eval_bundle_parts():
    """The layer's own check in a bundle: its items, base-model samples, scores and table
    (metrics files are not bundled: they are made again from the scores, and the tables
    made of them are compared byte for byte)."""
    check = EVAL["check"]
    names = list(dict.fromkeys(check["benchmarks"] + check["base_model"]))
    if not names:
        return {}
    return {
        "data": [f"resources/data/eval/{b}{kind}.jsonl" for b in names for kind in ("", ".skipped")],
        "recordings": [f"{EVAL_CHECK}/{b}/base/greedy.jsonl" for b in check["base_model"]],
        "verdicts": [f"results/eval/ground_truth/{b}.scored.jsonl" for b in check["benchmarks"]]
        + [f"{EVAL_CHECK}/{b}/base/greedy.scored.jsonl" for b in check["base_model"]],
        "tables": ["results/tables/eval/benchmarks.csv", "results/tables/eval/benchmarks.md"],
        "log_dirs": ["logs/eval", "benchmarks/eval"],
    }


def eval_runs(track):
    """(benchmark, mode, model) of every evaluation the track's config asks for."""
    return track_runs(config[track])


def eval_adapter_input(track):
    """The adapter the evaluated model tag names (selfplay.layout.eval_adapter; the
    track's own tag kinds through TRACK_MODEL_TAGS)."""
    return lambda w: results_layout.eval_adapter(config, track, w.model, TRACK_MODEL_TAGS.get(track))


def eval_tag_model(track, tag):
    """The model spec a track's evaluated tag loads instead of the track's model (a
    released checkpoint, e.g. GASP's AZR), or None."""
    return TRACK_TAG_MODELS[track](tag) if track in TRACK_TAG_MODELS else None


def eval_model_input(track):
    """The local model a generation job loads: none for a model served elsewhere."""
    return lambda w: (
        []
        if other_model(config[track], w.model)
        else generation_model_input(w, spec=eval_tag_model(track, w.model))
    )


def eval_model_param(track):
    return lambda w: (
        None
        if other_model(config[track], w.model)
        else generation_model_param(w, spec=eval_tag_model(track, w.model))
    )


def eval_other_param(track):
    """The other_models entry of a model served elsewhere (None for the track's own)."""
    return lambda w: other_model(config[track], w.model)


def eval_source_input(wildcards):
    """What a benchmark's items are prepared from: its downloaded files, the file the user
    supplied (source: path), or nothing (shipped smoke items or pip-package data)."""
    settings = EVAL["benchmarks"][wildcards.bench]
    if settings["source"] == "download":
        return [
            f"resources/downloads/eval/{wildcards.bench}/{d['file']}" for d in downloads_of(wildcards.bench)
        ]
    if settings["source"] == "path":
        return settings["path"]
    return []


# The lock file of benchmark download pins (selfplay.evaluate.pins): a first download
# records the sha256 it saw where no pin was known; later downloads must match it.
DOWNLOAD_PINS = "config/download-pins.tsv"


def lcb_count_notes(settings):
    """Caption lines of LiveCodeBench count differences the config accepts."""
    from selfplay.evaluate.benchmarks.livecodebench import count_note

    return count_note(settings)


def eval_download_param(key):
    def _param(wildcards):
        spec = next(d for d in downloads_of(wildcards.bench) if d["file"] == wildcards.file)
        settings = EVAL["benchmarks"][wildcards.bench]
        if key == "config_sha256":
            return settings["sha256"].get(wildcards.file)
        if key == "spec_sha256":
            return spec.get("sha256")
        # a release pinned by a revision setting (e.g. a dataset commit on the hub)
        return spec[key].format(revision=settings.get("revision", ""))

    return _param


def eval_source_note(wildcards):
    return benchmark_adapter(wildcards.bench).source_note


def eval_bench_cfg(wildcards):
    return cfg_of("seed", "evaluation.workers", f"evaluation.benchmarks.{wildcards.bench}")


def eval_check_cfg(wildcards):
    return cfg_of(
        *GENERATION_KEYS,
        "evaluation.workers",
        "evaluation.modes.greedy",
        f"evaluation.benchmarks.{wildcards.bench}",
    )


def eval_generate_cfg(wildcards):
    return cfg_of(
        *GENERATION_KEYS,
        f"evaluation.modes.{wildcards.mode}",
        f"evaluation.benchmarks.{wildcards.bench}",
    )


def eval_score_cfg(wildcards):
    return cfg_of(
        "seed",
        "evaluation.workers",
        f"evaluation.modes.{wildcards.mode}",
        f"evaluation.benchmarks.{wildcards.bench}",
    )


def _eval_generate_rule(track):
    return eval_file(track, "{bench}", "{mode}", "{model}", "")


# --- what the run builds -------------------------------------------------------


def all_targets():
    return [p for track in TRACKS for p in TRACK_OUTPUTS[track]["report"]()] + EVAL_REPORTS


def print_outputs_summary():
    for track in TRACKS:
        produced = [p for p in TRACK_OUTPUTS[track]["report"]() if Path(p).exists()]
        if produced:
            print(f"\n{REGISTRY[track].title}: tables and figures")
            for p in produced:
                print(f"  {p}")


# --- helpers of rules files that snakemake's linter wants kept out of them ------------
# (rules/evaluate.smk: a benchmark cell's generation shards; rules/evolve.smk: the
# embedder download and the pool's per-model serving; they read globals those files set)


def eval_shard_file(track):
    return _eval_generate_rule(track)[: -len(".jsonl")] + ".shards{shards}/{shard}.jsonl"


def eval_shard_inputs(track):
    """Every shard file of one cell, in shard order."""
    return lambda w: expand(
        eval_shard_file(track),
        shards=EVAL_SHARDS[w.bench],
        shard=range(EVAL_SHARDS[w.bench]),
        allow_missing=True,
    )


def eval_merge_cfg(wildcards):
    return cfg_of("seed", f"evaluation.benchmarks.{wildcards.bench}")


def evolve_embedder_input(wildcards):
    """The downloaded embedding model, unless embeddings are restored from a bundle."""
    if training_restore_root() or not isinstance(EVOLVE_EMBEDDER, dict):
        return []
    return model_input(spec=EVOLVE_EMBEDDER)


def evolve_pool_cfg(pmodel):
    """A pool job's config slice, its backend with the model's own serving settings on
    top (evolve.pool.models[i].backend: tensor parallelism for the 32B models)."""
    from selfplay.plan.serving import pool_backend

    cfg = cfg_of(*GENERATION_KEYS, "evolve.pool.sampling", "evolve.pool.answer_format")
    cfg["backend"] = pool_backend(config, pmodel)
    return cfg


def evolve_pool_resources():
    """The generation kind's resources, with as many GPUs as the model is split over."""
    from selfplay.plan.serving import job_gpus, pool_backend

    return {
        **resources_of("generate"),
        "gpu": lambda w: job_gpus(resources_of("generate"), pool_backend(config, w.pmodel)),
    }
