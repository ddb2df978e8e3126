"""Prompts for PSV's solver and proposer, in our own words.

What the paper fixes and the parser relies on:

* the solver gets one worked example (a spec and its verified implementation, written
  for this project) and then the spec to implement (paper Sec. 3, following
  AlphaVerus's one-shot setup). What it answers is config ``psv.solve.completion``:
  ``body`` (the paper's release: the target's body in one code block, from its ``{`` to
  its ``}``, optionally followed by proof helpers; the spec is put in front of it by
  :mod:`.completion`) or ``full_program`` (the whole program, spec copied byte for byte);
* the proposer gets ``k_prop`` pool problems, each shown with its difficulty class
  (``Problem i: EASY``; without the class in the difficulty-unaware ablation, Appendix
  G), is asked for one new spec of a target class, and answers ``# Reasoning`` and then
  the spec in one code block that ends with the target function's open brace
  (Appendix A).

The language (Dafny here, Verus on clusters) sets the fence tag and the worked example.
"""

from __future__ import annotations

from ...errors import UserError

CLASSES = ("EASY", "MEDIUM", "HARD", "IMPOSSIBLE")
FENCE = {"dafny": "dafny", "verus": "rust"}
LANGUAGE_NAME = {"dafny": "Dafny", "verus": "Verus (Rust)"}

# One worked example per language: a spec, and an implementation the verifier accepts. The
# Dafny one is a plain if/else: with a loop example the tiny model of the embedded default
# wrote loops into one-line problems and verified none of 42 samples; with this one, 3.
EXAMPLE_SPEC = {
    "dafny": (
        "method Max(a: int, b: int) returns (m: int)\n  ensures m >= a && m >= b\n  ensures m == a || m == b"
    ),
    "verus": (
        "use vstd::prelude::*;\n\n"
        "verus! {\n\n"
        "fn count_below(a: &Vec<i32>, t: i32) -> (c: usize)\n"
        "    ensures\n"
        "        c <= a.len(),"
    ),
}
# The implementations as body-format answers: the target's body and nothing else (the
# assembled program, spec + body, is checked to verify in tests/test_psv_completion.py).
EXAMPLE_BODY = {
    "dafny": ("{\n  if a >= b {\n    m := a;\n  } else {\n    m := b;\n  }\n}"),
    "verus": (
        "{\n"
        "    let mut c: usize = 0;\n"
        "    let mut i: usize = 0;\n"
        "    while i < a.len()\n"
        "        invariant\n"
        "            i <= a.len(),\n"
        "            c <= i,\n"
        "        decreases a.len() - i,\n"
        "    {\n"
        "        if a[i] < t {\n"
        "            c = c + 1;\n"
        "        }\n"
        "        i = i + 1;\n"
        "    }\n"
        "    c\n"
        "}"
    ),
}
COMPLETIONS = ("body", "full_program")
# The whole programs (the full_program format): the spec, the body, and for Verus main and
# the close of the verus! block.
EXAMPLE_SOLUTION = {
    "dafny": EXAMPLE_SPEC["dafny"] + "\n" + EXAMPLE_BODY["dafny"],
    "verus": EXAMPLE_SPEC["verus"] + "\n" + EXAMPLE_BODY["verus"] + "\n\nfn main() {}\n\n} // verus!",
}


def _check_language(language: str) -> None:
    if language not in FENCE:
        raise UserError(f"PSV language must be one of {sorted(FENCE)}, not {language!r}")


def block(language: str, text: str) -> str:
    return f"```{FENCE[language]}\n{text.strip(chr(10))}\n```"


def _check_completion(completion: str) -> None:
    if completion not in COMPLETIONS:
        raise UserError(f"psv.solve.completion must be one of {list(COMPLETIONS)}, not {completion!r}")


