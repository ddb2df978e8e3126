"""The Rust + Verus lexer, attribute reader and item reader (pure text: no Verus)."""

from __future__ import annotations

import pytest

from selfplay.errors import UserError
from selfplay.verus.attributes import find_attributes
from selfplay.verus.declarations import MAX_SOURCE_CHARS, VerusSyntaxError, parse
from selfplay.verus.lexer import lex


def words(text: str) -> list[str]:
    return [t.value for t in lex(text).tokens if t.kind == "ident"]


def kinds(text: str) -> list[tuple[str, str]]:
    """(kind, text) of each segment that is not code."""
    lexed = lex(text)
    return [(s.kind, text[s.start : s.end]) for s in lexed.segments if s.kind != "code"]


# ------------------------------------------------------------------------------ lexer


def test_line_comments_end_only_at_newline_as_in_rustc():
    assert kinds("x // assume(false)\ny") == [("comment", "// assume(false)")]
    # rustc keeps reading a // comment past a lone carriage return, so must we
    assert "assume" not in words("a // note\rassume(false);")
    assert words("/// doc assume\n//! inner doc admit\nfn f") == ["fn", "f"]


def test_block_comments_nest():
    text = "/* a /* b */ assume(false); */ c"
    assert kinds(text) == [("comment", "/* a /* b */ assume(false); */")]
    assert words(text) == ["c"]
    assert words("/* */ assume(false); /* */") == ["assume", "false"]
    assert words('/* " */ x') == ["x"]


def test_strings_span_lines_and_escape_quotes():
    text = 'let s = "say \\"assume(false)\\"\n more"; let t = 1;'
    assert words(text) == ["let", "s", "let", "t"]
    # a string that ends with an escaped backslash closes at the next quote
    assert "assume" in words('let s = "\\\\"; assume(false); // "')


def test_raw_byte_and_c_strings():
    assert words('let s = r#"a "quoted" assume(false)"#; x') == ["let", "s", "x"]
    assert words('let s = r##"one "# still inside assume"##; y') == ["let", "s", "y"]
    assert words('let s = r#"x"#; assume(false); // "#') == ["let", "s", "assume", "false"]
    assert words('let b = b"admit()"; let c = c"admit()"; let d = br"admit()"; z') == [
        "let",
        "b",
        "let",
        "c",
        "let",
        "d",
        "z",
    ]


def test_character_literals_and_lifetimes():
    assert kinds("let c = '\"'; assume(false); let d = '\"';") == [("char", "'\"'"), ("char", "'\"'")]
    assert "assume" in words("let c = '\"'; assume(false); let d = '\"';")
    assert [t.kind for t in lex("'a' 'a '\\'' '\\u{1F600}' b'x' 'static").tokens] == [
        "char",
        "lifetime",
        "char",
        "char",
        "char",
        "lifetime",
    ]
    assert "assume" in words("fn f<'a>(x: &'a u8) { assume(false) }")


def test_raw_identifiers_are_read_as_their_name():
    tok = next(t for t in lex("r#assume(false)").tokens if t.kind == "ident")
    assert tok.text == "r#assume" and tok.value == "assume"


def test_operators_and_ranges():
    texts = [t.text for t in lex("a ==> b <==> c =~= d &&& e ||| f 1..n x..=y").tokens]
    assert texts == [
        "a",
        "==>",
        "b",
        "<==>",
        "c",
        "=~=",
        "d",
        "&&&",
        "e",
        "|||",
        "f",
        "1",
        "..",
        "n",
        "x",
        "..=",
        "y",
    ]
    assert [t.text for t in lex("0u8 1_000i32 2.5f64 0xff").tokens] == ["0u8", "1_000i32", "2.5f64", "0xff"]


def test_odd_characters_in_code_but_not_in_comments_or_strings():
    assert lex("fn f() { \u0430ssume(false) }").odd_chars == (9,)
    assert lex('// \u0430 comment\nlet s = "\u0430";').odd_chars == ()
    assert lex("a\u00a0b").odd_chars == (1,)


