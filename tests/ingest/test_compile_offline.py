"""The offline compiler: the page shape, determinism, and never a verbatim copy."""

import yaml

from mindgraph.fsutil import sha256_text
from mindgraph.ingest.compile_offline import OfflineCompiler
from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.render import NoteInput
from mindgraph.page.markdown import split_frontmatter
from mindgraph.page.parse import parse_page

RAW = """---
aliases: [Composer]
tags: [tools]
permalink: plugins/note-composer
related: ["[[Canvas]]"]
created: 2021-03-04
---
# Note composer

Note composer is a core plugin that lets you merge notes, and it works well with Canvas.{sp}
You can also open the Command palette to run it. #editing

## Merge

```
Canvas inside code stays as is{sp}
```
""".format(sp="   ")


def compile_note(raw=RAW, path="Plugins/Note composer.md", mtime=1_700_000_000):
    index = TitleIndex([IndexEntry(path, "Note composer", ("Composer",)),
                        IndexEntry("Plugins/Canvas.md", "Canvas"),
                        IndexEntry("Plugins/Command palette.md", "Command palette")])
    page = parse_page(raw, path)
    note = NoteInput(path, path, raw, sha256_text(raw), mtime, page)
    return OfflineCompiler().compile(note, index).text


def test_page_shape_and_frontmatter():
    text = compile_note()
    block, body, _ = split_frontmatter(text)
    meta = yaml.safe_load(block)
    assert list(meta) == ["title", "type", "tags", "aliases", "permalink", "related", "keywords",
                          "created", "updated", "date_source", "provenance"]
    assert meta["title"] == "Note composer"
    assert meta["type"] == "note"
    assert meta["tags"] == ["tools", "editing", "plugins"]   # the note's own and its folder
    # the words the compiler counted are keywords: they make no shared-tag edges
    assert meta["keywords"] and not set(meta["keywords"]) & set(meta["tags"])
    assert meta["aliases"] == ["Composer"]
    assert meta["related"] == ["[[Canvas]]"]
    assert (meta["created"], meta["updated"], meta["date_source"]) == (
        "2021-03-04", "2021-03-04", "frontmatter")      # not the file time (2023-11-14)
    assert meta["provenance"] == {
        "origin": "compiled_offline", "generator": "offline:v5",
        "sources": [{"path": "Plugins/Note composer.md", "sha256": sha256_text(RAW)}]}
    assert body.startswith("\n> [!summary]\n> Note composer is a core plugin that lets you "
                           "merge notes, and it works well with Canvas.")


def test_body_is_normalised_and_linked_but_code_is_not():
    body = split_frontmatter(compile_note())[1]
    assert "# Note composer" not in body
    assert "works well with Canvas." in body  # already linked in frontmatter related:
    assert "open the [[Command palette]] to run it." in body
    assert "```\nCanvas inside code stays as is   \n```" in body
    assert "Canvas.   \n" not in body
    assert "\n## Merge\n" in body


def test_offline_compile_is_deterministic_and_never_a_copy():
    assert compile_note() == compile_note()
    bare = "Just one line of text without much in it."
    page = compile_note(bare, "Bare.md")
    assert page != bare and split_frontmatter(page)[1].strip() != bare
    assert "> [!summary]" in page


def test_dates_are_real_dates_never_the_file_time():
    undated = "Canvas is a core plugin for visual note-taking.\n"
    meta = yaml.safe_load(split_frontmatter(compile_note(undated, "Canvas.md"))[0])
    assert not {"created", "updated", "date_source"} & set(meta)
    assert compile_note(undated, "Canvas.md", mtime=0) == compile_note(undated, "Canvas.md")
    released = "<small>Released March 29, 2023</small>\n\n## Shiny new things\n- Bookmarks.\n"
    meta = yaml.safe_load(split_frontmatter(compile_note(released, "v1.2.0.md"))[0])
    assert (meta["created"], meta["updated"], meta["date_source"]) == (
        "2023-03-29", "2023-03-29", "content")


def test_keywords_keep_letters_outside_ascii(tmp_path):
    """café, Zürich and naïve were cut at their non-ASCII letters: the keywords said "rich"
    and lost the other two (caf, na, ve were too short). Written with a combining accent
    (NFD, as macOS names files) naïve is the same word."""
    import unicodedata

    from click.testing import CliRunner

    from mindgraph.cli import cli

    naive = unicodedata.normalize("NFD", "naïve")
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Trip.md").write_text(
        "# Travel log\n\nThe café in Zürich was naïve about coffee. Another café near Zürich."
        f"\n\nA {naive} café owner in Zürich said the café was the best in Zürich, a naïve "
        "claim. Ελλάδα, Ελλάδα, Ελλάδα.\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(tmp_path)])
    assert result.exit_code == 0 and "(offline:v5)" in result.output, result.output
    text = (tmp_path / "wiki" / "Trip.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(split_frontmatter(text)[0])
    assert meta["keywords"] == ["travel", "café", "zürich"]     # 5 (title), 4 and 4 times
    from mindgraph.ingest.extract import salient_terms
    assert salient_terms(f"{naive} naïve naïve ok", "x") == ["naïve"]
