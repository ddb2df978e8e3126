"""Format-constrained decoding: SInQ's answer skeletons, the recording key, and the
transformers backend enforcing a grammar on the real tiny model."""

from __future__ import annotations

import hashlib
import random

import pytest
from test_workflow_replay import ALICE_EVAL_TEST, ALICE_ROUND1, BOB_EVAL_TEST, BOB_ROUND1, TEST, TRAIN

from selfplay.errors import UserError
from selfplay.llm.answer_format import AnswerFormat, check_grammar, text_matches
from selfplay.llm.base import GenerationRequest, SamplingParams, recording_key
from selfplay.records import canonical_json
from selfplay.tracks.sinq.formats import alice_format, bob_format, parameter_names
from selfplay.tracks.sinq.parse import parse_alice, parse_bob

SETTINGS = {"constrained": True, "reasoning_chars": 400, "code_chars": 2000}
SOURCES = {**TRAIN, **TEST}


def matches(fmt, text, tok):
    return text_matches(fmt, text, tok[0], tok[1])


def src(name):
    return {"code": SOURCES[name], "entry_point": name}


def inst(name):
    return {"code_p": SOURCES[name], "entry_point": name}


# --------------------------------------------------------------------------- the key
def test_an_unconstrained_request_keeps_the_key_it_always_had():
    messages = [{"role": "user", "content": "hi"}]
    sampling = SamplingParams(temperature=0.5, max_new_tokens=7, n=2, seed=3)
    old = hashlib.sha256(
        canonical_json({"messages": messages, "sampling": sampling.to_dict()}).encode()
    ).hexdigest()
    assert GenerationRequest(messages, sampling).key == old == recording_key(messages, sampling)
    fmt = alice_format(src("add"), SETTINGS)
    constrained = GenerationRequest(messages, sampling, answer_format=fmt)
    assert constrained.key not in (
        old,
        GenerationRequest(messages, sampling, answer_format=bob_format(inst("add"), SETTINGS)).key,
    )
    assert constrained.seed != GenerationRequest(messages, sampling).seed


def test_a_format_needs_a_name_and_a_start_rule():
    with pytest.raises(UserError, match="name"):
        AnswerFormat("", "start: /a/")
    with pytest.raises(UserError, match="start"):
        AnswerFormat("x", "body: /a/")
    with pytest.raises(UserError, match="does not compile"):
        check_grammar(AnswerFormat("x", 'start: "a" missing_rule'))
    assert AnswerFormat.from_dict({"name": "x", "grammar": "start: /a/"}).record()["name"] == "x"


# --------------------------------------------------------------------------- SInQ's skeletons
def test_parameter_names_are_ps_in_call_order():
    assert parameter_names("def f(a, /, b, *args, c, **kw):\n    pass\n", "f") == ["a", "b", "c"]
    with pytest.raises(UserError, match="no top-level function"):
        parameter_names("def g():\n    pass\n", "f")


def test_every_recorded_fixture_answer_follows_its_format(tok):
    """The replay test's hand-written answers (well-formed ones, also wrong programs) are accepted."""
    for name, text in {**ALICE_ROUND1, **ALICE_EVAL_TEST}.items():
        fmt = alice_format(src(name), SETTINGS)
        check_grammar(fmt)
        assert matches(fmt, text, tok), name
    bob = [(name, t) for name, texts in BOB_ROUND1.items() for t in texts]
    bob += [("double", t) for texts in BOB_EVAL_TEST.values() for t in texts]
    for name, text in bob:
        fmt = bob_format(inst(name), SETTINGS)
        assert matches(fmt, text, tok) == parse_bob(text).ok, (name, text)
    assert sum(parse_bob(t).ok for _, t in bob) == len(bob) - 1  # one fixture has no sections at all


def alice_answer(
    analysis="I alter a branch.\n", program="def add(a, b):\n    return a - b\n", inp="{'a': 1, 'b': 2}"
) -> str:
    return (
        f"# Analysis\n{analysis}\n# Generated program\n```python\n{program}```\n\n"
        f"# Diverging input example\n```python\n{inp}\n```"
    )


