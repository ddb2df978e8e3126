"""Format-constrained decoding for the GASP track: the skeletons of tracks/gasp/formats.py
accept answers that parse.py reads and refuse those that break the layout; answers drawn
at random through the grammar's own token masks never fail for their layout."""

from __future__ import annotations

import random
import re

import pytest

from selfplay.errors import UserError
from selfplay.llm.answer_format import check_grammar, text_matches
from selfplay.tracks.gasp import parse
from selfplay.tracks.gasp.execution import read_call_args
from selfplay.tracks.gasp.formats import (
    DEFAULTS,
    FORMS,
    SKELETON_REASONS,
    answer_format,
    proposal_format,
    task_arity,
)
from selfplay.tracks.gasp.prompts import TEACHER_SYSTEM

CODE = "def f(xs, k):\n    return sum(xs) + k\n"
INPUTS = ["[1, 2], 3", "[], 0", "[5], -1", "[[1, 'a'], (2,)], {1: [None]}", "{'a', 'b'}, -2.5"]
SMALL = {"question_chars": 40, "code_chars": 60, "literal_chars": 16}
FREE = proposal_format({"parameters": 0})  # the parameter list and the argument count left free


def proposal(question="Return the sum of the list plus k.", code=CODE, inputs=INPUTS, end="\n") -> str:
    """A proposal laid out exactly as the grammar fixes it."""
    return (
        f"Question: {question}\n```python\n{code}```"
        + "".join(f"\n\n```input\n{i}\n```" for i in inputs)
        + end
    )


def matches(fmt, text, tok) -> bool:
    return text_matches(fmt, text, tok[0], tok[1])


# --------------------------------------------------------------------------- compile and settings
def test_every_format_compiles_and_is_named():
    fmts = [
        proposal_format(),
        *(answer_format(f) for f in FORMS),
        proposal_format(SMALL),
        proposal_format({"constrained": True, "reasoning_chars": 100, "code_chars": 3000}),
        proposal_format({"question_chars": 8000, "code_chars": 16000, "literal_chars": 4000}),
    ]
    assert [f.name for f in fmts[:4]] == [
        "gasp.proposal",
        "gasp.induction",
        "gasp.deduction",
        "gasp.abduction",
    ]
    for f in fmts:
        check_grammar(f)
    assert f"{{0,{DEFAULTS['question_chars'] - 1}}}" in proposal_format().grammar
    assert (
        proposal_format({"reasoning_chars": 100}).grammar != proposal_format().grammar
    )  # the shared key counts


@pytest.mark.parametrize(
    "settings",
    [
        {"question_chars": 0},
        {"code_chars": True},
        {"literal_chars": "48"},
        {"literal_chars": parse.MAX_LITERAL_CHARS + 1},
        {"code_chars": parse.MAX_CODE_CHARS + 1},
        {"code_chars": 15},
        {"parameters": -1},
        {"parameters": 7},
        {"parameters": True},
    ],
)
def test_bounds_outside_what_the_parser_reads_are_refused(settings):
    with pytest.raises(UserError, match="answer_format"):
        proposal_format(settings)


def test_an_unknown_form_is_refused():
    with pytest.raises(UserError, match="unknown GASP task form"):
        answer_format("translation")


# --------------------------------------------------------------------------- well-formed answers
@pytest.mark.parametrize(
    "text",
    [
        proposal(),
        proposal(end=""),
        proposal(question="Étant donné une liste, rendre 'la somme' (plus k) — vite! {x: 1}"),
        proposal(code="def f(x, k):\n\treturn x\n"),
        proposal(code="def f(_xs2, k): return _xs2\n"),
        proposal(
            code="def f(grid):\n\n    def helper(row):\n        return max(row)\n    return [helper(r) for r in grid]  # ``x``\n",
            inputs=["[[1, 2], [3]]", "[[-1]]", "[[0, 0, 0]]", "[[1], [2], [3]]", "[]"],
        ),
        proposal(
            code="def f(s):\n    return s[::-1]\n", inputs=["'abc'", '"a\'b"', "''", "'{[(,)]}'", "'x y'"]
        ),
        proposal(inputs=["0.5, -0", "None, True", "False, ()", "(1,), {}", "{1: 'a', 2: 'b'}, -7"]),
    ],
)
def test_well_formed_proposals_are_accepted_and_parse(tok, text):
    for fmt in (proposal_format(), FREE):
        assert matches(fmt, text, tok), (fmt.grammar[:80], text)
    prop, why = parse.parse_proposal(text)
    assert why is None and len(prop["inputs"]) == parse.N_INPUTS


