"""The real Obsidian Help vault (English) read as a wiki: practically every page link resolves."""

from collections import Counter

import pytest

from mindgraph.page.vault import load_vault


@pytest.fixture(scope="module")
def english_vault(corpora):
    return load_vault(corpora / "obsidian-help" / "en")


def test_every_page_loads(english_vault):
    assert len(english_vault.pages) == 173
    assert english_vault.problems == []


def test_practically_every_page_link_resolves(english_vault):
    status = Counter()
    unresolved = set()
    for page, link, result in english_vault.resolved_links():
        if link.is_attachment or link.is_self:
            continue
        status[result.status] += 1
        if result.status != "resolved":
            unresolved.add((page.path, link.target))
    assert status["resolved"] > 1400
    # The only targets that do not resolve are the vault's own examples of link syntax
    # ("[[Example]]" in Internal links.md), which point at a note the vault does not have.
    assert {target.removesuffix(".md") for _, target in unresolved} == {"Example"}
    assert status["ambiguous"] == 0


def test_whole_multilingual_vault_resolves_by_nearest_folder(corpora):
    vault = load_vault(corpora / "obsidian-help")
    results = Counter(r.status for _, link, r in vault.resolved_links()
                      if not link.is_attachment and not link.is_self)
    assert len(vault.pages) == 883
    assert results["resolved"] / sum(results.values()) > 0.97
    ja_canvas = [r.target for page, link, r in vault.resolved_links()
                 if page.path.startswith("ja/") and link.target == "Canvas"]
    assert ja_canvas and all(t == "ja/プラグイン/Canvas.md" for t in ja_canvas)
