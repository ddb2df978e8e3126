"""PSV's generation requests and the seeds they draw.

Every request's seed is derived from the config seed, the run seed and the ids of what
is generated, and names the model that generates it (setting, method, iteration), so a
rerun or a replay draws the same samples, and two models never share a recording key.
Iteration 0 is the base model for every method of a setting, so its solving is shared.
"""

from __future__ import annotations

from ...llm.answer_format import format_when_constrained
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from . import formats, prompts


def solver_completion(cfg: dict) -> str:
    """What the solver writes (config ``psv.solve.completion``: body or full_program)."""
    return str(cfg["psv"].get("solve", {}).get("completion", "body"))


def solve_request(
    cfg: dict,
    problem: dict,
    model_tag: str,
    n: int,
    sampling: dict,
    adapter: str | None,
    answer_format: dict,
    exemplars: list[tuple[str, str]] | None = None,
) -> GenerationRequest:
    """``n`` samples of the solver for one problem; ``model_tag`` names the generating model."""
    language = cfg["psv"]["language"]
    completion = solver_completion(cfg)
    seed = derive_seed(cfg["seed"], "psv-solve", model_tag, problem["id"])
    return GenerationRequest(
        messages=prompts.solver_messages(language, problem["spec"], exemplars, completion),
        sampling=SamplingParams.from_config(sampling, n, seed),
        adapter=adapter,
        answer_format=format_when_constrained(
            answer_format, lambda s: formats.solver_format(language, problem["spec"], s, completion)
        ),
    )


def propose_request(
    cfg: dict, run_tag: str, index: int, target: str, examples: list[tuple[str, str | None]]
) -> GenerationRequest:
    """Proposal ``index`` of an iteration (one sample: paper 003 asks once per prompt)."""
    language, propose = cfg["psv"]["language"], cfg["psv"]["propose"]
    seed = derive_seed(cfg["seed"], "psv-propose", run_tag, index)
    return GenerationRequest(
        messages=prompts.proposer_messages(language, target, examples),
        sampling=SamplingParams.from_config(propose["sampling"], 1, seed),
        answer_format=format_when_constrained(
            propose["answer_format"], lambda s: formats.proposer_format(language, s)
        ),
    )
