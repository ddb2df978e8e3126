"""The statement check: the lemma must say that P and Q agree on every argument, and
nothing more or less.

For ``f :: T1 -> .. -> Tn -> R`` (arity counted on the curried type, so
``Int -> (Int -> Int)`` has two arguments) the lemma must be named
``lemma_f_equiv`` and have exactly one refinement spec and one Haskell signature:

* spec ``{-@ lemma_f_equiv :: x1:T1 -> .. -> xn:Tn -> { f x1 .. xn == f' x1 .. xn } @-}``:
  one named binder per argument, binder types equal to P's argument types after
  whitespace/parenthesis normalisation (aliases are not resolved: ``String`` is not
  ``[Char]``), no refinement on any binder (not even a trivial one), no LH refined alias
  (``Nat``, ``Pos``, ...) among the binder types, distinct binder names that do not shadow
  P, Q or the lemma. The result is ``{ E }`` or ``{v:Proof | E}`` (``v`` not a binder),
  optionally followed by a termination metric ``/ [..]``. ``E`` is one equality (``==``,
  or LH's older ``=``; either side order; parentheses anywhere around the applications
  or their arguments) between P and Q applied to all binders in order; anything else
  (``&&``, ``||``, ``==>``, ``<=>``, ``not``, constants, fewer or more arguments, the same
  function on both sides) is refused. A class context in the spec may be left out, and
  when given must equal P's; abstract refinements (``forall <p :: ..>``) are refused; a
  spec over :data:`MAX_SPEC_TOKENS` tokens is refused unread (``spec_too_long``).
* Haskell signature ``lemma_f_equiv :: T1 -> .. -> Tn -> Proof`` (``()`` accepted as
  ``Proof``), with the same context as P.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lexer import (
    is_identifier,
    is_symbolic,
    lex,
    matching,
    split_top,
    strip_parens,
    tokens,
    top_level,
    unqualified,
)
from .declarations import default_lemma_name, parse_annotation, top_level_decls
from .settings import MAX_SPEC_TOKENS
from .type_shapes import normalised_type, parse_type_signature, split_prefix

# LH's predefined refined type aliases: a binder typed with one of them carries a hidden
# precondition, even when P's (plain Haskell) signature happens to use the same name.
LH_REFINED_ALIASES: frozenset[str] = frozenset(
    {
        "Nat",
        "Pos",
        "NonZero",
        "Even",
        "Odd",
        "TT",
        "FF",
        "ListN",
        "ListNE",
        "ListL",
        "ListX",
        "OList",
        "IncrList",
        "DecrList",
        "BNat",
        "Prop",
        "Ix",
    }
)


@dataclass(frozen=True)
class StatementCheck:
    """Outcome of :func:`check_statement`; ``binders`` are the lemma's argument names."""

    ok: bool
    reason: str | None
    detail: str
    binders: tuple[str, ...] = ()


_LOGICAL = frozenset({"&&", "||", "==>", "=>", "<=>", "<==>", "/=", "!=", "<", ">", "<=", ">=", "~~"})


def _application(toks: list[str], depth: int = 0) -> tuple[str, list[str]] | str:
    """Parse ``h a1 .. ak`` (parentheses allowed around the whole, the head application or
    each argument). Returns (head, args) or a problem code."""
    if depth > 64:
        return "wrong_arguments"
    toks = strip_parens(toks)
    if not toks:
        return "wrong_arguments"
    for t in toks:
        if is_symbolic(t) or t in (",", ";", "[", "]", "{", "}", "`"):
            return "extra_condition" if t in _LOGICAL else "wrong_arguments"
    atoms: list[list[str]] = []
    k = 0
    while k < len(toks):
        if toks[k] == "(":
            close = matching(toks, k)
            if close < 0:
                return "wrong_arguments"
            atoms.append(toks[k : close + 1])
            k = close + 1
        else:
            atoms.append([toks[k]])
            k += 1
    head_atom, rest = atoms[0], atoms[1:]
    if len(head_atom) > 1:
        inner = _application(head_atom, depth + 1)
        if isinstance(inner, str):
            return inner
        head, args = inner
    else:
        head, args = head_atom[0], []
    for atom in rest:
        a = strip_parens(atom)
        if len(a) != 1:
            return "wrong_arguments"
        args.append(a[0])
    return head, args


