"""Table 3's code-generation benchmark: the shipped problems are right (checked against
reference solutions with real GHC), samples are scored by running the tests, and the
summary is pass@1 and compile errors per trial."""

from __future__ import annotations

import shutil

import pytest

from selfplay.tracks.seq.codegen import completion_program, evaluate, load_mini, summary

pytestmark = pytest.mark.skipif(shutil.which("ghc") is None, reason="GHC is missing: apt-get install ghc")

# Our own reference solutions for the shipped problems.
SOLUTIONS = {
    "countVowels": "countVowels s = length [c | c <- s, c `elem` \"aeiouAEIOU\"]",
    "secondLargest": ("secondLargest xs = case reverse (uniq (sortInts xs)) of\n  (_:b:_) -> Just b\n  _ -> Nothing\n"
                      "  where\n    sortInts [] = []\n    sortInts (p:rest) = sortInts [y | y <- rest, y < p] ++ [p] ++ "
                      "sortInts [y | y <- rest, y >= p]\n    uniq (a:b:r) | a == b = uniq (b:r)\n"
                      "                 | otherwise = a : uniq (b:r)\n    uniq r = r"),
    "isPalindrome": "isPalindrome s = let t = map toLow s in t == reverse t\n  where toLow c = if c >= 'A' && c <= 'Z' "
                    "then toEnum (fromEnum c + 32) else c",
    "runningMax": "runningMax [] = []\nrunningMax (x:xs) = scanl max x xs",
    "collatzSteps": "collatzSteps n | n <= 1 = 0\n               | even n = 1 + collatzSteps (n `div` 2)\n"
                    "               | otherwise = 1 + collatzSteps (3 * n + 1)",
    "rotateLeft": "rotateLeft _ [] = []\nrotateLeft k xs = let m = k `mod` length xs in drop m xs ++ take m xs",
    "charFrequency": "charFrequency c s = length (filter (== c) s)",
    "pairSums": "pairSums xs = zipWith (+) xs (drop 1 xs)",
    "clampAll": "clampAll lo hi = map (max lo . min hi)",
    "digitsReversed": "digitsReversed 0 = [0]\ndigitsReversed n = go n\n  where go 0 = []\n        "
                      "go m = fromIntegral (m `mod` 10) : go (m `div` 10)",
}
CFG = {"seed": 1, "seq": {"verify": {"timeout": 5.0, "memory_mb": 1024}}}


def answer(code: str) -> str:
    return f"Here it is.\n```haskell\n{code}\n```\n"


def test_shipped_problems_are_right_and_completions_are_scored():
    problems = {p["name"]: p for p in load_mini()}
    assert len(problems) == 10 and set(problems) == set(SOLUTIONS)
    records = [{"key": f"k-{name}", "meta": {"problem": name},
                "outputs": [answer(f"{problems[name]['signature']}\n{code}"), answer(code)]}
               for name, code in SOLUTIONS.items()]
    # Wrong, non-compiling and unparseable samples for one problem.
    records.append({"key": "bad", "meta": {"problem": "pairSums"},
                    "outputs": [answer("pairSums xs = xs"), answer("pairSums xs = zipWith (+) xs"), "no code here"]})
    rows = evaluate(problems, records, CFG)
    good = [r for r in rows if r["gen_key"] != "bad"]
    assert all(r["passed"] for r in good), [(r["problem"], r.get("tests")) for r in good if not r["passed"]]
    bad = [r for r in rows if r["gen_key"] == "bad"]
    assert [r["passed"] for r in bad] == [False, False, False]
    assert [r["compile_error"] for r in bad] == [False, True, False]
    assert bad[2]["reason"] == "parse:no_code_block"


def test_summary_is_pass_at_1_and_compile_errors_per_trial():
    rows = [{"problem": "a", "passed": True, "compile_error": False},
            {"problem": "a", "passed": False, "compile_error": True},
            {"problem": "b", "passed": False, "compile_error": True},
            {"problem": "b", "passed": False, "compile_error": True}]
    s = summary(rows)
    assert s["pass_at_1"] == pytest.approx(25.0) and s["compile_errors"] == pytest.approx(1.5)
    assert summary([])["pass_at_1"] is None


def test_a_bare_equation_gets_the_signature():
    problem = load_mini()[0]
    code, _ = completion_program(problem, answer(f"{problem['entry_point']} s = 0"))
    assert code.startswith(problem["signature"])


def test_table3_says_when_an_agent_had_no_trained_adapter(tmp_path):
    from selfplay.records import write_jsonl
    from selfplay.report.seq import table3

    def scored(agent, adapter, passed):
        path = tmp_path / f"{agent}.scored.jsonl"
        write_jsonl(path, [{"problem": "a", "sample": 0, "passed": passed, "compile_error": False,
                            "adapter": adapter}])
        return str(path)

    files = {("mini", "base"): scored("base", None, False),
             ("mini", "alice"): scored("alice", "results/seq/x/round2/adapter_alice", True),
             ("mini", "bob"): scored("bob", None, True)}  # Bob's training had no examples
    frame = table3(files, ["mini"], str(tmp_path / "t3.csv"), str(tmp_path / "t3.md"))
    assert list(frame["Pass@1 (%) Δ"]) == ["+100.0", "+100.0"]
    md = (tmp_path / "t3.md").read_text()
    assert "Bob: no adapter was trained in this run" in md and "Alice" not in md.split("no adapter")[0].split("\n")[-1]
    files[("mini", "bob")] = scored("bob", "results/seq/x/bob/adapter", True)
    table3(files, ["mini"], str(tmp_path / "t3.csv"), str(tmp_path / "t3.md"))
    assert "no adapter was trained" not in (tmp_path / "t3.md").read_text()
