"""`mindgraph check` flags two pages of one language that claim one frontmatter permalink
(naming both files, in text and in --json); translations sharing one are not flagged."""

import json

from click.testing import CliRunner

from mindgraph.cli import cli


def _wiki(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Packing.md").write_text("---\ntitle: Packing\npermalink: /guides/packing/\n---\n"
                                     "Fold the trunks. See [[Trunks]].\n")
    (wiki / "Trunks.md").write_text("---\ntitle: Trunks\naliases: [Luggage]\n"
                                    "permalink: guides/packing\n---\nTrunks hold clothes. "
                                    "See [[Packing]] and [[打包]].\n")
    # a translation shares its page's permalink: that is what permalinks are for
    (wiki / "打包.md").write_text("---\ntitle: 打包\npermalink: guides/trunks\n---\n"
                                 "把衣服叠好放进箱子里。见 [[Packing]]。\n")
    (wiki / "Home.md").write_text("---\ntitle: Home\npermalink: guides/trunks\n---\n"
                                  "Start at [[Packing]] or [[打包]].\n")
    return tmp_path


def test_two_pages_claiming_one_permalink_are_an_error_naming_both(tmp_path):
    workspace = _wiki(tmp_path)
    runner = CliRunner()
    result = runner.invoke(cli, ["check", "-C", str(workspace), "--json"],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    found = sorted((f["path"], f["line"], f["severity"], f["message"])
                   for f in report["findings"] if f["kind"] == "duplicate-permalink")
    assert [(path, line, severity) for path, line, severity, _ in found] == [
        ("Packing.md", 3, "error"), ("Trunks.md", 4, "error")]
    assert "'guides/packing' is also claimed by Trunks.md" in found[0][3]
    assert "'guides/packing' is also claimed by Packing.md" in found[1][3]
    assert report["counts"]["duplicate-permalink"] == 2 and report["errors"] == 2
    text = runner.invoke(cli, ["check", "-C", str(workspace)]).output
    assert "Packing.md:3" in text and "Trunks.md:4" in text and "duplicate-permalink" in text
    assert "4 pages: 2 errors, 1 warning (duplicate-permalink 2, no-backlinks 1)." in text
    strict = runner.invoke(cli, ["check", "-C", str(workspace), "--strict"])
    assert strict.exit_code == 1
    # one page's own permalink fixes it
    (workspace / "wiki" / "Trunks.md").write_text(
        (workspace / "wiki" / "Trunks.md").read_text().replace("guides/packing", "trunks"))
    fixed = json.loads(runner.invoke(cli, ["check", "-C", str(workspace), "--json"]).output)
    assert "duplicate-permalink" not in fixed["counts"] and fixed["errors"] == 0


def test_compiled_pages_name_the_raw_note_and_its_permalink_line(tmp_path):
    """On compiled pages the finding is fixed in raw/: the raw note and its `permalink:` line
    (the page's own line differs: ingest writes its frontmatter again)."""
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    raw = tmp_path / "raw"
    (raw / "Packing.md").write_text("---\ntags: [travel]\naliases: [Pack]\n"
                                    "permalink: guides/packing\n---\n# Packing\n"
                                    "Fold the trunks.\n")
    (raw / "Trunks.md").write_text("---\npermalink: /guides/packing/\n---\n# Trunks\n"
                                   "Trunks hold clothes.\n")
    assert runner.invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    report = json.loads(runner.invoke(cli, ["check", "-C", str(tmp_path), "--json"]).output)
    found = sorted((f["raw_path"], f["raw_line"]) for f in report["findings"]
                   if f["kind"] == "duplicate-permalink")
    assert found == [("Packing.md", 4), ("Trunks.md", 2)]
    text = runner.invoke(cli, ["check", "-C", str(tmp_path)]).output
    assert "raw/Packing.md:4: permalink 'guides/packing'" in text
    assert "raw/Trunks.md:2: permalink 'guides/packing'" in text
