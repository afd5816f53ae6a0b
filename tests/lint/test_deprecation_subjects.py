"""deprecated-but-current names what a sentence actually deprecated: the "Property" *type*,
the *starred* core plugin, `Workspace` *functions*, not every page that says "property" or
links the core plugins page; and a term named on a large share of the pages is too generic
to be a removed thing. Measured on the real Obsidian vault, compiled through the CLI."""

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from test_lint import write_wiki

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph



def current(root: Path) -> list[tuple[str, str]]:
    report = Mindgraph(settings_from_dict({}, base_dir=root)).lint("offline")
    return sorted((f.page, f.message.split(" as current")[0].removeprefix("Describes "))
                  for f in report.findings if f.rule == "deprecated-but-current")


def test_a_removed_type_named_x_is_not_x_everywhere(tmp_path):
    write_wiki(tmp_path, {
        "Properties.md": "# Properties\n\nEvery note can carry properties of several types.\n",
        "Release.md": "# Release\n\nRemoved \"[[Properties|Property]]\" type from possible "
                      "property types.\n",
        "Filters.md": "# Filters\n\nThe filter menu shows the [[Properties|property]] type of "
                      "each column you pick.\n",
        "Old help.md": "# Old help\n\nPick the \"Property\" type to link one note's property "
                       "to another.\n"})
    # the Property type is only what a page calls the "Property" type, not any property type
    assert current(tmp_path) == [("Old help.md", "Property type")]


def test_a_modifier_before_a_linked_name_makes_the_subject(tmp_path):
    write_wiki(tmp_path, {
        "Core plugins.md": "# Core plugins\n\nCore plugins ship with the app and can be "
                           "turned off.\n",
        "v1.2.6.md": "---\ndate: 2023-03-01\n---\n# 1.2.6\n\nNow that Bookmarks are "
                     "available on mobile, the starred [[Core plugins|core plugin]] has "
                     "officially been removed.\n",
        "Graph.md": "# Graph\n\nThe graph view is a [[Core plugins|core plugin]] you can "
                    "turn off in the settings.\n",
        "Pins.md": "# Pins\n\nPin your favourite notes with the Starred core plugin in the "
                   "left sidebar.\n"})
    assert current(tmp_path) == [("Pins.md", "starred core plugin")]


def test_code_names_keep_their_classifier_and_whole_names(tmp_path):
    write_wiki(tmp_path, {
        "v0.15.md": "# 0.15\n\nWe have deprecated several `Workspace` functions whose names "
                    "were confusing. `Scope.registerKey` is now deprecated.\n",
        "API.md": "# API\n\nCall `Workspace` to get at the open leaves of the app, and "
                  "`Scope.register` to add a hotkey scope.\n",
        "Old API.md": "# Old API\n\nThe `Workspace` functions for the active leaf take a view "
                      "type. Bind keys with `Scope.registerKey` in your plugin.\n"})
    # `Workspace` itself was not deprecated, some of its functions were; `Scope.register` is
    # not `Scope.registerKey`
    assert current(tmp_path) == [("Old API.md", "Scope.registerKey"),
                                 ("Old API.md", "Workspace functions")]


def test_a_subject_named_on_many_pages_is_too_generic(tmp_path):
    pages = {f"Page {i}.md": f"# Page {i}\n\nThis page uses `sync` to keep note {i} the same "
                             f"on every device.\n" for i in range(25)}
    pages["Release.md"] = "# Release\n\nThe `sync` setting is deprecated.\n"
    pages["Rare.md"] = "# Rare\n\nThe `classicEditor` setting is deprecated.\n"
    pages["Editor.md"] = "# Editor\n\nTurn on `classicEditor` to get the old editor back.\n"
    write_wiki(tmp_path, pages)
    assert current(tmp_path) == [("Editor.md", "classicEditor")]


def test_what_follows_a_passive_or_a_preposition_is_not_what_went(tmp_path):
    write_wiki(tmp_path, {
        "Workspaces.md": "# Workspaces\n\nSave a layout as a workspace and switch to it.\n",
        "Status bar.md": "# Status bar\n\nThe status bar shows counts at the bottom.\n",
        "v0.15.md": "# 0.15\n\nPopout windows are removed when switching "
                    "[[Workspaces|workspaces]].\n",
        "v1.13.md": "# 1.13\n\nRemoved spinning from the [[Status bar|status bar]] icon to save "
                    "battery.\n",
        "Help.md": "# Help\n\nSwitching [[Workspaces|workspaces]] keeps the [[Status bar|status "
                   "bar]] icon where it is.\n"})
    assert current(tmp_path) == []


def test_the_obsidian_vault_through_the_cli(tmp_path, corpora):
    """The real vault compiled by `mindgraph ingest`: the false alarms of generic terms
    (123 for "core plugin" and "Property" before main's linker added links in the language
    of each note, 334 after it: "search", "hotkeys", "Bookmarks" …) are gone. What stays is
    real: 1.13.1 deprecated the Settings Search plugin, and the Credits pages still name it.
    A page that still describes what other release notes removed (the starred core plugin of
    1.2.6, `obsidian.css` of 0.12.12) is caught."""
    runner = CliRunner()
    shutil.copytree(corpora / "obsidian-help", tmp_path / "raw")
    assert runner.invoke(cli, ["-C", str(tmp_path), "init"]).exit_code == 0
    result = runner.invoke(cli, ["-C", str(tmp_path), "ingest"])
    assert result.exit_code == 0, result.output

    def findings():
        out = runner.invoke(cli, ["-C", str(tmp_path), "lint", "--json", "--rule",
                                  "deprecated-but-current"])
        assert out.exit_code == 0, out.output
        return json.loads(out.output)["findings"]

    real = findings()
    assert {(f["page"], f["other_page"]) for f in real} == {
        ("en/Obsidian/Credits.md", "Release notes/v1.13.1.md"),
        ("zh/Obsidian/贡献者.md", "Release notes/v1.13.1.md")}
    assert all(f["message"].startswith("Describes Settings Search plugin as current")
               for f in real)
    (tmp_path / "raw" / "Styling tips.md").write_text(
        "# Styling tips\n\nPin the notes you style most with the starred core plugin.\n\n"
        "Put your own CSS rules in `obsidian.css` at the root of the vault folder.\n",
        encoding="utf-8")
    assert runner.invoke(cli, ["-C", str(tmp_path), "ingest"]).exit_code == 0
    found = [f for f in findings() if f not in real]
    assert {(f["page"], f["other_page"]) for f in found} == {
        ("Styling tips.md", "Release notes/v1.2.6.md"),
        ("Styling tips.md", "Release notes/v0.12.12.md")}
    assert any("starred core plugin" in f["message"] for f in found)
    assert any("obsidian.css" in f["message"] for f in found)
