"""`mindgraph lint` on a long note of linked lines (a 3 MB log, 43,000 lines, each with a
[[link]]): every statement scanned every link of its page and copied the rest of the body to
read its paragraph, so the run grew with the square of the note — about 7 minutes for that
note, with nothing on screen. Each statement now reads only its own lines. The timeout is a
hang guard far above the run (a few seconds), not a figure."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


@pytest.mark.timeout(120)
def test_lint_of_a_long_linked_note_finishes_and_still_reads_its_links(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    lines = [f"Line {i} about topic {i % 97} of the log, with [[Topic {i % 13}]] words."
             for i in range(20_000)]
    # the long note's last paragraph deprecates a linked thing, which its links must name
    (raw / "Log.md").write_text(
        "---\ndate: 2023-03-01\n---\n# Log\n\n" + "\n".join(lines) + "\n\nNow that "
        "Bookmarks are available on mobile, the starred [[Core plugins|core plugin]] has "
        "officially been removed.\n")
    (raw / "Core plugins.md").write_text("# Core plugins\n\nCore plugins ship with the app "
                                         "and can be turned off.\n")
    (raw / "Pins.md").write_text("# Pins\n\nPin your favourite notes with the Starred core "
                                 "plugin in the left sidebar.\n")
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    result = runner.invoke(cli, ["lint", "-C", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pages"] == 3
    current = [(f["page"], f["message"].split(" as current")[0])
               for f in report["findings"] if f["rule"] == "deprecated-but-current"]
    assert current == [("Pins.md", "Describes starred core plugin")], report["findings"][:5]
