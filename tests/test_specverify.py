"""The verifier front-end shared by Dafny and Verus (selfplay.specverify): each helper on
its own, the check/verify flow over a test double of a back-end (FlowDouble below:
it runs nothing, it answers from tables), and that both real back-ends go through it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from selfplay.dafny import checks as dafny_checks
from selfplay.dafny import runner as dafny_runner
from selfplay.dafny import screen as dafny_screen
from selfplay.dafny import source as dafny_source
from selfplay.errors import UserError
from selfplay.specverify import brackets, lexing, runs
from selfplay.specverify import screen as front
from selfplay.specverify.checks import Backend
from selfplay.specverify.clauses import Clause, clause_difference
from selfplay.specverify.problems import Problem, Problems, ScreenResult, SpecError
from selfplay.verus import checks as verus_checks
from selfplay.verus import declarations as verus_declarations
from selfplay.verus import lexer as verus_lexer
from selfplay.verus import problems as verus_problems
from selfplay.verus import runner as verus_runner

# ------------------------------------------------------------------------- lexing


def test_line_comment_ends_at_the_line_ends_it_is_given():
    text = "x // a\rb\nc"
    assert lexing.comment_at(text, 2) == (text.index("\n"), True)  # Rust: only \n ends it
    assert lexing.comment_at(text, 2, "\n\r") == (text.index("\r"), True)  # Dafny: \r too


def test_block_comments_nest_and_an_open_one_runs_to_the_end():
    text = "/* a /* b */ still */ code"
    assert lexing.comment_at(text, 0) == (text.index(" code"), True)
    assert lexing.comment_at("/* /* */ open", 0) == (len("/* /* */ open"), False)
    assert lexing.comment_at("x / y", 2) is None


def test_line_of_and_odd_characters():
    assert [lexing.line_of("a\nb\nc", k) for k in (0, 2, 4)] == [1, 2, 3]
    assert not any(lexing.is_odd(c) for c in "az~ \t\n\r")
    assert all(lexing.is_odd(c) for c in "\u00a0\u0430\x0b\x00")


def test_blank_keeps_newlines_and_length():
    assert lexing.blank("ab\ncd") == "  \n  "


# ------------------------------------------------------------------------- brackets


def tokens(*texts: str) -> list[SimpleNamespace]:
    out, at = [], 0
    for t in texts:
        out.append(SimpleNamespace(text=t, start=at))
        at += len(t) + 1
    return out


class Oops(UserError):
    pass


def test_brackets_are_paired_and_open_ones_returned_outermost_first():
    toks = tokens("{", "(", ")", "[", "]", "{", "{")
    partner, still_open = brackets.bracket_partners(" ".join(t.text for t in toks), toks, Oops)
    assert partner[:5] == [-1, 2, 1, 4, 3]
    assert still_open == [0, 5, 6]


def test_a_closing_bracket_of_the_wrong_kind_raises_the_given_error_with_lines():
    text = "(\n]"
    with pytest.raises(Oops, match=r"^line 2: '\]' closes '\(' opened on line 1$"):
        brackets.bracket_partners(
            text, [SimpleNamespace(text="(", start=0), SimpleNamespace(text="]", start=2)], Oops
        )
    with pytest.raises(Oops, match=r"^line 1: unmatched '\)'$"):
        brackets.bracket_partners(")", tokens(")"), Oops)


# ------------------------------------------------------------------------- problems


class TwoCodes(Problems):
    reasons = {"a": "first", "b": "second", "syntax": "s", "too_large": "t", "empty": "e"}


def test_problems_keep_a_code_once_per_line_and_sort_by_line():
    p = TwoCodes()
    p.add("b", "later", 3)
    p.add("a", "whole text")
    p.add("b", "again", 3)
    p.add("a", "on line 2", 2)
    assert [(x.code, x.line) for x in p.sorted()] == [("a", None), ("a", 2), ("b", 3)]
    assert p.codes() == ["a", "b"]
    p.drop("b", {3})
    assert p.result() == ScreenResult(
        False, ["a"], [Problem("a", "whole text"), Problem("a", "on line 2", 2)]
    )


def test_a_code_the_back_end_does_not_name_is_a_programming_error():
    with pytest.raises(AssertionError):
        TwoCodes().add("c", "unknown")


def test_screen_summary_and_spec_error_wording():
    result = ScreenResult(False, ["a"], [Problem("a", "why", 4), Problem("b", "whole")])
    assert result.summary() == "refused: a (line 4: why); b (whole)"

    class LangError(SpecError):
        language = "Lang "

    err = LangError([Problem("a", "why", 4), Problem("b", "whole")])
    assert str(err) == "not a valid Lang spec: a: line 4: why (and 1 more: b)"
    assert str(SpecError([Problem("a", "why")])) == "not a valid spec: a: why"


# ------------------------------------------------------------------------- screen flow


def test_read_source_records_too_large_empty_and_syntax():
    def lex(text):
        return SimpleNamespace(tokens=text.split(), unterminated=None)

    def parse(text):
        if "bad" in text:
            raise Oops("line 1: bad")
        return "program"

    read = dict(max_chars=10, lex=lex, parse=parse, syntax_error=Oops)
    for text, code, program in (
        ("x" * 11, "too_large", None),
        ("   ", "empty", None),
        ("bad", "syntax", None),
    ):
        p = TwoCodes()
        _, got = front.read_source(text, p, **read)
        assert (p.codes(), got) == ([code], program)
    p = TwoCodes()
    assert front.read_source("fine", p, **read)[1] == "program" and not p.items


def decl(name, text, kind="fn", line=1, header=None):
    return SimpleNamespace(name=name, text=text, kind=kind, line=line, header=header or text)


class SpecPart(Problems):
    reasons = {
        c: c
        for c in (
            "spec_decl_missing",
            "spec_decl_changed",
            "redefines_spec_decl",
            "target_missing",
            "target_header_changed",
        )
    }


def compare(solution_decls, **kw):
    spec = SimpleNamespace(
        helpers=[decl("h", "H1"), decl("g", "G1")],
        target=decl("t", "T{}", header="T"),
        target_name="t",
    )
    p = SpecPart()
    found = front.compare_spec_part(
        spec,
        lambda n: [d for d in solution_decls if d.name == n],
        p,
        target_missing="no t",
        header_difference=lambda want, got: f"{want.header}->{got.header}",
        **kw,
    )
    return p, found


def test_spec_part_finds_missing_changed_and_redefined_declarations():
    p, found = compare(
        [decl("h", "H2", line=2), decl("t", "T{x}", header="T", line=3), decl("t", "T{y}", line=5)]
    )
    assert [(x.code, x.line) for x in p.items] == [
        ("spec_decl_changed", 2),
        ("spec_decl_missing", None),
        ("redefines_spec_decl", 5),
    ]
    assert found == {"h": "H2", "t": "T"}


def test_spec_part_words_a_changed_target_header_and_honours_target_like():
    p, _ = compare([decl("h", "H1"), decl("g", "G1"), decl("t", "U{}", header="U", line=7)])
    assert [(x.code, x.detail, x.line) for x in p.items] == [("target_header_changed", "T->U", 7)]
    p, _ = compare(
        [decl("h", "H1"), decl("g", "G1"), decl("t", "T", kind="struct")],
        target_like=lambda d: d.kind == "fn",
    )
    assert p.codes() == ["target_header_changed"]
    p, _ = compare([decl("h", "H1"), decl("g", "G1")])
    assert [(x.code, x.detail) for x in p.items] == [("target_missing", "no t")]


def header(sig: str, *clauses: tuple[str, str]) -> SimpleNamespace:
    text, objs = sig, []
    for kw, expr in clauses:
        start = len(text) + 1
        text += f" {kw} {expr}"
        objs.append(Clause(kw, f"{kw} {expr}", start, len(text), expr))
    return SimpleNamespace(header=text, start=0, clauses=tuple(objs))


@pytest.mark.parametrize(
    "got, said",
    [
        (
            header("fn f(y: int)", ("ensures", "r > 0")),
            "signature changed: 'fn f(y: int)' instead of 'fn f(x: int)'",
        ),
        (
            header("fn f(x: int)", ("ensures", "r > 1")),
            "clauses changed: removed ensures r > 0; added ensures r > 1",
        ),
        (header("fn f(x: int)", ("ensures", "r > 0"), ("ensures", "r > 0")), "clauses reordered"),
        (header("fn f(x: int)", ("ensures", "r  >  0")), "blanks or comments inside the header differ"),
    ],
)
def test_clause_difference_says_what_changed(got, said):
    want = header("fn f(x: int)", ("ensures", "r > 0"))
    assert clause_difference(want, got, verus_lexer.lex).startswith(said)


# ------------------------------------------------------------------------- the check flow


class FlowDouble(Backend):
    """A TEST DOUBLE back-end: specs are 'spec:<name>', a solution's verdict is looked
    up by its text; every verify call is recorded."""

    name = "tool"

    def __init__(self):
        self.calls: list[list[str]] = []

    def inspect_spec(self, text):
        if text.startswith("spec:"):
            return SimpleNamespace(target=SimpleNamespace(name=text[5:])), []
        return None, [Problem("syntax", "not a spec")]

    def spec_check_jobs(self, index, spec):
        checks = ["validity", "postconditions"] + (["preconditions"] if spec.target.name == "pre" else [])
        return [SimpleNamespace(name=f"{index}:{c}", text=c) for c in checks]

    def outcome_of(self, verdict, check):
        return verdict.outcome

    def spec_verdict(self, validity, preconditions, postconditions):
        from selfplay.specverify.spec_verdict import combine, verdict_reasons

        return combine(validity, preconditions, postconditions, verdict_reasons("invalid"))

    def solution_spec(self, spec):
        return (spec, None) if spec != "unreadable" else (None, "spec:syntax")

    def screen_solution(self, spec, text):
        return ScreenResult(text != "hatch", ["assume"] if text == "hatch" else [])

    def solution_job(self, name, spec, text):
        return SimpleNamespace(name=name, text=text)

    def verify(self, jobs, settings, sandbox):
        self.calls.append([j.name for j in jobs])
        table = {"validity": "verified", "postconditions": "refuted", "preconditions": "verified"}
        out = []
        for j in jobs:
            status = {"broken": "failed", "nothing": "verified", "good": "verified"}.get(j.text, "verified")
            out.append(
                SimpleNamespace(
                    status=status,
                    outcome=table.get(j.text),
                    messages=[f"m{k}" for k in range(8)],
                    proved=j.text == "good",
                    to_dict=lambda j=j: {"job": j.name},
                )
            )
        return out

    def target_proved(self, verdict, spec):
        return verdict.proved


def test_check_specs_runs_every_file_in_one_call_and_combines_the_outcomes():
    double = FlowDouble()
    records = double.check_specs(["spec:f", "nonsense", "spec:pre"])
    assert double.calls == [
        ["0:validity", "0:postconditions", "2:validity", "2:postconditions", "2:preconditions"]
    ]
    assert [(r["ok"], r["reason"]) for r in records] == [
        (True, None),
        (False, "spec:syntax"),
        (False, "vacuous_requires"),
    ]
    assert records[0]["checks"]["validity"] == {
        "outcome": "verified",
        "status": "verified",
        "messages": ["m0", "m1", "m2", "m3", "m4"],
    }
    assert list(records[1]) == ["ok", "reason", "detail", "target", "checks"]


def test_verify_solutions_reasons_and_record_shapes():
    double = FlowDouble()
    records = double.verify_solutions(
        [("s", "hatch"), ("s", "broken"), ("s", "nothing"), ("s", "good"), ("unreadable", "good")]
    )
    assert double.calls == [["1", "2", "3"]]  # one call for every screened solution
    assert [(r["verified"], r["reason"]) for r in records] == [
        (False, "screen:assume"),
        (False, "tool:failed"),
        (False, "target_not_verified"),
        (True, None),
        (False, "spec:syntax"),
    ]
    assert list(records[0]) == ["verified", "screen", "tool", "reason"]
    assert records[3]["tool"] == {"job": "3"}
    assert records[4] == {"verified": False, "reason": "spec:syntax", "screen": None, "tool": None}


# ------------------------------------------------------------------------- runs


def test_early_refusal():
    assert runs.early_refusal("fine") is None
    assert runs.early_refusal("a\x00b") == "the program contains a NUL character"
    assert runs.early_refusal("x" * 11, 10) == "the program is longer than 10 characters"


def test_borrowed_sandbox_closes_only_its_own(monkeypatch):
    import selfplay.sandbox

    made = []

    class Box:
        def __init__(self, **kw):
            self.kw, self.closed = kw, False
            made.append(self)

        def close(self):
            self.closed = True

    monkeypatch.setattr(selfplay.sandbox, "Sandbox", Box)
    given = Box()
    with runs.borrowed_sandbox(given, workers=3, tool_dirs=lambda: ["/t"], limits="L") as box:
        assert box is given
    assert not given.closed and len(made) == 1
    with runs.borrowed_sandbox(None, workers=3, tool_dirs=lambda: ["/t"], limits="L") as box:
        assert box.kw == {"workers": 3, "tool_dirs": ["/t"], "limits": "L"}
    assert box.closed


def test_add_stats_and_fill_missing():
    stats = {"processes": 1}
    runs.add_stats(stats, {"processes": 2, "retries": 1})
    runs.add_stats(None, {"processes": 5})
    assert stats == {"processes": 3, "retries": 1}
    assert runs.fill_missing(["a", None], lambda k: f"missing {k}") == ["a", "missing 1"]


# ------------------------------------------------------------------------- both back-ends


def test_both_back_ends_are_the_shared_flow():
    for module, name in ((dafny_checks, "dafny"), (verus_checks, "verus")):
        backend = module.BACKEND
        assert isinstance(backend, Backend) and backend.name == name
        assert type(backend).check_specs is Backend.check_specs
        assert type(backend).verify_solutions is Backend.verify_solutions


def test_both_parsers_match_brackets_with_the_shared_matcher(monkeypatch):
    seen = []
    real = brackets.bracket_partners

    def spy(text, toks, error):
        seen.append(error.__name__)
        return real(text, toks, error)

    for module in (dafny_source, verus_declarations):
        assert module.bracket_partners is real
        monkeypatch.setattr(module, "bracket_partners", spy)
    dafny_source.parse("method M() { }")
    verus_declarations.parse("verus! { fn f() { } }")
    assert seen == ["DafnySyntaxError", "VerusSyntaxError"]


def test_both_runners_take_the_early_verdict_from_the_front_end(monkeypatch):
    for module in (dafny_runner, verus_runner):
        assert module.early_refusal is runs.early_refusal
        monkeypatch.setattr(module, "early_refusal", lambda text: "refused by the front-end")
    d = dafny_runner._early_verdict(dafny_runner.DafnyJob("d", "method M() {}"))
    v = verus_runner._early_verdict(verus_runner.VerusJob("v", "fn main() {}"))
    assert (d.status, d.detail) == ("parse_error", "refused by the front-end")
    assert (v.status, v.detail) == ("compile_error", "refused by the front-end (not run)")


def test_both_readers_share_segments_clauses_and_problem_records():
    assert dafny_source.Segment is verus_lexer.Segment is lexing.Segment
    assert dafny_source.Clause is verus_declarations.Clause is Clause
    assert issubclass(dafny_screen._Problems, Problems) and issubclass(verus_problems.Problems, Problems)
    assert dafny_screen.ScreenResult is verus_problems.ScreenResult is ScreenResult
    assert issubclass(dafny_screen.SpecError, SpecError) and issubclass(verus_problems.SpecError, SpecError)
