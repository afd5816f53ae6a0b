"""`mindgraph check` on a note's ``<img src>``: the dashboard draws it as the attachment embed
``![[x.png]]`` is, so a missing file is the same warning, at the raw note's line."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli


def test_a_notes_img_of_a_missing_file_is_a_missing_attachment_warning(tmp_path):
    """``<img src="img/nothere.png">`` passed `check` silently while ``![[img/nothere.png]]``
    was a warning, and the dashboard drew both as missing."""
    raw = tmp_path / "raw"
    (raw / "img").mkdir(parents=True)
    (raw / "img" / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (raw / "Pics.md").write_text(
        "# Pics\n\nA cat: <img src=\"img/cat.png\" alt=\"cat\">\n\n"
        "<IMG alt='gone' SRC='img/nothere.png'>\n\n"
        "<img src=\"https://example.org/x.png\"> and `<img src=\"code.png\">`\n\n"
        "```html\n<img src=\"fenced.png\">\n```\n\n"
        "%% <img src=\"commented.png\"> %%\n\n![[img/alsonot.png]]\n")
    assert CliRunner().invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    result = CliRunner().invoke(cli, ["check", "-C", str(tmp_path), "--json"])
    missing = [f for f in json.loads(result.output)["findings"]
               if f["kind"] == "missing-attachment"]
    assert [(f["raw_path"], f["raw_line"]) for f in missing] == [("Pics.md", 5),
                                                                 ("Pics.md", 15)], missing
    assert all(f["severity"] == "warning" for f in missing)
    text = CliRunner().invoke(cli, ["check", "-C", str(tmp_path)]).output
    assert ("raw/Pics.md:5: <IMG alt='gone' SRC='img/nothere.png'> names no file in the wiki "
            "or raw/; add the file or fix its src.") in text


def test_a_notes_img_of_a_vault_file_is_an_attachment_link_as_its_embed_is(tmp_path):
    """``<img src="pics/x.png">`` counts in `stats` and `links` as ``![[pics/x.png]]`` does;
    one from the web, with an attribute that acts, or in code is no link."""
    wiki = tmp_path / "wiki"
    (wiki / "pics").mkdir(parents=True)
    (wiki / "pics" / "x.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (wiki / "Embed.md").write_text("---\ntitle: Embed\n---\n# Embed\n\n![[pics/x.png]]\n")
    (wiki / "Html.md").write_text(
        "---\ntitle: Html\n---\n# Html\n\nSee [[Embed]].\n\n"
        "<img src=\"pics/x.png\" alt=\"x\" width=\"300\">\n\n"
        "<img src=\"pics/x.png\" onerror=\"alert(1)\"> <img src=\"https://e.org/y.png\">\n"
        "<img src=\"/pics/x.png\"> <img src=\"pics/notes.md\"> `<img src=\"pics/x.png\">`\n\n"
        "```\n<img src=\"pics/x.png\">\n```\n")

    def stats() -> dict:
        result = CliRunner().invoke(cli, ["stats", "-C", str(tmp_path), "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["links"]

    links = stats()
    assert links["by_resolution"].get("attachment") == 2, links
    assert links["total"] == 3, links
    result = CliRunner().invoke(cli, ["links", "Html", "-C", str(tmp_path), "--json"])
    outgoing = json.loads(result.output)["outgoing"]
    assert [(o["line"], o["status"], o["target"], o["syntax"]) for o in outgoing] == [
        (6, "resolved", "Embed", "wikilink"), (8, "attachment", "pics/x.png", "embed")]
    assert "missing-attachment" not in CliRunner().invoke(
        cli, ["check", "-C", str(tmp_path), "--json"]).output
    (wiki / "pics" / "x.png").unlink()
    text = CliRunner().invoke(cli, ["check", "-C", str(tmp_path)]).output
    assert ("Html.md:8: <img src=\"pics/x.png\" alt=\"x\" width=\"300\"> names no file in "
            "the wiki or raw/; add the file or fix its src.") in text, text
    assert "Embed.md:6: ![[pics/x.png]] names no file" in text, text
