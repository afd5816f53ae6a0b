"""Names a case-insensitive file system takes for one, and invisible characters in titles.

Through `mindgraph pull` against the fake TickTick open API on a local port (and a folder
through the filesystem adapter). ``Straße`` and ``Strasse`` (``ǅ`` and ``Ǆ``, final and
medial sigma, dotless ``ı`` and ``i``) are two files on Linux but may be one on macOS and
Windows: pull files both, the newer item with its id, the same in any listing order and at
every pull. A casefolding file system is simulated through the decision function,
``filenames.collision_key``: two written paths with one key would be one file there. Bidi
marks, U+FEFF and zero-width spaces leave a title's file name; ZWJ and ZWNJ stay where they
join (emoji, Persian).
"""

import json
import re
import sys
import unicodedata

import pytest
from click.testing import CliRunner
from ticktick_fake import FakeTickTick, pull_workspace

from mindgraph.adapters.base import safe_file_name
from mindgraph.adapters.owned import digest
from mindgraph.cli import cli
from mindgraph.filenames import (DROPPED_FORMAT_CHARS, JOINERS, KEPT_FORMAT_CHARS, TAG_CHARS,
                                 collision_key, drop_invisible)

WORK = "6226ff9877acee87727f6bcc"
TWINS = [("Straße", "Strasse"), ("ǅ", "Ǆ"), ("ὈΔΥΣΣΕΎΣ", "ὀδυσσεύς"), ("ıd", "ID")]


def add_tasks(fake, titles, first=0):
    """Open tasks of the Work list, ids in the order given (older first)."""
    for n, title in enumerate(titles, start=first):
        fake.tasks[f"6c{n:022x}"] = {"id": f"6c{n:022x}", "projectId": WORK, "title": title,
                                     "status": 0, "tags": [],
                                     "modifiedTime": "2026-11-01T10:00:00.000+0000"}


def pulled(workspace):
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def work_notes(workspace):
    folder = workspace / "raw" / "ticktick" / "Work"
    return sorted(p.name for p in folder.iterdir())


def one_file_each_on_a_casefolding_system(workspace):
    paths = [p.relative_to(workspace / "raw").as_posix()
             for p in (workspace / "raw").rglob("*") if p.is_file()]
    assert len({collision_key(p) for p in paths}) == len(paths), paths


@pytest.mark.parametrize("older_first", [True, False])
def test_casefold_twins_are_two_notes_the_newer_with_its_id(tmp_path, monkeypatch, older_first):
    fake = FakeTickTick()
    titles = [t for pair in TWINS for t in pair]
    add_tasks(fake, titles)
    if not older_first:      # the app lists them in another order: the same names
        fake.tasks = dict(reversed(list(fake.tasks.items())))
    with pull_workspace(tmp_path, fake, monkeypatch) as workspace:
        report = pulled(workspace)
        assert report["rejected"] == 0 and report["written"] == 7 + len(titles)
        assert [n for n in work_notes(workspace) if n[0] not in "FSW" or "ra" in n] == sorted([
            "Straße.md", "Strasse (6c000000).md", "ǅ.md", "Ǆ (6c000000).md",
            "ὈΔΥΣΣΕΎΣ.md", "ὀδυσσεύς (6c000000).md", "ıd.md", "ID (6c000000).md"])
        one_file_each_on_a_casefolding_system(workspace)
        # each note holds its own item: none overwrote its twin
        for path in (workspace / "raw" / "ticktick" / "Work").iterdir():
            assert f"title: {path.name.split(' (')[0].removesuffix('.md')}" in \
                path.read_text()
        again = pulled(workspace)
        assert again["written"] == 0 and again["unchanged"] == report["written"]


