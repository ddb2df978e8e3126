"""Reading Verus specs and screening solutions (pure text: no Verus).

The corpus in tests/verus_corpus/ holds specs and solutions written for these tests;
corpus.json says what each is, which spec a solution answers, and the reason codes
inspect_spec / screen_solution must give ([] = accepted).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from selfplay.errors import UserError
from selfplay.verus.hatches import ALLOWED_ATTRIBUTES, DENIED_ATTRIBUTES
from selfplay.verus.problems import REASONS, ScreenResult, SpecError
from selfplay.verus.screen import extract_spec_part, screen_solution
from selfplay.verus.spec import inspect_spec, parse_spec

CORPUS = Path(__file__).parent / "verus_corpus"
ENTRIES = json.loads((CORPUS / "corpus.json").read_text())["entries"]
SPECS = [e for e in ENTRIES if e["role"] == "spec"]
SOLUTIONS = [e for e in ENTRIES if e["role"] == "solution"]


def read(name: str) -> str:
    return (CORPUS / name).read_text()


MAX_SPEC = parse_spec(read("spec_max.rs"))
HONEST = read("max_honest.rs")


# ------------------------------------------------------------------------------ corpus


@pytest.mark.parametrize("entry", SPECS, ids=[e["file"] for e in SPECS])
def test_corpus_specs(entry):
    spec, problems = inspect_spec(read(entry["file"]))
    codes = list(dict.fromkeys(p.code for p in problems))
    assert codes == entry["expect"], [p.detail for p in problems]
    assert (spec is not None) == (not entry["expect"])


@pytest.mark.parametrize("entry", SOLUTIONS, ids=[e["file"] for e in SOLUTIONS])
def test_corpus_solutions(entry):
    result = screen_solution(parse_spec(read(entry["spec"])), read(entry["file"]))
    assert result.reasons == entry["expect"], result.summary()
    assert result.ok == (not entry["expect"])


def test_corpus_covers_every_escape_hatch_code():
    seen = {code for e in ENTRIES for code in e["expect"]}
    hatches = {
        "assume",
        "admit",
        "external_body",
        "external",
        "assume_specification",
        "exec_allows_no_decreases_clause",
        "axiom",
        "attribute_not_allowed",
        "bodiless_declaration",
        "unsafe",
        "extern",
        "macro_rules",
        "include",
        "module",
        "declaration_not_allowed",
        "outside_verus_block",
        "no_verus_block",
        "reserved_name",
        "spec_decl_missing",
        "spec_decl_changed",
        "redefines_spec_decl",
        "target_missing",
        "target_header_changed",
        "odd_character",
        "syntax",
        "no_ensures",
        "several_targets",
        "target_kind",
    }
    assert hatches <= seen, sorted(hatches - seen)
    assert seen <= set(REASONS)


# ------------------------------------------------------------------------------ specs


def test_spec_parts():
    assert MAX_SPEC.target_name == "max_element"
    assert [h.name for h in MAX_SPEC.helpers] == ["is_upper_bound"]
    assert MAX_SPEC.has_block and MAX_SPEC.block_open and not MAX_SPEC.has_main
    assert MAX_SPEC.target.open_body
    assert MAX_SPEC.target.header.endswith("exists|i: int| 0 <= i < a.len() && a[i] == max,")
    dataset = parse_spec(read("spec_abs_dataset.rs"))
    assert not dataset.block_open and dataset.has_main and not dataset.target.open_body
    bare = parse_spec(read("spec_bare.rs"))
    assert not bare.has_block and [h.name for h in bare.helpers] == ["triple_spec"]


def test_parse_spec_raises_one_line_spec_error_with_every_reason():
    text = read("bad_assume_helper.rs").replace("    ensures\n        r == x * x,\n", "")
    with pytest.raises(SpecError) as info:
        parse_spec(text)
    assert isinstance(info.value, UserError) and "\n" not in str(info.value)
    assert info.value.reasons == ["assume", "no_ensures"]


def test_spec_main_and_uses_are_not_helpers():
    spec = parse_spec(
        "use vstd::prelude::*;\nverus! {\nuse vstd::seq::*;\nfn main() {}\n"
        "fn t(x: u8) -> (r: u8)\n    ensures r == x,\n{\n"
    )
    assert spec.helpers == () and spec.target_name == "t" and spec.has_main


def test_escape_hatches_in_specs_are_refused_like_in_solutions():
    for hatch, code in (("proof { admit(); }", "admit"), ("unsafe { }", "unsafe")):
        text = read("spec_abs_dataset.rs").replace(
            "    if x < 0 { -x } else { x }\n}\n\nfn main",
            f"    {hatch}\n    if x < 0 {{ -x }} else {{ x }}\n}}\n\nfn main",
        )
        assert [p.code for p in inspect_spec(text)[1]] == [code]


def test_only_a_function_may_end_a_spec_open():
    codes = [
        p.code for p in inspect_spec("verus! {\nfn t(x: u8) -> (r: u8) ensures r == x { x }\nstruct S {\n")[1]
    ]
    assert codes == ["syntax"]


def test_empty_and_non_text_specs():
    assert [p.code for p in inspect_spec("// only a comment\n")[1]] == ["empty"]
    assert [p.code for p in inspect_spec(None)[1]] == ["syntax"]  # type: ignore[arg-type]
    assert [p.code for p in inspect_spec("x" * 100_001)[1]] == ["too_large"]


# ------------------------------------------------------------------------------ solutions


def test_honest_solution_with_a_spec_given_as_text():
    assert screen_solution(read("spec_max.rs"), HONEST).ok
    with pytest.raises(SpecError):
        screen_solution(read("bad_no_ensures.rs"), HONEST)


def test_helpers_may_be_reordered_and_solver_helpers_added():
    helper = (
        "spec fn is_upper_bound(s: Seq<i32>, m: i32) -> bool {\n"
        "    forall|i: int| 0 <= i < s.len() ==> #[trigger] s[i] <= m\n}\n"
    )
    moved = HONEST.replace("// The largest element of a non-empty vector.\n" + helper, "")
    moved = moved.replace("fn main() {}", helper + "\nspec fn extra(x: int) -> int { x }\n\nfn main() {}")
    assert moved != HONEST
    assert screen_solution(MAX_SPEC, moved).ok


def test_extract_spec_part():
    part = extract_spec_part(read("spec_max.rs"), read("h_helper_changed.rs"))
    assert set(part) == {"is_upper_bound", "max_element"}
    assert part["max_element"] == MAX_SPEC.target.header
    assert part["is_upper_bound"].endswith("s[i] <= m || true\n}")
    assert extract_spec_part(MAX_SPEC, read("h_helper_missing.rs")) == {"max_element": MAX_SPEC.target.header}
    assert extract_spec_part(MAX_SPEC, "fn (") is None


def test_blank_difference_between_header_and_body_is_allowed_but_not_inside():
    spaced = HONEST.replace("a[i] == max,\n{", "a[i] == max,\n  // the body\n  {")
    assert screen_solution(MAX_SPEC, spaced).ok
    reindented = HONEST.replace("    requires\n        a.len() > 0,", "    requires a.len() > 0,")
    result = screen_solution(MAX_SPEC, reindented)
    assert result.reasons == ["target_header_changed"]
    assert "byte for byte" in result.problems[0].detail


def test_header_difference_is_described():
    renamed = HONEST.replace("fn max_element(a: &Vec<i32>)", "fn max_element(v: &Vec<i32>)")
    detail = screen_solution(MAX_SPEC, renamed).problems[0].detail
    assert detail.startswith("signature changed") and "v: &Vec<i32>" in detail
    moded = HONEST.replace("fn max_element(a", "pub fn max_element(a")
    assert "declared as 'pub fn'" in screen_solution(MAX_SPEC, moded).problems[0].detail
    added = read("h_requires_added.rs")
    assert "added requires a.len() > 0, a.len() == 1" in screen_solution(MAX_SPEC, added).problems[0].detail


def test_every_reason_is_reported_once_per_line_with_lines():
    text = HONEST.replace("    max\n}", "    proof { assume(false); assume(true); admit(); }\n    max\n}")
    result = screen_solution(MAX_SPEC, text)
    assert result.reasons == ["assume", "admit"]
    assert [(p.code, p.line) for p in result.problems] == [("assume", 31), ("admit", 31)]
    assert result.summary().startswith("refused: assume (line 31: 'assume')")
    assert result.to_dict()["problems"][0] == {"code": "assume", "detail": "'assume'", "line": 31}
    assert ScreenResult(True, []).summary() == "accepted"


def test_words_outside_code_never_count():
    for text in (
        '    let _s = "external_body assume admit unsafe extern axiom";\n',
        '    // #[verifier::external_body] unsafe { assume(false) } include!("x")\n',
        "    /* macro_rules! mod impl trait */\n",
    ):
        assert screen_solution(MAX_SPEC, HONEST.replace("    max\n}", text + "    max\n}")).ok, text


def test_non_text_solution():
    assert screen_solution(MAX_SPEC, 3).reasons == ["syntax"]  # type: ignore[arg-type]


def test_attribute_lists_are_disjoint_and_every_denied_key_has_a_code():
    assert not ALLOWED_ATTRIBUTES & set(DENIED_ATTRIBUTES)
    assert set(DENIED_ATTRIBUTES.values()) <= set(REASONS)
    for key, code in DENIED_ATTRIBUTES.items():
        name = key.split("::", 1)[1]
        text = HONEST.replace("fn main() {}", f"#[verifier::{name}]\nfn main() {{}}")
        assert code in screen_solution(MAX_SPEC, text).reasons, key


@pytest.mark.parametrize(
    "attribute",
    ["#[verifier::spinoff_prover]", "#[verifier::opaque]", "#[allow(unused)]", "#[verifier::nonlinear]"],
)
def test_allowed_attributes_pass(attribute):
    text = HONEST.replace("fn main() {}", f"{attribute}\nproof fn lemma_ok() {{\n}}\n\nfn main() {{}}")
    assert screen_solution(MAX_SPEC, text).ok


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=40))
def test_any_line_comment_is_harmless(comment):
    text = HONEST.replace("    max\n}", f"    // {comment}\n    max\n}}")
    assert screen_solution(MAX_SPEC, text).ok


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_any_escaped_string_is_harmless(content):
    escaped = content.replace("\\", "\\\\").replace('"', '\\"')
    text = HONEST.replace("    max\n}", f'    let _s = "{escaped}";\n    max\n}}')
    assert screen_solution(MAX_SPEC, text).ok


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["assume(false)", "admit()", "r#assume(false)", "Tracked::assume_new()"]),
    st.text(alphabet=" \t", max_size=3),
    st.sampled_from(['"x"', "'c'", "/* c */", "'\"'", 'r#"x"#']),
)
def test_hatches_after_a_literal_or_comment_are_still_seen(hatch, blank, before):
    text = HONEST.replace("    max\n}", f"    let _x = {before};{blank}proof {{ {hatch}; }}\n    max\n}}")
    assert not screen_solution(MAX_SPEC, text).ok


@pytest.mark.parametrize(
    "text",
    [
        "#[" * 45_000,
        "verus! { fn f() ensures " + "| " * 45_000 + " {} }",
        "(" * 45_000 + ")" * 45_000,
        "verus! {" + "fn a() {}\n" * 9_000 + "}",
        "verus! { fn f() ensures x as S" + "<" * 45_000 + " {} }",
    ],
    ids=["open_attributes", "bars", "parens", "many_items", "angles"],
)
def test_hostile_texts_are_read_in_bounded_time(text):
    import time

    start = time.monotonic()
    result = screen_solution(MAX_SPEC, text)
    inspect_spec(text)
    assert not result.ok
    assert time.monotonic() - start < 20  # linear reading takes ~1 s here; a quadratic one takes minutes


def test_a_file_level_loop_isolation_attribute_is_allowed_and_others_are_not():
    # The released MBPP specs 8 and 46 open with it; it lets loops see earlier facts and
    # assumes nothing, as on a function. Other verifier attributes stay refused there.
    spec_text = read("spec_max.rs")
    spec, problems = inspect_spec("#![verifier::loop_isolation(false)]\n" + spec_text)
    assert spec is not None and problems == [], [p.detail for p in problems]
    spec, problems = inspect_spec("#![verifier::rlimit(infinity)]\n" + spec_text)
    assert spec is None and "attribute_not_allowed" in [p.code for p in problems]
    assert screen_solution(MAX_SPEC, "#![verifier::loop_isolation(false)]\n" + HONEST).ok
