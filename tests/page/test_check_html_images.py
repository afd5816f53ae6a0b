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