def test_a_newer_twin_leaves_the_older_notes_name_alone(tmp_path, monkeypatch):
    fake = FakeTickTick()
    add_tasks(fake, ["Straße"])
    with pull_workspace(tmp_path, fake, monkeypatch) as workspace:
        pulled(workspace)
        before = (workspace / "raw" / "ticktick" / "Work" / "Straße.md").read_bytes()
        add_tasks(fake, ["STRASSE"], first=1)      # sorts before it, but is newer
        report = pulled(workspace)
        assert [f["path"] for f in report["files"] if f["status"] == "written"] == \
            ["ticktick/Work/STRASSE (6c000000).md"]
        assert (workspace / "raw" / "ticktick" / "Work" / "Straße.md").read_bytes() == before
        one_file_each_on_a_casefolding_system(workspace)


def test_folder_twins_are_both_filed_whichever_is_listed_first(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "Straße.md").write_text("with sharp s")
    (src / "Strasse.md").write_text("with ss")
    (tmp_path / "raw").mkdir()
    (tmp_path / "mindgraph.yml").write_text(
        f"adapters:\n  - name: files\n    type: filesystem\n    options: {{path: '{src}'}}\n")
    report = pulled(tmp_path)
    assert (report["written"], report["rejected"]) == (2, 0)
    twin = next(f for f in report["files"] if f["reason"])
    assert twin["reason"].startswith("'Straße.md' and raw/files/Strasse.md are one file name "
                                     "on macOS and Windows")
    names = sorted(p.name for p in (tmp_path / "raw" / "files").iterdir())
    assert names == ["Strasse.md", f"Straße (files {digest('Straße.md'.encode())[:6]}).md"]
    assert (tmp_path / "raw" / "files" / "Strasse.md").read_text() == "with ss"
    one_file_each_on_a_casefolding_system(tmp_path)
    # the one pull wrote first keeps its name, even when the other would sort first now
    (src / "Strasse.md").rename(src / "STRASSE.md")
    (src / "Straße.md").rename(src / "Strasse.md")
    (src / "STRASSE.md").rename(src / "Straße.md")
    report = pulled(tmp_path)
    assert (tmp_path / "raw" / "files" / "Strasse.md").read_text() == "with sharp s"
    one_file_each_on_a_casefolding_system(tmp_path)


@pytest.mark.parametrize("one, other", [
    ("Straße.md", "STRASSE.md"), ("ǅ.md", "ǆ.md"), ("σοφός.md", "ΣΟΦΌΣ.md"),
    ("ıx.md", "IX.md"), ("\u212aelvin.md", "kelvin.md"), ("e\u0301.md", "É.md"),
    ("a\u200bb.md", "ab.md"), ("ﬁle.md", "FILE.md")])
def test_names_a_casefolding_system_takes_for_one_share_a_key(one, other):
    assert collision_key(one) == collision_key(other)


@pytest.mark.parametrize("one, other", [
    ("İstanbul.md", "istanbul.md"), ("Strase.md", "Straße.md"), ("a.md", "á.md"),
    ("σ.md", "ς.mdx")])
def test_names_no_system_takes_for_one_keep_their_keys(one, other):
    assert collision_key(one) != collision_key(other)


def test_invisible_marks_leave_titles_joiners_stay_where_they_join(tmp_path, monkeypatch):
    fake = FakeTickTick()
    add_tasks(fake, ["\u200fInvoice\u200e 12", "Rechnung\u061c", "\ufeffMemo", "zero\u200bwidth",
                     "👨\u200d👩\u200d👧 trip", "\u200dedge\u200c", "می\u200cخواهم",
                     "tag\U000e0041\U000e0042s", "🏴\U000e0067\U000e0062\U000e0073\U000e0063"
                     "\U000e0074\U000e007f games"])
    with pull_workspace(tmp_path, fake, monkeypatch) as workspace:
        pulled(workspace)
        names = work_notes(workspace)
    assert {"Invoice 12.md", "Rechnung.md", "Memo.md", "zerowidth.md",
            "👨\u200d👩\u200d👧 trip.md", "edge.md", "می\u200cخواهم.md", "tags.md",
            "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f games.md"} \
        <= set(names)