def solver_system(language: str, completion: str = "body") -> str:
    _check_language(language)
    _check_completion(completion)
    name = LANGUAGE_NAME[language]
    rules = (
        "Never use assume, axioms, bodiless helpers or attributes that turn verification "
        "off; such answers are rejected."
    )
    if completion == "body":
        return (
            f"You write {name} code that a formal verifier proves correct. You are given a "
            "specification: the signature of the last function with its preconditions "
            "(requires) and postconditions (ensures), after any spec-only helpers they use. "
            "Write only that function's body, from its opening curly brace to its closing "
            "one, with whatever loop invariants, assertions and proof blocks the verifier "
            "needs, so that every postcondition is proved. If the proof needs a lemma of your "
            "own, put it after the body. Do not repeat the signature, the requires or ensures "
            "clauses or any helper of the specification: your body is placed right after them "
            f"and the whole program is verified. {rules} Answer with the body in a single code block."
        )
    return (
        f"You write {name} code that a formal verifier proves correct. You are given a "
        "specification: a function's signature with its preconditions (requires) and "
        "postconditions (ensures), and any spec-only helpers they use. Write the body, "
        "with whatever loop invariants, assertions or proof helpers the verifier needs, "
        "so that every postcondition is proved. Copy the specification exactly as it is "
        f"given: a changed signature or contract does not count. {rules} "
        "Answer with the complete program in a single code block."
    )


def example_answer(language: str, completion: str = "body") -> str:
    """The shipped worked example's answer in the given answer format."""
    _check_completion(completion)
    return (EXAMPLE_BODY if completion == "body" else EXAMPLE_SOLUTION)[language]


def solver_messages(
    language: str, spec: str, exemplars: list[tuple[str, str]] | None = None, completion: str = "body"
) -> list[dict]:
    """The solver's chat: the worked example(s) as earlier turns, then the spec.

    ``exemplars`` (spec, verified answer in the ``completion`` format) replace the shipped
    worked example; the prompting baseline passes several in-domain ones (AlphaVerus-style
    few-shot)."""
    _check_language(language)
    shots = exemplars or [(EXAMPLE_SPEC[language], example_answer(language, completion))]
    messages = [{"role": "system", "content": solver_system(language, completion)}]
    for ex_spec, ex_answer in shots:
        messages.append({"role": "user", "content": solver_user(language, ex_spec, completion)})
        messages.append({"role": "assistant", "content": block(language, ex_answer)})
    messages.append({"role": "user", "content": solver_user(language, spec, completion)})
    return messages


def solver_user(language: str, spec: str, completion: str = "body") -> str:
    if completion == "body":
        return (
            "Write the body of the last function of this specification (only the body, "
            f"starting with its opening curly brace).\n\n{block(language, spec)}"
        )
    return f"Implement this specification.\n\n{block(language, spec)}"


def _example_heading(i: int, label: str | None) -> str:
    return f"Problem {i}: {label}" if label else f"Problem {i}"


def proposer_messages(language: str, target: str, examples: list[tuple[str, str | None]]) -> list[dict]:
    """The proposer's chat asking for one spec of class ``target``; ``examples`` are
    (spec, class or None): None hides the class (the difficulty-unaware ablation)."""
    _check_language(language)
    if target not in CLASSES:
        raise UserError(f"proposal target must be one of {CLASSES}, not {target!r}")
    name, fence = LANGUAGE_NAME[language], FENCE[language]
    labelled = any(label for _, label in examples)
    shown = "\n\n".join(
        f"{_example_heading(i, label)}\n{block(language, spec)}"
        for i, (spec, label) in enumerate(examples, 1)
    )
    about = (
        "Each example below is marked with how hard it was for the solver model: EASY "
        "(it almost always proved it), MEDIUM, HARD (it rarely did) or IMPOSSIBLE (never)."
        if labelled
        else "Here are some example problems."
    )
    user = (
        f"Write a new {name} function specification whose difficulty for the solver model "
        f"is {target}. A specification declares a function's inputs and result, its "
        "preconditions (requires) and postconditions (ensures), and any spec-only helper "
        "definitions those need.\n\n"
        "Think first, then give the specification. Use this layout:\n\n"
        "# Reasoning\n"
        "<what makes the examples easy or hard for the model, and your idea for a new problem>\n\n"
        f"```{fence}\n<the specification>\n```\n\n"
        f"{about}\n\n{shown}\n\n"
        f"Now write a problem that is {target} for the model: make problems that were too "
        "easy harder, make problems that were too hard easier, or combine ideas from "
        f"several. Put the specification in one ```{fence}``` block. Do not copy an example "
        "and do not write any implementation: end the target function with its opening "
        "curly brace `{`."
    )
    return [{"role": "user", "content": user}]
