"""docs/paper-map.md: every output of rule `all`, for every shipped config, with its rule,
script and library functions (selfplay.docs_gen.paper_map), and the page kept current.

The whole map loads the workflow once per shipped config (about 15 s for the nine), so the
full comparison is marked slow; the embedded default's part is checked in the fast tier.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from selfplay.docs_gen import paper_map
from selfplay.errors import UserError

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / paper_map.PAGE


@pytest.fixture(scope="module")
def default_map():
    return paper_map.map_config(REPO, ())


def test_shipped_configs_pair_each_regime_overlay_with_its_paper_config():
    shipped = paper_map.shipped_configs(REPO)
    assert shipped[0] == ()
    assert ("config/papers/seq.yaml", "config/papers/seq_e2.yaml") in shipped
    assert ("config/papers/gasp.yaml",) in shipped
    papers = sorted(p.name for p in (REPO / "config" / "papers").glob("*.yaml"))
    assert sorted(Path(c[-1]).name for c in shipped[1:]) == papers


def test_default_config_every_output_of_all_is_in_the_committed_map(default_map):
    """Rule all's inputs (read from the loaded workflow, not from the track lists the map is
    grouped by) each appear in the page under the default config's headings."""
    assert len(default_map.targets) > 50
    assert paper_map.missing_outputs(PAGE.read_text(), [default_map]) == []


def test_default_config_rows_are_current(default_map):
    """Each row the default config gives today is in the committed page, word for word."""
    fresh = paper_map.render(REPO, [default_map])
    committed = PAGE.read_text().splitlines()
    rows = [line for line in fresh.splitlines() if line.startswith("| ") and "| ---" not in line]
    assert len(rows) > 40
    stale = [row for row in rows if row not in committed]
    assert stale == [], "docs/paper-map.md is not current: run `selfplay docs`"


def test_a_missing_output_is_reported(default_map):
    """The check can fail: drop the row of paper 000's Table 4 from the page."""
    page = PAGE.read_text()
    target = "results/tables/seq/default/table4.md"
    assert target in default_map.targets
    cut = "\n".join(line for line in page.splitlines() if f"`{target}`" not in line)
    assert paper_map.missing_outputs(cut, [default_map]) == [f"{paper_map.config_label(())}: {target}"]


def test_loop_made_benchmark_outputs_reach_their_function(default_map):
    """The outputs the rules make in loops (paper 000's Tables 4-5 and Figures 4-5) map to a
    rule, its script and the library function, not only to a path."""
    rows = {o.paths[0]: o for o in default_map.sections["seq"]}
    table4 = rows["results/tables/seq/default/table4.md"]
    assert (table4.name, table4.rule, table4.script) == (
        "Table 4",
        "seq_table4",
        "workflow_scripts/eval_base_vs_trained.py",
    )
    assert table4.functions == ["selfplay.report.evaluation.base_vs_trained"]
    figure5 = rows["results/figures/seq/default/figure5.png"]
    assert figure5.functions == ["selfplay.report.evaluation.grouped_bars"]


def test_script_functions_follows_modules_aliases_and_passed_references(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(
        "from selfplay.pipeline.step import step\n"
        "from selfplay.report import evolve_seeds as seeds\n"
        "from selfplay.report.evaluation import grid_table\n"
        "from selfplay.tracks.gasp.rewards import TeacherRewards\n"
        "import json\n"
        "with step('x', 'log'):\n"
        "    draw = seeds.figure1 if True else seeds.figure2\n"
        "    draw(json.loads('{}'))\n"
        "    grid_table()\n"
        "    grid_table()\n"
        "    TeacherRewards.from_dict({})\n"
    )
    assert paper_map.script_functions(script, REPO / "src") == [
        "selfplay.report.evolve_seeds.figure1",
        "selfplay.report.evolve_seeds.figure2",
        "selfplay.report.evaluation.grid_table",
        "selfplay.tracks.gasp.rewards.TeacherRewards.from_dict",
    ]


def test_a_name_the_library_lacks_is_refused():
    paper_map.check_defined("selfplay.report.seq.table2", REPO / "src")
    paper_map.check_defined("selfplay.tracks.gasp.rewards.TeacherRewards.from_dict", REPO / "src")
    with pytest.raises(UserError, match="selfplay.report.seq.table99"):
        paper_map.check_defined("selfplay.report.seq.table99", REPO / "src")


@pytest.mark.slow
def test_committed_map_is_current_and_lists_every_output_of_every_shipped_config():
    text, maps = paper_map.generate(REPO)
    assert len(maps) == len(paper_map.shipped_configs(REPO)) >= 9
    assert paper_map.missing_outputs(PAGE.read_text(), maps) == []
    assert PAGE.read_text() == text, "docs/paper-map.md is not current: run `selfplay docs`"


def test_report_outputs_outside_all_are_listed_as_on_request(default_map):
    """Paper 000's Table 8 needs every regime's run, so `all` never builds it; the map still
    leads from it to its rule and function."""
    on_request = {o.name: o for o in default_map.on_request["seq"]}
    table8 = on_request["Table 8"]
    assert table8.rule == "seq_table8"
    assert "results/tables/seq/table8.md" in table8.paths
    assert table8.functions == ["selfplay.report.seq.table8"]
    assert not set(table8.paths) & set(default_map.targets)
