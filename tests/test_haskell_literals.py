"""Haskell literal generation, rendering, call building, parsing and argument validation."""

from __future__ import annotations

import math
import random
import re
import shutil
import struct
import subprocess
import textwrap

import pytest

from selfplay.errors import UserError
from selfplay.haskell.literals import (
    INT_MAX,
    INT_MIN,
    NOTHING,
    Just,
    Left,
    LiteralConfig,
    LiteralError,
    Right,
    build_call,
    generate_arguments,
    generate_literal,
    parse_literal,
    random_arguments,
    random_value,
    render_char,
    render_float,
    render_literal,
    render_string,
    split_arguments,
    validate_arguments,
)
from selfplay.haskell.signature import find_signature
from selfplay.haskell.types import (
    CHAR,
    DOUBLE,
    FLOAT,
    INT,
    INTEGER,
    STRING,
    UNIT,
    EitherType,
    HsType,
    ListType,
    MaybeType,
    Prim,
    TupleType,
    UnsupportedType,
    parse_type,
    walk,
)

ALL_TYPES = [
    "Int",
    "Integer",
    "Bool",
    "Char",
    "String",
    "Double",
    "Float",
    "()",
    "[Int]",
    "[Char]",
    "[String]",
    "[[Integer]]",
    "(Int, Bool)",
    "(Char, String, Double, ())",
    "Maybe Int",
    "Maybe (Maybe Double)",
    "Either String Int",
    "Either (Maybe Bool) [Float]",
    "[Maybe (Int, [Char])]",
    "((Int, Integer), [(Bool, Maybe Char)])",
    "[Either Int (Maybe [Integer])]",
    "Maybe [Either Char ()]",
    "(Int, Int, Int, Int, Int, Int, Int)",
]


def _values(value):
    """Every scalar inside a generated value."""
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _values(v)
    elif isinstance(value, (Just, Left, Right)):
        yield from _values(value.value)
    else:
        yield value


# --------------------------------------------------------------------------- generation


@pytest.mark.parametrize("text", ALL_TYPES)
def test_generated_literals_parse_back_to_their_value(text):
    t = parse_type(text)
    for seed in range(60):
        value = random_value(t, seed)
        literal = render_literal(value, t)
        assert generate_literal(t, seed) == literal
        assert parse_literal(literal, t) == value
        assert parse_literal(literal, t, atomic=True) == value
        assert split_arguments(literal) == [literal]  # atomic: usable as an argument as is
        assert "nan" not in literal.lower() and "inf" not in literal.lower()


def test_generation_is_deterministic_and_varies_across_seeds():
    t = parse_type("[(Int, Maybe String, Either Double Char)]")
    assert generate_literal(t, 7) == generate_literal(t, 7)
    assert generate_literal(t, random.Random(7)) == generate_literal(t, 7)
    assert len({generate_literal(t, seed) for seed in range(30)}) > 25
    for scalar in (INT, parse_type("Bool"), CHAR, DOUBLE, STRING):
        assert len({generate_literal(scalar, seed) for seed in range(50)}) > 1


def test_a_shared_rng_advances():
    rng = random.Random(1)
    first = generate_literal(parse_type("[Int]"), rng)
    second = generate_literal(parse_type("[Int]"), rng)
    assert (first, second) == (
        generate_literal(parse_type("[Int]"), random.Random(1)),
        second,
    )
    assert [generate_literal(INT, s) for s in range(20)] != [generate_literal(INT, 0)] * 20


