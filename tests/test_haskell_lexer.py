"""The shared Haskell lexer (selfplay.haskell.lexer): what both of its callers rely on.

``signature`` (and through it the GHC checks) uses the default reading; the Liquid
Haskell proof check uses ``guarded=True``. Most tests run under both readings: they
agree on everything except two kinds of malformed literal, pinned at the end.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfplay.haskell import signature
from selfplay.haskell.lexer import (
    is_identifier,
    is_operator,
    is_symbolic,
    lex,
    matching,
    split_top,
    strip_parens,
    tokens,
    top_level,
    unqualified,
)

BOTH = pytest.mark.parametrize("guarded", [False, True], ids=["default", "guarded"])


def kinds(text: str, guarded: bool = False) -> list[tuple[str, str]]:
    """(kind, text) of each segment that is not code."""
    return [(s.kind, text[s.start : s.end]) for s in lex(text, guarded=guarded).segments if s.kind != "code"]


# ------------------------------------------------------------------------------ comments


@BOTH
def test_line_comment_runs_to_end_of_line(guarded):
    text = "x = 1 -- one\ny = 2\n"
    assert kinds(text, guarded) == [("comment", "-- one")]
    assert lex(text, guarded=guarded).view() == "x = 1       \ny = 2\n"


@BOTH
@pytest.mark.parametrize("text", ["a --> b", "a |-- b", "a --| b", "a <-- b", "(--+) = 1"])
def test_dashes_touching_a_symbol_are_an_operator(guarded, text):
    assert kinds(text, guarded) == []
    assert any("--" in tok for tok in tokens(lex(text, guarded=guarded).view()))


@BOTH
def test_a_run_of_dashes_alone_is_a_comment(guarded):
    assert kinds("x = 1 ---- rule\n", guarded) == [("comment", "---- rule")]
    assert kinds("--", guarded) == [("comment", "--")]


@BOTH
def test_nested_block_comments(guarded):
    text = "a {- outer {- inner -} still outer -} b"
    assert kinds(text, guarded) == [("comment", "{- outer {- inner -} still outer -}")]
    assert lex(text, guarded=guarded).view().split() == ["a", "b"]
    assert lex(text, guarded=guarded).unterminated is None


@BOTH
@pytest.mark.parametrize(
    "text, open_kind",
    [
        ("x {- never closed", "block_comment"),
        ("x {- a {- b -} still open", "block_comment"),
        ("{-@ f :: Int\nf = 1", "annotation"),
        ("{-# LANGUAGE X", "pragma"),
    ],
)
def test_unclosed_block_runs_to_the_end(guarded, text, open_kind):
    lexed = lex(text, guarded=guarded)
    assert lexed.unterminated == open_kind
    assert lexed.segments[-1].end == len(text) and lexed.segments[-1].kind != "code"


@BOTH
def test_comment_markers_inside_literals_are_not_comments(guarded):
    text = "s = \"-- not {- a comment\" ++ ['{', '-']"
    assert [k for k, _ in kinds(text, guarded)] == ["string", "char", "char"]


# ------------------------------------------------------------------------------ literals


@BOTH
def test_string_with_escaped_quote(guarded):
    text = r'msg = "say \"hi\" -- twice" ++ rest'
    assert kinds(text, guarded) == [("string", r'"say \"hi\" -- twice"')]
    assert "rest" in lex(text, guarded=guarded).view()


@BOTH
def test_string_gap_spans_lines(guarded):
    text = 'msg = "abc\\\n      \\def" ++ x\n'
    assert kinds(text, guarded) == [("string", '"abc\\\n      \\def"')]
    assert lex(text, guarded=guarded).unterminated is None


@BOTH
def test_unterminated_string_stops_at_the_newline(guarded):
    text = 'a = "open\nb = 2\n'
    lexed = lex(text, guarded=guarded)
    assert kinds(text, guarded) == [("string", '"open')]
    assert lexed.unterminated == "string"
    assert "b = 2" in lexed.view()


@BOTH
def test_unclosed_block_overrides_an_earlier_unclosed_string(guarded):
    assert lex('a = "open\n{- and open', guarded=guarded).unterminated == "block_comment"
    assert lex('{- closed -}\na = "open', guarded=guarded).unterminated == "string"


@BOTH
@pytest.mark.parametrize(
    "lit", ["'a'", "'\\''", "'\"'", "'\\n'", "'\\\\'", "'\\SOH'", "'\\x41'", "'\\^A'", "'\\1114111'"]
)
def test_character_literals(guarded, lit):
    text = f"c = {lit} : rest"
    assert kinds(text, guarded) == [("char", lit)]


@BOTH
def test_a_double_quote_char_does_not_open_a_string(guarded):
    text = "q = '\"' -- the quote\nr = 1\n"
    assert kinds(text, guarded) == [("char", "'\"'"), ("comment", "-- the quote")]
    assert lex(text, guarded=guarded).unterminated is None


@BOTH
def test_primes_in_names_are_not_char_literals(guarded):
    text = "f' x' = x' + g'' 'a'"
    assert kinds(text, guarded) == [("char", "'a'")]


@BOTH
def test_promoted_constructors_are_code(guarded):
    assert kinds("type T = '[Int, Bool]", guarded) == []


# ------------------------------------------------------------------------------ pragmas and annotations


@BOTH
def test_pragmas_and_annotations(guarded):
    text = "{-# LANGUAGE BangPatterns #-}\n{-@ reflect f @-}\n{-@ f :: x:Int -> {v:Int | v > x} @-}\nf x = x + 1\n"
    assert [k for k, _ in kinds(text, guarded)] == ["pragma", "annotation", "annotation"]
    anns = lex(text, guarded=guarded).annotations()
    assert [(a.inner.strip(), a.line, a.closed) for a in anns] == [
        ("reflect f", 2, True),
        ("f :: x:Int -> {v:Int | v > x}", 3, True),
    ]


@BOTH
def test_annotation_holding_a_nested_comment_is_one_segment(guarded):
    text = "{-@ f :: {- why -} Int @-}\nf = 1"
    assert kinds(text, guarded) == [("annotation", "{-@ f :: {- why -} Int @-}")]


@BOTH
def test_annotation_closed_by_a_plain_comment_end_is_not_closed(guarded):
    (ann,) = lex("{-@ lazy f -}\nf = 1", guarded=guarded).annotations()
    assert ann.closed is False and ann.inner == " lazy f -}"


@BOTH
def test_view_keeps_offsets_and_chosen_kinds(guarded):
    text = '{-@ reflect g @-}\ng = "s" -- c\n'
    lexed = lex(text, guarded=guarded)
    code = lexed.view()
    both = lexed.view(frozenset({"code", "annotation"}))
    assert len(code) == len(both) == len(text)
    assert code.count("\n") == text.count("\n")
    assert "reflect" not in code and "reflect g" in both
    assert '"s"' not in code and "--" not in both


# ------------------------------------------------------------------------------ the two readings differ only here


def test_broken_string_gap():
    text = 'a = "x\\ " ++ undefined\n'
    # default: the gap swallows the quote after the blank, and the string runs on
    assert kinds(text) == [("string", '"x\\ " ++ undefined')]
    # guarded: only a backslash closes a gap, so the quote still closes the string
    assert kinds(text, guarded=True) == [("string", '"x\\ "')]
    assert "undefined" in lex(text, guarded=True).view()


def test_escape_with_a_blank_is_a_char_only_when_guarded():
    assert kinds("c = '\\ '") == []
    assert kinds("c = '\\ '", guarded=True) == [("char", "'\\ '")]


def test_long_escape_is_a_char_only_by_default():
    text = "c = '\\unsafePerformIO'"
    assert kinds(text) == [("char", "'\\unsafePerformIO'")]
    assert kinds(text, guarded=True) == []
    assert "unsafePerformIO" in lex(text, guarded=True).view()


_ALPHABET = st.sampled_from(
    list("{}-@#\"'\\ \n\tax_1|>:=.()`") + ["{-", "-}", "{-@", "@-}", "{-#", "#-}", "--", "'a'"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join), st.booleans())
def test_segments_cover_the_text(text, guarded):
    lexed = lex(text, guarded=guarded)
    pos = 0
    for seg in lexed.segments:
        assert seg.start == pos < seg.end
        pos = seg.end
    assert pos == len(text)
    view = lexed.view()
    assert len(view) == len(text) and view.count("\n") == text.count("\n")


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET.filter(lambda s: "\\" not in s), max_size=40).map("".join))
def test_readings_agree_without_backslashes(text):
    assert lex(text).segments == lex(text, guarded=True).segments
    assert lex(text).unterminated == lex(text, guarded=True).unterminated


def test_signature_module_uses_the_default_reading():
    text = 'a = "x\\ " ++ b -- c\n{-@ f :: Int @-}'
    assert signature.scan(text) == list(lex(text).segments)
    assert signature.mask(text) == lex(text).view()
    assert signature.mask(text, ("code", "annotation")) == lex(text).view(("code", "annotation"))


# ------------------------------------------------------------------------------ tokens and names


def test_tokens():
    assert tokens("f x' = Data.List.sort (x' <+> 10) `div` [a,b]") == [
        "f",
        "x'",
        "=",
        "Data.List.sort",
        "(",
        "x'",
        "<+>",
        "10",
        ")",
        "`",
        "div",
        "`",
        "[",
        "a",
        ",",
        "b",
        "]",
    ]
    assert tokens("{v:Int | v >= 0}") == ["{", "v", ":", "Int", "|", "v", ">=", "0", "}"]


def test_bracket_helpers():
    toks = tokens("(a, [b, c]) -> { d }")
    assert matching(toks, 0) == 8 and matching(toks, 3) == 7
    assert matching(tokens("( ]"), 0) == -1 and matching(tokens("( a"), 0) == -1
    assert [t for _, t in top_level(toks)] == ["(", "->", "{"]
    assert split_top(tokens("a -> (b -> c) -> d"), {"->"}) == [["a"], ["(", "b", "->", "c", ")"], ["d"]]
    assert strip_parens(tokens("((a b))")) == ["a", "b"]
    assert strip_parens(tokens("(a, b)")) == ["(", "a", ",", "b", ")"]
    assert strip_parens(tokens("()")) == ["(", ")"]
    assert strip_parens(tokens("(a) (b)")) == ["(", "a", ")", "(", "b", ")"]


@pytest.mark.parametrize(
    "name, ident, op, symbolic",
    [
        ("foo", True, False, False),
        ("f'", True, False, False),
        ("_go", True, False, False),
        ("_", False, False, False),
        ("where", False, False, False),
        ("Foo", False, False, False),
        ("<+>", False, True, True),
        ("->", False, False, True),
        ("=", False, False, True),
        ("::", False, False, True),
        ("", False, False, False),
        ("foo\n", False, False, False),
    ],
)
def test_name_predicates(name, ident, op, symbolic):
    assert (is_identifier(name), is_operator(name), is_symbolic(name)) == (ident, op, symbolic)


def test_unqualified():
    assert unqualified("Data.List.sort") == "sort"
    assert unqualified("sort") == "sort"
    assert unqualified("M.Just") == "Just"
    assert unqualified("x.y") == "x.y"