def check_statement(
    proof_code: str, *, p_name: str, q_name_in_file: str, p_type: str | None, lemma_name: str | None = None
) -> StatementCheck:
    """Accept only a lemma whose spec says P and Q are equal on all their arguments and
    whose Haskell signature matches (see the module docstring for the exact rules)."""
    lemma = lemma_name or default_lemma_name(p_name)

    def fail(reason: str, detail: str) -> StatementCheck:
        return StatementCheck(False, reason, detail)

    if p_type is None:
        return fail("no_p_signature", f"{p_name} has no top-level type signature")
    try:
        p_shape = parse_type_signature(p_type)
    except ValueError as exc:
        return fail("no_p_signature", f"P's signature cannot be read: {exc}")
    n = len(p_shape.args)
    lexed = lex(proof_code, guarded=True)
    specs = []
    for ann in lexed.annotations():
        kind, names, body = parse_annotation(ann.inner)
        if kind == "spec" and lemma in names:
            if len(names) > 1:
                return fail("several_specs", f"{lemma} shares its specification with {names}")
            specs.append(body)
    if not specs:
        return fail("no_spec", f"no {{-@ {lemma} :: ... @-}} specification")
    if len(specs) > 1:
        return fail("several_specs", f"{len(specs)} specifications for {lemma}")
    decls, _ = top_level_decls(lexed.view())
    sigs = [d for d in decls if d.kind == "signature" and lemma in d.names]
    if not sigs:
        return fail("no_haskell_signature", f"no Haskell signature '{lemma} :: ...'")
    if len(sigs) > 1 or len(sigs[0].names) > 1:
        return fail(
            "several_haskell_signatures", f"{lemma} has more than one Haskell signature, or shares one"
        )
    if not any(d.kind == "equation" and d.names == (lemma,) for d in decls):
        return fail("no_definition", f"{lemma} has no defining equation")

    # --- the refinement spec
    toks = tokens(specs[0])
    if len(toks) > MAX_SPEC_TOKENS:
        return fail("spec_too_long", f"{len(toks)} tokens (limit {MAX_SPEC_TOKENS})")
    if matching(["("] + toks + [")"], 0) != len(toks) + 1:
        return fail("result_not_refinement", "unbalanced brackets in the specification")
    _, ctx, body, problem = split_prefix(toks)
    if problem:
        return fail("spec_context_mismatch", f"specification: {problem}")
    if ctx and ctx != p_shape.context:
        return fail("spec_context_mismatch", f"context {ctx} differs from P's {p_shape.context}")
    segs = split_top(body, {"->"})
    binder_segs, result = segs[:-1], segs[-1]
    if len(binder_segs) != n:
        return fail(
            "wrong_arity", f"the specification has {len(binder_segs)} argument(s); {p_name} takes {n}"
        )
    binders: list[str] = []
    for k, seg in enumerate(binder_segs):
        if len(seg) < 3 or seg[1] != ":" or not is_identifier(seg[0]):
            return fail("binder_unnamed", f"argument {k + 1} ({' '.join(seg)}) is not of the form name:Type")
        name, btype = seg[0], seg[2:]
        if name in binders or name in (p_name, q_name_in_file, lemma):
            return fail("binder_bad_name", f"binder {name} is repeated or shadows a function")
        if any(t in ("{", "}", "|") or t.startswith("|") for t in btype):
            return fail("binder_refined", f"binder {name} has a refinement: {' '.join(btype)}")
        alias = next((t for t in btype if unqualified(t) in LH_REFINED_ALIASES), None)
        if alias:
            return fail("binder_refined_alias", f"binder {name} has type {alias}, an LH refined alias")
        if normalised_type(btype) != p_shape.args[k]:
            return fail(
                "binder_type_mismatch",
                f"binder {name} : {normalised_type(btype)}, but P's argument {k + 1} is {p_shape.args[k]}",
            )
        binders.append(name)

    # optional termination metric  / [ ... ]
    top = top_level(result)
    slash = next((k for k, t in top if t == "/"), -1)
    if slash >= 0:
        metric = result[slash + 1 :]
        if not (metric and metric[0] == "[" and matching(metric, 0) == len(metric) - 1):
            return fail("result_not_refinement", "unexpected '/' after the result")
        result = result[:slash]
    if not (result and result[0] == "{" and matching(result, 0) == len(result) - 1):
        return fail("result_not_refinement", f"the result {' '.join(result)} is not one {{ ... }} refinement")
    inner = result[1:-1]
    bar = next((k for k, t in top_level(inner) if t == "|"), -1)
    if bar >= 0:
        left, expr = inner[:bar], inner[bar + 1 :]
        if (
            len(left) < 3
            or left[1] != ":"
            or not is_identifier(left[0])
            or normalised_type(left[2:]) not in ("Proof", "( )")
        ):
            return fail("result_not_refinement", f"result binder {' '.join(left)} is not v:Proof")
        if left[0] in binders:
            return fail("result_binder_shadows", f"the result binder {left[0]} shadows an argument")
    else:
        expr = inner
    expr = strip_parens(expr)
    top_ops = [(k, t) for k, t in top_level(expr) if is_symbolic(t) or t in (",", ";")]
    eqs = [k for k, t in top_ops if t in ("==", "=")]
    if not eqs:
        if any(t in ("&&", "||", "==>", "=>", "<=>", "<==>") for _, t in top_ops):
            return fail("extra_condition", f"the refinement {' '.join(expr)} combines conditions")
        return fail("not_equality", f"{' '.join(expr)} is not an equality")
    if len(top_ops) != 1:
        return fail("extra_condition", f"the refinement {' '.join(expr)} is more than one equality")
    at = eqs[0]
    sides = []
    for side in (expr[:at], expr[at + 1 :]):
        parsed = _application(side)
        if isinstance(parsed, str):
            return fail(parsed, f"side {' '.join(side)} is not a function applied to the binders")
        sides.append(parsed)
    heads = [unqualified(h) for h, _ in sides]
    if sorted(heads) != sorted([p_name, q_name_in_file]):
        return fail(
            "wrong_function",
            f"the equality compares {heads[0]} with {heads[1]}; expected {p_name} and {q_name_in_file}",
        )
    for head, args in sides:
        if args != binders:
            want = " ".join([head, *binders])
            return fail("wrong_arguments", f"expected {want}, got {' '.join([head, *args])}")

    # --- the Haskell signature
    sig_type = sigs[0].text.split("::", 1)[1]
    try:
        shape = parse_type_signature(sig_type)
    except ValueError as exc:
        return fail("signature_mismatch", f"the Haskell signature cannot be read: {exc}")
    if shape.context != p_shape.context:
        return fail(
            "signature_context_mismatch", f"context {shape.context} differs from P's {p_shape.context}"
        )
    if shape.args != p_shape.args:
        return fail(
            "signature_mismatch", f"argument types {list(shape.args)} differ from P's {list(p_shape.args)}"
        )
    if shape.result not in ("Proof", "( )"):
        return fail("signature_result", f"the result type is {shape.result}, not Proof")
    call = " ".join(binders)
    return StatementCheck(
        True,
        None,
        f"{lemma} states {p_name} {call} == {q_name_in_file} {call}".replace("  ", " "),
        tuple(binders),
    )
