"""`mindgraph check` after a raw note that failed (or warned) was deleted, before the next
ingest: it listed the note as raw-failed, an error (`check --strict` failed CI for a note no
longer there). It says the note is gone and the next ingest drops it, a warning. Through the
CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli

BAD = "---\ntitle: [unclosed\n---\n# Bad\ntext\n"
UNCLOSED = "---\ntags: [a]\n# Unclosed\ntext\n"


def run(root, *args):
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def test_a_deleted_note_is_gone_not_failed_until_the_next_ingest(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("{}\n")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "bad.md").write_text(BAD)
    (tmp_path / "raw" / "unclosed.md").write_text(UNCLOSED)
    (tmp_path / "raw" / "good.md").write_text("# Good\nA good note.\n")
    assert run(tmp_path, "ingest").exit_code == 1           # bad.md failed
    kinds = {f["kind"] for f in json.loads(run(tmp_path, "check", "--json").stdout)["findings"]}
    assert {"raw-failed", "raw-warning"} <= kinds

    (tmp_path / "raw" / "bad.md").unlink()
    (tmp_path / "raw" / "unclosed.md").unlink()
    found = json.loads(run(tmp_path, "check", "--json").stdout)["findings"]
    raw = {f["raw_path"]: f for f in found if f["kind"].startswith("raw-")}
    assert {f["kind"] for f in raw.values()} == {"raw-gone"}
    assert raw["bad.md"]["severity"] == "warning"
    assert raw["bad.md"]["message"] == ("deleted from raw/ since the last ingest, which failed "
                                        "to compile it; the next `mindgraph ingest` drops its "
                                        "record.")
    assert raw["unclosed.md"]["message"].endswith("drops its record and its page unclosed.md.")
    strict = run(tmp_path, "check", "--strict")
    assert strict.exit_code == 0, strict.output
    assert "raw-failed" not in strict.output
    assert "warning raw-gone         raw/bad.md: deleted from raw/" in strict.output

    assert run(tmp_path, "ingest").exit_code == 0
    after = json.loads(run(tmp_path, "check", "--json").stdout)["findings"]
    assert not [f for f in after if f["kind"].startswith("raw-")]
