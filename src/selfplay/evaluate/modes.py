"""How a benchmark is sampled and how its samples become one answer per item.

A mode (config ``evaluation.modes.<name>``) fixes the number of samples per item, the
sampling settings, whether the prompt asks for step-by-step reasoning first, and the
aggregation:

- ``single``: one sample is the answer (greedy decoding at temperature 0, or paper 001's
  chain-of-thought mode at T = 0.6);
- ``majority``: the most frequent readable label of the samples (paper 001's majority
  of 9 at T = 1.0; classification only);
- ``mean``: every sample index is scored as a run of its own and the metrics are
  averaged over runs (paper 000's "averages over 16 samples"); for code generation this
  equals the mean per-item pass rate, i.e. pass@1 from n samples.

For code generation a mode also names the k of pass@k it reports (``pass_at_k``): the
unbiased estimator from its n samples, so every k must be at most n.

``thinking``: the evaluated models reason before they answer, closed by ``</think>``; only
what follows is scored, and an output that never closes its reasoning has no answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UserError
from ..llm.base import SamplingParams

AGGREGATES = ("single", "majority", "mean")


@dataclass(frozen=True)
class EvalMode:
    name: str
    samples: int
    cot: bool
    aggregate: str
    sampling: dict
    pass_at_k: tuple[int, ...] = (1,)
    thinking: bool = False  # only the text after </think> is the answer (none without it)

    @classmethod
    def from_config(cls, name: str, section: dict) -> EvalMode:
        try:
            mode = cls(
                name=name,
                samples=int(section["samples"]),
                cot=bool(section["cot"]),
                aggregate=str(section["aggregate"]),
                sampling=dict(section["sampling"]),
                pass_at_k=tuple(int(k) for k in section.get("pass_at_k", (1,))),
                thinking=bool(section.get("thinking", False)),
            )
        except KeyError as exc:
            raise UserError(f"evaluation.modes.{name}: missing setting {exc.args[0]}") from None
        if mode.aggregate not in AGGREGATES:
            raise UserError(
                f"evaluation.modes.{name}.aggregate must be one of {', '.join(AGGREGATES)}, "
                f"got {mode.aggregate!r}"
            )
        if mode.samples < 1:
            raise UserError(f"evaluation.modes.{name}.samples must be >= 1, got {mode.samples}")
        too_big = [k for k in mode.pass_at_k if k > mode.samples]
        if too_big:
            raise UserError(
                f"evaluation.modes.{name}.pass_at_k: pass@{too_big[0]} needs at least {too_big[0]} "
                f"samples, but the mode draws samples={mode.samples}"
            )
        if not mode.pass_at_k or any(k < 1 for k in mode.pass_at_k):
            raise UserError(
                f"evaluation.modes.{name}.pass_at_k must list k values >= 1, got {list(mode.pass_at_k)}"
            )
        if mode.aggregate == "single" and mode.samples != 1:
            raise UserError(
                f"evaluation.modes.{name}: aggregate 'single' takes exactly one sample, "
                f"got samples={mode.samples}"
            )
        return mode

    def sampling_params(self, seed: int, max_new_tokens: int | None = None) -> SamplingParams:
        section = dict(self.sampling)
        if max_new_tokens is not None:
            section["max_new_tokens"] = int(max_new_tokens)
        return SamplingParams.from_config(section, self.samples, seed)


def mode_of(cfg: dict, name: str) -> EvalMode:
    modes = cfg["evaluation"]["modes"]
    if name not in modes:
        raise UserError(
            f"evaluation mode {name!r} is not defined (evaluation.modes has: {', '.join(sorted(modes))})"
        )
    return EvalMode.from_config(name, modes[name])
