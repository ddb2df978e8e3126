"""The data pipeline's translation stage: a Python function into a Haskell function
(the paper builds OpInstruct-HSx this way from OpenCodeInstruct, Section 3.1).

The model answers with one ```haskell block; what it wrote is then held to the same
filter as every reference program (tracks/seq/sources.py): a top-level signature with
supported argument types, a generated type-correct input, and a GHC compile and run.
"""

from __future__ import annotations

from ...haskell.answers import parse_haskell_answer as parse_translation  # noqa: F401 (the stage's reader)
from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed

TRANSLATE_SYSTEM = """\
You translate Python functions into Haskell. Write one pure Haskell function that \
computes what the Python function computes, with an explicit top-level type \
signature using concrete types (Int, Integer, Double, Bool, Char, String, lists, \
tuples, Maybe, Either). Use only the Prelude and the base library (Data.List, \
Data.Char, Data.Maybe); no IO, no main, no module header; helpers go in a where \
clause. Answer with the Haskell code in one ```haskell block and nothing after it."""


def translate_messages(python_code: str) -> list[dict]:
    user = "Translate this Python function to Haskell:\n```python\n" + python_code.rstrip("\n") + "\n```\n"
    return [{"role": "system", "content": TRANSLATE_SYSTEM}, {"role": "user", "content": user}]


def translate_request(source: dict, cfg: dict) -> GenerationRequest:
    seed = derive_seed(cfg["seed"], "seq-translate", source["id"])
    sampling = SamplingParams.from_config(cfg["seq"]["translate"]["sampling"], 1, seed)
    return GenerationRequest(messages=translate_messages(source["code"]), sampling=sampling)
