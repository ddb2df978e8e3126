"""Format-constrained decoding for the Haskell track (paper 000): the answer skeletons of
tracks/seq/formats.py accept what the track's parsers read and refuse what they do not."""

from __future__ import annotations

import random
import re
import textwrap

import pytest

from selfplay.errors import UserError
from selfplay.haskell.liquid.answer import parse_proof_answer
from selfplay.haskell.literals import random_value, render_literal
from selfplay.haskell.types import parse_type
from selfplay.llm.answer_format import check_grammar, text_matches
from selfplay.tracks.seq import formats
from selfplay.tracks.seq.formats import alice_format, bob_format, proof_format
from selfplay.tracks.seq.parse import parse_alice, parse_bob

SETTINGS = {"constrained": True, "reasoning_chars": 400, "code_chars": 1000}
SOURCE = {
    "id": "s1",
    "code": "f :: Int -> [Int] -> Int\nf n xs = n + sum xs\n",
    "entry_point": "f",
    "arg_types": ["Int", "[Int]"],
    "result_type": "Int",
}
# Q opens with P's signature and name (the format fixes them; parse.py renames Q to f_alt)
Q = "f :: Int -> [Int] -> Int\nf n xs = n + sum xs + 1\n"
# what parse.py and answer.py reject for the answer's structure (the rest concerns the content)
STRUCTURAL = {
    "too_long",
    "no_program_section",
    "no_code_block",
    "several_code_blocks",
    "no_diverging_input",
    "bad_input",
    "no_lemma",
    "ambiguous",
    "empty_output",
    "output_too_large",
}

PROOF_DOUBLE = textwrap.dedent("""\
    {-@ lemma_double_equiv :: x:Int -> { double x == double_alt x } @-}
    lemma_double_equiv :: Int -> Proof
    lemma_double_equiv x
      =   double x
      === double_alt x
      *** QED
    """)
PROOF_CLAMP = textwrap.dedent("""\
    {-@ lemma_clamp3_equiv :: a:Int -> b:Int -> c:Int
                           -> { clamp3 a b c == clamp3_alt a b c } @-}
    lemma_clamp3_equiv :: Int -> Int -> Int -> Proof
    lemma_clamp3_equiv a b c = ()
    """)
PROOF_HELPER_FIRST = textwrap.dedent("""\
    {-@ helper :: xs:[Int] -> { len xs >= 0 } @-}
    helper :: [Int] -> Proof
    helper [] = ()
    helper (_:ys) = helper ys

    {-@ lemma_len_equiv :: xs:[Int] -> { len xs == len_alt xs } @-}
    lemma_len_equiv :: [Int] -> Proof
    lemma_len_equiv xs = () ? helper xs
    """)


def matches(fmt, text, tok) -> bool:
    return text_matches(fmt, text, tok[0], tok[1])


def alice_text(think="P adds n to the sum.\n", program=Q, inp=None, nl="\n") -> str:
    text = f"{think}</think>{nl}Generated Program `Q`:\n```haskell\n{program}```\n"
    return text if inp is None else text + f"Diverging Input `x`:\n{inp}\n"


def proof_text(code=PROOF_DOUBLE, think="Unfold both sides.\n") -> str:
    return f"{think}</think>\n\n```haskell\n{code}```\n"


def bob_text(verdict="Yes", remarks="\nBoth sum the list.\n", think="Compare them.\n") -> str:
    return f"{think}</think>{remarks}# Equivalent?\n{verdict}\n"


def q_for(arg_types) -> str:
    """A Q whose signature takes ``arg_types`` (what it computes is not the point here)."""
    return formats.signature_line({**SOURCE, "arg_types": arg_types}) + "f" + " _" * len(arg_types) + " = 0\n"


def sinq(arg_types):
    return alice_format("sinq", {**SOURCE, "arg_types": arg_types}, SETTINGS)


# A Haskell string literal, and what of it the format allows (formats.MAX_STRING_CHARS
# characters or simple escapes, no "--", no "</").
STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def string_allowed(literal: str) -> bool:
    body = literal[1:-1]
    pieces = re.findall(r"\\.|[^\\]", body)
    simple = all(p[1] in "abfnrtv\\\"'&" for p in pieces if p.startswith("\\"))
    return simple and len(pieces) <= formats.MAX_STRING_CHARS and "--" not in body and "</" not in body


