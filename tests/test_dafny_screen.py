"""The Dafny source reader, the solution screen and the spec-check texts (pure text: no Dafny).

The corpus in tests/dafny_corpus/ holds specs and solutions written for these tests;
corpus.json says what each one is, which spec a solution answers, the reasons the screen
(or parse_spec) must give, and what Dafny 2.3 itself did with it (measured by hand, with
and without /noCheating:1), so the spec-check verdicts can be replayed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfplay.dafny import spec_files as sf
from selfplay.dafny.screen import (
    ALLOWED_ATTRIBUTES,
    REASONS,
    ScreenResult,
    SpecError,
    inspect_spec,
    parse_spec,
    screen_solution,
)
from selfplay.dafny.source import MAX_SOURCE_CHARS, DafnySyntaxError, lex, parse
from selfplay.errors import UserError

CORPUS = Path(__file__).parent / "dafny_corpus"
ENTRIES = json.loads((CORPUS / "corpus.json").read_text())["entries"]
SPECS = [e for e in ENTRIES if e["role"] == "spec"]
SOLUTIONS = [e for e in ENTRIES if e["role"] == "solution"]


def read(name: str) -> str:
    return (CORPUS / name).read_text()


def spec_of(name: str):
    return parse_spec(read(name))


def kinds(text: str) -> list[tuple[str, str]]:
    """(kind, text) of each segment that is not code."""
    lexed = lex(text)
    return [(s.kind, text[s.start : s.end]) for s in lexed.segments if s.kind != "code"]


def words(text: str) -> list[str]:
    return [t.text for t in lex(text).tokens]


ABS = read("spec_abs.dfy")
ABS_BODY = "{\n  if x < 0 { r := -x; } else { r := x; }\n}\n"


def solve(body: str = ABS_BODY, before: str = "", after: str = "") -> str:
    return before + ABS.rstrip("\n") + "\n" + body + after


# ------------------------------------------------------------------------------ lexer


def test_line_comment_ends_at_newline_and_carriage_return():
    assert kinds("x := 1; // assume false\ny") == [("comment", "// assume false")]
    assert kinds("a // note\rassume false;") == [("comment", "// note")]
    assert "assume" in words("a // note\rassume false;")


def test_block_comments_nest_and_ignore_line_comments_and_quotes():
    text = "/* a /* b */ assume false; // */ c"
    assert kinds(text) == [("comment", "/* a /* b */ assume false; // */")]
    assert words(text) == ["c"]
    assert words('/* " */ x') == ["x"]


def test_strings_with_escapes_hide_their_words():
    text = 'var s := "say \\"assume false\\" \\\\"; var t := 1;'
    assert kinds(text) == [("string", '"say \\"assume false\\" \\\\"')]
    assert "assume" not in words(text)
    assert "assume" in words('var s := "\\\\"; assume false;')


def test_verbatim_strings_span_lines_and_double_quotes():
    text = 'var v := @"line ""one""\n assume"; x'
    assert kinds(text) == [("string", '@"line ""one""\n assume"')]
    assert "assume" in words('var v := @"a\\"; assume false;')


def test_char_literals_and_primed_identifiers():
    assert kinds("var c := 'a';") == [("char", "'a'")]
    assert kinds('var q := \'"\'; var s := "x";') == [("char", "'\"'"), ("string", '"x"')]
    assert kinds("var e := '\\n'; var u := '\\u0041';") == [("char", "'\\n'"), ("char", "'\\u0041'")]
    # identifiers may contain and even start with a quote; the longer reading wins
    assert words("var x' := x'';") == ["var", "x'", ":=", "x''", ";"]
    assert words("var 'ab := 'a'b;") == ["var", "'ab", ":=", "'a'b", ";"]
    assert words("var 'a := 1; assume false; var b' := 'a;")[5:7] == ["assume", "false"]


def test_masked_view_keeps_offsets_and_delimiters():
    text = "a /* x\n y */ \"s t\" 'c' // z\nb"
    masked = lex(text).masked()
    assert len(masked) == len(text)
    assert masked.count("\n") == 2
    assert masked.split() == ["a", '"', '"', "'", "'", "b"]


def test_unterminated_constructs_are_recorded():
    assert lex("x /* never closed").unterminated == "block_comment"
    assert lex('x := "cut\n";').unterminated == "string"
    assert lex("method {:axiom M()").unterminated == "attribute"
    assert lex("x := 1;").unterminated is None


def test_odd_characters_in_code_only():
    lexed = lex('// \u00e9t\u00e9\nassum\u0435 false; var s := "\u00e9";')
    assert [lexed.text[i] for i in lexed.odd_chars] == ["\u0435"]
    assert lex("a\tb\r\nc").odd_chars == ()
    assert lex("a\x0cb").odd_chars == (1,)


def test_attributes_are_found_with_blanks_comments_and_nested_braces():
    lexed = lex(
        "lemma {:axiom} A() {} lemma { /* c */ :verify false} B() {} "
        "lemma {:trigger {1}} C() { var s := {1}; }"
    )
    assert [a.name for a in lexed.attributes] == ["axiom", "verify", "trigger"]
    assert all(lexed.text[a.start] == "{" and lexed.text[a.end - 1] == "}" for a in lexed.attributes)


# ------------------------------------------------------------------------------ declarations

PROGRAM = """// A realistic Dafny 2.3 program.
datatype Tree = Leaf | Node(left: Tree, value: int, right: Tree)

