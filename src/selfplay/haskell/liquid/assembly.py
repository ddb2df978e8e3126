"""Building the one file Liquid Haskell checks, from P, Q and the proof, laid out so::

    {-@ LIQUID "--reflection" @-}           -- only the checker writes LIQUID pragmas:
    {-@ LIQUID "--ple" @-}                  -- these two, then LiquidSettings.extra_options
    module Equiv where
    import Language.Haskell.Liquid.ProofCombinators
    import ...                              -- imports found in P / Q / proof, hoisted
                                            -- (allow-listed modules only)
    {-@ reflect f @-}
    <P>
    {-@ reflect f' @-}
    <Q, its function renamed to f' when it has P's name>
    <the proof>

Every part is scanned for escape hatches on the way (:mod:`.escape_hatches`); the file
is built even when something was refused, so it can be shown, but only an ``ok`` one
goes to the checker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lexer import is_identifier, lex
from .declarations import default_lemma_name, find_signature, q_file_name, rename
from .escape_hatches import LIQUID_PRAGMA_RE, scan_part
from .problems import Problem, ProblemList
from .settings import PROOF_MODULE, LiquidSettings


@dataclass(frozen=True)
class Assembled:
    """The file to check (always built, even when refused) and what was refused.

    ``part_lines`` maps ``p``/``q``/``proof`` to (first, last) 1-based lines in ``source``;
    line k of a part is line ``first + k - 1`` of the file (hoisted imports leave blanks).
    """

    source: str
    problems: tuple[Problem, ...]
    module_name: str
    lemma_name: str
    q_name_in_file: str
    part_lines: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def file_name(self) -> str:
        return f"{self.module_name}.hs"


def assemble(
    p_source: str,
    p_name: str,
    q_source: str,
    q_name: str,
    proof_code: str,
    settings: LiquidSettings | Mapping[str, Any] | None = None,
) -> Assembled:
    """Build the complete LH file (laid out as the module docstring shows) and record
    every escape hatch or structural problem in P, Q and the proof. The file is built
    even when refused, so it can be shown; only an ``ok`` one may be given to LH."""
    settings = LiquidSettings.coerce(settings)
    lemma = default_lemma_name(p_name)
    probs = ProblemList()
    p_source, q_source, proof_code = (
        t.replace("\r\n", "\n").replace("\r", "\n") for t in (p_source, q_source, proof_code)
    )
    for label, name in (("p", p_name), ("q", q_name)):
        if not is_identifier(name):
            probs.add("bad_name", f"{name!r} is not a plain Haskell variable name", label)
    q_file = q_file_name(p_name, q_name, p_source, q_source)
    scans = {}
    for where, text in (("p", p_source), ("q", q_source), ("proof", proof_code)):
        scan = scan_part(
            text,
            where,
            p_name=p_name,
            q_name=q_name,
            q_file=q_file,
            lemma=lemma,
            allowed_imports=settings.allowed_imports,
        )
        for pr in scan.problems:
            probs.add(pr.code, pr.detail, pr.where, pr.line)
        scans[where] = scan
    if find_signature(p_source, p_name) is None:
        probs.add("no_p_signature", f"{p_name} has no top-level type signature", "p")

    q_text = scans["q"].text
    if q_file != q_name:
        q_text = rename(q_text, q_name, q_file)

    header = [f'{{-@ LIQUID "{opt}" @-}}' for opt in settings.options]
    header += [f"module {settings.module_name} where", "", f"import {PROOF_MODULE}"]
    seen = {f"import {PROOF_MODULE}"}
    for where in ("p", "q", "proof"):
        for imp in scans[where].imports:
            if imp not in seen:
                seen.add(imp)
                header.append(imp)
    lines: list[str] = list(header)
    part_lines: dict[str, tuple[int, int]] = {}

    def add_part(where: str, comment: str, reflect: str | None, text: str) -> None:
        lines.extend(["", comment])
        if reflect:
            lines.append(f"{{-@ reflect {reflect} @-}}")
        body = text.split("\n")
        if len(body) > 1 and body[-1] == "":
            body.pop()  # the part's final newline
        first = len(lines) + 1
        lines.extend(body)
        part_lines[where] = (first, len(lines))

    add_part("p", "-- P: the reference program", p_name, scans["p"].text)
    add_part("q", "-- Q: the candidate program", q_file, q_text)
    add_part("proof", "-- The proof of equivalence", None, scans["proof"].text)
    source = "\n".join(lines) + "\n"

    # Defence in depth: the whole file must lex cleanly and hold exactly our pragmas.
    whole = lex(source, guarded=True)
    if whole.unterminated:
        probs.add("unterminated", f"the assembled file ends inside a {whole.unterminated}", "file")
    pragmas = [a for a in whole.annotations() if LIQUID_PRAGMA_RE.match("{-@" + a.inner)]
    if len(pragmas) != len(settings.options):
        probs.add(
            "liquid_pragma", "the assembled file holds LIQUID pragmas the checker did not write", "file"
        )
    return Assembled(source, tuple(probs.items), settings.module_name, lemma, q_file, part_lines)
