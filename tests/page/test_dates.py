"""Real dates of a note, and where each came from; never the file's modification time."""

import datetime as dt
import os
import subprocess

import pytest

from mindgraph.page.dates import dates_key, find_date, note_dates
from mindgraph.page.history import git_history
from mindgraph.page.parse import parse_page

D = dt.date


@pytest.mark.parametrize("text, expected", [
    ("<small>Released March 29, 2023</small>", D(2023, 3, 29)),
    ("Released on 2021/01/25.", D(2021, 1, 25)),
    ("Shipped 3 Feb 2024", D(2024, 2, 3)),
    ("2024年5月1日にリリース", D(2024, 5, 1)),
    ("version 1.2.3 only", None),
    ("2024-13-45 is no date", None),
])
def test_find_date(text, expected):
    assert find_date(text) == expected


def dates(frontmatter=None, body="", path="a.md", history=None):
    found = note_dates(frontmatter or {}, body, path, history)
    return found and (found.created, found.updated, found.source, found.updated_source)


def test_sources_in_order_of_trust():
    assert dates({"created": "2021-02-03", "modified": "2022-01-01T10:00"},
                 "Released on 2019/01/01.", "2018-01-01.md") == (
        D(2021, 2, 3), D(2022, 1, 1), "frontmatter", "frontmatter")
    assert dates({"Date": D(2025, 10, 1)}) == (D(2025, 10, 1),) * 2 + ("frontmatter",) * 2
    assert dates({}, "Initial release.\n\nReleased on 2020/03/30.\n", "2018-01-01.md")[:3] == (
        D(2020, 3, 30), D(2020, 3, 30), "content")
    assert dates({}, "# Standup 2024-05-01\nnotes")[2] == "content"
    assert dates({}, "*2024-05-01*\n\ntext")[2] == "content"
    assert dates({}, "x", "Daily/20200506 log.md")[:3] == (D(2020, 5, 6), D(2020, 5, 6),
                                                           "filename")
    assert dates({}, "x", "a.md", (D(2019, 1, 1), D(2021, 1, 1))) == (
        D(2019, 1, 1), D(2021, 1, 1), "git", "git")
    # a later commit updates a note dated in its text, and says so
    assert dates({}, "Released on 2020/03/30.", "a.md", (D(2020, 4, 1), D(2022, 2, 2))) == (
        D(2020, 3, 30), D(2022, 2, 2), "content", "git")


def test_a_date_that_is_not_the_notes_own_does_not_date_it():
    assert dates({}, "Support ends 2020-01-01 for old versions.") is None
    assert dates({}, "Intro.\n\n" * 6 + "Released on 2020/03/30.") is None   # not at the top
    assert dates({"created": "soon"}, "text") is None
    # a title taken from the file name is the file name, not the note's text
    assert dates({}, "x", "2020-05-06.md")[2] == "filename"


def test_undated_note_is_undated_whatever_its_file_time(tmp_path):
    note = tmp_path / "Canvas.md"
    note.write_text("Canvas is a core plugin.\n")
    os.utime(note, (86_400, 86_400))
    page = parse_page(note.read_text(), "Canvas.md")
    assert note_dates(page.frontmatter, page.body, page.path) is None


def test_a_compiled_page_keeps_the_source_of_its_dates():
    meta = {"created": "2020-03-30", "updated": "2020-03-30", "date_source": "git"}
    assert dates(meta)[2:] == ("git", "git")


def test_dates_key_changes_with_the_rules_and_the_history():
    assert dates_key(None) != dates_key((D(2020, 1, 1), D(2020, 1, 1)))
    assert dates_key((D(2020, 1, 1), D(2020, 1, 1))) != dates_key((D(2020, 1, 1),
                                                                   D(2021, 1, 1)))


def commit(repo, date, message):
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{date}T10:00:00+00:00",
           "GIT_COMMITTER_DATE": f"{date}T10:00:00+00:00"}
    for args in (("add", "-A"), ("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                                 message)):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_git_history_first_and_last_commit_of_each_file_in_one_log(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a b.md").write_text("a")
    (notes / "é.md").write_text("e")
    (tmp_path / "outside.md").write_text("o")
    commit(tmp_path, "2021-06-07", "add")
    (notes / "a b.md").write_text("a, changed")
    commit(tmp_path, "2022-01-02", "change")
    assert git_history(notes) == {"a b.md": (D(2021, 6, 7), D(2022, 1, 2)),
                                  "é.md": (D(2021, 6, 7), D(2021, 6, 7))}


def test_git_history_is_empty_outside_a_repository(tmp_path):
    assert git_history(tmp_path) == {}
