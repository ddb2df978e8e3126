"""Every benchmark the evaluation layer knows, by the name configs and file paths use.

Adapters are imported when first asked for, so reading the registry (the config check,
the rules) costs nothing and a missing optional dependency only matters to the
benchmark that needs it.
"""

from __future__ import annotations

import importlib

from ..errors import UserError
from .benchmark import Benchmark

# name -> "module:Class" under selfplay.evaluate.benchmarks
ADAPTERS: dict[str, str] = {
    "humaneval": "evalplus:HumanEval",
    "humaneval_plus": "evalplus:HumanEvalPlus",
    "mbpp": "evalplus:Mbpp",
    "mbpp_plus": "evalplus:MbppPlus",
    "identifier_swap": "identifier_swap:IdentifierSwap",
    "pysecdb": "pysecdb:PySecDB",
    "codexglue": "codexglue:CodeXGlueDefect",
    "equibench": "equibench:EquiBench",
    "haskell_mini": "multipl_e:HaskellMini",
    "humaneval_hs": "multipl_e:HumanEvalHs",
    "mbpp_hs": "multipl_e:MbppHs",
    "livecodebench": "livecodebench:LiveCodeBench",
    "gasp_goalposts": "livecodebench:GaspGoalposts",
    "gasp_train": "livecodebench:GaspTrainSplit",
    "bigcodebench_full": "bigcodebench:BigCodeBenchFull",
    "bigcodebench_hard": "bigcodebench:BigCodeBenchHard",
}

_cache: dict[str, Benchmark] = {}


def benchmark(name: str) -> Benchmark:
    """The adapter of benchmark ``name``."""
    if name not in ADAPTERS:
        raise UserError(f"unknown benchmark {name!r}; known: {', '.join(sorted(ADAPTERS))}")
    if name not in _cache:
        module, cls = ADAPTERS[name].split(":")
        _cache[name] = getattr(importlib.import_module(f"{__package__}.benchmarks.{module}"), cls)()
    return _cache[name]


def downloads_of(name: str) -> list[dict]:
    """The pinned files a benchmark's download rule fetches."""
    return list(benchmark(name).downloads)
