"""`mindgraph graph neighbors` when two pages are joined by several edges: a link each way
and a shared tag make one neighbour named by the link, "<>", with the tag as extra evidence."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

MUTUAL_VAULT = {
    "Project Atlas.md": "---\ntags: [atlas, team]\n---\n# Project Atlas\n\n"
                        "Led by [[Alice Chen]]; see [[Tile caching]].\n",
    "Alice Chen.md": "---\ntags: [team]\n---\n# Alice Chen\n\nWorks on [[Project Atlas]].\n",
    "Tile caching.md": "---\ntags: [atlas]\n---\n# Tile caching\n\nPart of [[Project Atlas]].\n",
    "Bob.md": "---\ntags: [team]\n---\n# Bob\n\nReads [[Project Atlas]].\n",
}


@pytest.fixture
def mutual_workspace(tmp_path):
    """A workspace whose wiki has pages linking each other and sharing tags."""
    for name, text in MUTUAL_VAULT.items():
        (tmp_path / "wiki").mkdir(exist_ok=True)
        (tmp_path / "wiki" / name).write_text(text, encoding="utf-8")
    return tmp_path


def _neighbors(workspace, *args):
    result = CliRunner().invoke(cli, ["graph", "neighbors", "Project Atlas", *args, "--json",
                                      "-C", str(workspace)])
    assert result.exit_code == 0, result.output
    return {n["path"]: (n["relation"], n["kind"], n["direction"], n["also"])
            for n in json.loads(result.stdout)["neighbors"]}


def test_mutual_links_are_wikilinks_both_ways_with_the_tag_as_evidence(mutual_workspace):
    found = _neighbors(mutual_workspace)
    assert found["Alice Chen.md"] == ("wikilink", "extracted", "both", ["shared_tag"])
    assert found["Tile caching.md"] == ("wikilink", "extracted", "both", ["shared_tag"])
    assert found["Bob.md"] == ("wikilink", "extracted", "in", ["shared_tag"])


def test_direction_out_keeps_the_link_and_its_real_direction(mutual_workspace):
    found = _neighbors(mutual_workspace, "--direction", "out")
    assert found["Alice Chen.md"][:3] == ("wikilink", "extracted", "both")
    # Bob only links in: with --direction out only the shared tag reaches him.
    assert found["Bob.md"] == ("shared_tag", "inferred", "both", ["wikilink"])


def test_links_only_shows_a_link_each_way_as_both(mutual_workspace):
    found = _neighbors(mutual_workspace, "--links-only")
    assert found == {"Alice Chen.md": ("wikilink", "extracted", "both", []),
                     "Bob.md": ("wikilink", "extracted", "in", []),
                     "Tile caching.md": ("wikilink", "extracted", "both", [])}


def test_text_output_shows_both_ways_and_the_extra_evidence(mutual_workspace):
    result = CliRunner().invoke(cli, ["graph", "neighbors", "Project Atlas",
                                      "-C", str(mutual_workspace)])
    assert "Alice Chen.md  (<> wikilink via Project Atlas.md; also shared_tag)" in result.stdout