def test_numbers_cover_negatives_fractions_exponents_and_big_integers():
    doubles = [generate_literal(DOUBLE, seed) for seed in range(400)]
    assert any(d.startswith("(-") for d in doubles)
    assert any(re.fullmatch(r"\(?-?\d+\.\d*[1-9]\d*\)?", d) for d in doubles)  # a proper fraction
    assert any("e" in d for d in doubles)
    for d in doubles:
        assert math.isfinite(parse_literal(d, DOUBLE))
        if d.startswith("-"):
            pytest.fail(f"negative literal not parenthesised: {d}")
    ints = [random_value(INT, seed) for seed in range(400)]
    assert all(INT_MIN <= i <= INT_MAX for i in ints)
    assert min(ints) < 0 < max(ints)
    assert all(generate_literal(INT, s).startswith("(-") == (random_value(INT, s) < 0) for s in range(100))
    integers = [random_value(INTEGER, seed) for seed in range(400)]
    assert any(abs(i) >= 2**64 for i in integers)
    small = LiteralConfig(big_integer_prob=0)
    assert not any(abs(random_value(INTEGER, s, small)) >= 2**64 for s in range(200))


def test_size_bounds_are_respected():
    cfg = LiteralConfig(max_list_len=3, max_string_len=2, max_depth=2, max_elements=10)
    t = parse_type("[[[Maybe String]]]")
    for seed in range(100):
        value = random_value(t, seed, cfg)
        assert len(value) <= 3
        assert all(len(inner) <= 3 for inner in value)
        assert all(inner2 == [] for inner in value for inner2 in inner)  # depth 2 reached
    s_cfg = LiteralConfig(max_string_len=2)
    assert all(len(random_value(STRING, seed, s_cfg)) <= 2 for seed in range(100))
    deep = LiteralConfig(max_depth=1)
    assert all(set(random_value(parse_type("[Maybe Int]"), s, deep)) <= {NOTHING} for s in range(50))
    assert all(random_value(parse_type("[[Int]]"), s, deep)[0:1] in ([], [[]]) for s in range(50))
    assert all(random_value(parse_type("(Maybe Int, Int)"), s, deep)[0] == NOTHING for s in range(50))
    budget = LiteralConfig(max_list_len=5, max_elements=6)
    total = [sum(len(x) for x in random_value(parse_type("[[Int]]"), s, budget)) for s in range(100)]
    assert max(total) <= 6
    minimum = LiteralConfig(min_list_len=2, max_list_len=2)
    assert all(len(random_value(parse_type("[Int]"), s, minimum)) == 2 for s in range(20))


def test_config_validation():
    for bad in (
        dict(min_list_len=3, max_list_len=2),
        dict(max_depth=-1),
        dict(int_bound=2**63),
        dict(big_integer_prob=1.5),
        dict(min_list_len=3, max_list_len=4, max_string_len=2),
    ):
        with pytest.raises(ValueError):
            LiteralConfig(**bad)


def test_chars_include_specials_and_render_escaped():
    chars = {random_value(CHAR, seed) for seed in range(600)}
    assert (
        {"'", '"', "\\"} & chars and any(not c.isascii() for c in chars) and any(ord(c) < 32 for c in chars)
    )
    for c in chars:
        lit = render_char(c)
        assert lit.isascii() and "\n" not in lit
        assert parse_literal(lit, CHAR) == c


@pytest.mark.parametrize(
    "value, literal",
    [
        ("abc", '"abc"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("it's", '"it\'s"'),
        ("a\nb\tc\rd", '"a\\nb\\tc\\rd"'),
        ("\x01" + "2", '"\\1\\&2"'),
        ("\x7f" + "x", '"\\127x"'),
        ("λx", '"\\955x"'),
        ("\U0001f600" + "9", '"\\128512\\&9"'),
        ("", '""'),
    ],
)
def test_string_escapes(value, literal):
    assert render_string(value) == literal
    assert parse_literal(literal, STRING) == value
    assert render_literal(value, ListType(CHAR)) == literal


@pytest.mark.parametrize(
    "value, literal",
    [
        ("a", "'a'"),
        ("'", "'\\''"),
        ('"', "'\"'"),
        ("\\", "'\\\\'"),
        ("\n", "'\\n'"),
        ("\0", "'\\0'"),
        ("é", "'\\233'"),
    ],
)
def test_char_escapes(value, literal):
    assert render_char(value) == literal
    assert parse_literal(literal, CHAR) == value


