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
class Paper:
    """A reproduced paper as users cite it (CITATION.cff and docs/ are checked against this)."""

    number: str  # the project's short name for it: 000..004
    title: str
    authors: tuple[str, ...]  # "Family, Given" as on the paper
    year: int
    arxiv: str  # arXiv identifier

    @property
    def url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv}"


@dataclass(frozen=True)
class Track:
    name: str  # config section, package and rules file name
    title: str  # how summaries and the report name it
    paper: Paper  # the paper it reproduces


PAPERS: dict[str, Paper] = {
    p.number: p
    for p in (
        Paper(
            "000",
            "Improving LLM Code Reasoning via Semantic Equivalence Self-Play with Formal Verification",
            ("Miceli Barone, Antonio Valerio", "Poon, Tsz Nok"),
            2026,
            "2604.17010",
        ),
        Paper(
            "001",
            "Program Semantic Inequivalence Game with Large Language Models",
            ("Miceli-Barone, Antonio Valerio", "Belle, Vaishak", "Payani, Ali"),
            2025,
            "2505.03818",
        ),
        Paper(
            "002",
            "EvolveCoder: Evolving Test Cases via Adversarial Verification for Code Reinforcement Learning",
            ("Ruan, Chi", "Jiang, Dongfu", "Zeng, Huaye", "Nie, Ping", "Chen, Wenhu"),
            2026,
            "2603.12698",
        ),
        Paper(
            "003",
            "Propose, Solve, Verify: Self-Play Through Formal Verification",
            (
                "Wilf, Alex",
                "Aggarwal, Pranjal",
                "Parno, Bryan",
                "Fried, Daniel",
                "Morency, Louis-Philippe",
                "Liang, Paul Pu",
                "Welleck, Sean",
            ),
            2025,
            "2512.18160",
        ),
        Paper(
            "004",
            "GASP: Guided Asymmetric Self-Play For Coding LLMs",
            (
                "Jana, Swadesh",
                "Sancaktar, Cansu",
                "Daniš, Tomáš",
                "Martius, Georg",
                "Orvieto, Antonio",
                "Kolev, Pavel",
            ),
            2026,
            "2603.15957",
        ),
    )
}

TRACKS: dict[str, Track] = {
    t.name: t
    for t in (
        Track("sinq", "SInQ (Python)", PAPERS["001"]),
        Track("seq", "Haskell track", PAPERS["000"]),
        Track("psv", "PSV (Dafny/Verus)", PAPERS["003"]),
        Track("evolve", "EvolveCoder", PAPERS["002"]),
        Track("gasp", "GASP", PAPERS["004"]),
    )
}
