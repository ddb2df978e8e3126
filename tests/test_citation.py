"""CITATION.cff cites the project and exactly the papers the registry says it reproduces.

The registry (src/selfplay/tracks/registry.py) is the one place a paper's title, authors,
year and arXiv identifier live; the citation file and the README must agree with it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from selfplay.tracks.registry import PAPERS, TRACKS

REPO = Path(__file__).resolve().parents[1]


def citation() -> dict:
    return yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))


def test_the_citation_file_has_the_fields_a_citation_tool_needs():
    cff = citation()
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "type", "license", "references"):
        assert cff.get(key), key
    assert (REPO / "LICENSE").read_text().startswith(f"{cff['license']} License")


def test_the_citation_file_cites_every_reproduced_paper_as_the_registry_names_it():
    refs = citation()["references"]
    assert len(refs) == len(PAPERS) == len(TRACKS)
    by_url = {r["url"]: r for r in refs}
    for paper in PAPERS.values():
        ref = by_url[paper.url]
        assert ref["title"] == paper.title
        assert ref["year"] == paper.year
        names = [f"{a['family-names']}, {a['given-names']}" for a in ref["authors"]]
        assert names == list(paper.authors)
        assert f"arXiv:{paper.arxiv}" in [i["value"] for i in ref["identifiers"]]


def test_every_track_reproduces_a_distinct_registered_paper():
    papers = [t.paper for t in TRACKS.values()]
    assert len({p.number for p in papers}) == len(papers)
    assert all(PAPERS[p.number] is p for p in papers)