def test_render_literal_examples_and_errors():
    t = parse_type("([Int], Maybe (Either Char Double), Maybe Int, ())")
    value = ([1, -2], Just(Right(-0.5)), NOTHING, ())
    assert render_literal(value, t) == "([1, (-2)], (Just (Right (-0.5))), Nothing, ())"
    assert render_literal(Left("x"), parse_type("Either String Int")) == '(Left "x")'
    assert render_literal(3, DOUBLE) == "3.0"
    assert render_float(1e-05) == "1e-05" and render_float(-2.5e20) == "(-2.5e+20)"
    for bad_value, bad_type in [
        (True, INT),
        (1.5, INT),
        (2**63, INT),
        ("ab", CHAR),
        (None, parse_type("Maybe Int")),
        (3, parse_type("Either Int Int")),
        ((1,), parse_type("(Int, Int)")),
        (1, parse_type("Bool")),
        (1, UNIT),
        (5, STRING),
        (float("nan"), DOUBLE),
        (float("inf"), FLOAT),
    ]:
        with pytest.raises(LiteralError):
            render_literal(bad_value, bad_type)


@pytest.mark.parametrize("text", ["Int -> Int", "Map.Map Int Int", "a", "Shape"])
def test_generation_rejects_unsupported_types(text):
    with pytest.raises(UnsupportedType):
        generate_literal(parse_type(text), 0)
    with pytest.raises(UnsupportedType, match="argument 2"):
        generate_arguments([INT, parse_type(text)], 0)


# --------------------------------------------------------------------------- multi-argument calls


def test_generate_arguments_for_multi_argument_signature():
    program = (
        "solve :: Int -> [Maybe Double] -> (Char, String) -> Either Bool Integer -> Int\nsolve = undefined\n"
    )
    sig = find_signature(program)
    args = generate_arguments(sig.arg_types, 5)
    assert len(args) == 4 and args == generate_arguments(sig.arg_types, 5)
    call = build_call(sig.name, args)
    assert call == "solve " + " ".join(args)
    check = validate_arguments(" ".join(args), sig.arg_types)
    assert check.ok, check.reason
    assert list(check.values) == random_arguments(sig.arg_types, 5)
    assert len({tuple(generate_arguments(sig.arg_types, s)) for s in range(20)}) > 15


def test_build_call():
    assert build_call("f", ["1", "(-2)", "[3]"]) == "f 1 (-2) [3]"
    assert build_call("f", ["-2", "Just 3", '"a b"', " x "]) == 'f (-2) (Just 3) "a b" x'
    assert build_call("<+>", ["1", "2"]) == "(<+>) 1 2"
    assert build_call("f'", []) == "f'"
    for bad in ("Foo", "where", "1x", ""):
        with pytest.raises(LiteralError):
            build_call(bad, ["1"])
    with pytest.raises(LiteralError, match="empty"):
        build_call("f", ["  "])


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text, type_text, value",
    [
        ("42", "Int", 42),
        ("-42", "Int", -42),
        ("(-42)", "Int", -42),
        ("((7))", "Int", 7),
        ("0x1F", "Integer", 31),
        ("0o17", "Int", 15),
        ("123456789012345678901234567890", "Integer", 123456789012345678901234567890),
        ("3", "Double", 3.0),
        ("1.5e-3", "Double", 1.5e-3),
        ("2E10", "Float", 2e10),
        ("-0.25", "Double", -0.25),
        ("True", "Bool", True),
        ("()", "()", ()),
        ("'\\SOH'", "Char", "\x01"),
        ("'\\^A'", "Char", "\x01"),
        ("'\\x41'", "Char", "A"),
        ("'\\o101'", "Char", "A"),
        ("'\\DEL'", "Char", "\x7f"),
        ('"\\SO\\&H"', "String", "\x0eH"),
        ('"\\SOH"', "String", "\x01"),
        ('"ab\\   \\cd"', "String", "abcd"),
        ('"tab\\there"', "String", "tab\there"),
        ("['a', 'b']", "String", "ab"),
        ("[]", "String", ""),
        ('"ab"', "[Char]", "ab"),
        ("[-1.5,2.0]", "[Double]", [-1.5, 2.0]),
        ("[1, -2, 3]", "[Int]", [1, -2, 3]),
        ("Just (-3)", "Maybe Int", Just(-3)),
        ("Just (Just 3)", "Maybe (Maybe Int)", Just(Just(3))),
        ("[Just 1,Nothing]", "[Maybe Int]", [Just(1), NOTHING]),
        ('Left "x"', "Either String Int", Left("x")),
        ("(Right [])", "Either String [Int]", Right([])),
        ("(1,'a',\"b\")", "(Int, Char, String)", (1, "a", "b")),
        ("((1, 2))", "(Int, Int)", (1, 2)),
        ("((1, 2), 3)", "((Int, Int), Int)", ((1, 2), 3)),
        ("  [ ( 1 , True ) ]  ", "[(Int, Bool)]", [(1, True)]),
    ],
)
def test_parse_literal(text, type_text, value):
    assert parse_literal(text, parse_type(type_text)) == value