@pytest.mark.parametrize(
    ("text", "free"),
    [
        (proposal(code="def f(x):\n\treturn x\n"), True),  # one parameter, two arguments
        (proposal(code="def f(xs: list, k):\n    return xs\n"), True),
        (proposal(code="def f(xs, k=1):\n    return xs\n"), True),
        (proposal(code="def f(*args):\n    return args\n"), True),
        (proposal(code="def f(Xs, k):\n    return Xs\n"), True),
        (proposal(code="def f(a, b, c, d):\n    return a\n", inputs=["1, 2, 3, 4"] * 5), True),
        (proposal(code="def f():\n    return 1\n", inputs=[""] * 5), False),  # no input is empty
    ],
)
def test_the_matched_signature_refuses_what_the_free_one_lets_through(tok, text, free):
    """Parameters are 1 to 3 plain names and every input gives as many arguments; the free
    skeleton (``parameters: 0``) leaves both to the model."""
    assert not matches(proposal_format(), text, tok), text
    assert matches(FREE, text, tok) == free, text


def test_each_arity_takes_exactly_its_count_of_arguments(tok):
    fmt = proposal_format({"parameters": 2})
    one = proposal(
        code="def f(s):\n    return s[::-1]\n", inputs=["'ab'", "''", "(1, 2)", "[3, 4]", "{1: 2}"]
    )
    two = proposal()
    three = proposal(code="def f(a, b, c):\n    return a\n", inputs=["1, 2, 3"] * 5)
    assert matches(fmt, one, tok) and matches(fmt, two, tok) and not matches(fmt, three, tok)
    assert matches(proposal_format({"parameters": 3}), three, tok)
    mixed = proposal(code="def f(s):\n    return s\n", inputs=["'ab'"] * 4 + ["'a', 'b'"])
    assert not matches(fmt, mixed, tok) and matches(FREE, mixed, tok)


def test_well_formed_student_answers_are_accepted_and_parse(tok):
    cases = [
        ("induction", "```python\ndef f(xs):\n    return sorted(xs)\n```", parse.parse_induction),
        (
            "induction",
            "```python\ndef f(a, b=2):\n    '''doc'''\n    return a * b\n```\n",
            parse.parse_induction,
        ),
        ("deduction", "```output\n[1, (2, 3), {'a': None}]\n```", parse.parse_deduction),
        ("deduction", "```output\n-4.25\n```\n", parse.parse_deduction),
        ("deduction", "```output\n(1, 2)\n```", parse.parse_deduction),
        ("abduction", "```input\n'a', 3\n```", parse.parse_abduction),
        ("abduction", "```input\n[[1, 2], [3]]\n```\n", parse.parse_abduction),
    ]
    for form, text, reader in cases:
        assert matches(answer_format(form), text, tok), text
        value, why = reader(text)
        assert why is None, (text, why)


def test_a_student_answer_takes_the_arity_of_its_task(tok):
    """Given the task's arity, an induction answer names exactly that many plain
    parameters and an abduction answer gives exactly that many arguments; without one
    (inputs of differing counts) both stay free."""
    two_in = answer_format("induction", None, 2)
    assert matches(two_in, "```python\ndef f(xs, k):\n    return xs[k]\n```", tok)
    for bad in ("def f(xs):", "def f(xs, k, j):", "def f(*a):", "def f(xs, k=0):", "def f(xs: list, k):"):
        text = f"```python\n{bad}\n    return 1\n```"
        assert not matches(two_in, text, tok) and matches(answer_format("induction"), text, tok), bad
    two_ab = answer_format("abduction", None, 2)
    assert matches(two_ab, "```input\n[1, (2, 3)], 'a'\n```", tok)
    assert not matches(two_ab, "```input\n[1, 2]\n```", tok)
    assert not matches(two_ab, "```input\n1, 2, 3\n```", tok)
    assert matches(answer_format("abduction", None, 1), "```input\n(1, 2)\n```", tok)  # one tuple
    assert answer_format("deduction", None, 2).grammar == answer_format("deduction").grammar
    with pytest.raises(UserError, match="arity"):
        answer_format("induction", None, 0)


