"""MultiPL-E Haskell as its harness judges: the model continues the prompt, the
continuation is cut at the translator's stop sequences, and prompt + continuation +
tests runs as one program (runghc, pass iff exit status 0, 15 s for the program).
Fixture rows are written in the dataset's format (prompt, tests, stop_tokens)."""

from __future__ import annotations

import shutil

import pytest

from selfplay.evaluate.benchmark import Sample
from selfplay.evaluate.benchmarks import multipl_e as me
from selfplay.evaluate.modes import EvalMode

needs_ghc = pytest.mark.skipif(shutil.which("ghc") is None, reason="ghc not found (apt-get install ghc)")

PROMPT = "-- | Add two numbers.\n-- >>> add 2 3\n-- 5\nadd :: Int -> Int -> Int\nadd x y ="
TESTS = (
    "\nmain :: IO ()\nmain = do\n  let candidate = add\n"
    '  if candidate 2 3 == 5 then pure () else error "assertion failed"\n'
    '  if candidate (-1) 1 == 0 then pure () else error "assertion failed"\n'
    '  if candidate 1 2 == 3 then pure () else error "assertion failed"\n'
    "  pure ()"
)


def _rows():
    weird = TESTS.replace("if candidate (-1)", "when (candidate (-1)")  # a line no parser would read
    return [
        {
            "name": "HumanEval_0_add",
            "language": "hs",
            "prompt": PROMPT,
            "tests": TESTS,
            "stop_tokens": list(me.STOP_TOKENS),
        },
        {
            "name": "HumanEval_1_odd",
            "language": "hs",
            "prompt": PROMPT,
            "tests": weird,
            "stop_tokens": list(me.STOP_TOKENS),
        },
        {
            "name": "HumanEval_2_noprog",
            "language": "hs",
            "prompt": PROMPT,
            "tests": "-- nothing here\n",
            "stop_tokens": list(me.STOP_TOKENS),
        },
    ]


@pytest.fixture()
def parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    path = tmp_path / "humaneval-hs.parquet"
    pd.DataFrame(_rows()).to_parquet(path)
    return path


def test_the_continuation_is_cut_at_the_translators_stop_sequences():
    assert me.STOP_TOKENS == (
        "\n\n",
        "\n{-",
        "\ntype",
        "\ndata",
        "\nnewtype",
    )  # humaneval_to_hs.Translator.stop
    assert me.continuation(PROMPT, " x + y\n\nmain = print 1") == " x + y"
    assert me.continuation(PROMPT, "```haskell\n x + y\n{- note -}\n```") == " x + y"
    # a chat answer that repeats the prompt: what follows the equation's head
    assert me.continuation(PROMPT, "```haskell\nadd :: Int -> Int -> Int\nadd x y = x + y\n```") == " x + y"


def test_items_keep_prompt_and_tests_verbatim(parquet):
    items, skipped = me.multipl_e_items(str(parquet))
    assert skipped == [] and [i["id"] for i in items] == [
        "HumanEval_0_add",
        "HumanEval_1_odd",
        "HumanEval_2_noprog",
    ]
    assert items[0]["prompt"] == PROMPT and items[0]["tests"] == TESTS
    assert items[0]["tests_value"].count("if candidate") == 3  # no line dropped
    assert "selfplayTests :: Maybe ()" in items[0]["tests_value"] and "main" not in items[0]["tests_value"]
    assert items[2]["tests_problem"] and items[2]["tests_value"] is None
    messages = me.HumanEvalHs().messages(items[0], cot=False)
    assert PROMPT in messages[1]["content"] and "Continue" in messages[1]["content"]


@needs_ghc
def test_the_whole_program_is_the_verdict(parquet):
    items, _ = me.multipl_e_items(str(parquet))
    by_id = {i["id"]: i for i in items}
    answers = [
        ("HumanEval_0_add", "```haskell\n x + y\n```"),  # right
        ("HumanEval_0_add", "```haskell\n x - y\n```"),  # wrong
        ("HumanEval_0_add", "```haskell\n x + y + length [1 ..]\n```"),  # never ends
        ("HumanEval_0_add", "```haskell\n x +\n```"),  # does not compile
        ("HumanEval_0_add", " x + y\n\nadd _ _ = 0"),  # the stop cuts the second equation
        ("HumanEval_1_odd", "```haskell\n x + y\n```"),  # `when` is not in scope: GHC says so
        ("HumanEval_2_noprog", "```haskell\n x + y\n```"),  # the row has no main: a failure
    ]
    samples = [Sample(i, n, t) for n, (i, t) in enumerate(answers)]
    cfg = {"evaluation": {"benchmarks": {"humaneval_hs": {"timeout": 15.0, "memory_mb": 1024}}}}
    rows = me.HumanEvalHs().score(by_id, samples, EvalMode("s", 1, False, "single", {}), cfg, workers=2)
    assert [r["passed"] for r in rows] == [True, False, False, False, True, False, False], rows
    assert rows[1]["reason"] == "exception:ErrorCall"
    assert rows[2]["reason"] in ("timeout", "killed")
    assert rows[3]["compile_error"] and rows[5]["compile_error"]
    assert rows[6]["reason"].startswith("tests:")
    assert me.ghc_settings({"timeout": 15.0, "memory_mb": 1024}).run_timeout == 15.0


def test_the_revision_is_a_pinned_commit():
    from selfplay.evaluate.pins import check_revision

    url = me.HumanEvalHs.downloads[0]["url"].format(revision=me.REVISION)
    assert check_revision(url) == me.REVISION and len(me.REVISION) == 40