const Limit: int := 10

type Index = i: int | 0 <= i < 10

function method Size(t: Tree): nat
  decreases t
{
  match t
  case Leaf => 0
  case Node(l, _, r) => Size(l) + 1 + Size(r)
}

predicate Sorted(s: seq<int>)
{
  forall i, j :: 0 <= i < j < |s| ==> s[i] <= s[j]
}

lemma {:induction t} SizeNonNeg(t: Tree)
  ensures Size(t) >= 0
  decreases t
{
}

function Evens(n: nat): set<int> { set i | 0 <= i < n && i % 2 == 0 }

method Find(a: array<int>, key: int) returns (found: bool, ghost at: int)
  requires a.Length > 0
  ensures found ==> 0 <= at < a.Length && a[at] == key
  ensures |a[..]| == a.Length
{
  found, at := false, 0;
  var i := 0;
  while i < a.Length
    invariant 0 <= i <= a.Length
    decreases a.Length - i
  {
    if a[i] == key { found, at := true, i; }
    i := i + 1;
  }
}

ghost method {:opaque} Nothing()

method Copy(src: array<int>, dst: array<int>)
  requires src.Length == dst.Length
  modifies dst
  ensures dst[..] == src[..]
  ensures {1} <= {1, 2}
{
  forall i | 0 <= i < src.Length { dst[i] := src[i]; }
}
"""


def test_declarations_of_a_realistic_program():
    prog = parse(PROGRAM)
    got = [(d.kind, d.name, d.modifiers, d.body is not None) for d in prog.declarations]
    assert got == [
        ("datatype", "Tree", (), False),
        ("const", "Limit", (), False),
        ("type", "Index", (), False),
        ("function method", "Size", (), True),
        ("predicate", "Sorted", (), True),
        ("lemma", "SizeNonNeg", (), True),
        ("function", "Evens", (), True),
        ("method", "Find", (), True),
        ("method", "Nothing", ("ghost",), False),
        ("method", "Copy", (), True),
    ]
    decls = {d.name: d for d in prog.declarations}
    assert [a.name for a in decls["SizeNonNeg"].attributes] == ["induction"]
    assert [a.name for a in decls["Nothing"].attributes] == ["opaque"]
    find = decls["Find"]
    assert [(c.keyword, c.expression) for c in find.clauses] == [
        ("requires", "a.Length > 0"),
        ("ensures", "found ==> 0 <= at < a.Length && a[at] == key"),
        ("ensures", "|a[..]| == a.Length"),
    ]
    assert [(f.name, f.type, f.ghost) for f in find.params] == [
        ("a", "array<int>", False),
        ("key", "int", False),
    ]
    assert [(f.name, f.type, f.ghost) for f in find.outs] == [("found", "bool", False), ("at", "int", True)]
    assert find.header.endswith("ensures |a[..]| == a.Length")
    assert PROGRAM[find.body[0]] == "{" and PROGRAM[find.body[1] - 1] == "}"
    assert "while i < a.Length" in find.text
    copy = decls["Copy"]
    assert [c.keyword for c in copy.clauses] == ["requires", "modifies", "ensures", "ensures"]
    assert copy.clauses[-1].expression == "{1} <= {1, 2}"
    assert decls["Evens"].header == "function Evens(n: nat): set<int>"
    assert decls["SizeNonNeg"].clause_texts("decreases") == ["decreases t"]
    assert decls["Find"].line == 29


@pytest.mark.parametrize(
    "header, has_body",
    [
        ("lemma L(s: set<int>) ensures s == {}", False),  # a display after an operator
        ("lemma L(s: set<int>) ensures s == {} {", True),
        ("lemma L(s: seq<int>) ensures |s| >= 0 {", True),  # closing bar ends an operand
        ("lemma L(s: seq<int>) ensures 0 <= |s|", False),
        ("lemma L(d: D) ensures match d { case A => true }", False),
        ("lemma L(x: int) ensures x > {1}", False),  # when in doubt: an expression
        ("method M(x: int) returns (r: int) ensures r == x; {", True),  # old-style ';'
        ("lemma L() ensures var y := 0; {1} == {1}", False),
        ("function F(): set<int> {", True),
        ("method M() decreases * {", True),
        ("lemma L() ensures multiset{1} == multiset{1}", False),
    ],
)
def test_body_or_expression_brace(header, has_body):
    text = header + ("\n  }\n" if has_body else "\n") + "method Next() {}\n"
    decl = parse(text).declarations[0]
    assert (decl.body is not None) == has_body
    assert len(parse(text).declarations) == 2


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("method M() { (}", "line 1"),
        ("method M()\n{\n", "never closed"),
        ("x := 1;", "expected a declaration"),
        ("method M() {} junk", "expected a declaration"),
        ("/* open", "never closed"),
        ("method { }", "without a name"),
        ("ghost", "modifiers without a declaration"),
        ("x" * (MAX_SOURCE_CHARS + 1), "more than"),
    ],
)
def test_syntax_errors_are_one_line_user_errors(text, fragment):
    with pytest.raises(DafnySyntaxError) as info:
        parse(text)
    assert isinstance(info.value, UserError)
    assert fragment in str(info.value) and "\n" not in str(info.value)


# ------------------------------------------------------------------------------ corpus


def test_corpus_index_lists_every_file_once():
    files = sorted(p.name for p in CORPUS.glob("*.dfy"))
    assert sorted(e["file"] for e in ENTRIES) == files
    assert all(e["role"] in ("spec", "solution") for e in ENTRIES)
    assert all(code in REASONS for e in ENTRIES for code in e["expect"])
    assert all(e["spec"] in files for e in SOLUTIONS)


@pytest.mark.parametrize("entry", SOLUTIONS, ids=lambda e: e["file"])
def test_corpus_solution(entry):
    result = screen_solution(spec_of(entry["spec"]), read(entry["file"]))
    assert sorted(result.reasons) == sorted(entry["expect"]), result.summary()
    assert result.ok == (not entry["expect"])


@pytest.mark.parametrize("entry", SPECS, ids=lambda e: e["file"])
def test_corpus_spec(entry):
    spec, problems = inspect_spec(read(entry["file"]))
    assert sorted({p.code for p in problems}) == sorted(entry["expect"])
    assert (spec is not None) == (not entry["expect"])


def test_every_refusal_reason_of_a_solution_is_in_the_corpus():
    solution_codes = set(REASONS) - {
        "no_target",
        "several_targets",
        "target_kind",
        "spec_helper_kind",
        "no_ensures",
        "duplicate_name",
        "empty",
        "too_large",
        "too_complex",
        "import",
    }
    seen = {code for e in SOLUTIONS for code in e["expect"]}
    assert solution_codes <= seen, solution_codes - seen


@pytest.mark.parametrize("entry", [e for e in SPECS if "spec_verdict" in e], ids=lambda e: e["file"])
def test_corpus_spec_verdicts_from_measured_dafny_runs(entry):
    """What the three spec checks gave with Dafny 2.3 (recorded in corpus.json) read as
    the spec's verdict."""
    runs = entry["dafny"]
    spec = spec_of(entry["file"])
    assert [f.check for f in sf.spec_check_files(spec)] == [k for k in sf.CHECKS if k in runs]
    verdict = sf.spec_verdict(
        runs[sf.VALIDITY]["outcome"],
        runs.get(sf.PRECONDITIONS, {}).get("outcome"),
        runs[sf.POSTCONDITIONS]["outcome"],
    )
    assert verdict.code == entry["spec_verdict"]
    assert verdict.ok == (entry["spec_verdict"] == "spec_ok")