# --------------------------------------------------------------------------- compile
def test_every_format_compiles_and_is_named():
    fmts = [
        alice_format("seq", SOURCE, SETTINGS),
        alice_format("sinq", SOURCE, SETTINGS),
        proof_format({"entry_point": "double"}, SETTINGS),
        bob_format({}, SETTINGS),
        sinq(["Maybe (Either String Double)", "(Char, ())", "[[Char]]", "Bool", "Integer", "Float"]),
    ]
    assert [f.name for f in fmts[:4]] == ["seq.alice.seq", "seq.alice.sinq", "seq.proof", "seq.bob"]
    for f in fmts:
        check_grammar(f)
    big = {
        "reasoning_chars": 100_000,
        "code_chars": 50_000,
    }  # large bounds stay cheap (no intersection counts)
    for f in (
        alice_format("sinq", SOURCE, big),
        proof_format({"entry_point": "f"}, big),
        bob_format({}, big),
    ):
        check_grammar(f)
    with pytest.raises(UserError, match="unknown game"):
        alice_format("chess", SOURCE, SETTINGS)
    with pytest.raises(UserError):
        sinq(["a -> a"])  # no literals for a function type


# --------------------------------------------------------------------------- well-formed answers
@pytest.mark.parametrize(
    "game, text, args",
    [
        ("seq", alice_text(), None),
        (
            "seq",
            alice_text(
                think="<think>\nGenerated Program `Q`: maybe later. x < y, a </b> tag, ```code```\n",
                nl="\n\n",
            ),
            None,
        ),
        (
            "seq",
            alice_text(think="", program="import Data.Char (ord, chr)\nimport qualified Data.Map as M\n" + Q),
            None,
        ),
        ("sinq", alice_text(inp="3 [1, -2]"), ["3", "[1, -2]"]),
        ("sinq", alice_text(inp="(-1) []"), ["(-1)", "[]"]),
        ("sinq", alice_text(inp="0x1F [(-3),4,-5]"), ["0x1F", "[(-3),4,-5]"]),
    ],
)
def test_well_formed_alice_answers_are_accepted_and_parse(tok, game, text, args):
    assert matches(alice_format(game, SOURCE, SETTINGS), text, tok), text
    a = parse_alice(text, game, "f", SOURCE["arg_types"])
    assert a.ok and a.name_q == "f_alt", (a.reason, a.detail)
    if args is not None:
        assert a.input_args == args


@pytest.mark.parametrize(
    "types, inp",
    [
        (["String", "Char"], '"a \\"q\\" \\t\\&5 -" \'\\\'\''),
        (["Maybe Int", "Either String Bool"], "(Just (-3)) (Left ['h', 'i'])"),
        (["[Maybe (Int, Bool)]", "()"], "[Just (1, True), Nothing, (Just (-2, False))] ()"),
        (["Double", "[[Char]]"], '(-1.5e-3) ["", "x"]'),
    ],
)
def test_sinq_inputs_of_other_types(tok, types, inp):
    text = alice_text(program=q_for(types), inp=inp)
    assert matches(sinq(types), text, tok), text
    a = parse_alice(text, "sinq", "f", types)
    assert a.ok, (a.reason, a.detail)


@pytest.mark.parametrize(
    "p, code",
    [
        ("double", PROOF_DOUBLE),
        ("clamp3", PROOF_CLAMP),
        ("len", PROOF_HELPER_FIRST),
        ("double", "lemma_double_equiv :: Int -> Proof\nlemma_double_equiv x = ()\n"),
    ],
)
def test_well_formed_proofs_are_accepted_and_parse(tok, p, code):
    text = proof_text(code)
    assert matches(proof_format({"entry_point": p}, SETTINGS), text, tok), text
    ans = parse_proof_answer(text, p)
    assert ans.ok and ans.origin == "fenced", ans.detail


@pytest.mark.parametrize(
    "text, verdict",
    [
        (bob_text("Yes"), "yes"),
        (bob_text("No", remarks="\n\nThey differ on [] (see `f_alt`).\n\n"), "no"),
        # a verdict inside the thinking is not read
        (bob_text("No", remarks="\n", think="### Step 1\n# Equivalent?\nYes\n"), "no"),
    ],
)
def test_well_formed_bob_answers_are_accepted_and_parse(tok, text, verdict):
    assert matches(bob_format({}, SETTINGS), text, tok), text
    assert parse_bob(text) == (verdict, None)


