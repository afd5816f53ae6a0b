"""Sections → chunks: context, ids, hashes, splitting with overlap under the token limit."""

from __future__ import annotations

import re

import pytest

from mindgraph.page.parse import parse_page
from mindgraph.vectors.chunking import Chunker, clean_markdown, context_of


def words(texts):
    """A token counter that counts whitespace-separated words (additive, easy to reason on)."""
    return [len(t.split()) for t in texts]


def chunker(max_tokens: int = 64, overlap: int | None = None) -> Chunker:
    return Chunker(words, max_tokens, overlap)


PAGE = """---
title: Sync
---
Sync keeps notes in step across devices.

## Set up

### On iOS
Open settings and sign in.

```
## not a heading
```

## Set up
A second section with the same heading text.

## Empty parent

### Child
Child text.
"""


def test_one_chunk_per_section_with_title_and_heading_path():
    page = parse_page(PAGE, "Guides/Sync.md")
    chunks = chunker().chunk_page(page)
    assert [c.chunk_id for c in chunks] == ["lead", "set-up/on-ios", "set-up-2",
                                           "empty-parent/child"]
    assert [c.section_id for c in chunks] == [c.chunk_id for c in chunks]
    by_id = {c.chunk_id: c for c in chunks}
    assert by_id["lead"].text == "Sync\n\nSync keeps notes in step across devices."
    ios = by_id["set-up/on-ios"].text
    assert ios.startswith("Sync\nSet up > On iOS\n\nOpen settings and sign in.")
    assert "## not a heading" in ios          # a heading inside a code fence is just text
    assert "same heading text" in by_id["set-up-2"].text
    assert "Open settings" not in by_id["set-up-2"].text
    assert by_id["empty-parent/child"].text == "Sync\nEmpty parent > Child\n\nChild text."
    assert all(c.page == "Guides/Sync.md" and c.tokens == len(c.text.split()) for c in chunks)


def test_hashes_are_stable_and_change_only_with_their_section():
    first = {c.chunk_id: c.content_hash
             for c in chunker().chunk_page(parse_page(PAGE, "Sync.md"))}
    again = {c.chunk_id: c.content_hash
             for c in chunker().chunk_page(parse_page(PAGE, "Sync.md"))}
    assert first == again
    edited = PAGE.replace("Child text.", "Child text, edited.")
    after = {c.chunk_id: c.content_hash
             for c in chunker().chunk_page(parse_page(edited, "Sync.md"))}
    assert [k for k in first if first[k] != after[k]] == ["empty-parent/child"]
    retitled = PAGE.replace("title: Sync", "title: Syncing")
    renamed = {c.chunk_id: c.content_hash
               for c in chunker().chunk_page(parse_page(retitled, "Sync.md"))}
    assert all(first[k] != renamed[k] for k in first)  # the title is part of every chunk


def test_scope_comes_from_frontmatter_and_is_part_of_the_hash():
    plain = chunker().chunk_page(parse_page("Body text.", "n.md"))[0]
    team = chunker().chunk_page(parse_page("---\nscope: Team\n---\nBody text.", "n.md"))[0]
    odd = chunker().chunk_page(parse_page("---\nscope: galaxy\n---\nBody text.", "n.md"))[0]
    assert (plain.scope, team.scope, odd.scope) == ("", "team", "")
    assert plain.text == team.text and plain.content_hash != team.content_hash


def test_long_section_is_split_under_the_limit_with_overlap():
    body = " ".join(f"w{i}" for i in range(300))
    page = parse_page(f"# Big\n\n## Part\n{body}\n", "big.md")
    parts = chunker(max_tokens=64, overlap=8).chunk_page(page)
    assert [c.chunk_id for c in parts][:3] == ["part", "part~2", "part~3"]
    assert {c.section_id for c in parts} == {"part"}
    context = "Big\nPart\n\n"
    seen: list[str] = []
    for previous, current in zip(parts, parts[1:]):
        prev_words = previous.text[len(context):].split()
        cur_words = current.text[len(context):].split()
        overlap = [w for w in prev_words[-10:] if w in cur_words[:10]]
        assert 1 <= len(overlap) <= 8
    for part in parts:
        assert part.text.startswith(context)
        assert part.tokens == len(part.text.split()) <= 64
        seen.extend(part.text[len(context):].split())
    # Every word appears, in order, once the overlaps are removed.
    assert list(dict.fromkeys(seen)) == body.split()
    assert len({c.content_hash for c in parts}) == len(parts)


def test_cjk_text_without_spaces_splits_at_ideographs():
    def chars(texts):
        return [len(re.sub(r"\s", "", t)) for t in texts]

    body = "同期は複数の端末でノートを同じ状態に保ちます。" * 20
    page = parse_page(f"## 同期\n{body}\n", "ja/同期.md")
    parts = Chunker(chars, 60, 6).chunk_page(page)
    assert len(parts) > 1
    assert all(chars([p.text])[0] <= 60 for p in parts)
    assert parts[1].chunk_id == "同期~2"


def test_one_enormous_word_is_cut_to_fit():
    blob = "x" * 5000

    def letters(texts):  # about one token per 4 characters of a word
        return [sum(-(-len(w) // 4) for w in t.split()) for t in texts]

    page = parse_page(f"## Data\n{blob}\n", "blob.md")
    parts = Chunker(letters, 100, 10).chunk_page(page)
    assert len(parts) > 10
    assert all(p.tokens <= 100 for p in parts)
    assert "".join(p.text.split("\n\n", 1)[1] for p in parts).count("x") >= 5000


def test_page_with_headings_only_gets_one_title_chunk():
    page = parse_page("# Roadmap\n\n## Q1\n\n## Q2\n", "Roadmap.md")
    chunks = chunker().chunk_page(page)
    assert [(c.chunk_id, c.text) for c in chunks] == [("lead", "Roadmap\n\nQ1 · Q2")]


def test_clean_markdown_keeps_words_and_drops_syntax():
    text = ("See [[Sync#Set up|the setup]] and [[Plugins/Canvas]] or [[Canvas#Cards]].\n"
            "![[diagram.png]] ![alt](img.png) [docs](https://example.com/a \"t\") "
            "%%private%% <!-- hidden -->end")
    cleaned = clean_markdown(text)
    assert cleaned.split() == "See the setup and Plugins/Canvas or Canvas Cards. docs end".split()
    assert cleaned.count("\n") == 1


def test_context_of_lead_is_the_title():
    page = parse_page("Lead.\n\n## A\n### B\nText", "t.md")
    assert [context_of(page, s) for s in page.sections] == ["t", "t\nA", "t\nA > B"]


def test_chunker_rejects_a_tiny_limit():
    with pytest.raises(ValueError):
        Chunker(words, 4)