# ------------------------------------------------------------------------------ the screen


def test_honest_solutions_pass():
    spec = parse_spec(ABS)
    assert screen_solution(spec, solve()).ok
    # blanks and comments between the header and the body's brace do not matter
    assert screen_solution(spec, solve("  // the body\n\n{\n  r := if x < 0 then -x else x;\n}\n")).ok
    # a spec given as text works too
    assert screen_solution(ABS, solve()).ok


def test_mentions_in_comments_and_strings_pass():
    body = (
        '{\n  // assume false; {:axiom} {:verify false} decreases * free include "x" import refines\n'
        "  /* lemma {:axiom} Cheat() ensures false */\n"
        '  var s := "assume {:extern} while true invariant false";\n'
        "  var c := '{';\n"
        "  if x < 0 { r := -x; } else { r := x; }\n}\n"
    )
    result = screen_solution(parse_spec(ABS), solve(body))
    assert result.ok, result.summary()


def test_several_reasons_are_reported_together():
    text = solve(
        "{\n  assume false;\n  while true\n    invariant true\n}\n",
        before="lemma {:axiom} A() ensures false\nlemma {:verify false} B() ensures false {}\n",
        after="method {:timeLimit 9} C() decreases * {}\n",
    )
    result = screen_solution(parse_spec(ABS), text)
    assert not result.ok
    assert set(result.reasons) >= {
        "assume",
        "axiom_attribute",
        "verify_attribute",
        "bodiless_declaration",
        "bodiless_loop",
        "attribute_not_allowed",
        "decreases_star",
    }
    assert len(result.problems) >= len(result.reasons)
    assert all(p.line for p in result.problems)
    assert result.summary().startswith(
        "refused: axiom_attribute (line 1: attribute {:axiom}); bodiless_declaration"
    )
    assert [p.line for p in result.problems] == sorted(p.line for p in result.problems)
    assert ScreenResult(**{k: v for k, v in result.__dict__.items()}) == result
    assert json.loads(json.dumps(result.to_dict()))["reasons"] == result.reasons