def test_unterminated_literals_and_comments():
    assert lex("x /* never closed assume(false);").unterminated == "block_comment"
    assert lex('x = "never closed').unterminated == "string"
    assert lex('x = r#"never closed"').unterminated == "string"
    assert lex("x = 1; // fine").unterminated is None


def test_masked_keeps_offsets_and_lines():
    text = 'a /* x\ny */ "s\nt" b'
    masked = lex(text).masked()
    assert len(masked) == len(text) and masked.count("\n") == 2
    assert masked.split() == ["a", "b"]


# ------------------------------------------------------------------------------ attributes


def test_attribute_keys():
    text = (
        "#[verifier::external_body] #[verifier(external_body, rlimit(5))] #[trigger] "
        "#[cfg_attr(verus_keep_ghost, verifier::external_body)] #![trigger f(x)] #[verifier::rlimit(infinity)]"
    )
    attrs = find_attributes(lex(text).tokens)
    assert [a.keys for a in attrs] == [
        ("verifier::external_body",),
        ("verifier::external_body", "verifier::rlimit"),
        ("trigger",),
        ("cfg_attr",),
        ("trigger",),
        ("verifier::rlimit",),
    ]
    assert [a.inner for a in attrs] == [False, False, False, False, True, False]
    assert "external_body" in attrs[3].words


def test_unclosed_attribute_runs_to_the_end():
    attrs = find_attributes(lex("#[verifier::opaque fn f() {}").tokens)
    assert len(attrs) == 1 and not attrs[0].closed


# ------------------------------------------------------------------------------ items

FILE = """#![allow(unused)]
use vstd::prelude::*;

verus! {

pub open spec fn f(x: int) -> int { x + 1 }

#[verifier::opaque]
spec(checked) fn g(x: int) -> bool { x > 0 }

broadcast proof fn lemma_f(x: int)
    ensures
        #[trigger] f(x) > x,
{
}

axiom fn trusted()
    ensures
        true;

struct Point { x: i32, y: i32 }

enum Shape { Dot, Line { len: u32 } }

const LIMIT: u64 = 10;

type Pair = (u32, u32);

broadcast use vstd::seq_lib::group_seq_properties;

broadcast group my_group { lemma_f }

pub(crate) fn update(a: &mut Vec<i32>, b: &'static mut u8, n: usize) -> (r: usize)
    requires
        n < old(a).len(),
    ensures
        r == n,
{
    n
}

} // verus!

fn main() {}
"""


def test_items_scopes_and_kinds():
    program = parse(FILE)
    got = [(d.kind, d.name, d.mode, d.scope) for d in program.items]
    assert got == [
        ("inner_attribute", None, None, "top"),
        ("use", None, None, "top"),
        ("verus_block", None, None, "top"),
        ("fn", "f", "spec", "verus"),
        ("fn", "g", "spec", "verus"),
        ("fn", "lemma_f", "proof", "verus"),
        ("fn", "trusted", "proof", "verus"),
        ("struct", "Point", None, "verus"),
        ("enum", "Shape", None, "verus"),
        ("const", "LIMIT", None, "verus"),
        ("type", "Pair", None, "verus"),
        ("broadcast_use", None, None, "verus"),
        ("broadcast_group", "my_group", None, "verus"),
        ("fn", "update", "exec", "verus"),
        ("fn", "main", "exec", "top"),
    ]
    by_name = {d.name: d for d in program.items if d.name}
    assert by_name["trusted"].bodiless and not by_name["lemma_f"].bodiless
    assert by_name["g"].qualifiers == ("spec",) and by_name["g"].attributes[0].keys == ("verifier::opaque",)
    assert by_name["f"].qualifiers == ("pub", "open", "spec")
    assert by_name["f"].text == "pub open spec fn f(x: int) -> int { x + 1 }"


def test_function_parts():
    update = parse(FILE).named("update")[0]
    assert update.header.startswith("pub(crate) fn update(") and update.header.endswith("r == n,")
    assert [c.keyword for c in update.clauses] == ["requires", "ensures"]
    assert [c.expression for c in update.clauses] == ["n < old(a).len()", "r == n"]
    assert [(p.name, p.mut_ref) for p in update.params] == [("a", True), ("b", True), ("n", False)]
    assert update.ret is not None and (update.ret.name, update.ret.type) == ("r", "usize")
    assert update.returns_value and update.body is not None and update.text.endswith("    n\n}")


