"""Embedded notes are searchable where they are shown (index.expand_embeds), through
`mindgraph search`, and the embedding page's entry follows its target's edits."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.parse import parse_page
from mindgraph.retrieval.keyword import KeywordIndex, KeywordParams

REGIONS = ("# Security and privacy\n\nEncryption.\n\n## Hosting\n\n"
           "> [!abstract] Sync regions\n> **Europe**: Frankfurt, Germany\n"
           "> **Asia**: Singapore\n^sync-geo-regions\n\n## Audit\n\nA zeppelin audit.\n")
SYNC = ("# Sync regions\n\nMove your remote vault.\n\n## Available regions\n\n"
        "These regions are available:\n\n![[obsidian sync/SECURITY AND PRIVACY#^sync-geo-regions]]\n"
        "\n## Pictures\n\n![[berlin-map.png]]\n\n![[No such note]]\n")


ON = "index:\n  expand_embeds: true\n"


def _workspace(tmp_path, config: str = ON):
    wiki = tmp_path / "wiki" / "Obsidian Sync"
    wiki.mkdir(parents=True)
    (wiki / "Security and privacy.md").write_text(REGIONS)
    (wiki / "Sync regions.md").write_text(SYNC)
    if config:
        (tmp_path / "mindgraph.yml").write_text(config)
    return tmp_path


def _search(workspace, *words):
    result = CliRunner().invoke(cli, ["search", *words, "-C", str(workspace), "--json"])
    assert result.exit_code == 0, result.output
    return {r["page"]: r for r in json.loads(result.stdout)["results"]}


def test_a_word_only_in_the_embedded_block_finds_the_embedding_page(tmp_path):
    found = _search(_workspace(tmp_path), "frankfurt")
    hit = found["Obsidian Sync/Sync regions.md"]
    assert hit["section_id"] == "available-regions"
    assert hit["why"]["fields"] == {"embed": ["frankfurt"]}
    assert "embedded from [[obsidian sync/SECURITY AND PRIVACY#^sync-geo-regions]]" \
        in hit["why"]["summary"]
    assert hit["snippet"].startswith("(embedded from Security and privacy) ") and "**Frankfurt**" in hit["snippet"]
    assert "Obsidian Sync/Security and privacy.md" in found
    # only the block is shown, not the rest of the page; the picture and the missing note
    # are ignored (no error)
    assert "Obsidian Sync/Sync regions.md" not in _search(tmp_path, "zeppelin")


def test_off_by_default_the_embedding_page_has_only_its_own_words(tmp_path):
    workspace = _workspace(tmp_path, "")
    assert list(_search(workspace, "frankfurt")) == ["Obsidian Sync/Security and privacy.md"]


def test_the_embedding_page_follows_edits_of_the_embedded_note(tmp_path):
    workspace = _workspace(tmp_path)
    assert "Obsidian Sync/Sync regions.md" in _search(workspace, "singapore")
    target = workspace / "wiki" / "Obsidian Sync" / "Security and privacy.md"
    target.write_text(REGIONS.replace("Singapore", "Jakarta"))
    assert "Obsidian Sync/Sync regions.md" not in _search(workspace, "singapore")
    assert "Obsidian Sync/Sync regions.md" in _search(workspace, "jakarta")
    target.unlink()                                          # the target gone
    assert _search(workspace, "jakarta") == {}
    target.write_text(REGIONS)                              # and back: resolves again
    assert "Obsidian Sync/Sync regions.md" in _search(workspace, "frankfurt")


def test_a_cycle_of_embeds_ends_one_level_deep(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (tmp_path / "mindgraph.yml").write_text(ON)
    (wiki / "A.md").write_text("# A\n\nAardvark.\n\n![[B]]\n")
    (wiki / "B.md").write_text("# B\n\nBison.\n\n![[A]]\n")
    (wiki / "C.md").write_text("# C\n\nCapybara.\n\n![[C]]\n")
    assert set(_search(tmp_path, "aardvark")) == {"A.md", "B.md"}
    assert set(_search(tmp_path, "bison")) == {"A.md", "B.md"}
    assert set(_search(tmp_path, "capybara")) == {"C.md"}


def _page(path, text):
    return parse_page(text, path)


def test_incremental_updates_equal_a_fresh_build():
    """Random edits, additions and removals of embedding and embedded pages: the index kept
    up to date by ``apply`` scores every query as a fresh build does."""
    rng = random.Random(7)
    names = ["Alpha", "Beta", "Gamma", "Delta"]
    words = ["kiwi", "lemon", "mango", "papaya", "quince"]

    def text(name):
        parts = [f"# {name}\n\n{rng.choice(words)} text.\n\n## Part\n\n{rng.choice(words)}\n"]
        for _ in range(rng.randint(0, 2)):
            target = rng.choice(names)
            parts.append(rng.choice([f"\n![[{target}]]\n", f"\n![[{target.lower()}#Part]]\n"]))
        return "".join(parts)

    params = KeywordParams(embed_chars=2000)
    pages = {f"{n}.md": _page(f"{n}.md", text(n)) for n in names[:2]}
    index = KeywordIndex.build(pages.values(), params)
    for _ in range(60):
        name = rng.choice(names)
        path = f"{name}.md"
        if path in pages and rng.random() < 0.3:
            del pages[path]
            index.apply(pages, removed=[path])
        else:
            new = path not in pages
            pages[path] = _page(path, text(name))
            index.apply(pages, added=[path] if new else [], changed=[] if new else [path])
        fresh = KeywordIndex.build(pages.values(), params)
        for word in words:
            assert {h.path: round(h.score, 9) for h in index.search(word, 10)} == \
                {h.path: round(h.score, 9) for h in fresh.search(word, 10)}, word
        assert index.embedded == fresh.embedded