def test_word_checks_still_run_when_the_solution_does_not_parse():
    result = screen_solution(parse_spec(ABS), solve("{\n  assume false;\n  (]\n}\n"))
    assert result.reasons[:2] == ["syntax", "assume"]
    assert result.problems[0].line is None


def test_each_escape_hatch_word_and_attribute():
    spec = parse_spec(ABS)
    cases = {
        "import": "import opened Foo\n",
        "refines": "module B refines A {}\n",
        "include": 'include "other.dfy"\n',
        "attribute_not_allowed": 'lemma {:options "/noCheating:0"} L() {}\n',
        "extern_attribute": 'method {:extern "x"} E() {}\n',
        "declaration_not_allowed": "trait T {}\n",
    }
    for code, before in cases.items():
        result = screen_solution(spec, solve(before=before))
        assert code in result.reasons, (code, result.summary())
    for name in sorted(ALLOWED_ATTRIBUTES):
        result = screen_solution(spec, solve(before=f"lemma {{:{name}}} L(x: int) ensures x == x {{}}\n"))
        assert result.ok, (name, result.summary())


def test_target_header_changes_are_explained():
    spec = parse_spec(ABS)

    def detail(text: str) -> str:
        result = screen_solution(spec, text)
        assert result.reasons == ["target_header_changed"], result.summary()
        return result.problems[0].detail

    assert "removed ensures r >= 0" in detail(ABS.replace("  ensures r >= 0\n", "") + ABS_BODY)
    assert "added requires x > 0" in detail(
        ABS.replace("  ensures r >= 0\n", "  ensures r >= 0\n  requires x > 0\n") + ABS_BODY
    )
    assert "signature changed" in detail(
        ABS.replace("(r: int)", "(res: int)").replace("r ", "res ") + ABS_BODY
    )
    assert "ghost method" in detail(ABS.replace("method AbsMethod", "ghost method AbsMethod") + ABS_BODY)
    assert "byte for byte" in detail(ABS.replace("  ensures r >= 0", "  ensures  r >= 0") + ABS_BODY)
    assert "reordered" in detail(
        ABS.replace("  ensures r == Abs(x)\n  ensures r >= 0", "  ensures r >= 0\n  ensures r == Abs(x)")
        + ABS_BODY
    )