@pytest.mark.parametrize(
    "clauses",
    [
        "ensures r == if x > 0 { x } else { 0 - x },",
        "ensures r == if x > 0 { x } else { 0 - x }",
        "ensures r == match x { 0 => 1, _ => x }",
        "ensures forall|i: int| 0 <= i < 3 ==> #[trigger] s[i] == i, r == 1",
        "ensures r@ == seq![1u8, 2u8]",
        "ensures r == (x as u64)",
        "ensures s == x as Seq<u8>",
        "ensures r == x, decreases x when x > 0 via lemma_x",
        "ensures r == { let y = x; y }",
        "ensures\n",
        "ensures |||\n    r == x\n    ||| r == 0",
    ],
)
def test_body_brace_after_clause_expressions(clauses):
    text = f"verus! {{\nfn h(x: u32, s: Seq<u8>) -> (r: u32)\n    {clauses}\n{{\n    BODY\n}}\n}}\n"
    decl = parse(text).named("h")[0]
    assert decl.body is not None and text[decl.body[0] : decl.body[1]] == "{\n    BODY\n}"
    assert text[decl.start : decl.header_end].rstrip().endswith(clauses.rstrip())


def test_bodiless_functions_end_at_semicolon_or_next_item():
    program = parse(
        "verus! {\nfn a() ensures true;\nspec fn b() -> bool\nfn c() {}\nuninterp spec fn d() -> int;\n}"
    )
    bodiless = {d.name: d.bodiless for d in program.items if d.kind == "fn"}
    assert bodiless == {"a": True, "b": True, "c": False, "d": True}
    assert program.named("b")[0].text == "spec fn b() -> bool"


def test_other_items():
    text = (
        "verus! {\ntrait T { fn m(&self); }\nimpl T for u8 { fn m(&self) {} }\nmacro_rules! m { () => {} }\n"
        "seq_macro!{}\nglobal size_of usize == 8;\npub assume_specification[ f ](x: u8) -> u8;\n"
        'extern crate core;\nextern "C" { fn c(); }\nunsafe fn u() {}\nmod inner { fn x() {} }\n}'
    )
    assert [(d.kind, d.name) for d in parse(text).items][1:] == [
        ("trait", "T"),
        ("impl", None),
        ("macro_rules", "m"),
        ("macro", "seq_macro"),
        ("global", None),
        ("assume_specification", None),
        ("extern_crate", "core"),
        ("extern_block", None),
        ("fn", "u"),
        ("mod", "inner"),
    ]


def test_open_end_accepts_only_a_final_brace_and_an_open_verus_block():
    spec = "use vstd::prelude::*;\nverus! {\nfn t(x: u32) -> (r: u32)\n    ensures r == x,\n{\n"
    program = parse(spec, open_end=True)
    target = program.named("t")[0]
    assert target.open_body and target.body == (spec.rindex("{"), len(spec))
    assert program.blocks[0].open_body and program.blocks[0].end == len(spec)
    with pytest.raises(VerusSyntaxError, match="never closed"):
        parse(spec)
    with pytest.raises(VerusSyntaxError, match=r"'\(' is never closed"):
        parse("verus! {\nfn t(x: u32) -> (r: u32)\n    ensures r == (x,\n{\n", open_end=True)
    with pytest.raises(VerusSyntaxError, match="never closed"):
        parse("verus! {\nstruct S {\nfn t() {}\n", open_end=True)


def test_syntax_errors_are_one_line_user_errors():
    for text in ("let x = 1;", "verus! { fn }", "fn f() {", "fn f() }", "/* open", "#[verifier::opaque]"):
        with pytest.raises(VerusSyntaxError) as info:
            parse(text)
        assert isinstance(info.value, UserError) and "\n" not in str(info.value)
    with pytest.raises(VerusSyntaxError, match="more than"):
        parse("x" * (MAX_SOURCE_CHARS + 1))
