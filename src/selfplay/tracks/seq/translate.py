"""The data pipeline's translation stage: a Python function into a Haskell function
(the paper builds OpInstruct-HSx this way from OpenCodeInstruct, Section 3.1).

The model answers with one ```haskell block; what it wrote is then held to the same
filter as every reference program (tracks/seq/sources.py): a top-level signature with
supported argument types, a generated type-correct input, and a GHC compile and run.
"""

from __future__ import annotations

from ...llm.base import GenerationRequest, SamplingParams
from ...records import derive_seed
from .parse import FENCE, HASKELL_LANGS, MAX_OUTPUT_CHARS, MODULE_HEADER, final_answer

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


def parse_translation(text: str) -> tuple[str | None, str | None]:
    """(Haskell code, None) or (None, reason): too_long, no_code_block, several_code_blocks."""
    if len(text) > MAX_OUTPUT_CHARS:
        return None, "too_long"
    blocks = [m.group(2) for m in FENCE.finditer(final_answer(text)) if m.group(1).lower() in HASKELL_LANGS]
    if not blocks:
        return None, "no_code_block"
    if len(blocks) > 1 and len(set(b.strip() for b in blocks)) > 1:
        return None, "several_code_blocks"
    return MODULE_HEADER.sub("", blocks[0]).strip("\n") + "\n", None