def test_target_missing_and_duplicated():
    spec = parse_spec(ABS)
    assert screen_solution(spec, ABS.split("method")[0]).reasons == ["target_missing"]
    twice = solve(after="\nmethod AbsMethod(y: int) returns (r: int) {}\n")
    assert "redefines_spec_decl" in screen_solution(spec, twice).reasons


def test_bad_input_gets_a_reason_not_a_crash():
    spec = parse_spec(ABS)
    assert screen_solution(spec, "").reasons == ["empty"]
    assert screen_solution(spec, "// only a comment\n").reasons == ["empty"]
    assert screen_solution(spec, "x" * (MAX_SOURCE_CHARS + 1)).reasons == ["too_large"]
    assert screen_solution(spec, b"bytes").reasons == ["syntax"]  # type: ignore[arg-type]


def test_pathological_input_is_screened_quickly():
    import time

    spec = parse_spec(ABS)
    for filler in ("while ", "forall x | ", "{ ", "forall ", "|", "while x < y invariant ", "{1} "):
        text = solve("{\n" + filler * ((MAX_SOURCE_CHARS - 400) // len(filler)) + "\n}\n")
        assert len(text) <= MAX_SOURCE_CHARS
        start = time.perf_counter()
        screen_solution(spec, text)
        assert time.perf_counter() - start < 15, filler  # linear work: well under a second here


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab'\"@/*\\\n\r{}()[]:;|= x\u00e9")), max_size=80))
def test_lexing_covers_the_text_and_screening_never_crashes(text):
    lexed = lex(text)
    covered = "".join(text[s.start : s.end] for s in lexed.segments)
    code = "".join(text[s.start : s.end] for s in lexed.segments if s.kind == "code")
    assert len(covered) == len(text) and len(lexed.masked()) == len(text)
    assert all(text[t.start : t.end] == t.text for t in lexed.tokens)
    assert all(s.start < s.end for s in lexed.segments) or not text
    del code
    result = screen_solution(parse_spec(ABS), solve(before=text + "\n"))
    assert isinstance(result.ok, bool)
    spec, problems = inspect_spec(text)
    assert spec is not None or problems


# ------------------------------------------------------------------------------ specs


def test_parse_spec_finds_target_and_helpers():
    spec = parse_spec(read("spec_sum.dfy"))
    assert spec.target_name == "Sum"
    assert [h.name for h in spec.helpers] == ["SumTo"]
    assert [o.name for o in spec.target.outs] == ["s"]


@pytest.mark.parametrize(
    "text, code",
    [
        ("", "empty"),
        (
            "method A() returns (r: int) ensures r == 1\nmethod B() returns (r: int) ensures r == 2\n",
            "several_targets",
        ),
        ("method A() returns (r: int) requires true\n", "no_ensures"),
        ("ghost method A() returns (r: int) ensures r == 1\n", "target_kind"),
        ("lemma A() ensures true\n", "target_kind"),
        (
            "function F(): int { 1 }\nfunction F(): int { 2 }\nmethod A() returns (r: int) ensures r == F()\n",
            "duplicate_name",
        ),
        ("lemma H() ensures true {}\nmethod A() returns (r: int) ensures r == 1\n", "spec_helper_kind"),
        (
            "function {:axiom} F(): int { 1 }\nmethod A() returns (r: int) ensures r == F()\n",
            "axiom_attribute",
        ),
        ("method A() returns (r: int) free ensures r == 1\n", "free_clause"),
        ("method A() returns (r: int) ensures r == 1 {}\n", "no_target"),
        ('include "x.dfy"\nmethod A() returns (r: int) ensures r == 1\n', "include"),
    ],
)
def test_malformed_specs_are_refused_with_a_reason(text, code):
    with pytest.raises(SpecError) as info:
        parse_spec(text)
    assert code in info.value.reasons
    assert isinstance(info.value, UserError) and "\n" not in str(info.value)
    assert str(info.value).startswith("not a valid spec: ")


# ------------------------------------------------------------------------------ spec-check files


def test_validity_file_stubs_the_target_with_assume_false():
    spec = parse_spec(ABS)
    text = sf.validity_file(spec)
    assert text.startswith(ABS.rstrip("\n"))
    assert text.rstrip().endswith("{\n  assume false;\n}")
    program = parse(text)
    assert program.declarations[-1].body is not None
    files = sf.spec_check_files(spec)
    assert [(f.check, f.no_cheating) for f in files] == [("validity", False), ("postconditions", True)]


def test_precondition_file_only_with_requires():
    assert sf.precondition_file(parse_spec(ABS)) is None
    text = sf.precondition_file(spec_of("spec_max.dfy"))
    assert text is not None and "{\n  assert false;\n}" in text


def test_postcondition_file_havocs_outs_and_frames():
    assert "{\n  r := *;\n}" in sf.postcondition_file(parse_spec(ABS))
    assert "{\n  modify a;\n}" in sf.postcondition_file(spec_of("spec_fill.dfy"))
    spec = parse_spec(
        "method Two(a: array<int>) returns (x: int, ghost y: bool)\n  modifies a;\n"
        "  ensures x == 1;\n// trailing\n"
    )
    text = sf.postcondition_file(spec)
    assert "  ensures x == 1;\n{\n  x := *;\n  y := *;\n  modify a;\n}\n// trailing\n" in text
    # every check file is itself a program whose target has a body
    for f in sf.spec_check_files(spec):
        assert all(d.body is not None for d in parse(f.text).declarations)


@pytest.mark.parametrize(
    "validity, pre, post, code",
    [
        ("verified", "refuted", "refuted", "spec_ok"),
        ("verified", None, "refuted", "spec_ok"),
        ("refuted", None, None, "spec_invalid"),
        ("inconclusive", None, None, "spec_check_inconclusive"),
        ("verified", "verified", "verified", "vacuous_requires"),
        ("verified", "refuted", "verified", "vacuous_ensures"),
        ("verified", "inconclusive", "refuted", "spec_check_inconclusive"),
        ("verified", None, "inconclusive", "spec_check_inconclusive"),
        ("verified", None, None, "spec_check_inconclusive"),
    ],
)
def test_spec_verdict_rules(validity, pre, post, code):
    verdict = sf.spec_verdict(validity, pre, post)
    assert verdict.code == code and verdict.ok == (code == "spec_ok") and verdict.detail


def test_spec_verdict_rejects_unknown_outcomes():
    with pytest.raises(ValueError):
        sf.spec_verdict("ok", None, None)


def test_solution_file_is_the_solution_as_written():
    text = solve()
    assert sf.solution_file(parse_spec(ABS), text) == text