def test_the_arity_of_a_task_comes_from_its_inputs():
    def task(*inputs):
        return {"pairs": [{"input": i, "output_repr": "0"} for i in inputs]}

    assert task_arity(task("([1, 2], 3)", "([], 0)")) == 2
    assert task_arity(task("((1, 2),)", "((3, 4),)")) == 1
    assert task_arity(task("(1,)", "(1, 2)")) is None  # differing counts: no fixed signature
    assert (
        task_arity(
            task(
                "(1, 2, 3, 4, 5, 6, 7)",
            )
        )
        is None
    )  # more than a signature may name
    assert (
        task_arity(
            task(
                "(__import__('os'),)",
            )
        )
        is None
    )  # not literals
    assert task_arity({}) is None


def test_the_example_in_the_teacher_prompt_follows_the_format(tok):
    """The prompt's worked example is laid out exactly as the grammar makes the model write it."""
    example = TEACHER_SYSTEM.split("For example:\n\n", 1)[1].split("\n\nChoose", 1)[0] + "\n"
    assert matches(proposal_format(), example, tok), example
    prop, why = parse.parse_proposal(example)
    assert why is None and prop["inputs"][0] == "([3, 8, 1, 9], 4)"


# --------------------------------------------------------------------------- the skeleton's limits
@pytest.mark.parametrize(
    "text",
    [
        proposal().replace("Question: ", "Task: "),
        proposal().replace("Question: ", "Question:"),
        proposal(question="two\nlines"),
        proposal(question="*bold*"),
        proposal(question="uses `code`"),
        proposal(question="a\rQuestion:"),
        proposal(question="x" * (DEFAULTS["question_chars"] + 1)),
        proposal().replace("```python\n", "```python\n\n"),
        proposal(code=CODE.replace("def f(", "def g(")),
        proposal(code=CODE + "print(f([1], 2))\n"),  # a top-level statement
        proposal(code=CODE + "def g(x):\n    return x\n"),  # a second function
        proposal(code="def f(x):\n    return x  # ```\n"),  # a fence inside the code
        proposal(
            code="def f(x):\n" + "    x += 1\n" * (DEFAULTS["code_chars"] // 10) + "    return x\n"
        ),  # 10 pieces a line
        proposal(inputs=INPUTS[:4]),
        proposal(inputs=INPUTS + ["1"]),
        proposal(inputs=INPUTS[:4] + ["x"]),
        proposal(inputs=INPUTS[:4] + ["k=1"]),
        proposal(inputs=INPUTS[:4] + [""]),
        proposal(inputs=INPUTS[:4] + ["[1,2]"]),  # items are separated by ", "
        proposal(inputs=INPUTS[:4] + ["[[[[1]]]]"]),  # nested deeper than 3
        proposal(inputs=INPUTS[:4] + ["'a\\nb'"]),  # no backslashes in strings
        proposal(inputs=INPUTS[:4] + ["'" + "a" * (DEFAULTS["literal_chars"] - 1) + "'"]),
        proposal(inputs=INPUTS[:4] + ["set()"]),
        proposal(inputs=INPUTS[:4] + ["1e5"]),
        proposal(inputs=INPUTS[:4] + ["__import__('os')"]),
        proposal().replace("```\n\n```input", "```\n```input", 1),
    ],
)
def test_answers_that_break_the_skeleton_are_refused(tok, text):
    assert not matches(proposal_format(), text, tok), text


def test_student_answers_that_break_their_skeleton_are_refused(tok):
    bad = {
        "induction": [
            "```python\ndef g(x):\n    return x\n```",
            "I think\n```python\ndef f(x):\n    return x\n```",
            "```python\ndef f(x):\n    return x\nprint(f(1))\n```",
        ],
        "deduction": [
            "```output\n1, 2\n```",
            "```output\nx\n```",
            "```output\n[1,2]\n```",
            "```input\n1\n```",
            "```output\n" + "[" * 4 + "]" * 4 + "\n```",
        ],
        "abduction": ["```input\nf(3)\n```", "```input\nk=3\n```", "```input\n\n```", "```output\n3\n```"],
    }
    for form, texts in bad.items():
        for text in texts:
            assert not matches(answer_format(form), text, tok), (form, text)


def test_the_bounds_are_exact(tok):
    fmt = proposal_format({**SMALL, "parameters": 0})
    # the program counts in pieces: "def f(" 6, "x):" 3, the line break with its first space 1,
    # "   return x  # " 15, then the comment; the last line break is not counted (60 in all)
    assert matches(
        fmt,
        proposal(
            question="q" * 40,
            code="def f(x):\n    return x  # " + "c" * 35 + "\n",
            inputs=["'" + "a" * 14 + "'"] * 5,
        ),
        tok,
    )
    assert not matches(fmt, proposal(question="q" * 41, inputs=["1"] * 5), tok)
    assert not matches(
        fmt, proposal(code="def f(x):\n    return x  # " + "c" * 36 + "\n", inputs=["1"] * 5), tok
    )
    assert not matches(fmt, proposal(inputs=["'" + "a" * 15 + "'"] * 5), tok)


def test_a_matched_signature_keeps_the_program_within_its_bound(tok):
    """The body's share assumes the longest names: ``def f(`` 6, a name of 12, ``):`` 2,
    so 40 of SMALL's 60 pieces for a one-parameter body, whatever the name's length."""
    fmt = proposal_format({**SMALL, "parameters": 1})
    one = ["1"] * 5
    body = "\n    return x  # "  # 16 pieces
    assert matches(fmt, proposal(code="def f(x):" + body + "c" * 24 + "\n", inputs=one), tok)
    assert not matches(fmt, proposal(code="def f(x):" + body + "c" * 25 + "\n", inputs=one), tok)
    named = "def f(" + "n" * 12 + "):" + body.replace("x", "n" * 12)  # 11 more pieces in the body
    assert matches(fmt, proposal(code=named + "c" * 13 + "\n", inputs=one), tok)
    assert not matches(fmt, proposal(code=named + "c" * 14 + "\n", inputs=one), tok)
    assert not matches(fmt, proposal(code="def f(" + "n" * 13 + "):\n    return 1\n", inputs=one), tok)


def test_long_programs_and_literals_are_followed_to_their_end(tok):
    """llguidance builds lexer states as a region grows: a program bounded by an intersection
    with a length bound was refused after about 3300 characters when its tokens were
    consumed without computing masks (as ``text_matches`` does); the counted pieces are
    followed to the end, with masks and without."""
    import llguidance

    hf, lt = tok
    code = "def f(x):\n" + "    x = x + 1  # step\n" * 220 + "    return x\n"
    lit = "[" + ", ".join(f"'w{i}'" for i in range(320)) + "]"
    for fmt, text in (
        (answer_format("induction", {"code_chars": 6000}), f"```python\n{code}```"),
        (answer_format("deduction", {"literal_chars": 4000}), f"```output\n{lit}\n```"),
    ):
        assert matches(fmt, text, tok), fmt.name
        ids = hf(text, add_special_tokens=False)["input_ids"]
        assert len(ids) > 1600
        m = llguidance.LLMatcher(lt, llguidance.LLMatcher.grammar_from_lark(fmt.grammar), log_level=0)
        for i, t in enumerate(ids):
            m.compute_bitmask()
            assert m.consume_token(t), (fmt.name, i, m.get_error())
        assert m.is_accepting()


# --------------------------------------------------------------------------- random answers through the masks
def _walk(fmt, tok, rng: random.Random, steps: int = 2000) -> str:
    """One answer drawn token by token from what the grammar allows (short tokens favoured so
    that the regions close); fails the test when the grammar ever leaves no way to go on."""
    import llguidance
    import numpy as np

    hf, lt = tok
    m = llguidance.LLMatcher(lt, llguidance.LLMatcher.grammar_from_lark(fmt.grammar), log_level=0)
    ids: list[int] = []
    for _ in range(steps):
        words = np.frombuffer(m.compute_bitmask(), dtype=np.uint32)
        allowed = np.nonzero(np.unpackbits(words.view(np.uint8), bitorder="little")[: lt.vocab_size])[
            0
        ].tolist()
        if m.is_accepting() and (allowed == [lt.eos_token] or rng.random() < 0.3):
            return hf.decode(ids)
        allowed = [t for t in allowed if t != lt.eos_token]
        assert allowed, f"dead end after {hf.decode(ids)!r}"
        short = [t for t in rng.sample(allowed, min(100, len(allowed))) if len(hf.decode([t])) <= 2]
        tok_id = rng.choice(short if short and rng.random() < 0.7 else allowed)
        assert m.consume_token(tok_id), m.get_error()
        ids.append(tok_id)
    raise AssertionError(f"no end after {steps} tokens: {hf.decode(ids)!r}")


def test_random_answers_drawn_through_the_grammar_never_fail_for_their_layout(tok):
    rng = random.Random(21)
    readers = {"deduction": parse.parse_deduction, "abduction": parse.parse_abduction}
    for form, reader in readers.items():
        for _ in range(15):
            text = _walk(answer_format(form, SMALL), tok, rng)
            value, why = reader(text)
            assert why is None, (text, why)  # a literal by construction
    for i in range(8):
        text = _walk(answer_format("induction", SMALL, 2 if i % 2 else None), tok, rng)
        assert parse.parse_induction(text)[1] not in SKELETON_REASONS, text
    for _ in range(4):
        text = _walk(answer_format("abduction", SMALL, 2), tok, rng)
        value, why = parse.parse_abduction(text)
        assert why is None and len(read_call_args(value, 4000)) == 2, text
    for i in range(8):
        fmt = proposal_format(SMALL) if i % 2 else proposal_format({**SMALL, "parameters": 0})
        text = _walk(fmt, tok, rng)
        prop, why = parse.parse_proposal(text)
        assert why not in SKELETON_REASONS, (text, why)  # only the program's content can fail
        # what the layout fixes is read whole: the question, five literal inputs
        question = re.match(r"Question: (.*)\n", text).group(1)
        assert len(question) <= SMALL["question_chars"]
        inputs = re.findall(r"```input\n(.*)\n```", text)
        assert len(inputs) == 5 and all(parse.read_arguments(i)[1] is None for i in inputs), text
        if i % 2:  # matched: as many arguments as f names parameters
            names = re.match(r"def f\(([a-z0-9_, ]*)\):", text.split("```python\n", 1)[1]).group(1)
            arity = len(names.split(", "))
            assert 1 <= arity <= 3 and all(
                len(read_call_args(parse.read_arguments(a)[0], 4000)) == arity for a in inputs
            ), text


# --------------------------------------------------------------------------- the real model
@pytest.mark.slow
def test_the_tiny_model_writes_complete_answers_with_the_format_on(tiny_model_dir):
    """SmolLM2-135M, constrained, on 4 lemma requests (two goalposts, both axes) at the
    teacher's training temperature, and once on each student form: no answer that ended
    within its token budget fails for its layout (only the program's content can fail),
    and some proposals parse whole (measured with the free skeleton: 4 of these 4; of 8
    requests, 7 at T=1.0 and 8 at T=0.6, the failure a program that does not parse; with
    the matched signature, today's default, 4 of these 4 on 2026-11-28)."""
    from selfplay.llm.base import GenerationRequest, SamplingParams
    from selfplay.llm.factory import make_backend
    from selfplay.tracks.gasp.goalposts import load_goalposts
    from selfplay.tracks.gasp.prompts import lemma_messages, student_messages

    backend = make_backend(
        {"name": "transformers", "model": str(tiny_model_dir), "threads": 1, "progress": False}
    )
    goalposts = load_goalposts()
    budget = 384
    teacher = [
        GenerationRequest(
            lemma_messages(goalposts[i // 2], ("io", "f")[i % 2]),
            SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=budget, seed=i),
            answer_format=proposal_format(),
        )
        for i in range(4)
    ]
    task = {
        "id": "t",
        "question": "Return the largest item of the list.",
        "code": "def f(xs):\n    return max(xs)\n",
        "pairs": [{"input": "([3, 1, 2],)", "output_repr": "3"}, {"input": "([0],)", "output_repr": "0"}],
        "shown": [0, 1],
    }
    student = [
        GenerationRequest(
            student_messages(task, form, 0),
            SamplingParams(temperature=1.0, top_p=0.95, max_new_tokens=128, seed=9),
            answer_format=answer_format(form),
        )
        for form in FORMS
    ]
    out = backend.generate(teacher + student)
    hf = __import__("transformers").AutoTokenizer.from_pretrained(str(tiny_model_dir))
    results = []
    for texts in out[:4]:
        prop, why = parse.parse_proposal(texts[0])
        cut = len(hf(texts[0], add_special_tokens=False)["input_ids"]) >= budget
        results.append(why)
        assert cut or why not in SKELETON_REASONS, (texts[0], why)
    print(
        f"\nGASP proposals parsed whole: {sum(w is None for w in results)} of {len(results)}; reasons {results}"
    )
    assert sum(w is None for w in results) >= 1, results
    readers = {
        "induction": parse.parse_induction,
        "deduction": parse.parse_deduction,
        "abduction": parse.parse_abduction,
    }
    for form, texts in zip(FORMS, out[4:]):
        value, why = readers[form](texts[0])
        assert why not in SKELETON_REASONS, (form, texts[0], why)
        if form != "induction":
            assert why is None, (form, texts[0], why)
