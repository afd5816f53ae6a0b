"""A vault copied from a Mac names files decomposed (NFD: "Café" as "Cafe" + U+0301, "デ" as
"テ" + U+3099) while the links in its notes are typed composed (NFC): both are the same name,
as they are to Obsidian, for links, `check`, `get` and the graph."""

import json
import unicodedata

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


def nfd(name: str) -> str:
    return unicodedata.normalize("NFD", name)


@pytest.fixture()
def mac_vault(tmp_path):
    """A workspace whose raw/ holds two notes named decomposed and links typed composed."""
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path / "ws")]).exit_code == 0
    raw = tmp_path / "ws" / "raw"
    (raw / nfd("Café notes.md")).write_text("# Coffee\n\nOn the way to [[Résumé]].\n",
                                             encoding="utf-8")
    (raw / nfd("データ.md")).write_text("# Data\n\nSee [[Café notes]].\n", encoding="utf-8")
    (raw / "Résumé.md").write_text("# Résumé\n\nBack to [[Café notes]] and [[データ]].\n",
                                   encoding="utf-8")
    result = runner.invoke(cli, ["ingest", "-C", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    return tmp_path / "ws"


def test_a_composed_link_reaches_a_decomposed_file_name(mac_vault):
    result = CliRunner().invoke(cli, ["check", "--json", "-C", str(mac_vault)])
    findings = json.loads(result.output)["findings"]
    assert [f for f in findings if f["kind"] in ("broken-link", "no-backlinks")] == []
    links = CliRunner().invoke(cli, ["links", "Résumé", "--json", "-C", str(mac_vault)])
    assert links.exit_code == 0, links.output
    outgoing = json.loads(links.output)["outgoing"]
    assert {link["status"] for link in outgoing} == {"resolved"}
    assert sorted(link["page"] for link in outgoing) == [nfd("Café notes.md"), nfd("データ.md")]


@pytest.mark.parametrize(("name", "title"), [("Café notes", "Coffee"), ("データ", "Data"),
                                             ("café NOTES.md", "Coffee")])
def test_get_finds_a_decomposed_page_by_its_composed_file_name(mac_vault, name, title):
    result = CliRunner().invoke(cli, ["get", name, "-C", str(mac_vault)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"# {title}\n")
