"""The EvolveCoder track's generation requests and the seeds they draw.

Each request's seed comes from the config seed, the step, the problem id and (for the
solution pool) the candidate model's name, so a rerun or a replay draws the same
samples and two pool models never share a recording key. ``cfg`` is the whole config;
the track's section is ``cfg["evolve"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...llm.answer_format import format_when_constrained
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from . import formats, prompts
from .selection import Pick


def refine_request(cfg: dict, seed_problem: dict) -> GenerationRequest:
    """A.1 for one de-duplicated seed problem (one answer)."""
    step = cfg["evolve"]["refine"]
    solutions = seed_problem.get("solutions") or []
    reference = solutions[0] if step["show_reference"] and solutions else None
    return GenerationRequest(
        messages=prompts.refine_messages(seed_problem["question"], reference, int(step["tests"])),
        sampling=SamplingParams.from_config(
            step["sampling"], 1, derive_seed(cfg["seed"], "evolve-refine", seed_problem["id"])
        ),
        answer_format=format_when_constrained(step["answer_format"], formats.refinement_format),
    )


def pool_request(
    cfg: dict, problem: dict, model_name: str, samples: int, adapter: str | None = None
) -> GenerationRequest:
    """``samples`` candidate solutions of one pool model for one refined problem."""
    step = cfg["evolve"]["pool"]
    return GenerationRequest(
        messages=prompts.solve_messages(problem["question"], problem["entry"]),
        sampling=SamplingParams.from_config(
            step["sampling"], int(samples), derive_seed(cfg["seed"], "evolve-pool", model_name, problem["id"])
        ),
        adapter=adapter,
        answer_format=format_when_constrained(
            step["answer_format"], lambda s: formats.solution_format(problem.get("entry"), s)
        ),
    )


def evolve_request(
    cfg: dict,
    problem: dict,
    method: str,
    round_: int,
    pick: Pick,
    programs: Sequence[str],
    rows: Sequence[Sequence[bool]],
) -> GenerationRequest:
    """A.2 (adversarial) or A.3 (discriminative) for one problem in round ``round_``:
    ``programs`` are the picked solutions' code and ``rows`` their results on the
    picked tests (``pick.tests``, suite indices into ``problem["tests"]``)."""
    step = cfg["evolve"][method]
    tests = [problem["tests"][t]["text"] for t in pick.tests]
    build = prompts.adversarial_messages if method == "adversarial" else prompts.discriminative_messages
    return GenerationRequest(
        messages=build(problem["question"], programs, tests, rows, int(step["tests"])),
        sampling=SamplingParams.from_config(
            step["sampling"], 1, derive_seed(cfg["seed"], f"evolve-{method}", round_, problem["id"])
        ),
        answer_format=format_when_constrained(
            step["answer_format"], lambda s: formats.new_tests_format(problem["entry"], s)
        ),
    )
