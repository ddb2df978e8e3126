"""Prompts for the Haskell track's players: Alice (SEQ, SINQ, proofs, difficulty
prediction) and Bob.

The wording is ours. What is fixed, because parsers and training records depend on
it, follows the paper's formats:

* Alice's program answer: a line ``Generated Program `Q`:`` followed by one fenced
  ``haskell`` block; in SINQ also ``Diverging Input `x`:`` followed by the input (the
  arguments as they would follow the function name in a call, e.g. ``3 [1,2]``);
* the proof answer: one fenced ``haskell`` block holding the lemma
  ``lemma_<P>_equiv`` (refinement annotation, Haskell signature, definition);
* Bob's answer: a heading ``# Equivalent?`` followed by ``Yes`` or ``No``;
* the difficulty scale 0..10 (or ``Any``) and the one-line answer ``Difficulty level: D``.

Reasoning goes between ``<think>`` and ``</think>``, which the user messages open, as
the paper's do.
"""

from __future__ import annotations

from ...curriculum.difficulty import ANY_DIFFICULTY, difficulty_answer  # noqa: F401  (same scale and answer line)
from ...curriculum.difficulty import prompt_level as _check_difficulty

THINK = "<think>"

_DIFFICULTY_SCALE = """\
The first line of the request gives the difficulty to aim for, an integer from 0 to \
10. Read it as how often a strong Haskell programmer who studies P and Q should get \
the question "are they equivalent?" wrong, in tenths: at 0 nearly everyone answers \
correctly at a glance, at 5 about half fail, at 10 only the very best reviewers (one \
in ten thousand or fewer) get it right. When the level is "Any", choose freely."""

ALICE_SEQ_SYSTEM = f"""\
You are an expert Haskell programmer who also writes Liquid Haskell proofs. You will \
be shown a Haskell function P. Write a new function Q that:
- is valid Haskell that compiles with GHC;
- computes exactly the same result as P for every argument (for all x, P x == Q x);
- gets there in a genuinely different way (a different recursion scheme, a fold \
instead of explicit recursion, an accumulator, a different decomposition), not by \
reordering operands or renaming variables;
- has a different name from P, for example P's name with `_alt` appended, and the \
same argument types and result type.

P and Q will be shown to a reviewer who has to decide whether they are equivalent, \
so make the equivalence hard to see. {_DIFFICULTY_SCALE}

Think first, inside <think> and </think>. Then write exactly:

Generated Program `Q`:
```haskell
<Q here, with its type signature>
```"""

ALICE_SINQ_SYSTEM = f"""\
You are an expert Haskell programmer who designs subtle bugs. You will be shown a \
Haskell function P. Write a new function Q with the same argument and result types \
that differs from P on at least one input: on that input the two return different \
values, or exactly one of them fails with an exception, or one of them finishes and \
the other does not. Also give one such diverging input, valid for both functions.

Keep Q close to P so that the difference is subtle; keep the diverging input small and \
simple. P and Q will be shown to a reviewer who has to find out whether they are \
equivalent, without seeing your input. {_DIFFICULTY_SCALE}

Think first, inside <think> and </think>: how P works and where a small change would \
alter its result for a few inputs only. Then write exactly this and nothing else:

Generated Program `Q`:
```haskell
<Q here, with its type signature>
```
Diverging Input `x`:
<the arguments, written as they follow the function name in a call, e.g. 3 [1,2]>"""

PROOF_SYSTEM = """\
You are an expert in Liquid Haskell. You will be given two reflected Haskell \
functions and must prove that they are equal for all arguments. The proof is a lemma \
named lemma_<P>_equiv, where <P> is the first function's name, with one binder per \
argument and the equality as its result refinement. The simplest form, for one Int \
argument, is:

```haskell
{-@ lemma_f_equiv :: x:Int -> { f x == f_alt x } @-}
lemma_f_equiv :: Int -> Proof
lemma_f_equiv x
  =   f x
  === f_alt x
  *** QED
```

For two arguments the annotation is `x:Int -> y:[Int] -> { f x y == f_alt x y }` and \
the Haskell signature `Int -> [Int] -> Proof`. Stronger techniques (case splits, \
induction by recursive calls to the lemma, `?` with helper lemmas you also prove) are \
welcome. Assumptions are not: the checker rejects `assume`, `lazy`, `ignore`, \
`undefined`, trusted or unchecked annotations and any pragma you add; the module \
header, the LIQUID options, the import of the proof combinators and the two \
reflected functions are supplied by the checker.

Answer with the lemma only (annotation, Haskell signature and definition), in one \
```haskell block, with no text outside it."""

BOB_SYSTEM = """\
You are an expert Haskell programmer. You will be shown two Haskell functions, P \
and Q, with the same argument and result types. Decide whether they are semantically \
equivalent: for every argument they return the same value, fail in the same way, or \
both fail to finish.

Reason it through, then end your answer with this heading and a one-word verdict:

# Equivalent?
Yes

or

# Equivalent?
No"""