@pytest.mark.parametrize(
    "broken, why",
    [
        (alice_answer().replace("# Generated program", "# Program"), "a heading changed"),
        (alice_answer().replace("```\n\n# Div", "\n\n# Div"), "the program's fence not closed"),
        (alice_answer(inp="{'c': 1}"), "a key that is not a parameter of P"),
        (alice_answer(inp="{'a': print(1)}"), "a value that is not a literal"),
        (alice_answer(inp="[1, 2]"), "not a dict"),
        (
            alice_answer(inp="{'a': [" + ", ".join(map(str, range(17))) + "], 'b': 1}"),
            "a list of more than 16 items",
        ),
        (alice_answer(inp="{'a': 007, 'b': 1}"), "a number Python does not read (leading zeros)"),
        (alice_answer(inp="{'a': 1, 'b': 2, 'a': 3}"), "more keys than P has parameters"),
        (alice_answer() + "\nand more", "text after the end"),
        (alice_answer(analysis="x" * 401 + "\n"), "an analysis over reasoning_chars"),
        (alice_answer(analysis="# my own heading\n"), "a level-1 heading inside the analysis"),
        ("def add(a, b):\n    return a\n", "no sections at all"),
        (
            alice_answer(program="def plus(a, b):\n    return a - b\n"),
            "Q named otherwise than P's entry point",
        ),
        (alice_answer(program="# Q\ndef add(a, b):\n    return a - b\n"), "text before the entry point"),
        (
            alice_answer(program="import os\n" * 4 + "def add(a, b):\n    return a - b\n"),
            "more import lines than allowed",
        ),
    ],
)
def test_malformed_alice_answers_are_refused(tok, broken, why):
    assert not matches(alice_format(src("add"), SETTINGS), broken, tok), why


def test_imports_may_come_before_the_entry_point_and_helpers_after_it(tok):
    program = (
        "import math\nfrom typing import List\ndef add(a, b):\n    return helper(a) + b\n\n"
        "def helper(x):\n    return math.floor(x)\n"
    )
    text = alice_answer(program=program)
    assert matches(alice_format(src("add"), SETTINGS), text, tok)
    assert parse_alice(text, "add").ok


def test_what_the_format_leaves_free_parses(tok):
    """Random content in every free region still gives an answer that follows the format
    and that the parser reads: the skeleton is all the grammar decides."""
    rng = random.Random(0)
    fmt = alice_format(src("clip"), SETTINGS)
    letters = "abcdefghij xyz.,;:()[]=+-*/<>'\"\n"
    for _ in range(12):
        analysis = "".join(rng.choice(letters) for _ in range(rng.randint(0, 300))) + "\n"
        value = rng.choice(
            [
                "0",
                "-3",
                "2.5",
                "'s'",
                '"t"',
                "None",
                "True",
                "[1, [2, 3]]",
                "(1,)",
                "{1: 'a'}",
                "{'k': (1, 2)}",
                "()",
                "[]",
                "{}",
            ]
        )
        keys = rng.sample(["x", "lo", "hi"], rng.randint(1, 3))
        inp = "{" + ", ".join(f"'{k}': {value}" for k in keys) + "}"
        program = f"def clip(x, lo, hi):\n    return max(lo, min(x, hi + {rng.randint(0, 9)}))\n"
        text = alice_answer(analysis, program, inp)
        assert matches(fmt, text, tok), text
        assert parse_alice(text, "clip").ok


def test_bob_answers_yes_or_no_and_no_needs_an_input(tok):
    fmt = bob_format(inst("clip"), SETTINGS)
    yes = "# Analysis\nSame paths.\n# Equivalent?\nYes"
    no = '# Analysis\nDiffer.\n\n# Equivalent?\nNo\n\n# Diverging input example\n```python\n{"x": 1}\n```'
    assert matches(fmt, yes, tok) and parse_bob(yes).ok and parse_bob(yes).equivalent == "yes"
    assert matches(fmt, no, tok) and parse_bob(no).equivalent == "no"
    for bad in (
        "# Analysis\nx\n# Equivalent?\nMaybe",
        "# Analysis\nx\n# Equivalent?\nNo",
        "# Analysis\nx\n# Equivalent?\nNo\n\n# Diverging input example\n```python\n{'y': 1}\n```",
    ):
        assert not matches(fmt, bad, tok), bad