def test_every_format_character_has_a_decided_class():
    """A Unicode upgrade that adds a format character (Cf) fails here until it is decided."""
    classes = [DROPPED_FORMAT_CHARS, KEPT_FORMAT_CHARS, JOINERS, TAG_CHARS,
               "\u202a-\u202e\u2066-\u2069"]       # replaced by _ in adapters/base.py
    decided = re.compile("[" + "".join(classes) + "]")
    undecided = [f"U+{c:04X}" for c in range(sys.maxunicode + 1)
                 if unicodedata.category(chr(c)) == "Cf" and not decided.match(chr(c))]
    assert undecided == []
    assert drop_invisible("\u0600\u180e\U00013430") == "\u0600\u180e\U00013430"   # kept
    assert safe_file_name("a\u202eb") == "a_b.md"          # an override is still a _


def test_an_item_created_over_rest_as_a_twin_is_named_as_pull_files_it(tmp_path, monkeypatch):
    from fastapi.testclient import TestClient

    from mindgraph.core import Mindgraph
    from mindgraph.serve.rest import create_app

    fake = FakeTickTick()
    with pull_workspace(tmp_path, fake, monkeypatch) as workspace:
        pulled(workspace)
        before = (workspace / "raw" / "ticktick" / "Errands" / "Renew passport.md").read_bytes()
        core = Mindgraph.open(workspace)
        try:
            with TestClient(create_app(core, token="s" * 40),
                            base_url="http://127.0.0.1:8765") as client:
                made = client.post("/apps/items", json={"title": "RENEW PASSPORT",
                                                        "project": "Errands"},
                                   headers={"Authorization": f"Bearer {'s' * 40}"})
        finally:
            core.close()
        assert made.status_code == 200, made.text
        item = made.json()["item"]["id"]
        assert made.json()["raw_note"] == f"ticktick/Errands/RENEW PASSPORT ({item[:8]}).md"
        report = pulled(workspace)
        assert [f["path"] for f in report["files"] if f["status"] == "written"] == \
            [made.json()["raw_note"]]
        assert (workspace / "raw" / "ticktick" / "Errands" / "Renew passport.md"
                ).read_bytes() == before
        one_file_each_on_a_casefolding_system(workspace)


def test_a_persons_note_whose_name_folds_to_an_items_is_kept_and_the_item_filed_beside(
        tmp_path, monkeypatch):
    """On Linux `RENEW PASSPORT.md` (a person's) and `Renew passport.md` (pulled) are two
    files, and one once the vault syncs to a Mac: pull files the item beside the person's."""
    fake = FakeTickTick()
    with pull_workspace(tmp_path, fake, monkeypatch) as workspace:
        errands = workspace / "raw" / "ticktick" / "Errands"
        errands.mkdir(parents=True)
        (errands / "RENEW PASSPORT.md").write_text("my own checklist")
        result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                    catch_exceptions=False)
        report = json.loads(result.stdout)
        [copy] = [f for f in report["files"] if f["instead_of"]]
        assert copy["instead_of"] == "ticktick/Errands/RENEW PASSPORT.md"
        assert copy["path"].startswith("ticktick/Errands/Renew passport (tasks ")
        assert copy["reason"].startswith(
            "raw/ticktick/Errands/RENEW PASSPORT.md holds a file pull did not write, whose "
            "name is this document's on macOS and Windows")
        assert "kept        [tasks] ticktick/Errands/RENEW PASSPORT.md" in result.stderr
        assert (errands / "RENEW PASSPORT.md").read_text() == "my own checklist"
        assert not (errands / "Renew passport.md").exists()
        one_file_each_on_a_casefolding_system(workspace)
        (errands / "RENEW PASSPORT.md").unlink()           # the person's note is gone
        again = pulled(workspace)
        assert ("ticktick/Errands/Renew passport.md", "written") in \
            [(f["path"], f["status"]) for f in again["files"]]
        assert (copy["path"], "removed") in [(f["path"], f["status"]) for f in again["files"]]
        one_file_each_on_a_casefolding_system(workspace)