# --------------------------------------------------------------------------- malformed answers
@pytest.mark.parametrize(
    "game, text, why",
    [
        ("seq", alice_text().replace("Generated Program", "Program"), "the program heading changed"),
        ("seq", alice_text().replace("</think>", ""), "the reasoning never ends"),
        ("seq", alice_text()[:-4], "the closing fence is missing"),
        ("seq", alice_text(program=Q[:-1] + "```\n")[:-4] + "\n", "the fence closes mid-line"),
        ("seq", alice_text() + "Hope this helps.", "text after the end"),
        ("seq", alice_text(think="x" * 401 + "\n"), "reasoning over reasoning_chars"),
        ("seq", alice_text(program=Q + "-- " + "y" * 1000 + "\n"), "code over code_chars"),
        ("seq", alice_text(program=Q + "-- generated program Q\n"), "a parser marker inside the code"),
        ("seq", alice_text(program=Q + "-- </think>\n"), "</think> inside the code"),
        ("sinq", alice_text(), "no diverging input"),
        ("sinq", alice_text(inp="3"), "too few arguments"),
        ("sinq", alice_text(inp="3 [1] 4"), "too many arguments"),
        ("sinq", alice_text(inp="-1 [2]"), "a bare negative argument"),
        ("sinq", alice_text(inp="x = 1 [2]"), "a label before the arguments"),
        ("sinq", alice_text(inp="(length [1]) [2]"), "not a literal"),
        ("sinq", alice_text(inp="3 [1]") + "because\n", "text after the input"),
        ("sinq", alice_text(inp="3  [1]"), "two spaces between the arguments"),
        ("seq", alice_text(program=Q.replace("f ::", "g ::")), "Q's signature names another function"),
        ("seq", alice_text(program=Q.replace("-> Int\n", "-> Integer\n")), "Q's signature has another type"),
        ("seq", alice_text(program="-- Q\n" + Q), "text before the signature"),
        ("seq", alice_text(program="import P\n" + Q), "an import of a module that does not exist"),
        ("seq", alice_text(program="import Data.Char\n" * (formats.MAX_IMPORTS + 1) + Q), "too many imports"),
    ],
)
def test_malformed_alice_answers_are_refused(tok, game, text, why):
    assert not matches(alice_format(game, SOURCE, SETTINGS), text, tok), why


def test_what_the_parser_would_misread_is_refused(tok):
    """The exclusions are the parser's needs: these answers would not parse either."""
    marker = alice_text(program=Q + "-- generated program Q\n")
    assert parse_alice(marker, "seq", "f", SOURCE["arg_types"]).reason == "no_code_block"
    dashes = alice_text(inp='"a--b"')
    types = ["String"]
    assert not matches(sinq(types), dashes, tok)
    assert (
        parse_alice(alice_text(program=q_for(types), inp='"a--b"'), "sinq", "f", types).reason == "bad_input"
    )


@pytest.mark.parametrize(
    "text, why",
    [
        (proof_text("lemma_f_equiv x = ()\n"), "the block does not name the lemma"),
        (proof_text("lemma_double_equivalent x = ()\n"), "the lemma's name only as part of a longer word"),
        (proof_text()[:-4], "the closing fence is missing"),
        (proof_text() + "This proves it.\n", "text after the block"),
        (proof_text().replace("</think>\n\n", "</think>\nHere is the proof:\n"), "text before the block"),
        (proof_text() + "```haskell\n" + PROOF_DOUBLE + "```\n", "a second block"),
        (proof_text(PROOF_DOUBLE + "-- </THINK >\n"), "an end of thinking inside the block"),
        (proof_text(think="y" * 401), "reasoning over reasoning_chars"),
    ],
)
def test_malformed_proofs_are_refused(tok, text, why):
    assert not matches(proof_format({"entry_point": "double"}, SETTINGS), text, tok), why


