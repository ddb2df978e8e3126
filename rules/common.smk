# Shared helpers: config validation at start, the model location, paths.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from selfplay.config import validate_config
from selfplay.errors import UserError

try:
    validate_config(config)
    if "seq" in config:  # paper 000's regimes E2/E3 take p and P from E0's measured yields
        from selfplay.tracks.seq.regimes import apply_regime

        apply_regime(config)
except UserError as _exc:
    sys.exit(f"Configuration error: {_exc}")

from selfplay.containers.registry import load_images

try:
    IMAGES = load_images(workflow.basedir, config.get("containers"))
except UserError as _exc:
    sys.exit(f"Configuration error: {_exc}")


def image(name):
    """The container a rule runs in with --sdm apptainer (containers/images.yaml,
    overridden by config containers.<name>); without --sdm the rule runs on the host."""
    return IMAGES[name].ref


TRACKS = config.get("tracks", ["sinq", "seq"] if "seq" in config else ["sinq"])
if "seq" in TRACKS and "seq" not in config:
    sys.exit("Configuration error: config key tracks: lists seq but there is no seq section")

MODEL_NAME = config["model"]["name"]
SCRIPTS = Path(workflow.basedir) / "workflow_scripts"


def model_dir():
    """Where the base model lives: prepared by a rule, or a local folder named in config."""
    if config["model"]["source"] == "local":
        return config["model"]["path"]
    return f"resources/models/{MODEL_NAME}"


def model_input(wildcards=None):
    """The model as a rule input ([] for a local folder, which is not a workflow product)."""
    if config["model"]["source"] == "local":
        return []
    return model_dir()


def generation_model_input(wildcards=None):
    """Generation needs the model unless answers are replayed from recordings."""
    if config["backend"]["name"] == "replay":
        return []
    return model_input()


def generation_model_param(wildcards=None):
    return None if config["backend"]["name"] == "replay" else model_dir()


def training_restore_root():
    """The folder whose training records replace training (config replay_training_from), or None.

    It is laid out like a working directory (an unpacked bundle): the record for the
    training output OUT is read from <root>/OUT/training_record.json.
    """
    root = config.get("replay_training_from")
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


def print_outputs_summary():
    groups = [("SInQ", sinq_report_targets())]
    if "seq" in config:
        groups.append(("Haskell track", seq_report_targets()))
    for name, targets in groups:
        produced = [p for p in targets if Path(p).exists()]
        if produced:
            print(f"\n{name} tables and figures:")
            for p in produced:
                print(f"  {p}")