@pytest.mark.parametrize(
    "text, type_text, reason_part",
    [
        ("", "Int", "input is empty"),
        ("True", "Int", "expected a literal of type Int, found 'True'"),
        ("1.5", "Int", "fractional literal '1.5'"),
        ("9223372036854775808", "Int", "out of range for Int"),
        (".5", "Double", "found '.'"),
        ("1e999", "Double", "out of range for Double"),
        ("[1..5]", "[Int]", "ranges like [a..b] are not literals"),
        ("[1, 2", "[Int]", "input ended"),
        ("[1 2]", "[Int]", "expected ',' or ']'"),
        ('"abc', "String", "unterminated string literal"),
        ("'ab'", "Char", "unterminated character literal"),
        ("''", "Char", "empty character literal"),
        ("'\\q'", "Char", "unknown escape"),
        ("'a'", "String", "expected a literal of type String"),
        ('"a"', "Char", "expected a literal of type Char"),
        ("(1, 2, 3)", "(Int, Int)", "more than 2 components"),
        ("(1, True)", "(Int, Int)", "found 'True'"),
        ("(1, 2)", "Int", "found a tuple"),
        ("()", "Int", "found '()'"),
        ("[1]", "Int", "found a list"),
        ("Just 1", "Either Int Int", "found 'Just'"),
        ("Just -1", "Maybe Int", "negative number must be parenthesised"),
        ("Nothing 1", "Maybe Int", "unexpected '1'"),
        ("x", "Int", "is a variable or function"),
        ("1 + 2", "Int", "unexpected '+'"),
        ("-True", "Bool", "found '-'"),
        ("- x", "Int", "expected a number after '-'"),
        ("1 -- comment", "Int", "comments are not allowed"),
    ],
)
def test_parse_literal_errors(text, type_text, reason_part):
    with pytest.raises(LiteralError) as info:
        parse_literal(text, parse_type(type_text))
    assert reason_part in info.value.reason
    assert isinstance(info.value, UserError) and "\n" not in str(info.value)


def test_atomic_mode_requires_parentheses():
    with pytest.raises(LiteralError, match=r"must be parenthesised here, e.g. \(Just x\)"):
        parse_literal("Just 3", parse_type("Maybe Int"), atomic=True)
    with pytest.raises(LiteralError, match="negative number must be parenthesised"):
        parse_literal("-3", INT, atomic=True)
    assert parse_literal("(Just 3)", parse_type("Maybe Int"), atomic=True) == Just(3)
    assert parse_literal("[Just 3, Nothing]", parse_type("[Maybe Int]"), atomic=True) == [Just(3), NOTHING]


def test_parse_literal_rejects_unsupported_type():
    with pytest.raises(UnsupportedType):
        parse_literal("1", parse_type("Int -> Int"))


# --------------------------------------------------------------------------- validation