@pytest.mark.parametrize(
    "text, why",
    [
        (bob_text("Maybe"), "a verdict that is not Yes or No"),
        (bob_text("**Yes**"), "decorated verdict"),
        (bob_text("yes"), "lower case"),
        (bob_text("Yes").replace("# Equivalent?", "Equivalent?"), "the heading is missing"),
        (bob_text("Yes").replace("# Equivalent?\n", "# Equivalent? "), "the verdict not on its own line"),
        (bob_text("Yes") + "They are the same.", "text after the verdict"),
        (bob_text("No", remarks="\n# Summary\nclose.\n"), "another heading after the reasoning"),
        (bob_text("Yes", remarks="\n" + "z" * 401 + "\n"), "remarks over reasoning_chars"),
        (bob_text("Yes", think="w" * 401), "reasoning over reasoning_chars"),
        (bob_text("Yes").replace("</think>", ""), "the reasoning never ends"),
    ],
)
def test_malformed_bob_answers_are_refused(tok, text, why):
    assert not matches(bob_format({}, SETTINGS), text, tok), why


def test_masks_along_well_formed_answers_allow_every_token(tok):
    """What generation does: a mask before every token (text_matches only consumes). Each
    token of a well-formed answer is allowed, and the end of sequence after it."""
    from llguidance.torch import allocate_token_bitmask

    from selfplay.llm.answer_format import FormatMatcher

    hf, ll = tok
    types = ["String", "[Maybe (Int, Char)]", "Either Double Bool"]
    inp = r""""x \"y\" \t\&3-" [Just (-1, '\n'), Nothing] (Right True)"""
    cases = [
        (alice_format("seq", SOURCE, SETTINGS), alice_text("<think>Maybe `foldr`?\n# Plan\n")),
        (sinq(types), alice_text(program=q_for(types), inp=inp)),
        (proof_format({"entry_point": "len"}, SETTINGS), proof_text(PROOF_HELPER_FIRST)),
        (bob_format({}, SETTINGS), bob_text("No", remarks="\nThey differ on [].\n")),
    ]
    mask = allocate_token_bitmask(1, ll.vocab_size)

    def allowed(token: int) -> bool:
        return bool((int(mask[0, token // 32]) >> (token % 32)) & 1)

    for fmt, text in cases:
        matcher = FormatMatcher(fmt, ll)
        for token in hf(text, add_special_tokens=False)["input_ids"]:
            matcher.fill_mask(mask, 0)
            assert allowed(token), (fmt.name, matcher.error[:200])
            matcher.consume(token)
        matcher.fill_mask(mask, 0)
        assert allowed(ll.eos_token), fmt.name


# --------------------------------------------------------------------------- free regions
PIECES = [
    "<",
    "/",
    "t",
    "h",
    "i",
    "n",
    "k",
    ">",
    "</",
    "<think>",
    "</thin",
    "</think >",
    "</THINK>",
    "#",
    "`",
    "``",
    "```",
    "\n",
    " ",
    "x",
    "é",
    "中",
    "\\",
    '"',
    "'",
    "-",
    "--",
    "{-",
    "-}",
    "Generated Program",
    "Diverging Input",
]


def _draw(rng: random.Random, pieces: list[str], most: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))


def test_the_reasoning_regex_is_exactly_text_without_an_end_tag():
    """THINK (also valid Python regex syntax) = any text without </think>, then </think>,
    where at most four false starts of the tag (`<`, `</`, `</th`, ...) follow one another
    (so that the region stays bounded)."""
    think = re.compile(formats._think({"reasoning_chars": 10_000}).split(": ", 1)[1].strip()[1:-1], re.S)
    five_starts = re.compile(r"(<(/(t(h(i(nk?)?)?)?)?)?){5}")
    rng = random.Random(1)
    for _ in range(3000):
        s = _draw(rng, PIECES + ["</think>", "<<", "</thi</think"], 12)
        expected = "</think>" not in s and not five_starts.search(s + "</think>")
        assert bool(think.fullmatch(s + "</think>")) == expected, s
    assert not think.fullmatch("<" * 200 + "</think>")  # the tiny model's endless '<<<<' is cut short


def test_random_free_text_is_accepted_and_parsed(tok):
    """Random content in every free region (reasoning, code, remarks) gives an answer the
    format accepts exactly when it avoids what the parsers would misread, and the parser
    then reads it."""
    rng = random.Random(7)
    seq_fmt = alice_format("seq", SOURCE, SETTINGS)
    proof_fmt = proof_format({"entry_point": "f"}, SETTINGS)
    bob_fmt = bob_format({}, SETTINGS)
    code_bad = re.compile(r"```|</think>|(?i:generated\s+program|diverging\s+input)")
    for _ in range(20):
        think = _draw(rng, PIECES, 40)
        junk = _draw(rng, PIECES, 12).replace("\n", " ")
        text = alice_text(think, Q + "-- " + junk + "\n")
        ok = "</think>" not in think and not code_bad.search(junk)
        assert matches(seq_fmt, text, tok) == ok, text
        if ok:
            assert parse_alice(text, "seq", "f", SOURCE["arg_types"]).ok, text

        code = (
            f"{{-@ lemma_f_equiv :: n:Int -> {{ f n == f_alt n }} @-}}\n-- {junk}\nlemma_f_equiv :: Int -> Proof\n"
            f"lemma_f_equiv n = ()\n"
        )
        text = proof_text(code, think)
        ok = "</think>" not in think and not re.search(r"```|</think\s*>", junk, re.I)
        assert matches(proof_fmt, text, tok) == ok, text
        if ok:
            assert parse_proof_answer(text, "f").ok, text

        remarks = "\n" + _draw(rng, [p for p in PIECES if "#" not in p], 15) + "\n"
        verdict = rng.choice(["Yes", "No"])
        text = bob_text(verdict, remarks, think)
        assert matches(bob_fmt, text, tok) == ("</think>" not in think), text
        if "</think>" not in think:
            assert parse_bob(text) == (verdict.lower(), None), text


TYPES = [
    "Int",
    "Integer",
    "Double",
    "Bool",
    "Char",
    "String",
    "()",
    "[Int]",
    "[[Char]]",
    "(Int, String)",
    "Maybe Int",
    "Either String [Int]",
    "[Maybe (Int, Bool)]",
    "Maybe (Maybe Char)",
    "(Double, [Bool], ())",
]


def test_random_literals_of_the_argument_types_are_accepted_and_parsed(tok):
    """Literals as haskell/literals.py renders them, random values of random argument
    types: accepted and read back argument by argument, except strings the format leaves
    out (a '--' the parser would cut as a comment, a '</', numeric escapes, over
    MAX_STRING_CHARS characters)."""
    rng = random.Random(3)
    for _ in range(30):
        types = rng.sample(TYPES, rng.randint(1, 3))
        args = [render_literal(random_value(parse_type(t), rng), parse_type(t)) for t in types]
        text = alice_text(program=q_for(types), inp=" ".join(args))
        ok = all(string_allowed(lit) for a in args for lit in STRING_LITERAL.findall(a))
        assert matches(sinq(types), text, tok) == ok, text
        a = parse_alice(text, "sinq", "f", types)
        assert a.reason not in STRUCTURAL or not ok, (a.reason, a.detail, text)
        if ok:
            assert a.ok and a.input_args == args, (a.reason, a.detail, text)


def test_an_input_list_is_bounded(tok):
    """At most MAX_ITEMS items in a list: the tiny model otherwise counts up until its budget is spent."""
    fmt = sinq(["Int", "[Int]"])
    items = lambda n: "[" + ", ".join(map(str, range(n))) + "]"  # noqa: E731
    q = q_for(["Int", "[Int]"])
    assert matches(fmt, alice_text(program=q, inp=f"3 {items(formats.MAX_ITEMS)}"), tok)
    assert not matches(fmt, alice_text(program=q, inp=f"3 {items(formats.MAX_ITEMS + 1)}"), tok)


def test_a_string_argument_is_bounded_and_keeps_out_what_the_parser_misreads(tok):
    fmt = sinq(["String"])
    q = q_for(["String"])
    ok = ['"' + "x" * formats.MAX_STRING_CHARS + '"', '"a-b <c> -"', '"\\n\\t\\"\\\\"', '""', '"é中"']
    bad = ['"' + "x" * (formats.MAX_STRING_CHARS + 1) + '"', '"a--b"', '"x</y"', '"\\1234"', '"\\SOH"']
    for lit in ok + bad:
        assert string_allowed(lit) == (lit in ok), lit
        assert matches(fmt, alice_text(program=q, inp=lit), tok) == (lit in ok), lit
        if lit in ok:
            a = parse_alice(alice_text(program=q, inp=lit), "sinq", "f", ["String"])
            assert a.ok and a.input_args == [lit], (a.reason, a.detail)