DIFFICULTY_QUESTION = (
    "Estimate how hard this instance is: on the 0 to 10 scale, how often would a "
    "strong reviewer judge the equivalence of P and Q wrongly? Answer with one line, "
    '"Difficulty level: D", where D is your estimate, and nothing else.'
)

_RELATION = {
    "seq": "Q is semantically equivalent to P: the two behave identically on every input.",
    "sinq": "Q is semantically inequivalent to P: on some inputs the two behave differently.",
}


def _code_block(code: str) -> str:
    return "```haskell\n" + code.rstrip("\n") + "\n```"


def _argument_types(arg_types: list[str]) -> str:
    if len(arg_types) == 1:
        return "Its argument type is\n" + _code_block(f"t = {arg_types[0]}")
    lines = "\n".join(f"t{i} = {t}" for i, t in enumerate(arg_types, 1))
    return f"Its {len(arg_types)} argument types, in order, are\n" + _code_block(lines)


def alice_user_message(game: str, code: str, arg_types: list[str], difficulty: int | str) -> str:
    level = _check_difficulty(difficulty)
    if game == "seq":
        return (
            f"Difficulty level: {level}\nHere is the original Haskell function `P`:\n{_code_block(code)}\n"
            f"{_argument_types(arg_types)}\n"
            "Write `Q` as the system prompt asks: a different name (e.g. append `_alt`), a genuinely "
            "different implementation, no commentary outside the thinking block and the "
            "`Generated Program `Q`:` block. Prelude functions such as foldr, map or zipWith are "
            f"welcome.\n{THINK}\n"
        )
    if game == "sinq":
        return f"Difficulty level: {level}\nOriginal program `P`:\n{_code_block(code)}\n{THINK}\n"
    raise ValueError(f"unknown game {game!r} (seq or sinq)")


def alice_messages(game: str, code: str, arg_types: list[str], difficulty: int | str) -> list[dict]:
    system = ALICE_SEQ_SYSTEM if game == "seq" else ALICE_SINQ_SYSTEM
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": alice_user_message(game, code, arg_types, difficulty)},
    ]


def proof_user_message(
    name_p: str, name_q: str, code_p: str, code_q: str, arg_count: int, error: str | None = None
) -> str:
    """The proof request; on a retry, ``error`` is the checker's complaint about the last attempt."""
    binders = " ".join(f"x{i}" for i in range(1, arg_count + 1))
    retry = (
        (
            "Your previous proof was rejected. The checker said:\n```\n" + error.rstrip() + "\n```\n"
            "Fix the proof.\n\n"
        )
        if error
        else ""
    )
    skeleton = (
        '{-@ LIQUID "--reflection" @-}\n{-@ LIQUID "--ple" @-}\nmodule Equiv where\n'
        "import Language.Haskell.Liquid.ProofCombinators\n\n"
        f"{{-@ reflect {name_p} @-}}\n{code_p.rstrip()}\n\n{{-@ reflect {name_q} @-}}\n{code_q.rstrip()}\n\n"
        "-- your lemma goes here"
    )
    return (
        f"{retry}Prove that `{name_p} {binders} == {name_q} {binders}` for all arguments. The checker "
        f"assembles this module and adds your lemma at the end:\n{_code_block(skeleton)}\n{THINK}\n"
    )


def proof_messages(
    name_p: str, name_q: str, code_p: str, code_q: str, arg_count: int, error: str | None = None
) -> list[dict]:
    return [
        {"role": "system", "content": PROOF_SYSTEM},
        {"role": "user", "content": proof_user_message(name_p, name_q, code_p, code_q, arg_count, error)},
    ]


def bob_user_message(code_p: str, code_q: str) -> str:
    return f"Program `P`:\n{_code_block(code_p)}\n\nProgram `Q`:\n{_code_block(code_q)}\n{THINK}\n"


def bob_messages(code_p: str, code_q: str) -> list[dict]:
    return [
        {"role": "system", "content": BOB_SYSTEM},
        {"role": "user", "content": bob_user_message(code_p, code_q)},
    ]


def difficulty_prediction_messages(game: str, code_p: str, code_q: str) -> list[dict]:
    """The paper's difficulty-prediction request: P, Q and what relates them; the
    answer to train on is ``difficulty_answer(d)``."""
    if game not in _RELATION:
        raise ValueError(f"unknown game {game!r} (seq or sinq)")
    system = (
        f"Difficulty level: {ANY_DIFFICULTY}\nProgram P\n{_code_block(code_p)}\n\n{_RELATION[game]}\n"
        f"Program Q\n{_code_block(code_q)}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": DIFFICULTY_QUESTION}]