ARG_TYPES = [INT, parse_type("[Maybe Double]"), parse_type("(Char, String)")]


def test_split_arguments():
    assert split_arguments("1 [Just 2.0] ('a', \"x y\")") == ["1", "[Just 2.0]", "('a', \"x y\")"]
    assert split_arguments("[1,2](3)'c'") == ["[1,2]", "(3)", "'c'"]
    assert split_arguments("  \n ") == []
    assert split_arguments("(f x) y") == ["(f x)", "y"]


@pytest.mark.parametrize(
    "text, reason_part",
    [
        ("(1", "'(' at column 1 is never closed"),
        ("1)", "unbalanced ')' at column 2"),
        ("[1)", "'[' at column 1 is closed by ')' at column 3"),
        ('"abc', "unterminated string literal"),
        ("-1", "negative number must be parenthesised"),
        ("1 + 2", "unexpected '+' between arguments"),
        ("1, 2", "unexpected ','"),
        ("{x = 1}", "unexpected '{'"),
    ],
)
def test_split_arguments_errors(text, reason_part):
    with pytest.raises(LiteralError, match=re.escape(reason_part)):
        split_arguments(text)


def test_validate_arguments_accepts_good_input():
    check = validate_arguments("1 [Just 2.5, Nothing] ('a', \"x\")", ARG_TYPES)
    assert check.ok and check.reason == ""
    assert check.arguments == ("1", "[Just 2.5, Nothing]", "('a', \"x\")")
    assert check.values == (1, [Just(2.5), NOTHING], ("a", "x"))
    assert validate_arguments("(-1) [] ('\\'', \"\\\"\")", ARG_TYPES).ok
    assert validate_arguments("", []).ok
    assert validate_arguments("\n 7 \n", [INT]).values == (7,)


@pytest.mark.parametrize(
    "text, reason_part",
    [
        ("1 [] ('a', \"\") 3", "expected 3 argument(s) of types Int [Maybe Double] (Char, String), found 4"),
        ("1 []", "found 2"),
        ("Just 1 [] ('a', \"\")", "constructor applications must be parenthesised"),
        ("-1 [] ('a', \"\")", "negative number must be parenthesised"),
        ("1 [Just 2.0 ('a', \"\")", "never closed"),
        ("1 [] ('a', \"x)", "unterminated string"),
        (
            "1 [Just True] ('a', \"\")",
            "argument 2 ([Maybe Double]): expected a literal of type Double, found 'True' at column 9",
        ),
        ("1 [1..3] ('a', \"\")", "argument 2"),
        ("1.5 [] ('a', \"\")", "argument 1 (Int): expected Int, found fractional literal"),
        ("1 [] ('a', \"\", 1)", "argument 3 ((Char, String)): tuple has more than 2 components"),
        ("x [] ('a', \"\")", "is a variable or function, not a literal of type Int"),
    ],
)
def test_validate_arguments_reasons(text, reason_part):
    check = validate_arguments(text, ARG_TYPES)
    assert not check.ok
    assert reason_part in check.reason
    assert "\n" not in check.reason


def test_validate_arguments_non_strict_and_limits():
    lenient = validate_arguments("(replicate 3 1) [] ('a', \"\")", ARG_TYPES, strict=False)
    assert lenient.ok and lenient.values is None and lenient.arguments[0] == "(replicate 3 1)"
    assert not validate_arguments("(replicate 3 1) [] ('a', \"\")", ARG_TYPES).ok
    assert not validate_arguments("1 2", ARG_TYPES, strict=False).ok  # arity still checked
    assert "at most" in validate_arguments("1" * 20000, [INT]).reason
    unsupported = validate_arguments("1", [parse_type("Int -> Int")])
    assert not unsupported.ok and "argument 1: function type" in unsupported.reason
    assert not validate_arguments("1", []).ok


# --------------------------------------------------------------------------- GHC


