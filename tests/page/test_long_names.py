"""A frontmatter title (alias, tag) of 1.5 MB in a note under the size cap became a 1.5 MB
title: in the compiled page, search results and graph nodes. Names are cut at
MAX_NAME_CHARS, with a warning naming the file, line and field. Through the CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.parse import MAX_NAME_CHARS

HUGE = "x" * 300_000      # 1.5 MB in the report; the same past the cap


def run(root, *args):
    return CliRunner().invoke(cli, ["-C", str(root), *args])


def test_a_huge_title_in_a_raw_note_is_cut_with_a_warning(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "big.md").write_text(f"---\ntags: [a]\ntitle: {HUGE}\n---\n"
                                             f"# Big\n\nSome body text about kayaks.\n")
    ingest = run(tmp_path, "ingest")
    assert ingest.exit_code == 0, ingest.output[:2000]
    assert ("big.md:3: frontmatter 'title' holds a value of 300,000 characters, over the "
            "250 the title keeps; cut to its first 249 and '…'.") in ingest.output
    page = (tmp_path / "wiki" / "big.md").read_text()
    assert len(page) < 2000
    found = json.loads(run(tmp_path, "search", "kayaks", "--json").stdout)
    title = found["results"][0]["title"]
    assert len(title) == MAX_NAME_CHARS and title == "x" * (MAX_NAME_CHARS - 1) + "…"
    check = json.loads(run(tmp_path, "check", "--json").stdout)["findings"]
    assert [(f["kind"], f["raw_line"]) for f in check if f["kind"] == "raw-warning"] == \
        [("raw-warning", 3)]


def test_a_huge_name_in_a_wiki_page_is_a_check_warning(tmp_path):
    (tmp_path / "mindgraph.yml").write_text("{}\n")
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "big.md").write_text(
        f"---\ntitle: Big\naliases: [short, {'y' * 300}]\ntags: [ok]\n---\n# Big\n\ntext\n")
    found = json.loads(run(tmp_path, "check", "--json").stdout)["findings"]
    long = [f for f in found if f["kind"] == "long-name"]
    assert [(f["severity"], f["path"]) for f in long] == [("warning", "big.md")]
    assert "frontmatter 'aliases' holds a value of 300 characters, over the 250 a name in " \
        "'aliases' keeps" in long[0]["message"]


def test_a_name_is_never_cut_inside_an_emoji_sequence_or_before_an_accent():
    """The cut left a zero-width joiner hanging before the '…' (half a family emoji)."""
    from mindgraph.page.parse import MAX_NAME_CHARS, capped_name

    family = "a" * (MAX_NAME_CHARS - 2) + "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    assert capped_name(family) == "a" * (MAX_NAME_CHARS - 2) + "…"
    accented = "a" * (MAX_NAME_CHARS - 2) + "e\u0301" + "xyz"
    assert capped_name(accented) == "a" * (MAX_NAME_CHARS - 2) + "…"
    plain = "b" * (MAX_NAME_CHARS + 5)
    assert capped_name(plain) == "b" * (MAX_NAME_CHARS - 1) + "…"


def test_a_huge_first_heading_title_is_cut_with_a_warning(tmp_path):
    """A 1,000-character H1 (the title when the frontmatter has none) was cut without a word,
    where a frontmatter title warns."""
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "long.md").write_text("---\ntags: [a]\n---\n\n# " + "y" * 1000 +
                                              "\n\nBody about canoes.\n")
    (tmp_path / "raw" / "short.md").write_text("# Short\n\nBody about canoes too.\n")
    ingest = run(tmp_path, "ingest")
    assert ingest.exit_code == 0, ingest.output[:2000]
    assert ("long.md:5: the first heading, the note's title, holds 1,000 characters, over "
            "the 250 a title keeps; cut to its first 249 and '…'.") in ingest.output
    assert "short.md:" not in ingest.output
    found = json.loads(run(tmp_path, "search", "canoes", "--json").stdout)["results"]
    assert max(len(r["title"]) for r in found) == MAX_NAME_CHARS
