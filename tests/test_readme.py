"""The front door and the manual stay short, true and inside the repository.

The README is a front door of about a hundred lines; every link in it and in docs/ leads
to a file that exists; every config file and make target it names exists; and nothing a
user reads points outside the repository (the papers are cited by title and link).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selfplay.tracks.registry import PAPERS, TRACKS

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
USER_FACING = [
    README,
    REPO / "CHANGELOG.md",
    REPO / "bench" / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "config").rglob("*.yaml")),
    REPO / "config.yaml",
    *sorted((REPO / "report").glob("*.rst")),
]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(path.read_text(encoding="utf-8")) if "://" not in t]


def test_the_readme_is_a_front_door_not_a_manual():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 120, f"README.md has {len(lines)} lines; move explanations to docs/"


def test_the_readme_names_every_track_and_links_its_paper_and_page():
    text = README.read_text(encoding="utf-8")
    for track in TRACKS.values():
        assert f"`{track.name}`" in text
        assert track.paper.url in text, track.paper.title
        assert (REPO / "docs" / f"{track.name}.md").is_file(), f"docs/{track.name}.md"
    assert len(PAPERS) == len(TRACKS)


@pytest.mark.parametrize(
    "path", [README, REPO / "bench" / "README.md", *sorted((REPO / "docs").glob("*.md"))], ids=str
)
def test_every_relative_link_leads_to_a_file(path):
    missing = [t for t in relative_links(path) if not (path.parent / t).exists()]
    assert not missing, f"{path.relative_to(REPO)} links to missing {missing}"


def test_the_readme_names_only_config_files_and_make_targets_that_exist():
    text = README.read_text(encoding="utf-8")
    configs = re.findall(r"--configfile ((?:config/\S+\.yaml ?)+)", text)
    assert configs
    for group in configs:
        for path in group.split():
            assert (REPO / path).is_file(), path
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    for target in re.findall(r"`make ([a-z-]+)`|^make ([a-z-]+)", text, flags=re.M):
        name = target[0] or target[1]
        assert name in targets, f"make {name}"


def test_every_track_has_its_manual_page_linked_from_the_index():
    index = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    for track in TRACKS.values():
        assert f"({track.name}.md)" in index
        assert track.paper.url in index


@pytest.mark.parametrize("path", USER_FACING, ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_a_user_reads_points_outside_the_repository(path):
    text = path.read_text(encoding="utf-8")
    for outside in ("../shared", "shared/papers", "shared/notes"):
        assert outside not in text, f"{path.relative_to(REPO)} cites {outside}"
    absolute = re.findall(r"(?:^|[\s`(])(/(?:work|home|root)/\S*)", text, flags=re.M)
    assert not absolute, f"{path.relative_to(REPO)} names a path on one machine: {absolute}"
