"""Placing check findings in raw notes stays linear in a page's links (issue 20).

Every finding about a link names its raw line; finding it used to re-key every link of the
page and of its raw note, so a note with thousands of broken links took links² steps.
"""

from __future__ import annotations

from mindgraph.page import rawlines
from mindgraph.page.parse import parse_page
from mindgraph.page.rawlines import RawLines


def test_placing_every_link_of_a_big_note_keys_each_link_a_bounded_number_of_times(
        tmp_path, monkeypatch):
    n = 1500
    text = "# Big\n\n" + "".join(f"Line {i} [[Missing {i % 700}]] and [[Other]].\n"
                                 for i in range(n))
    (tmp_path / "Big.md").write_text(text, encoding="utf-8")
    page = parse_page(text, "Big.md")
    assert len(page.links) == 2 * n
    calls = 0
    real_key = rawlines._key

    def counting_key(link):
        nonlocal calls
        calls += 1
        return real_key(link)

    monkeypatch.setattr(rawlines, "_key", counting_key)
    raw = RawLines(tmp_path)
    placed = [raw.line(page, "Big.md", link) for link in page.links]
    # The n-th link with a key is placed on the n-th raw line with that key: here the page
    # is the note itself, so every link lands on its own line.
    assert placed == [link.line for link in page.links]
    assert calls <= 4 * len(page.links)      # was about 2 × links per finding: 18 million


def test_a_link_that_is_not_on_the_page_is_placed_on_the_first_matching_raw_line(tmp_path):
    text = "# Note\n\nA [[Gone]] here.\n\nAgain [[Gone]] there.\n"
    (tmp_path / "Note.md").write_text(text, encoding="utf-8")
    page = parse_page(text, "Note.md")
    stray = parse_page(text, "Note.md").links[1]     # equal, but not one of page's links
    raw = RawLines(tmp_path)
    assert raw.line(page, "Note.md", page.links[1]) == 5
    assert raw.line(page, "Note.md", stray) == 3
    assert raw.line(page, "Absent.md", page.links[0]) == 0