# --------------------------------------------------------------------------- the real model
@pytest.mark.slow
def test_the_tiny_model_writes_parseable_answers_with_the_format_on(tiny_model_dir):
    """With the skeleton enforced, no answer of SmolLM2-135M fails for its structure (free
    generation: all 14 in a default run did), most parse completely, and the same request
    gives the same texts again."""
    from selfplay.llm.transformers_backend import TransformersBackend
    from selfplay.tracks.sinq.formats import SKELETON_REASONS
    from selfplay.tracks.sinq.prompts import alice_messages, bob_messages

    settings = {"constrained": True, "reasoning_chars": 120, "code_chars": 400}
    backend = TransformersBackend(str(tiny_model_dir), threads=1, progress=False)
    sampling = SamplingParams(temperature=1.0, top_p=0.7, max_new_tokens=320, n=2, seed=5)
    names = ["add", "clip", "count_vowels"]
    alice = [
        GenerationRequest(
            alice_messages(SOURCES[n], n, 10), sampling, answer_format=alice_format(src(n), settings)
        )
        for n in names
    ]
    q = "def clip(x, lo, hi):\n    return max(lo, min(x, hi + 1))\n"
    bob = GenerationRequest(
        bob_messages(SOURCES["clip"], q, "clip"), sampling, answer_format=bob_format(inst("clip"), settings)
    )
    out = backend.generate([*alice, bob])
    parses = [parse_alice(text, name) for name, texts in zip(names, out[:3]) for text in texts]
    assert not [p for p in parses if p.reason in SKELETON_REASONS], parses
    assert sum(p.ok for p in parses) >= len(parses) // 2, parses
    assert all(parse_bob(text).ok for text in out[3]), out[3]
    assert len(set(out[0])) > 1  # the samples differ: the model, not the grammar, writes the content
    assert backend.generate([alice[1]]) == [out[1]]  # seeded: the same texts again


# --------------------------------------------------------------------------- configs
def _answer_formats(tree, path=""):
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == "answer_format":
                yield f"{path}{key}", value
            else:
                yield from _answer_formats(value, f"{path}{key}.")


def test_no_paper_config_constrains_decoding_and_the_default_does():
    from test_config_loading import SHIPPED, load_as_snakemake

    from selfplay.config import validate_config

    for files in SHIPPED:
        cfg = validate_config(load_as_snakemake(files))
        found = dict(_answer_formats(cfg))
        assert found, files  # every generating role has the setting
        if files:
            assert not any(f["constrained"] for f in found.values()), files
        else:
            assert set(found) == {
                f"{t}.{role}.answer_format"
                for t, roles in (
                    ("sinq", ("alice", "bob")),
                    ("seq", ("alice", "proof", "bob")),
                    ("psv", ("solve", "propose")),
                    ("evolve", ("refine", "pool", "adversarial", "discriminative")),
                    ("gasp", ("teacher", "student", "solver", "real_data")),
                )
                for role in roles
            }
            assert all(f["constrained"] for f in found.values())


def test_masking_does_not_load_torch_compile_machinery(tiny_model_dir):
    """Filling a row's mask goes through llguidance's numpy entry point: its torch module
    runs ``torch.compile`` when imported (about a second of every generation job here)."""
    import subprocess
    import sys

    code = (
        "import sys, torch, transformers\n"
        "from selfplay.llm.answer_format import AnswerFormat, FormatMatcher, ll_tokenizer_for\n"
        f"hf = transformers.AutoTokenizer.from_pretrained({str(tiny_model_dir)!r})\n"
        "m = FormatMatcher(AnswerFormat('t', 'start: \"Yes\" | \"No\"'), ll_tokenizer_for(hf))\n"
        "mask = torch.zeros((2, (len(hf) + 31) // 32), dtype=torch.int32)\n"
        "m.fill_mask(mask, 1)\n"
        "bits = ((mask[1, :, None] >> torch.arange(32, dtype=torch.int32)) & 1).flatten().bool()\n"
        "allowed = [hf.decode([t]) for t in torch.nonzero(bits).flatten().tolist()]\n"
        "assert int(mask[0].abs().sum()) == 0 and 'Yes' in allowed and 'No' in allowed, allowed\n"
        "assert not any(a.strip() and not ('Yes'.startswith(a) or 'No'.startswith(a)) for a in allowed), allowed\n"
        "print(sorted(k for k in sys.modules if k.startswith('llguidance.torch')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"
