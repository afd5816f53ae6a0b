"""Obsidian-style link resolution."""

import pytest

from mindgraph.page.model import Link
from mindgraph.page.resolve import LinkResolver

PATHS = ["Home.md", "Notes/Alpha.md", "Notes/Sub/Beta.md", "Other/Beta.md",
         "en/Canvas.md", "ja/Canvas.md", "ja/deep/Gamma.md", "x/Gamma.md", "y/Gamma.md",
         "Release/v1.2.md"]


@pytest.fixture
def resolver():
    return LinkResolver(PATHS, {"Notes/Alpha.md": ["First letter"]})


@pytest.mark.parametrize("target, source, expected, rule", [
    ("Notes/Alpha.md", "Home.md", "Notes/Alpha.md", "path"),
    ("notes/alpha", "Home.md", "Notes/Alpha.md", "path+md"),
    ("alpha", "Home.md", "Notes/Alpha.md", "name"),
    ("Sub/Beta", "Home.md", "Notes/Sub/Beta.md", "suffix"),
    ("./Sub/Beta.md", "Notes/Alpha.md", "Notes/Sub/Beta.md", "relative"),
    ("../Home", "Notes/Alpha.md", "Home.md", "relative+md"),
    ("Canvas", "ja/deep/Other.md", "ja/Canvas.md", "nearest"),
    ("Canvas", "ja/Other.md", "ja/Canvas.md", "relative+md"),
    ("Gamma", "ja/Other.md", "ja/deep/Gamma.md", "nearest"),
    ("v1.2", "Home.md", "Release/v1.2.md", "name"),
    ("/Home.md", "Notes/Alpha.md", "Home.md", "path"),
])
def test_resolves(resolver, target, source, expected, rule):
    result = resolver.resolve_target(target, source)
    assert (result.status, result.target, result.rule) == ("resolved", expected, rule)


def test_ambiguous_is_reported_not_guessed(resolver):
    result = resolver.resolve_target("Beta", "Home.md")
    assert result.status == "ambiguous" and result.target is None
    assert result.candidates == ("Notes/Sub/Beta.md", "Other/Beta.md")
    assert resolver.resolve_target("Gamma", "z/Page.md").status == "ambiguous"


def test_missing_with_alias_hint(resolver):
    result = resolver.resolve_target("First letter", "Home.md")
    assert result.status == "missing" and result.candidates == ("Notes/Alpha.md",)
    assert resolver.resolve_target("Nowhere", "Home.md").candidates == ()


def test_attachment_and_self_links(resolver):
    assert resolver.resolve(Link("img.png", "embed", is_attachment=True), "Home.md").status \
        == "attachment"
    assert resolver.resolve(Link("", "wikilink", heading="H"), "Home.md").status == "self"
