"""SInQ prompts: fixed layouts, required headings, own wording."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selfplay.tracks.sinq import prompts
from selfplay.tracks.sinq.examples import alice_difficulty_example, alice_main_example, bob_example
from selfplay.tracks.sinq.prompts import (
    ALICE_SYSTEM,
    BOB_SYSTEM,
    DIFFICULTY_QUESTION,
    alice_messages,
    bob_messages,
    difficulty_answer,
)

CODE_P = "def add(a, b):\n    return a + b"
CODE_Q = "def add(a, b):\n    return a + b if a else b"


def test_alice_user_message_layout():
    msgs = alice_messages(CODE_P, "add", 10)
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == ALICE_SYSTEM
    assert msgs[1]["content"] == (
        "Difficulty level: 10\nEntry point function: add\n\n```python\ndef add(a, b):\n    return a + b\n```"
    )


def test_alice_any_and_trailing_newline():
    msgs = alice_messages(CODE_P + "\n\n", "add", "Any")
    assert msgs[1]["content"] == (
        "Difficulty level: Any\nEntry point function: add\n\n```python\ndef add(a, b):\n    return a + b\n```"
    )


@pytest.mark.parametrize("bad", [-1, 11, "any", "ten", 3.0, True, None, "٣"])
def test_alice_rejects_bad_difficulty(bad):
    with pytest.raises(ValueError):
        alice_messages(CODE_P, "add", bad)


def test_bob_user_message_layout():
    msgs = bob_messages(CODE_P, CODE_Q, "add")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"] == BOB_SYSTEM
    assert msgs[1]["content"] == (
        "Entry point function: add\n\n"
        "Program 1:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
        "Program 2:\n\n```python\ndef add(a, b):\n    return a + b if a else b\n```"
    )


def test_difficulty_answer():
    assert difficulty_answer(7) == "Difficulty level: 7"
    assert difficulty_answer(0) == "Difficulty level: 0"
    for bad in (-1, 11, 2.5, True):
        with pytest.raises(ValueError):
            difficulty_answer(bad)


def _level1_headings(text: str) -> list[str]:
    return re.findall(r"^# (.+)$", text, flags=re.M)


def test_system_prompts_name_the_exact_sections():
    assert _level1_headings(ALICE_SYSTEM) == ["Analysis", "Generated program", "Diverging input example"]
    assert _level1_headings(BOB_SYSTEM) == ["Analysis", "Equivalent?", "Diverging input example"]
    for text in (ALICE_SYSTEM, BOB_SYSTEM):
        assert "```python\n{" in text  # the dict-literal example in a python block
    assert "0 to 10" in ALICE_SYSTEM and '"Any"' in ALICE_SYSTEM
    assert "Yes" in BOB_SYSTEM and "No" in BOB_SYSTEM


def test_difficulty_question_fixes_answer_format():
    assert '"Difficulty level: D"' in DIFFICULTY_QUESTION
    assert "0 to 10" in DIFFICULTY_QUESTION


# Distinctive wording of the paper's own templates that must not reappear here.
PAPER_PHRASES = [
    "in the bottom decile or above",
    "top 1% or less of expert computer scientists",
    "think of how an example would propagate",
    "since they will have to be automatically parsed",
    "are picklable",
    "You are an expert computer scientist",
    "Predict the difficulty level of the instance",
    "do not write anything else",
    'your diverging example is a="foo"',
]


@pytest.mark.parametrize("phrase", PAPER_PHRASES)
def test_prompts_are_not_the_papers_sentences(phrase):
    for text in (ALICE_SYSTEM, BOB_SYSTEM, DIFFICULTY_QUESTION):
        assert phrase.lower() not in text.lower()


PAPER = Path("/work/shared/papers/001_3953b6d44a604198.txt")


@pytest.mark.skipif(not PAPER.is_file(), reason="paper text not available here")
def test_no_six_word_run_shared_with_paper_templates():
    text = PAPER.read_text(encoding="utf-8")
    start = text.find("# C Prompt templates")
    end = text.find("## D ", start)
    if start < 0:
        pytest.skip("appendix not found in paper text")
    words = re.findall(r"[a-z0-9]+", text[start:end].lower())
    grams = {tuple(words[i : i + 6]) for i in range(len(words) - 5)}
    for prompt in (ALICE_SYSTEM, BOB_SYSTEM, DIFFICULTY_QUESTION):
        ours = re.findall(r"[a-z0-9]+", prompt.lower())
        shared = [" ".join(ours[i : i + 6]) for i in range(len(ours) - 5) if tuple(ours[i : i + 6]) in grams]
        assert shared == []


def test_alice_main_example_relabels_with_rounded_difficulty():
    rec = alice_main_example(CODE_P, "add", "# Analysis\n...", 6.5)
    assert rec["prompt"] == alice_messages(CODE_P, "add", 7)
    assert rec["completion"] == [{"role": "assistant", "content": "# Analysis\n..."}]
    assert set(rec) == {"prompt", "completion"}


def test_alice_difficulty_example_layout():
    rec = alice_difficulty_example(CODE_P, "add", "OUT", 2.5)
    assert rec["prompt"][:2] == alice_messages(CODE_P, "add", "Any")
    assert rec["prompt"][2:] == [
        {"role": "assistant", "content": "OUT"},
        {"role": "user", "content": DIFFICULTY_QUESTION},
    ]
    assert rec["completion"] == [{"role": "assistant", "content": "Difficulty level: 3"}]


def test_bob_example_layout():
    rec = bob_example(CODE_P, CODE_Q, "add", "ANSWER")
    assert rec == {
        "prompt": bob_messages(CODE_P, CODE_Q, "add"),
        "completion": [{"role": "assistant", "content": "ANSWER"}],
    }


def test_example_records_do_not_share_message_lists():
    a = alice_difficulty_example(CODE_P, "add", "OUT", 9.0)
    b = alice_main_example(CODE_P, "add", "OUT", 9.0)
    assert len(b["prompt"]) == 2 and len(a["prompt"]) == 4
    assert prompts.ANY_DIFFICULTY == "Any"
