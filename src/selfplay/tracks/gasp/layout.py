"""Where a GASP run's files live (the rules, the steps and the tables all ask here).

``root`` is ``results/gasp/<experiment>``; a run is one method and seed::

    <root>/goalposts.jsonl                      the goalposts the teacher is shown
    <root>/<method>/s<seed>/iter<i>/<phase>/    a phase's files (pipeline/gasp.py), state/ its update;
                                                a teacher phase's buffer.jsonl: the global buffers after it
    <root>/<method>/s<seed>/iter<i>/dissimilarity.json

A checkpoint is the state after an iteration's last update (the solver's, or the real-data
phase's); the benchmark layer names
it with the model tag ``ck_<method>_s<seed>_i<iteration>``.
"""

from __future__ import annotations

from ...evaluate.model_tags import TrackTagKind
from .methods import method

# the benchmark layer's tag of a checkpoint (a tag kind of GASP's own)
CHECKPOINT_TAG = TrackTagKind("ck_{method}_s{seed}_i{iteration}", method=str, seed=int, iteration=int)
PHASE_FILES = (
    "candidates.jsonl",
    "accepted.jsonl",
    "rollouts.jsonl",
    "teacher.jsonl",
    "student.jsonl",
    "buffer.jsonl",
)
SOLVER_FILES = ("answers.jsonl", "rollouts.jsonl", "student.jsonl")  # also the real-data phase's


def run_dir(root: str, method_name: str, seed: int | str) -> str:
    return f"{root}/{method_name}/s{seed}"


def phase_dir(root: str, method_name: str, seed: int | str, iteration: int | str, phase: str) -> str:
    return f"{run_dir(root, method_name, seed)}/iter{iteration}/{phase}"


def state_dir(root: str, method_name: str, seed: int | str, iteration: int | str, phase: str) -> str:
    return f"{phase_dir(root, method_name, seed, iteration, phase)}/state"


def teacher_phases(method_name: str) -> list[str]:
    return [p.name for p in method(method_name).phases]


def phase_order(method_name: str) -> list[str]:
    return list(method(method_name).order)


def previous_state(root: str, method_name: str, seed: int | str, iteration: int, phase: str) -> str | None:
    """The state a phase's jobs start from: the previous phase's of the same iteration, the
    previous iteration's checkpoint, or None (the base model) before the first update."""
    order = phase_order(method_name)
    at = order.index(phase)
    if at > 0:
        return state_dir(root, method_name, seed, iteration, order[at - 1])
    if int(iteration) > 1:
        return checkpoint(root, method_name, seed, int(iteration) - 1)
    return None


def checkpoint(root: str, method_name: str, seed: int | str, iteration: int | str) -> str:
    """The state after an iteration's last update."""
    return state_dir(root, method_name, seed, iteration, phase_order(method_name)[-1])


def accepted_files(root: str, method_name: str, seed: int | str, iteration: int) -> list[str]:
    return [
        f"{phase_dir(root, method_name, seed, iteration, p)}/accepted.jsonl"
        for p in teacher_phases(method_name)
    ]


def buffer_files(root: str, method_name: str, seed: int | str, iteration: int, phase: str) -> list[str]:
    """The global buffers a teacher phase checks novelty against, as one file: every item
    accepted before it (earlier iterations, and this iteration's earlier phases: Algorithm 1
    adds a phase's batch to its global buffer right after the phase's update). Each teacher
    phase writes ``buffer.jsonl``, the buffer it read plus what it accepted, so a phase reads
    only the one before it (not every earlier file: the paper plan's DAG stays linear)."""
    phases = teacher_phases(method_name)
    at = phases.index(phase)
    if at > 0:
        return [f"{phase_dir(root, method_name, seed, iteration, phases[at - 1])}/buffer.jsonl"]
    if int(iteration) > 1:
        return [f"{phase_dir(root, method_name, seed, int(iteration) - 1, phases[-1])}/buffer.jsonl"]
    return []


def answers_phase(phase_folder: str) -> bool:
    """Whether a phase's folder holds the student's answers (answers.jsonl: the solver and
    real-data phases) rather than teacher candidates (candidates.jsonl)."""
    return phase_folder.rstrip("/").rsplit("/", 1)[-1] in ("solver", "real")


def model_tag(method_name: str, seed: int, iteration: int) -> str:
    return CHECKPOINT_TAG.build(method=method_name, seed=seed, iteration=iteration)


def parse_tag(tag: str) -> tuple[str, int, int] | None:
    """(method, seed, iteration) of a checkpoint's tag, or None for any other tag."""
    fields = CHECKPOINT_TAG.parse(tag)
    return (fields["method"], fields["seed"], fields["iteration"]) if fields else None
