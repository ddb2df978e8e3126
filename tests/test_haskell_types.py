"""Haskell types (parse, render, instantiate, support check), signatures and renaming."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from selfplay.errors import UserError
from selfplay.haskell.signature import (
    RenameError,
    Signature,
    SignatureNotFound,
    find_signature,
    list_signatures,
    main_function_name,
    mask,
    program_types,
    rename_function,
    top_level_declarations,
)
from selfplay.haskell.types import (
    BOOL,
    CHAR,
    DOUBLE,
    FLOAT,
    INT,
    INTEGER,
    STRING,
    UNIT,
    Constraint,
    EitherType,
    FunctionType,
    ListType,
    MaybeType,
    OtherType,
    QualifiedType,
    TupleType,
    TypeApp,
    TypeParseError,
    TypeVar,
    UnsupportedType,
    check_supported,
    choose_instance,
    instantiate,
    is_string_type,
    is_supported,
    parse_qualified_type,
    parse_type,
    render_type,
    split_function_type,
    type_variables,
    unsupported_reason,
)

# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Int", INT),
        ("Integer", INTEGER),
        ("Bool", BOOL),
        ("Char", CHAR),
        ("String", STRING),
        ("Double", DOUBLE),
        ("Float", FLOAT),
        ("()", UNIT),
        ("[Int]", ListType(INT)),
        ("[Char]", ListType(CHAR)),
        ("[[Bool]]", ListType(ListType(BOOL))),
        ("(Int, Bool)", TupleType((INT, BOOL))),
        ("(Int,Bool,Char,String,Double)", TupleType((INT, BOOL, CHAR, STRING, DOUBLE))),
        ("Maybe Int", MaybeType(INT)),
        ("Maybe (Maybe [Int])", MaybeType(MaybeType(ListType(INT)))),
        ("Either String Int", EitherType(STRING, INT)),
        ("Either (Maybe Int) [(Bool, ())]", EitherType(MaybeType(INT), ListType(TupleType((BOOL, UNIT))))),
        ("((Int))", INT),
        ("( Int , ( Bool , [ () ] ) )", TupleType((INT, TupleType((BOOL, ListType(UNIT)))))),
        ("Int -> Bool", FunctionType(INT, BOOL)),
        ("Int -> Bool -> Char", FunctionType(INT, FunctionType(BOOL, CHAR))),
        ("(Int -> Bool) -> Char", FunctionType(FunctionType(INT, BOOL), CHAR)),
        ("Int -> (Bool -> Char)", FunctionType(INT, FunctionType(BOOL, CHAR))),
        ("[Int -> Int]", ListType(FunctionType(INT, INT))),
        ("Prelude.Int", INT),
        ("[] Int", ListType(INT)),
        ("a", TypeVar("a")),
        ("[a] -> a", FunctionType(ListType(TypeVar("a")), TypeVar("a"))),
        ("t a", TypeApp(TypeVar("t"), (TypeVar("a"),))),
        ("Map.Map String Int", OtherType("Map.Map", (STRING, INT))),
        ("IO ()", OtherType("IO", (UNIT,))),
        ("Tree a", OtherType("Tree", (TypeVar("a"),))),
        ("Maybe", OtherType("Maybe")),
        ("Int\n  -> [Int]", FunctionType(INT, ListType(INT))),
    ],
)
def test_parse_type(text, expected):
    assert parse_type(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Int",
        "[Int] -> (Int, Bool) -> Maybe [Char]",
        "Either String (Maybe Int) -> Int -> Int",
        "(Int -> Int) -> [Int] -> [Int]",
        "Maybe (Either (Int, [Maybe Bool]) ())",
        "[(Int, (Char, [String]))]",
        "Map.Map String [Maybe Int]",
        "IO ()",
        "t (m a) -> f (Maybe b)",
        "Either (Int -> Int) (Maybe (Maybe Double))",
        "((Int, Bool) -> Float) -> Integer",
    ],
)
def test_render_round_trip(text):
    t = parse_type(text)
    assert render_type(t) == text
    assert parse_type(render_type(t)) == t
    assert str(t) == text


def test_render_adds_needed_parentheses_only():
    t = FunctionType(FunctionType(INT, INT), MaybeType(MaybeType(ListType(INT))))
    assert render_type(t) == "(Int -> Int) -> Maybe (Maybe [Int])"
    assert (
        render_type(EitherType(MaybeType(INT), FunctionType(INT, INT))) == "Either (Maybe Int) (Int -> Int)"
    )


@pytest.mark.parametrize(
    "text, reason_part",
    [
        ("", "empty type"),
        ("   ", "empty type"),
        ("Int ->", "ended"),
        ("(Int", "expected ')'"),
        ("[Int", "expected ']'"),
        ("Int)", "unexpected ')'"),
        ("Int Int", "'Int' takes no type arguments"),
        ("Maybe Int Bool", "'Maybe' takes 1 type argument, got 2"),
        ("Either Int Bool Char", "'Either' takes 2 type arguments"),
        ("!Int", "strictness"),
        ("{v:Int | v > 0}", "Liquid Haskell"),
        ("a ~ Int", "(~)"),
        ("(,) Int Bool", "prefix constructor"),
        ("(forall a. a) -> Int", "rank-N"),
        ("_ -> Int", "wildcard"),
        ("Proxy 'True", "DataKinds"),
        ("Ord a => a", "class context"),
        ("Int#", "unboxed"),
    ],
)
def test_parse_errors_have_reasons(text, reason_part):
    with pytest.raises(TypeParseError) as info:
        parse_type(text)
    assert reason_part in info.value.reason
    assert isinstance(info.value, UnsupportedType) and isinstance(info.value, UserError)
    assert "\n" not in str(info.value)


def test_qualified_types():
    qt = parse_qualified_type("(Ord a, Num a) => a -> a -> a")
    assert qt.constraints == (Constraint("Ord", (TypeVar("a"),)), Constraint("Num", (TypeVar("a"),)))
    assert qt.body == FunctionType(TypeVar("a"), FunctionType(TypeVar("a"), TypeVar("a")))
    assert qt.render() == "(Ord a, Num a) => a -> a -> a"
    single = parse_qualified_type("Ord a => [a] -> [a]")
    assert single.render() == "Ord a => [a] -> [a]"
    assert parse_qualified_type("(Ord a) => a").render() == "Ord a => a"
    assert parse_qualified_type("forall a b. (Show a, Show b) => a -> b -> String").constraints[
        1
    ] == Constraint("Show", (TypeVar("b"),))
    assert parse_qualified_type("Num a => Num b => a -> b").constraints == (
        Constraint("Num", (TypeVar("a"),)),
        Constraint("Num", (TypeVar("b"),)),
    )
    assert parse_qualified_type("() => Int") == QualifiedType((), INT)
    assert parse_qualified_type("Int -> Int") == QualifiedType((), FunctionType(INT, INT))
    with pytest.raises(TypeParseError, match="not a class constraint"):
        parse_qualified_type("Int => Int")


@pytest.mark.parametrize(
    "text",
    ["(Ord a, Num a) => a -> a -> a", "Foldable t => t a -> Int", "(Show (t a), Eq b) => t a -> b", "Int"],
)
def test_qualified_round_trip(text):
    qt = parse_qualified_type(text)
    assert qt.render() == text
    assert parse_qualified_type(qt.render()) == qt


def test_helpers():
    args, result = split_function_type(parse_type("Int -> [Bool] -> (Char, String)"))
    assert args == [INT, ListType(BOOL)] and result == TupleType((CHAR, STRING))
    assert split_function_type(INT) == ([], INT)
    assert type_variables(parse_type("(a, [b]) -> t a -> a")) == ["a", "b", "t"]
    assert is_string_type(STRING) and is_string_type(ListType(CHAR)) and not is_string_type(ListType(INT))


# --------------------------------------------------------------------------- support


@pytest.mark.parametrize(
    "text", ["Int", "[(Int, Maybe (Either String [Double]))]", "((), Float, Integer, Char, Bool)", "[[Char]]"]
)
def test_supported_types(text):
    t = parse_type(text)
    assert is_supported(t) and unsupported_reason(t) is None
    check_supported(t)


@pytest.mark.parametrize(
    "text, reason_part",
    [
        ("Map.Map String Int", "Data.Map values have no literal syntax"),
        ("Set Int", "Data.Set"),
        ("IO Int", "IO actions"),
        ("Shape", "type constructor 'Shape' is not supported"),
        ("[Tree Int]", "'Tree'"),
        ("Int -> Int", "function type 'Int -> Int'"),
        ("[Int -> Bool]", "function type"),
        ("Maybe a", "type variable 'a' is not instantiated"),
        ("t Int", "applies a type variable"),
        ("Maybe", "'Maybe' needs 1 type argument"),
    ],
)
def test_unsupported_types_have_reasons(text, reason_part):
    t = parse_type(text)
    assert not is_supported(t)
    assert reason_part in unsupported_reason(t)
    with pytest.raises(UnsupportedType) as info:
        check_supported(t, "argument 1")
    assert info.value.reason.startswith("argument 1: ")
    assert reason_part in str(info.value)


def test_user_data_type_reason():
    assert "user-defined data type" in unsupported_reason(parse_type("[Shape]"), user_types={"Shape"})


# --------------------------------------------------------------------------- instantiation


@pytest.mark.parametrize(
    "text, expected",
    [
        ("(Ord a, Num a) => a -> a -> a", "Int -> Int -> Int"),
        ("a -> a", "Int -> Int"),
        ("Integral a => a -> Bool", "Int -> Bool"),
        ("(Eq a, Show a) => [a] -> String", "[Int] -> String"),
        ("Fractional a => [a] -> a", "[Double] -> Double"),
        ("(Floating a, Ord a) => a -> a", "Double -> Double"),
        ("RealFrac a => a -> Integer", "Double -> Integer"),
        ("Monoid m => [m] -> m", "[String] -> String"),
        ("(Num a, Num b) => a -> b -> (a, b)", "Int -> Int -> (Int, Int)"),
        ("(Integral a, Fractional b) => a -> b", "Int -> Double"),
        ("forall a. Ord a => [a] -> [a]", "[Int] -> [Int]"),
        ("Foldable t => t a -> Int", "[Int] -> Int"),
        ("(Foldable t, Num a) => t a -> a", "[Int] -> Int"),
        ("(Functor f, Fractional a) => f a -> f a", "[Double] -> [Double]"),
        ("(Show (t a), Foldable t, Show a) => t a -> String", "[Int] -> String"),
        ("Eq (Maybe a) => Maybe a -> Bool", "Maybe Int -> Bool"),
        ("Show Int => a -> Int", "Int -> Int"),
        ("(Ord k) => [(k, v)] -> Maybe v", "[(Int, Int)] -> Maybe Int"),
        ("Int -> Int", "Int -> Int"),
        ("P.Num a => a", "Int"),
    ],
)
def test_instantiate(text, expected):
    assert render_type(instantiate(parse_qualified_type(text))) == expected


@pytest.mark.parametrize(
    "text, reason_part",
    [
        ("(Integral a, Fractional a) => a -> a", "no default type satisfies (Integral a, Fractional a)"),
        ("(Bounded a, Floating a) => a", "no default type satisfies"),
        ("Shape a => a -> Double", "constraint 'Shape a'"),
        ("MonadState s m => m ()", "multi-parameter constraint"),
        ("MonadIO m => m Int", "'MonadIO m'"),
        ("p a b -> Int", "applied to 2 arguments"),
        ("f a -> f", "kind clash"),
        ("Num (t a) => t a -> Int", "compound type"),
    ],
)
def test_instantiate_failures_give_reasons(text, reason_part):
    with pytest.raises(UnsupportedType) as info:
        instantiate(parse_qualified_type(text))
    assert reason_part in info.value.reason
    assert info.value.type_text  # says which type


def test_choose_instance_rule():
    assert choose_instance("a", []) == INT
    assert choose_instance("a", ["Ord", "Show"]) == INT
    assert choose_instance("a", ["Floating"]) == DOUBLE
    assert choose_instance("a", ["Semigroup", "Eq"]) == STRING
    with pytest.raises(UnsupportedType, match="Integral a, Fractional a"):
        choose_instance("a", ["Integral", "Fractional"])


def test_instantiate_plain_type_keeps_unsupported_parts():
    t = instantiate(parse_type("Map.Map k v -> Int"))
    assert render_type(t) == "Map.Map Int Int -> Int"
    assert not is_supported(split_function_type(t)[0][0])


# --------------------------------------------------------------------------- signatures

TRICKY = textwrap.dedent(
    """\
    {-# LANGUAGE ScopedTypeVariables #-}
    -- | Header comment: fake :: Int -> Int
    module Main (main, solve) where

    import Data.List (sortBy)
    import qualified Data.Map as M

    {- block comment
       hidden :: Int -> Int
       {- nested -} still :: comment
       hidden2 :: Bool
    -}

    {-@ solve :: xs:[Int] -> {v:Int | v >= 0} @-}
    {-@ reflect solve @-}
    type Point = (Int, Int)
    type Pair a = (a, a)
    data Shape = Circle Double | Square Double deriving Show
    newtype Wrap = Wrap Int

    (<+>) :: Int -> Int -> Int
    a <+> b = a + b

    solve
      :: [Int]      -- the numbers
      -> Point
      -> Pair Bool  {- flags {- nested -} -}
      -> Maybe (Either String Int)
    solve xs p fl = helper xs
      where
        helper :: [Int] -> Maybe (Either String Int)
        helper [] = Nothing
        helper ys = Just (Right (sum ys --> 1))
        (-->) = (+)

    f, g :: Int -> Int
    f x = x ; g y = y

    area :: Shape -> Double
    area _ = 0

    apply :: (Int -> Int) -> Int -> Int
    apply h = h

    largest :: (Ord a, Num a) => [a] -> a -> a
    largest xs d = maximum (d : xs)

    main :: IO ()
    main = print (solve [1,2] (1,2) (True,False))
    """
)


def test_list_signatures_finds_only_top_level_code():
    sigs = list_signatures(TRICKY)
    assert [s.name for s in sigs] == ["<+>", "solve", "f", "g", "area", "apply", "largest", "main"]
    solve = sigs[1]
    assert solve.type_text == "[Int] -> Point -> Pair Bool -> Maybe (Either String Int)"
    assert solve.line == 24
    assert sigs[0].is_operator and not solve.is_operator


def test_main_function_and_multiline_multi_argument_signature():
    sig = find_signature(TRICKY)
    assert sig.name == "solve" == main_function_name(TRICKY)
    assert sig.arity == 3
    assert sig.arg_types == (ListType(INT), TupleType((INT, INT)), TupleType((BOOL, BOOL)))
    assert sig.result_type == MaybeType(EitherType(STRING, INT))
    assert sig.render() == "solve :: [Int] -> (Int, Int) -> (Bool, Bool) -> Maybe (Either String Int)"
    sig.check_arguments_supported()
    raw = find_signature(TRICKY, "solve", expand=False)
    assert raw.arg_types[1] == OtherType("Point")


def test_find_signature_by_name_and_operator():
    assert find_signature(TRICKY, "g").render() == "g :: Int -> Int"
    assert find_signature(TRICKY, "f").arg_types == (INT,)
    op = find_signature(TRICKY, "<+>")
    assert op == find_signature(TRICKY, "(<+>)")
    assert op.is_operator and op.arity == 2 and op.render() == "(<+>) :: Int -> Int -> Int"
    main = find_signature(TRICKY, "main")
    assert main.arity == 0 and main.result_type == OtherType("IO", (UNIT,))


def test_constrained_signature_instantiates():
    sig = find_signature(TRICKY, "largest")
    assert sig.constraints and sig.arity == 2
    concrete = sig.instantiate()
    assert concrete.render() == "largest :: [Int] -> Int -> Int"
    assert concrete.constraints == ()
    concrete.check_arguments_supported()


def test_unsupported_arguments_are_reported():
    with pytest.raises(UnsupportedType, match="argument 1 of 'area': 'Shape' is a user-defined data type"):
        find_signature(TRICKY, "area").check_arguments_supported()
    with pytest.raises(UnsupportedType, match="argument 1 of 'apply': function type"):
        find_signature(TRICKY, "apply").check_arguments_supported()


def test_signatures_in_comments_where_and_annotations_are_not_top_level():
    for name in ("fake", "hidden", "hidden2", "still"):
        with pytest.raises(SignatureNotFound, match=f"no top-level type signature for '{name}'"):
            find_signature(TRICKY, name)
    with pytest.raises(SignatureNotFound, match="only inside a where/let/class block"):
        find_signature(TRICKY, "helper")


def test_require_arguments_skips_leading_constants():
    program = "limit :: Int\nlimit = 10\n\nclamp :: Int -> Int\nclamp = min limit\n"
    assert find_signature(program).name == "limit"
    assert find_signature(program, require_arguments=True).name == "clamp"
    with pytest.raises(SignatureNotFound, match="takes any arguments"):
        find_signature("limit :: Int\nlimit = 10\n", require_arguments=True)


def test_liquid_haskell_only_signature_is_ignored():
    program = "{-@ f :: x:Int -> {v:Int | v > x} @-}\nf x = x + 1\n\ng :: Int -> Int\ng = f\n"
    assert find_signature(program).name == "g"


def test_no_signature_at_all():
    with pytest.raises(SignatureNotFound, match="no top-level function"):
        find_signature("main :: IO ()\nmain = pure ()\n")
    with pytest.raises(SignatureNotFound):
        find_signature("f x = x\n")
    assert issubclass(SignatureNotFound, UserError)


def test_bare_definitions_class_instance_and_strings():
    program = textwrap.dedent(
        """\
        class Container f where
          empty :: f a
          insert :: a -> f a -> f a

        instance Show Foo where
          show :: Foo -> String
          show _ = "x :: Int"

        msg = "not :: a signature\\
              \\ still the string"
        ch = '"'

        count :: String -> Char -> Int
        count s c = length (filter (== c) s)
        """
    )
    assert [s.name for s in list_signatures(program)] == ["count"]
    sig = find_signature(program)
    assert sig.arg_types == (STRING, CHAR) and sig.result_type == INT


def test_indented_module_body_and_explicit_forall():
    program = (
        "module M where\n  helper :: Int\n  helper = 1\n"
        "  go :: forall a. Show a => a -> [a] -> String\n  go x xs = show (x : xs)\n"
    )
    assert [s.name for s in list_signatures(program)] == ["helper", "go"]
    go = find_signature(program, "go")
    assert go.arity == 2 and go.instantiate().render() == "go :: Int -> [Int] -> String"


def test_bad_signature_type_reports_parse_reason():
    program = "f :: Int -> !Int\nf = id\n"
    with pytest.raises(TypeParseError, match=r"signature of 'f' \(line 1\): strictness"):
        find_signature(program)


def test_crlf_tabs_and_operator_looking_dashes():
    program = "x |-- y = x\r\nsq :: Int\r\n\t-> Int -- square\r\nsq n = n * n\r\n"
    assert find_signature(program).render() == "sq :: Int -> Int"


def test_type_synonyms_and_data_names():
    synonyms, data_names = program_types(TRICKY)
    assert set(synonyms) == {"Point", "Pair"} and data_names == {"Shape", "Wrap"}
    program = (
        "type Op = Int -> Int -> Int\ntype Grid a = [[a]]\n"
        "plus :: Op\nplus = (+)\ncells :: Grid Bool -> Int\ncells = length\n"
    )
    assert find_signature(program, "plus").arity == 2
    assert find_signature(program, "cells").arg_types == (ListType(ListType(BOOL)),)
    looping = "type A = B\ntype B = A\nf :: A -> Int\nf _ = 0\n"
    with pytest.raises(UnsupportedType, match="expands without end"):
        find_signature(looping)


def test_signature_value_object():
    sig = Signature("f", (INT, ListType(INT)), BOOL)
    assert sig.function_type == FunctionType(INT, FunctionType(ListType(INT), BOOL))
    assert sig.qualified_type.render() == "Int -> [Int] -> Bool"


def test_declarations_and_mask_keep_positions():
    program = 'a = "x -- y" -- c\n{- b -}\nb = 1\n'
    masked = mask(program)
    assert len(masked) == len(program) and masked.count("\n") == program.count("\n")
    assert "--" not in masked and "{-" not in masked
    assert [d.text for d in top_level_declarations(program)] == ["a =", "b = 1"]
    assert [d.line for d in top_level_declarations(program)] == [1, 3]


# --------------------------------------------------------------------------- renaming

RENAME_PROGRAM = textwrap.dedent(
    """\
    module Main where

    import qualified Data.List as L

    {-@ reflect foo @-}
    {-@ foo :: Int -> Int @-}
    -- | foo doubles; do not touch foo in this comment
    foo :: Int -> Int
    foo x = foo' x + foobar + L.foo
      where
        foo' y = y * 2

    foobar :: Int
    foobar = length "foo" + length ['f', 'o', 'o']

    bar :: [Int] -> [Int]
    bar = map foo . filter (> 0) . map (foo.succ)

    main :: IO ()
    main = print (foo 3, bar [1, 2], 'x', {- foo -} "foo\\"foo")
    """
)


def test_rename_whole_identifiers_in_code_only():
    renamed = rename_function(RENAME_PROGRAM, "foo", "f_new")
    assert "f_new :: Int -> Int" in renamed
    assert "f_new x = foo' x + foobar + L.foo" in renamed  # foo', foobar and L.foo stay
    assert "map f_new . filter" in renamed and "(f_new.succ)" in renamed
    assert "print (f_new 3" in renamed
    assert "do not touch foo in this comment" in renamed
    assert '"foo\\"foo"' in renamed and "{- foo -}" in renamed and 'length "foo"' in renamed
    assert "{-@ reflect foo @-}" in renamed  # annotations are comments by default
    assert renamed.count("f_new") == 5


def test_rename_with_annotations_and_primed_name():
    renamed = rename_function(RENAME_PROGRAM, "foo", "baz'", include_annotations=True)
    assert "{-@ reflect baz' @-}" in renamed and "{-@ baz' :: Int -> Int @-}" in renamed
    assert "baz' :: Int -> Int" in renamed
    # renaming back restores the program exactly
    assert rename_function(renamed, "baz'", "foo", include_annotations=True) == RENAME_PROGRAM


def test_rename_errors():
    with pytest.raises(RenameError, match="already occurs"):
        rename_function(RENAME_PROGRAM, "foo", "bar")
    with pytest.raises(RenameError, match="already occurs"):
        rename_function(RENAME_PROGRAM, "foo", "foo'")  # a local binding uses it
    with pytest.raises(RenameError, match="no top-level function named 'missing'"):
        rename_function(RENAME_PROGRAM, "missing", "other")
    with pytest.raises(RenameError, match="not an ordinary Haskell function name"):
        rename_function(RENAME_PROGRAM, "foo", "Foo")
    with pytest.raises(RenameError, match="not an ordinary"):
        rename_function(RENAME_PROGRAM, "foo", "where")
    assert rename_function(RENAME_PROGRAM, "foo", "foo") == RENAME_PROGRAM


def test_rename_function_without_signature():
    program = "double x = x * 2\nmain = print (double 2)\n"
    assert rename_function(program, "double", "f'") == "f' x = x * 2\nmain = print (f' 2)\n"


# --------------------------------------------------------------------------- GHC

GHC = shutil.which("runghc")


@pytest.mark.skipif(
    GHC is None, reason="GHC (runghc) is not installed; install the ghc package to run this check"
)
def test_ghc_accepts_renamed_tricky_program(tmp_path):
    renamed = rename_function(RENAME_PROGRAM, "foo", "fooRenamed", include_annotations=True)
    renamed = renamed.replace("L.foo", "L.length []")  # Data.List has no foo; keep the qualified use shape
    source = tmp_path / "Main.hs"
    source.write_text(renamed)
    sig = find_signature(renamed)
    assert sig.name == "fooRenamed" and sig.arg_types == (INT,)
    done = subprocess.run([GHC, str(source)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '(12,[26,30],\'x\',"foo\\"foo")'
