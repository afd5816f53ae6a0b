"""A pull cut by a limit takes the most recently modified notes, and says how many it left out.

It used to file "the first N" of whatever the adapter listed: for a note app, the first in
file-name order (``Aardvark 0`` .. ``Aardvark 4`` of a list, not the task edited this morning).
Now a listing fetch() returns whole is cut to its newest documents (``metadata["mtime"]``);
TickTick's, which stops at ``limits.max_pull_notes`` while it is read (open tasks come in one
answer, completed ones newest first), keeps the newest of those read. The `limited` line and
``--json`` say the pull was cut, and how many were left out ("at least" when the listing was
read no further). Through `mindgraph pull`, against the fake TickTick open API on a local port
and a custom adapter loaded from a dotted path.
"""

import json
import sys

import pytest
from click.testing import CliRunner
from ticktick_fake import FakeTickTick, pull_workspace

from mindgraph.cli import cli

WORK = "6226ff9877acee87727f6bcc"


def pull_cli(workspace, *args):
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), *args],
                                catch_exceptions=False)
    assert result.exit_code == 1, result.output       # a cut pull is not a clean one
    return result


def test_a_cut_note_app_pull_takes_the_most_recently_modified(tmp_path, monkeypatch):
    fake = FakeTickTick()
    for n in range(11):          # first in file-name order, and the oldest
        fake.tasks[f"6d{n:022x}"] = {"id": f"6d{n:022x}", "projectId": WORK,
                                     "title": f"Aardvark {n}", "status": 0, "tags": [],
                                     "modifiedTime": f"2026-10-{n + 1:02d}T08:00:00.000+0000"}
    fake.tasks["6e" + "0" * 22] = {"id": "6e" + "0" * 22, "projectId": WORK, "title": "Zebra",
                                   "status": 0, "tags": [],
                                   "modifiedTime": "2026-12-01T07:00:00.000+0000"}
    with pull_workspace(tmp_path, fake, monkeypatch, limits="  max_pull_notes: 5\n") as ws:
        text = pull_cli(ws)
        written = sorted(p.relative_to(ws / "raw").as_posix()
                         for p in (ws / "raw").rglob("*.md"))
        report = json.loads(pull_cli(ws, "--json").stdout)
    # the newest five of the 16 open tasks /task/filter answered (the listing stopped there)
    assert written == ["ticktick/Errands/Buy batteries.md", "ticktick/Errands/Renew passport.md",
                       "ticktick/Reading notes/Designing Data-Intensive Applications.md",
                       "ticktick/Work/Write quarterly report.md", "ticktick/Work/Zebra.md"]
    assert ("pulled the 5 most recently modified, left out at least 11 (the listing was read "
            "no further), and no note of it removed this run.") in text.output
    assert "adapters cut at a pull limit 1 (left out at least 11)" in text.output
    [limited] = [f for f in report["files"] if f["status"] == "limited"]
    assert (limited["left_out"], limited["left_out_at_least"]) == (11, True)
    assert (report["limited_adapters"], report["left_out"], report["unchanged"]) == (1, 11, 5)


LISTED = '''
from mindgraph.adapters import RawDocument

MTIMES = [5, None, 90, 10, 70, 30, 80, 20, 60, 40]

class Listed:
    def __init__(self, size=10):
        self.size = size

    def fetch(self):
        return [RawDocument("x" * self.size, f"n{n}.md", {} if m is None else {"mtime": m})
                for n, m in enumerate(MTIMES)]
'''


@pytest.mark.parametrize("limits, size, cap", [
    ("max_pull_notes: 3", 10, "limits.max_pull_notes (3) notes; pulled the 3 most recently "
                              "modified, left out 7, and"),
    ("max_pull_bytes: 2000000", 600_000,
     "limits.max_pull_bytes (2,000,000) bytes of notes; pulled the 3 most recently modified "
     "(1,800,000 bytes), left out 7, and")])
def test_a_cut_whole_listing_takes_its_newest_and_counts_the_rest(tmp_path, monkeypatch,
                                                                  limits, size, cap):
    (tmp_path / "raw").mkdir()
    (tmp_path / "mg_listed.py").write_text(LISTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "mindgraph.yml").write_text(
        f"limits: {{max_page_bytes: 2000000, {limits}}}\n"
        f"adapters:\n  - name: app\n    type: mg_listed.Listed\n    options: {{size: {size}}}\n")
    try:
        report = json.loads(pull_cli(tmp_path, "--json").stdout)
    finally:
        sys.modules.pop("mg_listed", None)
    # mtimes 90, 80, 70: filed in the listing's order
    assert [f["path"] for f in report["files"] if f["status"] == "written"] == \
        ["app/n2.md", "app/n4.md", "app/n6.md"]
    [limited] = [f for f in report["files"] if f["status"] == "limited"]
    assert cap in limited["reason"]
    assert (limited["left_out"], limited["left_out_at_least"], report["left_out"]) == \
        (7, False, 7)