def _normalise(value, t: HsType):
    """Round Float components to single precision, as GHC stores them."""
    if isinstance(t, Prim) and t == FLOAT:
        return struct.unpack("f", struct.pack("f", value))[0]
    if isinstance(t, ListType) and not t.elem == CHAR:
        return [_normalise(v, t.elem) for v in value]
    if isinstance(t, TupleType):
        return tuple(_normalise(v, i) for v, i in zip(value, t.items))
    if isinstance(t, MaybeType) and isinstance(value, Just):
        return Just(_normalise(value.value, t.inner))
    if isinstance(t, EitherType) and isinstance(value, (Left, Right)):
        side = t.left if isinstance(value, Left) else t.right
        return type(value)(_normalise(value.value, side))
    return value


RUNGHC = shutil.which("runghc")


@pytest.mark.skipif(
    RUNGHC is None, reason="GHC (runghc) is not installed; install the ghc package to run this check"
)
def test_ghc_accepts_generated_literals_and_show_parses_back(tmp_path):
    cfg = LiteralConfig(max_list_len=4, special_char_prob=0.3)
    cases: list[tuple[HsType, object, str]] = []  # (type, value, expression to print)
    for index, text in enumerate(ALL_TYPES):
        t = parse_type(text)
        for seed in range(6):
            value = random_value(t, seed * 101 + index, cfg)
            cases.append((t, value, f"({render_literal(value, t)} :: {t.render()})"))
    sig = find_signature(
        "combine :: Int -> [Maybe Double] -> (Char, String) -> Either Bool Integer -> Float"
        " -> (Int, [Maybe Double], (Char, String), Either Bool Integer, Float)\n"
    )
    result_type = sig.result_type
    for seed in range(8):
        values = random_arguments(sig.arg_types, seed, cfg)
        args = [render_literal(v, t) for v, t in zip(values, sig.arg_types)]
        assert validate_arguments(" ".join(args), sig.arg_types).ok
        cases.append((result_type, tuple(values), build_call("combine", args)))
    edge_cases = [
        (parse_type("[Int]"), [INT_MIN, INT_MAX, 0, -1]),
        (parse_type("[Double]"), [1e-05, -2.5e20, 1e16, 0.1, -0.0, 123456789.125]),
        (parse_type("[Float]"), [1e-05, -2.5e20, 0.1]),
        (parse_type("(Char, Char, Char, String)"), ("'", '"', "\\", "\"'\\\n\t\x00\x7fé\U0001f600")),
    ]
    cases.extend((t, v, f"({render_literal(v, t)} :: {t.render()})") for t, v in edge_cases)
    op_values = random_arguments([INT, INT], 3)
    cases.append(
        (INT, op_values[0] + op_values[1], build_call("<+>", [render_literal(v, INT) for v in op_values]))
    )
    cases.append(
        (STRING, "\x01" + "2" + "\x0e" + "H" + "λ", build_call("id", [render_string("\x012\x0eHλ")]))
    )

    body = "\n".join(f"  print ({expr})" for _, _, expr in cases)
    program = (
        textwrap.dedent(
            """\
        module Main where

        combine :: Int -> [Maybe Double] -> (Char, String) -> Either Bool Integer -> Float
                -> (Int, [Maybe Double], (Char, String), Either Bool Integer, Float)
        combine a b c d e = (a, b, c, d, e)

        (<+>) :: Int -> Int -> Int
        a <+> b = a + b

        main :: IO ()
        main = do
        """
        )
        + body
        + "\n"
    )
    source = tmp_path / "Main.hs"
    source.write_text(program, encoding="utf-8")
    done = subprocess.run(
        [RUNGHC, "--ghc-arg=-Werror=overflowed-literals", str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == len(cases)
    for (t, value, expr), line in zip(cases, lines):
        shown = parse_literal(line, t)  # GHC's show output is read back by our parser
        assert _normalise(shown, t) == _normalise(value, t), (expr, line)
    assert any(isinstance(v, int) and abs(v) >= 2**64 for t, value, _ in cases for v in _values(value))
    assert any(node == FLOAT for t, _, _ in cases for node in walk(t))
