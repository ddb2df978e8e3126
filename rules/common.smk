# Shared helpers: config validation at start, the model location, paths.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from selfplay.config import validate_config
from selfplay.errors import UserError

try:
    validate_config(config)
except UserError as _exc:
    sys.exit(f"Configuration error: {_exc}")

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


def print_outputs_summary():
    produced = [p for p in sinq_report_targets() if Path(p).exists()]
    if produced:
        print("\nSInQ tables and figures are in results/tables/sinq/ and results/figures/sinq/:")
        for p in produced:
            print(f"  {p}")
