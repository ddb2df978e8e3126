"""Format-constrained decoding: the skeleton of an answer, as a grammar the backends enforce.

A track declares, once per role, the fixed parts of the answer format its paper
prescribes (section headings, code fences, the input dict's braces and keys) and
leaves every piece of content to the model (the analysis, the program, the input
values, Yes or No) as a free region. The declaration is a grammar in llguidance's
Lark dialect; :class:`AnswerFormat` carries it on a :class:`GenerationRequest`, and
each backend turns it into a token mask:

- transformers: an llguidance matcher per sampled row masks the logits before the
  row's seeded sampler draws (``transformers_backend``);
- vLLM: the same grammar as structured outputs with the ``guidance`` backend
  (llguidance again, inside the engine);
- replay: nothing to enforce; the format is part of the recording key, so a
  constrained request never replays an unconstrained recording or the reverse.

When a grammar is complete the matcher allows only the end-of-sequence token, so the
answer also stops at its natural end instead of running on to ``max_new_tokens``.

Writing grammars: llguidance lexes greedily, one lexeme at a time, and does not give
characters back to the following literal. A free region must therefore not be able
to swallow the start of what follows it: write the region as a terminal that ends
where the skeleton resumes (e.g. a program terminal that ends with its closing
fence), or exclude the next literal's first character from it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ..errors import UserError


@dataclass(frozen=True)
class AnswerFormat:
    """A named answer skeleton: ``grammar`` is llguidance Lark text (start rule ``start``)."""

    name: str
    grammar: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise UserError("an answer format needs a name")
        if not isinstance(self.grammar, str) or "start" not in self.grammar:
            raise UserError(f"answer format {self.name}: the grammar must define a 'start' rule")

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.grammar.encode("utf-8")).hexdigest()

    def key_part(self) -> dict[str, str]:
        """What the recording key holds: the whole grammar, so any change gives a new key."""
        return {"name": self.name, "grammar": self.grammar}

    def record(self) -> dict[str, str]:
        """What a generation record says about it (the grammar is in the key)."""
        return {"name": self.name, "grammar_sha256": self.sha256}

    @classmethod
    def from_dict(cls, data: Any) -> AnswerFormat | None:
        if data is None:
            return None
        if isinstance(data, AnswerFormat):
            return data
        if not isinstance(data, dict) or set(data) != {"name", "grammar"}:
            raise UserError(f"an answer format is {{'name', 'grammar'}}, got {str(data)[:120]}")
        return cls(str(data["name"]), str(data["grammar"]))


def lark_string(text: str) -> str:
    """``text`` as a Lark string literal (fixed skeleton text)."""
    return json.dumps(text, ensure_ascii=False)


# Python literals as the diverging inputs are written: numbers, strings, None/True/False,
# and lists, tuples, dicts and sets of them, with ", " and ": " between items. Only the
# syntax is fixed; which values to write is the model's choice. A collection holds at most
# 16 items and a string 400 characters, so an input cannot run on until the token budget
# is spent (the tiny model, left alone, counts up in a list for ever).
PYTHON_LITERAL_RULES = r"""
py_value: py_atom | "-" PY_NUMBER | py_list | py_tuple | py_dict | py_set
py_atom: PY_NUMBER | PY_STRING | "None" | "True" | "False"
py_list: "[" (py_value (", " py_value){0,15})? "]"
py_tuple: "(" (py_value "," | py_value (", " py_value){1,15})? ")"
py_dict: "{" (py_value ": " py_value (", " py_value ": " py_value){0,15})? "}"
py_set: "{" py_value (", " py_value){0,15} "}"
PY_NUMBER: /(0|[1-9][0-9]{0,29})(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?/
PY_STRING: /'([^'\\\n]|\\[^\n]){0,400}'/ | /"([^"\\\n]|\\[^\n]){0,400}"/
"""


def fenced_body(max_chars: int) -> str:
    """Regex (no slashes) for a code block's body and its closing fence on a line of its
    own: at most ``max_chars`` units of text that never has three backticks in a row,
    then a newline and the fence. Markdown and the parsers only close a block there."""
    return f"([^`]|`[^`]|``[^`]){{0,{int(max_chars)}}}`{{0,2}}\\n```"


def check_grammar(answer_format: AnswerFormat) -> None:
    """Raise UserError when llguidance cannot compile the grammar (tokenizer-independent check)."""
    try:
        import llguidance
    except ImportError as exc:
        raise UserError(
            "format-constrained decoding needs the llguidance package (pip install llguidance, "
            "see requirements.txt)"
        ) from exc
    message = llguidance.LLMatcher.validate_grammar(
        llguidance.LLMatcher.grammar_from_lark(answer_format.grammar)
    )
    if message and not message.startswith("WARNING"):
        raise UserError(
            f"answer format {answer_format.name}: the grammar does not compile: {message.splitlines()[0]}"
        )


class FormatMatcher:
    """Tracks one answer against its format, token by token (llguidance), for one tokenizer."""

    def __init__(self, answer_format: AnswerFormat, ll_tokenizer: Any):
        import llguidance

        self.format = answer_format
        self._m = llguidance.LLMatcher(
            ll_tokenizer, llguidance.LLMatcher.grammar_from_lark(answer_format.grammar), log_level=0
        )
        if self._m.is_error():
            raise UserError(f"answer format {answer_format.name}: {self._m.get_error().splitlines()[0]}")

    def fill_mask(self, bitmask, row: int) -> None:
        """Write the allowed next tokens into ``bitmask[row]`` (int32 words, 32 tokens each;
        a CPU torch tensor or a numpy array). Through llguidance's numpy entry point on the
        tensor's shared memory: its torch module decorates a kernel with ``torch.compile`` when
        imported, which loads TorchDynamo (~3 s in every generation job) for a kernel this
        project does not use (the backends apply the mask themselves)."""
        from llguidance.numpy import fill_next_token_bitmask

        array = bitmask.numpy() if hasattr(bitmask, "numpy") else bitmask
        fill_next_token_bitmask(self._m, array, row)

    def consume(self, token: int) -> None:
        self._m.consume_token(int(token))

    def accepts(self, tokens: list[int]) -> bool:
        """Whether this token sequence is a complete answer of the format (for tests and checks)."""
        return self._m.try_consume_tokens(list(tokens)) == len(tokens) and self._m.is_accepting()

    @property
    def error(self) -> str:
        return self._m.get_error()


def ll_tokenizer_for(hf_tokenizer, eos_ids: list[int] | None = None):
    """llguidance's view of a Hugging Face fast tokenizer (about a second to build: cache it)."""
    try:
        import llguidance.hf
    except ImportError as exc:
        raise UserError(
            "format-constrained decoding needs the llguidance package (see requirements.txt)"
        ) from exc
    return llguidance.hf.from_tokenizer(hf_tokenizer, eos_token=eos_ids or None)


def text_matches(answer_format: AnswerFormat, text: str, hf_tokenizer, ll_tokenizer=None) -> bool:
    """Whether ``text`` (tokenized as the model would) is a complete answer of the format."""
    lt = ll_tokenizer or ll_tokenizer_for(hf_tokenizer)
    ids = hf_tokenizer(text, add_special_tokens=False)["input_ids"]
    return FormatMatcher(answer_format, lt).accepts(ids)


def format_when_constrained(settings: dict, build) -> AnswerFormat | None:
    """``build(settings)`` when the role's config ``answer_format.constrained`` is on, else None."""
    return build(settings) if settings["constrained"] else None
