"""The tracks (one per paper) this workflow knows: the one list every shared part reads.

A track named ``<name>`` is: its config section ``<name>`` (schema fragment
``src/selfplay/tracks/<name>/schema.json``), its package ``selfplay.tracks.<name>``
(prompts, parsing, verification, training examples, tables; ``settings.check(cfg)``
builds its components' settings when the workflow starts) and its rules file
``rules/<name>.smk``, which registers its report targets and bundle parts. The rule
`all`, the end-of-run summary, bundles, the report and the config check all loop over
this list; adding a paper is one line here (docs/adding-a-track.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Track:
    name: str  # config section, package and rules file name
    title: str  # how summaries and the report name it
    paper: str  # the paper it reproduces (shared/papers/README.md)


TRACKS: dict[str, Track] = {
    t.name: t
    for t in (
        Track("sinq", "SInQ (Python)", "001: Program Semantic Inequivalence Game"),
        Track("seq", "Haskell track", "000: Semantic equivalence self-play with formal verification"),
        Track("psv", "PSV (Dafny/Verus)", "003: Propose, Solve, Verify: self-play with formal verification"),
        Track("evolve", "EvolveCoder", "002: EvolveCoder: adversarial test-case evolution for code RL"),
        Track("gasp", "GASP", "004: GASP: Guided Asymmetric Self-Play for Coding LLMs"),
    )
}
